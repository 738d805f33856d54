"""compare of runs from separate sessions names its design, lists what differed between the sessions as
coded warnings (CONDITIONS_DIFFER, SETUP_DIFFERS) and marks such a verdict weak with the advice to confirm
it with `ab`; the two arms of one ab session never get the mark. The runs are synthetic (tests/synthetic.py):
their conditions are the summaries the runner stores, chosen; tests/runner/test_conditions.py makes real
ones."""

from __future__ import annotations

import json
from dataclasses import replace

from stackbench.analysis.compare import compare_runs
from stackbench.analysis.drift import PAIRED, SEPARATE
from stackbench.model.results import Run
from stackbench.model.round_order import round_orders
from stackbench.model.warning import WarningCode
from stackbench.report.compare import comparison_csv_table, comparison_table
from synthetic import ab_arms, cell, run

A_RUNS = [1000.0, 1010.0, 995.0, 1005.0, 1002.0]
B_RUNS = [v * 1.2 for v in A_RUNS]  # B clearly faster: a keep
FACTS = {"fio_version": "fio-3.33", "system": {"kernel": "6.1.0"}, "target": {"kind": "directory"}}


def _with(measured: Run, cpu: list[float], scrubs: dict | None = None, other: list[float] | None = None,
          **facts: object) -> Run:
    """`measured` with each run's CPU pressure (one per run, in order), the other processes' CPU time where
    given (`other`, CPUs) and facts changed."""
    cells = []
    for c in measured.cells:
        replicates = [{**r, "conditions": {"pressure": {"cpu": p}, **({"scrubs": scrubs} if scrubs else {}),
                                           **({"procs": {"other": other[i]}} if other else {})}}
                      for i, (r, p) in enumerate(zip(c.measurement["replicates"], cpu))]
        cells.append(replace(c, measurement={**c.measurement, "replicates": replicates}))
    return replace(measured, cells=tuple(cells), facts={**measured.facts, **facts})


def _separate(a_cpu: list[float], b_cpu: list[float], **b_facts: object):  # noqa: ANN202 - a comparison
    a = _with(run([cell(runs=A_RUNS)], label="a", facts=FACTS, run_id="a" * 32), a_cpu)
    b = _with(run([cell(runs=B_RUNS)], label="b", facts=FACTS, run_id="b" * 32), b_cpu, **b_facts)
    return compare_runs(a, b)


def test_a_pressure_difference_between_sessions_makes_the_verdict_weak_and_says_so_everywhere() -> None:
    result = _separate([2.0, 3.0, 1.0, 2.0, 2.0], [40.0, 45.0, 38.0, 50.0, 41.0])
    assert result.verdict == "keep" and result.weak
    [warning] = result.warnings
    assert warning.code == WarningCode.CONDITIONS_DIFFER
    assert "CPU pressure 2 % in A vs 43 % in B" in warning.text and "stackbench ab" in warning.fix
    assert "WEAK: the separate sessions differed (CONDITIONS_DIFFER" in result.reason
    document = json.loads(json.dumps(result.to_json()))
    assert document["design"] == SEPARATE and document["weak"] is True
    assert [w["code"] for w in document["warnings"]] == ["CONDITIONS_DIFFER"]
    table = comparison_table(result)
    assert f"Design: {SEPARATE}" in table.notes and any("WEAK: the separate sessions" in n for n in table.notes)
    assert comparison_csv_table(result).rows[0][comparison_csv_table(result).headers.index("weak")] == "yes"


def test_fio_s_own_pressure_rising_with_its_speed_is_not_a_difference_in_conditions() -> None:
    """B is 20 % faster, so fio's threads wake more often and wait more for a CPU: 13 % CPU pressure in A, 25
    % in B, with no other process using the CPU on either side. Where both runs counted the other
    processes' CPU time, that is what is compared; a real neighbour is still found."""
    quiet = [0.01, 0.0, 0.02, 0.01, 0.0]
    a = _with(run([cell(runs=A_RUNS)], label="a", facts=FACTS, run_id="a" * 32), [13.0, 12.0, 14.0, 13.0, 12.0],
              other=quiet)
    b = _with(run([cell(runs=B_RUNS)], label="b", facts=FACTS, run_id="b" * 32), [25.0, 24.0, 26.0, 25.0, 27.0],
              other=quiet)
    result = compare_runs(a, b)
    assert result.verdict == "keep" and not result.weak and result.warnings == ()
    busy = _with(run([cell(runs=B_RUNS)], label="b", facts=FACTS, run_id="b" * 32), [25.0, 24.0, 26.0, 25.0, 27.0],
                 other=[1.0, 0.98, 1.02, 1.0, 0.99])
    [warning] = compare_runs(a, busy).warnings
    assert "CPU used by other processes 0.0 CPUs in A vs 1.0 CPUs in B" in warning.text
    assert compare_runs(a, busy).weak
    # stored before the processes were counted: pressure is all there is to compare
    old = _with(run([cell(runs=B_RUNS)], label="b", facts=FACTS, run_id="b" * 32), [25.0, 24.0, 26.0, 25.0, 27.0])
    assert "CPU pressure 13 % in A vs 25 % in B" in compare_runs(a, old).warnings[0].text


def test_quiet_sessions_alike_name_their_design_and_are_not_weak() -> None:
    """Pressure that differs no more than each run's own runs do (ranges overlap) is not a difference."""
    result = _separate([2.0, 14.0, 1.0, 3.0, 2.0], [10.0, 4.0, 3.0, 16.0, 5.0])
    assert result.verdict == "keep" and not result.weak and result.warnings == ()
    assert result.design == SEPARATE and "WEAK" not in result.reason


def test_a_scrub_on_one_side_and_a_different_kernel_are_listed() -> None:
    a = _with(run([cell(runs=A_RUNS)], label="a", facts=FACTS, run_id="a" * 32), [1.0] * 5)
    b = _with(run([cell(runs=B_RUNS)], label="b", facts=FACTS, run_id="b" * 32), [1.0] * 5,
              scrubs={"tank": "scrub in progress since ..."}, system={"kernel": "6.8.0"})
    result = compare_runs(a, b)
    codes = {w.code: w.text for w in result.warnings}
    assert "a scrub or resilver on tank during B only" in codes[WarningCode.CONDITIONS_DIFFER]
    assert "kernel 6.1.0 in A vs 6.8.0 in B" in codes[WarningCode.SETUP_DIFFERS]
    assert result.weak


def test_an_existing_file_on_one_side_is_a_different_layout() -> None:
    result = _separate([1.0] * 5, [1.0] * 5, target={"kind": "file", "file": "/tank/old.img"})
    [warning] = result.warnings
    assert warning.code == WarningCode.SETUP_DIFFERS and "file layout a new scratch file in A" in warning.text


def test_the_arms_of_one_ab_session_are_never_marked() -> None:
    a, b = ab_arms(round_orders(5), A_RUNS, B_RUNS)
    a = _with(a, [2.0, 3.0, 1.0, 2.0, 2.0], system={"kernel": "6.1.0"})
    b = _with(b, [40.0, 45.0, 38.0, 50.0, 41.0], system={"kernel": "6.8.0"})
    result = compare_runs(a, b)
    assert result.paired and result.design == PAIRED
    assert not result.weak and result.drift == () and "WEAK" not in result.reason
    assert result.to_json()["design"] == PAIRED
