"""Every claim passes the same proof: a layer gap is a compare keep by another name.

On synthetic runs (tests/synthetic.py) with known answers: the issue's example (a 2.9x factor on runs that
`compare` calls no evidence) names no gap; a gap is named only among factors whose Holm-adjusted p is below
alpha, with the interval and the p-value of the very test `compare` makes on the same cells; runs of one ab
session are paired by round in both; and what would decide a question is worded for the command asked.
"""

from __future__ import annotations

import pytest

from stackbench.analysis.between_runs import holm, paired_ratio, welch_ratio
from stackbench.analysis.compare import NO_EVIDENCE, compare_runs
from stackbench.analysis.layers import layer_gaps
from stackbench.analysis.stability import run_warnings
from synthetic import cell, run

NOISY = [9120.0, 15327.0, 1_000_000.0]  # the runs of one cell on a busy 2-core machine
NOISY_EXT4 = [3100.0, 5200.0, 350_000.0]  # 2.9x fewer, as noisy
STEADY = [1000.0, 1040.0, 970.0, 1010.0, 985.0]


def _scaled(values: list[float], factor: float) -> list[float]:
    return [v * factor for v in values]


def _ab(arm: str, cells: list, session: str = "s1") -> object:
    return run(cells, label=f"x-{arm}", facts={"fio_version": "fio-3.33", "ab": {"session": session, "arm": arm}})


def test_a_gap_compare_calls_no_evidence_is_not_named() -> None:
    raw, ext4 = run([cell(qd=1, runs=NOISY)], label="raw"), run([cell(qd=1, runs=NOISY_EXT4)], label="ext4")
    compared = compare_runs(raw, ext4)
    assert compared.rows[0].verdict == NO_EVIDENCE
    gaps = layer_gaps([raw, ext4], ["raw", "ext4"])
    (gap,) = gaps.rows[0].gaps
    assert gap.factor == pytest.approx(2.915, rel=1e-3)
    assert gaps.biggest_gap() is None and not gap.proven
    # the same test: same p, and the interval of lower / upper is the reciprocal of compare's upper / lower
    row = compared.rows[0].test
    assert gap.test.p_value == pytest.approx(row.p_value)
    assert (gap.low, gap.high) == pytest.approx((1 / row.high, 1 / row.low))
    seen = gaps.largest_unproven()
    assert seen[:3] == ("4K QD1 rnd write", "raw", "ext4") and seen[3].too_noisy
    assert gaps.undecided().startswith("rerun each layer with `stackbench run --runs ")
    data = gaps.to_json()
    assert data["biggest_gap"] is None and data["largest_unproven_gap"]["proven"] is False
    assert data["rows"][0]["gaps"][0]["ci"] == [gap.low, gap.high]  # the raw bounds stay in JSON


def test_the_biggest_gap_is_the_largest_proven_one_not_the_largest_seen() -> None:
    """A noisy 50x factor beside a steady 3x one: the 3x is the gap the runs prove."""
    lower = run([cell(runs=STEADY), cell(rw="randread", runs=[100_000.0, 2_000.0, 900_000.0])], label="host")
    upper = run([cell(runs=_scaled(STEADY, 1 / 3)), cell(rw="randread", runs=[2_000.0, 40.0, 18_000.0])], label="vm")
    gaps = layer_gaps([lower, upper])
    factors = {row.pattern: row.gaps[0] for row in gaps.rows}
    assert factors["4K QD4 rnd read"].factor == pytest.approx(50.0)
    assert not factors["4K QD4 rnd read"].proven and factors["4K QD4 rnd write"].proven
    pattern, low_layer, high_layer, factor = gaps.biggest_gap()
    assert (pattern, low_layer, high_layer) == ("4K QD4 rnd write", "host", "vm")
    assert factor == pytest.approx(3.0)
    assert gaps.undecided() is None and gaps.to_json()["largest_unproven_gap"] is None


def test_factors_are_holm_adjusted_over_every_cell_and_layer_pair() -> None:
    cells = [(STEADY, 2.0), ([1000.0, 1300.0, 800.0, 1200.0, 900.0], 1.25), ([500.0, 510.0, 490.0], 1.02)]
    layers = [run([cell(qd=q, runs=values) for q, (values, _) in enumerate(cells, 1)], label="a"),
              run([cell(qd=q, runs=_scaled(values, 1 / f)) for q, (values, f) in enumerate(cells, 1)], label="b")]
    gaps = layer_gaps(layers)
    raw = [welch_ratio(_scaled(values, 1 / f), values).p_value for values, f in cells]
    assert [row.gaps[0].p_holm for row in gaps.rows] == pytest.approx(holm(raw))
    assert gaps.tested == 3


def test_runs_of_one_ab_session_are_paired_by_round_in_layers_as_in_compare() -> None:
    """Drift that hits both arms of a round (x1, x2, x4 by round) is taken out: paired, the 1.5x is proven."""
    drift = [1000.0, 2000.0, 4000.0]
    a = _ab("A", [cell(runs=[v * 1.5 for v in drift], rounds=[0, 1, 2])])
    b = _ab("B", [cell(runs=drift, rounds=[0, 1, 2])])
    gaps = layer_gaps([a, b])
    (gap,) = gaps.rows[0].gaps
    assert gap.test.method == "paired-log" and gaps.paired == (True,)
    assert gap.test.p_value == pytest.approx(paired_ratio([(d, d * 1.5) for d in drift]).p_value)
    assert gap.proven and compare_runs(b, a).rows[0].test.method == "paired-log"
    unpaired = layer_gaps([run(list(a.cells)), run(list(b.cells))])
    assert unpaired.rows[0].gaps[0].test.method == "welch-log" and not unpaired.rows[0].gaps[0].proven


def test_compare_says_how_many_runs_would_decide_a_no_evidence() -> None:
    a = run([cell(runs=[1000.0, 1100.0, 950.0])])
    b = run([cell(runs=[1030.0, 1120.0, 990.0])])
    result = compare_runs(a, b)
    (row,) = result.rows
    assert row.verdict == NO_EVIDENCE and row.runs_to_decide is not None and row.runs_to_decide > 3
    assert result.advice == (f"rerun each side with `stackbench run --runs {row.runs_to_decide}`, or use "
                             f"`stackbench ab --rounds {row.runs_to_decide}`")
    assert result.advice in result.reason and result.to_json()["advice"] == result.advice
    assert result.to_json()["rows"][0]["runs_to_decide"] == row.runs_to_decide


def test_nothing_said_about_an_ab_session_names_runs() -> None:
    """`ab` has no --runs: its comparison's reason, its rows' warnings and its arms' stored warnings say
    --rounds, with the number the paired spread needs."""
    a = _ab("A", [cell(runs=[1000.0, 1300.0, 900.0], rounds=[0, 1, 2])])
    b = _ab("B", [cell(runs=[1100.0, 1250.0, 950.0], rounds=[0, 1, 2])])
    result = compare_runs(a, b)
    assert result.paired and result.verdict == NO_EVIDENCE
    assert "--rounds" in result.reason and "--runs" not in result.reason
    texts = [str(w) for w in run_warnings(list(a.cells), a.facts)]
    assert texts and all("--runs" not in t for t in texts) and any("--rounds" in t for t in texts)
    # one round only in a cell (a cell that failed in round 2): the row falls back and still says --rounds
    short = _ab("A", [cell(runs=[1000.0], rounds=[0])])
    row_warnings = [str(w) for w in compare_runs(short, b).rows[0].warnings]
    assert row_warnings and all("--runs" not in t and "--rounds" in t for t in row_warnings)
