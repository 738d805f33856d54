"""Stability warnings on synthetic cells: each names what was seen and the option that fixes it."""

from __future__ import annotations

from dataclasses import replace

from stackbench.analysis.stability import run_warnings
from synthetic import cell

STEADY = [1000.0 + i % 3 for i in range(12)]


def test_steady_cells_get_no_warning() -> None:
    assert run_warnings([cell(samples=STEADY)]) == []


def test_cells_with_too_few_samples_share_one_warning_naming_the_fix() -> None:
    cells = [cell(samples=[1.0, 2.0]), cell(rw="randread", samples=[3.0, 4.0, 5.0]), cell(samples=STEADY, qd=1)]
    warnings = run_warnings(cells)
    assert len(warnings) == 1
    assert warnings[0].startswith("4K QD4 rnd write, 4K QD4 rnd read: 2 or fewer per-second samples")
    assert "--until-stable" in warnings[0]


def test_missed_ci_target_in_adaptive_mode_suggests_a_longer_cap() -> None:
    noisy = [1000.0, 1400.0] * 6
    adaptive = replace(cell(samples=noisy), measurement={"mode": "adaptive", "seconds": 30.0,
                                                         "rule": {"ci_target": 0.05, "max_seconds": 30}})
    (first, second) = run_warnings([adaptive])
    assert "above the ±5% target; rerun with --max-time 60" in first
    assert "CV 17%" in second and "--max-time" in second


def test_imported_cells_without_samples_get_no_warning() -> None:
    assert run_warnings([cell(samples=None, iops=100)]) == []
