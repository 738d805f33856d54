"""Options that travel together (a plan's, a fleet's) as one value: a dataclass in the command's code, one
Typer option each on the command line and in --help.

Typer makes an option of every parameter of a command function, so a command that shares eighteen plan
options with another took eighteen parameters and passed them on by position (`run` had 30 parameters,
`ab` 23). `option_group` keeps the command's signature short: the command names one parameter of the
group's type, and Typer sees that parameter replaced by the group's options, each declared once.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable, Mapping, TypeVar

Command = TypeVar("Command", bound=Callable[..., Any])


def option_group(parameter: str, group: type, options: Mapping[str, Any]) -> Callable[[Command], Command]:
    """A decorator (under `@app.command`): the command's parameter `parameter` is given a `group(**values)`
    made of the options `options` names (field name -> `typer.Option`, the fields of the dataclass
    `group`, whose type hints are the options' types); every other parameter is passed on as it was.
    Every parameter becomes keyword-only, as Typer passes them."""
    kinds = typing.get_type_hints(group)

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())
        at = [p.name for p in own].index(parameter)
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kinds[name])
                 for name, option in options.items()]
        parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in [*own[:at], *added, *own[at + 1:]]]

        @functools.wraps(command)
        def with_group(**values: Any) -> Any:
            grouped = group(**{name: values.pop(name) for name in options})
            return command(**values, **{parameter: grouped})

        with_group.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_group.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
        return typing.cast(Command, with_group)

    return decorate


__all__ = ["option_group"]
