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


def test_the_cause_of_swings_named_fits_the_target_s_file_system() -> None:
    """ZFS's txg flushes only where the run's facts say zfs; ext4 gets its journal, an unknown target no
    file system's mechanism at all."""
    swinging = cell(runs=RUNS, samples=[1000.0, 2000.0] * 6)

    def said(fs_type: str | None) -> str:
        facts = {"target": {"fs_type": fs_type}} if fs_type else {}
        (warning,) = run_warnings([swinging], facts)
        return str(warning)

    assert "txg" in said("zfs")
    assert "ZFS" not in said("ext4") and "ext4 journal commits" in said("ext4")
    assert "ZFS" not in said("xfs") and "XFS log" in said("xfs")
    assert "tmpfs is memory" in said("tmpfs")
    assert all(word not in said(None) for word in ("ZFS", "ext4", "XFS", "btrfs"))


def test_a_spread_too_wide_to_read_gives_the_runs_range_not_a_percentage() -> None:
    (warning,) = map(str, run_warnings([cell(runs=[9120.0, 15327.0, 1_000_000.0])]))
    assert "9,120 to 1,000,000 IOPS" in warning and "too noisy to tell" in warning
    assert "sd " not in warning and "%" not in warning.split(";")[0]


def test_runs_that_differ_a_lot_say_how_many_runs_would_tell_five_percent() -> None:
    """--runs N with N from the runs-per-arm arithmetic on the spread seen; an ab arm is told --rounds."""
    from stackbench.analysis.advice import runs_to_decide
    from stackbench.analysis.between_runs import estimate

    values = [1000.0, 1160.0, 890.0, 1100.0, 960.0]  # 11 % between runs: about 80 runs tell 5 %
    needed = runs_to_decide(estimate(values).log_sd, 0.05)
    (warning,) = run_warnings([cell(runs=values)])
    assert warning.fix == f"keep the machine quiet; to tell a 5% change at this spread: --runs {needed}"
    (arm,) = run_warnings([cell(runs=values)], {"ab": {"session": "s", "arm": "A"}})
    assert arm.fix.endswith(f": --rounds {needed}") and "--runs" not in str(arm)
