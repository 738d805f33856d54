"""Stability warnings on synthetic cells: each names what was seen and the option that fixes it."""

from __future__ import annotations

from dataclasses import replace

from stackbench.analysis.stability import run_warnings
from synthetic import cell

STEADY = [1000.0 + i % 3 for i in range(12)]


RUNS = [1000.0, 1010.0, 995.0, 1005.0, 1002.0]


def test_steady_cells_get_no_warning() -> None:
    assert run_warnings([cell(runs=RUNS, samples=STEADY)]) == []
    assert run_warnings([cell(samples=STEADY)]) == []  # legacy cells: nothing to say about runs


def test_cells_measured_in_one_run_share_one_warning_naming_the_fix() -> None:
    cells = [cell(runs=[1000.0]), cell(rw="randread", runs=[3000.0]), cell(qd=1, runs=RUNS)]
    warnings = [str(w) for w in run_warnings(cells)]
    assert len(warnings) == 1
    assert warnings[0].startswith("4K QD4 rnd write, 4K QD4 rnd read: measured in one fio run")
    assert "--runs 3" in warnings[0]


def test_runs_that_differ_a_lot_are_named_with_their_range() -> None:
    (warning,) = map(str, run_warnings([cell(runs=[1000.0, 1400.0, 900.0, 1300.0, 1000.0])]))
    assert "separate runs differ a lot" in warning and "900 to 1,400 IOPS" in warning and "--runs" in warning


def test_adaptive_cell_out_of_reach_repeats_the_stop_reason() -> None:
    noisy = cell(runs=[1000.0, 1400.0] * 5)
    reason = "target ±5% out of reach on this machine: 10 runs reached with ±9.0%; runs differed by 20% (sd)"
    adaptive = replace(noisy, measurement={**noisy.measurement, "mode": "adaptive", "stop_reason": reason})
    (warning,) = map(str, run_warnings([adaptive]))
    assert reason in warning


def test_seconds_that_swing_inside_runs_are_a_diagnostic_not_an_error_bar() -> None:
    swinging = [1000.0, 2000.0] * 6
    (warning,) = map(str, run_warnings([cell(runs=RUNS, samples=swinging)]))
    assert "second to second inside runs" in warning and "CV 35%" in warning


def test_imported_cells_without_samples_get_no_warning() -> None:
    assert run_warnings([cell(samples=None, iops=100)]) == []
