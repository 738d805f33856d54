"""What differed between two runs measured in separate sessions, beyond what each run's own runs show.

Welch's test on two runs made at different times answers "did the numbers differ?", not "did the change
make them differ?": it is valid only when nothing else changed between the sessions, and on a shared
machine something always does (measured: 27 % false keep/revert verdicts between consecutive A/A runs, 2.8
% for `ab`, whose rounds pair the arms in time; docs/statistics.md). A comparison therefore names its
design, and for separate sessions lists the differences it can see, from the machine's conditions sampled
during every fio run (analysis/conditions.py) and from the runs' facts; a verdict with any is weak, and the
advice is to confirm it with `ab`. Runs of one `ab` session are never marked: drift hits both arms alike.
"""

from __future__ import annotations

from typing import Any

from stackbench.analysis.conditions import OTHER_CPU_LIMIT, cell_conditions
from stackbench.model.results import Run
from stackbench.model.warning import Warning, WarningCode

PAIRED = "one ab session: paired by round, so drift between the arms is controlled"
SEPARATE = "separate sessions: drift between them is not controlled"
CONFIRM = "confirm the verdict with `stackbench ab`, whose rounds measure both configurations alternately"

# A condition differs between the arms when their means differ by at least this much AND the ranges of
# their runs do not overlap: a difference larger than either run's own runs show.
METRICS: tuple[tuple[str, str, float, float, str], ...] = (
    # (name, shown as, least difference of the means, scale for showing, unit shown)
    ("other cpu", "CPU used by other processes", OTHER_CPU_LIMIT, 1.0, " CPUs"),
    ("cpu pressure", "CPU pressure", 10.0, 1.0, " %"),
    ("memory pressure", "memory pressure", 10.0, 1.0, " %"),
    ("steal", "CPU steal", 5.0, 1.0, " %"),
    ("foreign", "I/O fio did not do", 25.0, 100.0, " %"),
)
# CPU pressure is fio's own too (its threads wait for a CPU at every completion, more of them the faster
# the configuration): where both runs counted the other processes' CPU time, that is compared instead
# (analysis/conditions.py), and a faster B is not a "difference in conditions".
REPLACED_BY = {"cpu pressure": "other cpu"}


def design(paired: bool) -> str:
    return PAIRED if paired else SEPARATE


def _values(run: Run) -> dict[str, list[float]]:
    """Each metric's value in every fio run of `run` that recorded its conditions."""
    found: dict[str, list[float]] = {name: [] for name, *_ in METRICS}
    for cell in run.cells:
        for summary in cell_conditions(cell):
            pressure = summary.get("pressure") or {}
            for key, name in (("cpu", "cpu pressure"), ("memory", "memory pressure")):
                if isinstance(pressure.get(key), (int, float)):
                    found[name].append(float(pressure[key]))
            other = (summary.get("procs") or {}).get("other")
            if isinstance(other, (int, float)):
                found["other cpu"].append(float(other))
            steal = (summary.get("cpu") or {}).get("steal")
            if isinstance(steal, (int, float)):
                found["steal"].append(float(steal))
            share = (summary.get("foreign") or {}).get("share")
            if isinstance(share, (int, float)):
                found["foreign"].append(float(share))
    return found


def _scrubbed(run: Run) -> list[str]:
    return sorted({pool for cell in run.cells for summary in cell_conditions(cell)
                   for pool in (summary.get("scrubs") or {})})


def condition_differences(base: Run, other: Run) -> list[str]:
    """The machine's conditions that differ between the two runs' fio runs, as phrases (A first)."""
    a, b = _values(base), _values(other)
    found = []
    for name, shown, least, scale, unit in METRICS:
        if not a[name] or not b[name]:
            continue
        instead = REPLACED_BY.get(name)
        if instead and a[instead] and b[instead]:
            continue
        mean_a, mean_b = (scale * sum(v) / len(v) for v in (a[name], b[name]))
        apart = max(a[name]) < min(b[name]) or max(b[name]) < min(a[name])
        if abs(mean_a - mean_b) >= least and apart:
            digits = 1 if unit == " CPUs" else 0
            found.append(f"{shown} {mean_a:.{digits}f}{unit} in A vs {mean_b:.{digits}f}{unit} in B")
    scrub_a, scrub_b = _scrubbed(base), _scrubbed(other)
    if bool(scrub_a) != bool(scrub_b):
        side, pools = ("A", scrub_a) if scrub_a else ("B", scrub_b)
        found.append(f"a scrub or resilver on {', '.join(pools)} during {side} only")
    return found


def _setup(run: Run) -> dict[str, Any]:
    facts = run.facts or {}
    target = facts.get("target") if isinstance(facts.get("target"), dict) else {}
    system = facts.get("system") if isinstance(facts.get("system"), dict) else {}
    kind = target.get("kind")
    # A scratch file each run lays out afresh is the same procedure on both sides; an existing file or a
    # device is the same layout only when it is the same one.
    layout = "a new scratch file" if kind == "directory" else (f"{kind} {target.get('file')}" if kind else None)
    return {"kernel": system.get("kernel"), "fio version": facts.get("fio_version"), "file layout": layout}


def setup_differences(base: Run, other: Run) -> list[str]:
    """What of the set-up differs between the runs: the kernel, fio, the file measured on."""
    a, b = _setup(base), _setup(other)
    return [f"{name} {a[name]} in A vs {b[name]} in B" for name in a
            if a[name] is not None and b[name] is not None and a[name] != b[name]]


def drift_warnings(base: Run, other: Run, *, paired: bool) -> list[Warning]:
    """The coded warnings of what differed between two separate sessions; none for one ab session."""
    if paired:
        return []
    warnings = []
    conditions = condition_differences(base, other)
    if conditions:
        warnings.append(Warning(WarningCode.CONDITIONS_DIFFER, "",
                                "the machine's conditions differed between the runs: " + "; ".join(conditions),
                                CONFIRM))
    setup = setup_differences(base, other)
    if setup:
        warnings.append(Warning(WarningCode.SETUP_DIFFERS, "", "the set-up differed between the runs: "
                                + "; ".join(setup), CONFIRM))
    return warnings
