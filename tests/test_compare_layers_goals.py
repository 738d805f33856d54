"""compare, layers and goals on synthetic runs with known answers (see tests/synthetic.py)."""

from __future__ import annotations

import pytest

from stackbench.analysis.compare import KEEP, NO_EVIDENCE, REVERT, compare_runs, parse_weights
from stackbench.analysis.goals import evaluate, parse_goal
from stackbench.analysis.layers import layer_gaps
from stackbench.errors import StackbenchError
from synthetic import cell, run

STEADY = [1000.0, 1002.0, 998.0, 1001.0, 999.0, 1000.5, 1000.2, 999.8, 1001.5, 998.5]


def _scaled(factor: float) -> list[float]:
    return [v * factor for v in STEADY]


def test_a_run_compared_with_itself_is_no_evidence() -> None:
    a = run([cell(samples=STEADY), cell(rw="randread", samples=_scaled(2))])
    result = compare_runs(a, a)
    assert [r.verdict for r in result.rows] == [NO_EVIDENCE, NO_EVIDENCE]
    assert result.verdict == NO_EVIDENCE
    assert all(not row.to_json()["significant"] for row in result.rows)


def test_clear_improvement_is_keep_and_clear_loss_is_revert() -> None:
    a = run([cell(samples=STEADY)])
    assert compare_runs(a, run([cell(samples=_scaled(1.5))])).verdict == KEEP
    assert compare_runs(a, run([cell(samples=_scaled(0.5))])).verdict == REVERT


def test_significant_but_below_the_minimum_effect_is_no_evidence() -> None:
    a = run([cell(samples=STEADY)])
    b = run([cell(samples=_scaled(1.02))])
    result = compare_runs(a, b)
    assert result.rows[0].comparison.significant
    assert result.rows[0].verdict == NO_EVIDENCE
    assert compare_runs(a, b, min_effect=0.01).verdict == KEEP


def test_weights_decide_the_overall_verdict() -> None:
    a = run([cell(samples=STEADY), cell(bs=1024**2, rw="write", samples=STEADY)])
    b = run([cell(samples=_scaled(1.5)), cell(bs=1024**2, rw="write", samples=_scaled(0.8))])
    assert compare_runs(a, b).verdict == NO_EVIDENCE  # one keep, one revert, equal weight
    assert compare_runs(a, b, weights=parse_weights(["4K QD4 rnd write=3"])).verdict == KEEP
    assert compare_runs(a, b, weights=parse_weights(["1M QD4 seq write=1"])).verdict == REVERT


def test_bad_weights_are_refused() -> None:
    with pytest.raises(StackbenchError, match="PATTERN=WEIGHT"):
        parse_weights(["nonsense"])
    a = run([cell(samples=STEADY)])
    with pytest.raises(StackbenchError, match="not in both runs"):
        compare_runs(a, a, weights=parse_weights(["9K QD9 rnd read=1"]))


def test_differing_key_facts_are_refused_unless_forced() -> None:
    a = run([cell(samples=STEADY)], facts={"fio_version": "fio-3.33"})
    b = run([cell(samples=STEADY)], facts={"fio_version": "fio-3.36"})
    with pytest.raises(StackbenchError, match=r"fio version: fio-3.33 vs fio-3.36.*--force"):
        compare_runs(a, b)
    assert compare_runs(a, b, force=True).fact_differences == ("fio version: fio-3.33 vs fio-3.36",)
    synced = run([cell(samples=STEADY, sync=True)])
    with pytest.raises(StackbenchError, match=r"sync: \[False\] vs \[True\]"):
        compare_runs(a, synced)


def test_runs_without_common_cells_are_refused() -> None:
    with pytest.raises(StackbenchError, match="no cells in common"):
        compare_runs(run([cell(samples=STEADY)]), run([cell(rw="randread", samples=STEADY)]))


def test_layers_reproduce_the_method_example() -> None:
    """METHOD.md section 3: 10644 IOPS on the host, 124 in the VM (85x), 3256 with virtio-blk cache=none."""
    host = run([cell(iops=10644)], label="host")
    vm = run([cell(iops=124)], label="vm")
    fixed = run([cell(iops=3256)], label="virtio-blk")
    gaps = layer_gaps([host, vm, fixed])
    (row,) = gaps.rows
    assert row.factors[0] == pytest.approx(10644 / 124)
    assert round(row.factors[0]) == 86
    assert row.factors[1] == pytest.approx(124 / 3256)
    pattern, lower, upper, factor = gaps.biggest_gap()
    assert (pattern, lower, upper) == ("4K QD4 rnd write", "host", "vm")
    assert gaps.names == ("host", "vm", "virtio-blk")


def test_layers_need_two_runs_and_matching_names() -> None:
    a = run([cell(iops=1)])
    with pytest.raises(StackbenchError, match="at least two runs"):
        layer_gaps([a])
    with pytest.raises(StackbenchError, match="one name per run"):
        layer_gaps([a, a], ["only-one"])


@pytest.mark.parametrize("text, metric, threshold, rw, bs", [
    ("seq write 1M >= 117 MB/s", "bw", 117e6, ("write",), 1024**2),
    ("4K QD4 rnd write >= 3000 IOPS", "iops", 3000.0, ("randwrite",), 4096),
    ("p99 <= 1 ms", "lat", 1e6, (), None),
    ("rnd read p50 < 200 us", "lat", 200e3, ("randread",), None),
])
def test_goals_are_parsed_from_practitioners_wording(text, metric, threshold, rw, bs) -> None:
    goal = parse_goal(text)
    assert (goal.metric, goal.threshold, goal.rw, goal.bs) == (metric, threshold, rw, bs)


@pytest.mark.parametrize("text, message", [
    ("fast please", "cannot read the goal"),
    ("seq write >= 10 furlongs", "unknown unit"),
    ("seq wirte >= 10 MB/s", "unknown word 'wirte'"),
    ("p99 >= 10 IOPS", "needs a time unit"),
])
def test_bad_goals_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(StackbenchError, match=message):
        parse_goal(text)


def test_goal_pass_fail_and_margin() -> None:
    stack = run([cell(rw="write", bs=1024**2, iops=120, p99_ns=2e6), cell(iops=5000, p99_ns=0.5e6)])
    results = evaluate([parse_goal("seq write 1M >= 117 MB/s"), parse_goal("p99 <= 1 ms"),
                        parse_goal("seq read 1M >= 1 MB/s")], stack)
    bw = results[0]
    assert bw.passed is True and bw.value == pytest.approx(120 * 1024**2)
    assert bw.margin_pct == pytest.approx((120 * 1024**2 - 117e6) / 117e6 * 100)
    p99 = {r.cell.pattern: r for r in results[1:3]}
    assert p99["1M QD4 seq write"].passed is False and p99["1M QD4 seq write"].margin_pct == pytest.approx(-100)
    assert p99["4K QD4 rnd write"].passed is True and p99["4K QD4 rnd write"].margin_pct == pytest.approx(50)
    assert results[3].passed is None and results[3].to_json()["status"] == "n/a"


def test_geomean_ratio_interval_brackets_the_ratio() -> None:
    a = run([cell(samples=STEADY), cell(rw="randread", samples=STEADY)])
    b = run([cell(samples=_scaled(1.5)), cell(rw="randread", samples=_scaled(1.5))])
    result = compare_runs(a, b)
    low, high = result.geomean_ratio_ci()
    assert low <= result.geomean_ratio <= high
    assert result.geomean_ratio == pytest.approx(1.5, rel=0.01)
    assert high - low < 0.05
    assert result.to_json()["geomean_ratio_ci"] == [low, high]
