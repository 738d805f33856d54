"""What every registry shares: its entries by name, how their names are said, and the error for a name
that is none of them.

An extension point (presets, import formats, output formats, report document formats, chart kinds, audit
rules, warning codes) is one registry of records, and everything that lists its entries (help texts, error
messages, the docs' generated tables, dispatch) reads that registry: a list written a second time by hand
drifts (`run --runs` said "others 5" after a preset of one run was added). docs/architecture.md, "Where a
new thing goes", has the recipe for each; tests/test_registries.py adds a throwaway entry to each and
checks that help, errors, dispatch and docs pick it up.
"""

from __future__ import annotations

from typing import Iterable, Protocol, TypeVar

from stackbench.base.errors import UsageError


class Named(Protocol):
    @property
    def name(self) -> str: ...


Entry = TypeVar("Entry", bound=Named)


def by_name(*entries: Entry) -> dict[str, Entry]:
    """A registry: the entries by name, in the order given (the first is the default where one is needed).
    A name given twice is a mistake in the registry, not a choice: it raises instead of hiding an entry."""
    registry: dict[str, Entry] = {}
    for entry in entries:
        if entry.name in registry:
            raise ValueError(f"{entry.name!r} is registered twice")
        registry[entry.name] = entry
    return registry


def one_of(names: Iterable[str], last: str = "or") -> str:
    """The names as a sentence says them: `a`, `a or b`, `a, b or c` (`last`: "or", "and")."""
    words = list(names)
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def unknown(what: str, name: str, names: Iterable[str]) -> UsageError:
    """The one error for a name a registry does not hold: `unknown preset 'x'. Use one of: quick, blog, ...`."""
    return UsageError(f"unknown {what} {name!r}", f"Use one of: {', '.join(names)}")
