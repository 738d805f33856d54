"""vm.dirty: how much dirty page cache the kernel lets pile up before writers are throttled (vm.dirty_ratio or
vm.dirty_bytes) and before background writeback starts (vm.dirty_background_ratio or _bytes), as one coupled
knob of four views.

A value is `DIRTY/BACKGROUND`, each a percentage of available memory (`20%`) or bytes (`268435456`). The ratio
and bytes views are counterparts: writing one zeroes the other, and `vm.dirty_bytes=0` is refused (measured
here), so the undo writes the view that held the original (`20%` -> `vm.dirty_ratio=20`). Host-wide: tested only
in the lab guest, never on a shared machine. Tradeoff (`--allow tradeoff`): more dirty data is more data lost
in a crash, and longer stalls when it is written.
"""

from stackbench.tune import subjects
from stackbench.tune.access.kernel import KernelFiles, KernelView
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, State, Subject, Undo, Values

DOC = __doc__
_PAIRS = (("dirty_ratio", "dirty_bytes"), ("dirty_background_ratio", "dirty_background_bytes"))


def _part(ratio: str, nbytes: str) -> str:
    return f"{ratio}%" if nbytes == "0" else nbytes


def value_from(state: State) -> str:
    return "/".join(_part(state[ratio], state[nbytes]) for ratio, nbytes in _PAIRS)


def _parts(value: str) -> list[tuple[str, str]]:
    """`10%/268435456` -> [(dirty_ratio, 10), (dirty_background_bytes, 268435456)]."""
    parts = value.split("/")
    if len(parts) != 2:
        raise ValueError(f"a vm.dirty value is DIRTY/BACKGROUND, e.g. 20%/10%, not {value!r}")
    chosen = []
    for (ratio, nbytes), part in zip(_PAIRS, parts):
        number = part[:-1] if part.endswith("%") else part
        if not number.isdigit() or int(number) <= 0:
            raise ValueError(f"{part!r} is not a positive percentage or byte count")
        chosen.append((ratio, number) if part.endswith("%") else (nbytes, number))
    return chosen


def writes(value: str, original: State) -> list[tuple[str, str]]:
    return _parts(value)


def expect(value: str, original: State) -> dict[str, str]:
    expected = {}
    for (ratio, nbytes), (view, number) in zip(_PAIRS, _parts(value)):
        expected[view] = number
        expected[nbytes if view == ratio else ratio] = "0"
    return expected


def primary(original: State) -> list[str]:
    return [ratio if original[nbytes] == "0" else nbytes for ratio, nbytes in _PAIRS]


ACCESS = KernelFiles(
    tuple(KernelView(name, f"/proc/sys/vm/{name}") for pair in _PAIRS for name in pair),
    undo_strategies=frozenset({Undo.WRITE_PRIMARY_VIEW, Undo.SET_ORIGINAL}),
    writes=writes, expect=expect, primary=primary, value_from=value_from,
)
_HOST = Subject("host", "sysctl")


def persist(subject: Subject, value: str) -> str:
    lines = [f"vm.{view}={number}" for view, number in _parts(value)]
    return "/etc/sysctl.d/60-stackbench-tune.conf: " + "; ".join(lines)


def settings(value: str) -> list[tuple[str, str]]:
    return [(f"sysctl:vm.{view}", number) for view, number in _parts(value)]


KNOB = Knob(
    id="vm.dirty", title="Dirty page cache limits (vm.dirty_* as one setting)", scope=Scope.HOST_SYSCTL,
    access=ACCESS, undo=Undo.WRITE_PRIMARY_VIEW,
    values=Values(("10%/5%", "40%/10%", "268435456/67108864", "1073741824/268435456")),
    safety=Safety.TRADEOFF, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("write",),
    subjects=subjects.host, source="https://docs.kernel.org/admin-guide/sysctl/vm.html", doc=DOC, persist=persist,
    settings=settings,
    examples=(Example(_HOST, {"dirty_ratio": "20", "dirty_bytes": "0", "dirty_background_ratio": "10",
                              "dirty_background_bytes": "0"}, "268435456/67108864",
                      apply=("echo 268435456 > /proc/sys/vm/dirty_bytes",
                             "echo 67108864 > /proc/sys/vm/dirty_background_bytes"),
                      undo=("echo 20 > /proc/sys/vm/dirty_ratio", "echo 10 > /proc/sys/vm/dirty_background_ratio")),),
)
