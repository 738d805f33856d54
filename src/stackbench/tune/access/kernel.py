"""Settings the kernel exposes as files: one view (a queue's `read_ahead_kb`, a ZFS module parameter) or several
coupled ones, read and restored together.

Coupled views, measured on this kernel (docs/tune.md, "Undos that do not undo"): writing a queue's `scheduler` resets its
`nr_requests` (none 128 -> mq-deadline 256 -> none 128, a user's 64 lost), so the scheduler's undo writes both
back; `vm.dirty_bytes` and `vm.dirty_ratio` are counterparts (writing one zeroes the other, and writing 0 to the
bytes view is refused), so the undo writes the view that held the setting (`Undo.WRITE_PRIMARY_VIEW`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stackbench.tune import actions
from stackbench.tune.knob import Action, State, Subject, Undo, write


@dataclass(frozen=True)
class KernelView:
    """One view: its name and its file, `{name}` standing for the subject's name (`loop3`, `7:0`)."""

    name: str
    path: str
    parse: Callable[[str], str] = str.strip


def active_choice(text: str) -> str:
    """`[mq-deadline] none kyber` -> `mq-deadline`: the bracketed entry of a sysfs choice list."""
    if "[" in text and "]" in text:
        return text.split("[", 1)[1].split("]", 1)[0].strip()
    return text.strip()


def offered_choices(text: str) -> tuple[str, ...]:
    """Every entry of a sysfs choice list (`[none] mq-deadline` -> none, mq-deadline)."""
    return tuple(word.strip("[]") for word in text.split())


@dataclass(frozen=True)
class KernelFiles:
    """The views of one setting as kernel files. `writes` turns a value into (view, text) writes in order
    (default: the value into the first view); `expect` says which views must then read what (default: the
    first); `primary` which views `WRITE_PRIMARY_VIEW` restores; `value_from` the value a state shows;
    `offered` the file whose choice list limits the candidates (a device's schedulers)."""

    files: tuple[KernelView, ...]
    undo_strategies: frozenset[Undo] = frozenset({Undo.SET_ORIGINAL})
    writes: Callable[[str, State], list[tuple[str, str]]] | None = None
    expect: Callable[[str, State], dict[str, str]] | None = None
    primary: Callable[[State], list[str]] | None = None
    value_from: Callable[[State], str] | None = None
    offered_from: str | None = None

    @property
    def views(self) -> tuple[str, ...]:
        return tuple(view.name for view in self.files)

    def path(self, view: str, subject: Subject) -> str:
        found = next(v for v in self.files if v.name == view)
        return found.path.format(name=subject.name)

    def read(self, subject: Subject) -> dict[str, str]:
        return {view.name: view.parse(actions.read_kernel_file(view.path.format(name=subject.name)))
                for view in self.files}

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        pairs = self.writes(value, original) if self.writes else [(self.files[0].name, value)]
        return [write(self.path(view, subject), text) for view, text in pairs]

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        if strategy is Undo.SET_ORIGINAL:
            views = list(self.views)
        elif strategy is Undo.WRITE_PRIMARY_VIEW and self.primary is not None:
            views = self.primary(original)
        else:
            raise ValueError(f"kernel files are not undone by {strategy.value}")
        return [write(self.path(view, subject), original[view]) for view in views]

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return self.expect(value, original) if self.expect else {self.files[0].name: value}

    def value_of(self, state: State) -> str:
        return self.value_from(state) if self.value_from else state[self.files[0].name]

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        if self.offered_from is None:
            return None
        return offered_choices(actions.read_kernel_file(self.path(self.offered_from, subject)))

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        """The first view as its file's text reads (`[mq-deadline] none` -> mq-deadline)."""
        return {self.files[0].name: self.files[0].parse(text)}
