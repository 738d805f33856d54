"""compare, layers and goals on synthetic runs with known answers (see tests/synthetic.py)."""

from __future__ import annotations

import math
import re

import pytest

from stackbench.analysis.between_runs import welch_ratio

from stackbench.analysis.compare import KEEP, NO_EVIDENCE, REVERT, SAME, compare_runs, parse_weights
from stackbench.analysis.goals import evaluate, parse_goal
from stackbench.analysis.layers import layer_gaps
from stackbench.base.errors import StackbenchError
from synthetic import cell, run

STEADY = [1000.0, 1002.0, 998.0, 1001.0, 999.0, 1000.5, 1000.2, 999.8, 1001.5, 998.5]


def _scaled(factor: float) -> list[float]:
    return [v * factor for v in STEADY]


RUNS = [1000.0, 1040.0, 970.0, 1010.0, 985.0]  # five separate fio runs, ~3 % apart


def _runs(factor: float) -> list[float]:
    return [v * factor for v in RUNS]


def test_a_run_compared_with_itself_is_the_same_and_never_significant() -> None:
    a = run([cell(runs=RUNS), cell(rw="randread", runs=_runs(2))])
    result = compare_runs(a, a)
    assert [r.verdict for r in result.rows] == [SAME, SAME]
    assert result.verdict == SAME
    assert all(not row.to_json()["significant"] for row in result.rows)


def test_clear_improvement_is_keep_and_clear_loss_is_revert() -> None:
    a = run([cell(runs=RUNS)])
    assert compare_runs(a, run([cell(runs=_runs(1.5))])).verdict == KEEP
    assert compare_runs(a, run([cell(runs=_runs(0.5))])).verdict == REVERT


def test_significant_but_below_the_minimum_effect_is_not_keep() -> None:
    tight = [1000.0, 1001.0, 999.0, 1000.5, 999.5]
    a = run([cell(runs=tight)])
    b = run([cell(runs=[v * 1.02 for v in tight])])
    result = compare_runs(a, b)
    assert result.rows[0].significant
    assert result.rows[0].verdict == SAME  # +2 % with a tight interval: inside +-5 %
    assert compare_runs(a, b, min_effect=0.01).verdict == KEEP


def test_a_wide_interval_is_no_evidence_not_same() -> None:
    noisy = [1000.0, 1400.0, 700.0, 1200.0, 800.0]
    result = compare_runs(run([cell(runs=noisy)]), run([cell(runs=[v * 1.03 for v in noisy[::-1]])]))
    assert result.rows[0].verdict == NO_EVIDENCE and result.verdict == NO_EVIDENCE


def test_one_run_per_side_gives_no_verdict_and_says_why() -> None:
    result = compare_runs(run([cell(runs=[1000.0])]), run([cell(runs=[3000.0])]))
    assert result.verdict == NO_EVIDENCE
    assert "at least 2 separate runs" in str(result.rows[0].warnings[0])


def test_rows_are_holm_adjusted() -> None:
    """Eight rows, one with p just under 0.05 alone: after Holm it is not significant."""
    base = [1000.0, 1030.0, 970.0, 1010.0, 990.0]
    shifted = [v * 1.07 for v in [1000.0, 1030.0, 970.0, 1010.0, 990.0][::-1]]
    cells_a = [cell(runs=base)] + [cell(qd=q, runs=base) for q in (1, 2, 8, 16, 32, 64, 128)]
    cells_b = [cell(runs=shifted)] + [cell(qd=q, runs=base[::-1]) for q in (1, 2, 8, 16, 32, 64, 128)]
    result = compare_runs(run(cells_a), run(cells_b))
    row = result.rows[0]
    assert row.test.p_value < 0.05 and row.p_holm >= row.test.p_value
    assert row.p_holm == pytest.approx(min(1.0, 8 * row.test.p_value))


def test_ab_runs_are_paired_by_round() -> None:
    """Drift over the rounds hides a 10 % gain from the independent test; pairing by round finds it."""
    drift = [0.7, 0.85, 1.0, 1.15, 1.3]
    a_runs = [1000 * d for d in drift]
    b_runs = [1100 * d * (1 + e) for d, e in zip(drift, [0.01, -0.01, 0.005, 0.0, -0.005])]
    facts = {"fio_version": "fio-3.33", "ab": {"session": "s1"}}
    a = run([cell(runs=a_runs, rounds=[0, 1, 2, 3, 4])], facts=facts)
    b = run([cell(runs=b_runs, rounds=[0, 1, 2, 3, 4])], facts=facts, run_id="1" * 32)
    paired = compare_runs(a, b)
    assert paired.paired and paired.verdict == KEEP and paired.rows[0].test.method == "paired-log"
    unpaired = compare_runs(a, run([cell(runs=b_runs)], run_id="2" * 32))
    assert not unpaired.paired and unpaired.verdict == NO_EVIDENCE


def test_legacy_runs_with_seconds_only_are_compared_with_a_weak_warning() -> None:
    a = run([cell(samples=STEADY)])
    result = compare_runs(a, run([cell(samples=_scaled(1.5))]))
    assert result.verdict == KEEP and result.weak and "WEAK" in result.reason
    assert "before stackbench counted separate runs" in str(result.rows[0].warnings[0])
    assert result.to_json()["rows"][0]["replicates"] == ["batches", "batches"]


def test_weights_decide_the_overall_verdict() -> None:
    a = run([cell(runs=RUNS), cell(bs=1024**2, rw="write", runs=RUNS)])
    b = run([cell(runs=_runs(1.5)), cell(bs=1024**2, rw="write", runs=_runs(0.8))])
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
    """docs/method.md section 3: 10644 IOPS on the host, 124 in the VM (85x), 3256 with virtio-blk cache=none,
    each layer measured in five separate runs ~3 % apart (RUNS scaled), so the gap is proven."""
    host = run([cell(runs=_runs(10644 / 1000))], label="host")
    vm = run([cell(runs=_runs(124 / 1000))], label="vm")
    fixed = run([cell(runs=_runs(3256 / 1000))], label="virtio-blk")
    gaps = layer_gaps([host, vm, fixed])
    (row,) = gaps.rows
    assert row.factors[0] == pytest.approx(10644 / 124)
    assert round(row.factors[0]) == 86
    assert row.factors[1] == pytest.approx(124 / 3256)
    pattern, lower, upper, factor = gaps.biggest_gap()
    assert (pattern, lower, upper) == ("4K QD4 rnd write", "host", "vm")
    assert gaps.names == ("host", "vm", "virtio-blk")


def test_layers_of_single_summaries_prove_no_gap() -> None:
    """Imported results (one number per cell, no separate runs) show their factors, but no test can support
    a gap, so none is named, whatever its size."""
    gaps = layer_gaps([run([cell(iops=10644)], label="host"), run([cell(iops=124)], label="vm")])
    assert gaps.rows[0].factors[0] == pytest.approx(10644 / 124)
    assert gaps.biggest_gap() is None and gaps.tested == 0
    assert gaps.to_json()["biggest_gap"] is None


def test_a_cell_the_bottom_layer_did_not_measure_is_still_a_row() -> None:
    """layers --auto reads a disk that holds data with the read cells only: the write cells the layers above
    it measured stay in the table (they were dropped when the rows came from the bottom run's cells)."""
    disk = run([cell(rw="randread", runs=_runs(20))], label="disk")
    fs_low = run([cell(rw="randread", runs=_runs(10)), cell(runs=_runs(8))], label="ext4")
    fs_up = run([cell(rw="randread", runs=_runs(5)), cell(runs=_runs(2))], label="ext4 in loop")
    gaps = layer_gaps([disk, fs_low, fs_up])
    rows = {row.pattern: row for row in gaps.rows}
    assert set(rows) == {"4K QD4 rnd read", "4K QD4 rnd write"}
    write = rows["4K QD4 rnd write"]
    assert write.values[0] is None and write.factors[0] is None
    assert write.factors[1] == pytest.approx(4) and write.gaps[1].proven


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


@pytest.mark.parametrize("text, message", [
    ("seq write >= " + "9" * 400 + " MB/s", "beyond anything fio can measure"),  # was stored as Infinity
    ("p99 <= 99999999999999 s", "beyond anything fio can measure"),  # 1e23 ns: past fio's 64-bit counters
    ("QD" + "9" * 5000 + " write >= 1 MB/s", "iodepth=99999999999999999999... is outside"),  # was exit 70
    ("QD99999999999999999999999 write >= 1 MB/s", "iodepth=99999999999999999999... is outside"),
    ("QD2147483648 write >= 1 MB/s", "iodepth=2147483648 is outside what fio accepts"),
    ("T4097 write >= 1 MB/s", "numjobs=4097 is outside what fio accepts"),
])
def test_goal_numbers_are_finite_and_ones_fio_has(text: str, message: str) -> None:
    with pytest.raises(StackbenchError, match=re.escape(message)):
        parse_goal(text)
    assert parse_goal("QD2147483647 T4096 write >= 18000000000000000000 IOPS").iodepth == 2**31 - 1


def test_goal_pass_fail_and_margin() -> None:
    stack = run([cell(rw="write", bs=1024**2, iops=120, p99_ns=2e6), cell(iops=5000, p99_ns=0.5e6)], label="stack")
    results = evaluate([parse_goal("seq write 1M >= 117 MB/s"), parse_goal("p99 <= 1 ms"),
                        parse_goal("seq read 1M >= 1 MB/s", label="stack")], stack)
    bw = results[0]
    assert bw.passed is True and bw.value == pytest.approx(120 * 1024**2)
    assert bw.margin_pct == pytest.approx((120 * 1024**2 - 117e6) / 117e6 * 100)
    p99 = {r.cell.pattern: r for r in results[1:3]}
    assert p99["1M QD4 seq write"].passed is False and p99["1M QD4 seq write"].margin_pct == pytest.approx(-100)
    assert p99["4K QD4 rnd write"].passed is True and p99["4K QD4 rnd write"].margin_pct == pytest.approx(50)
    assert results[3].passed is None and results[3].to_json()["status"] == "n/a"  # set for this run: it lacks the cell


def test_a_goal_is_checked_only_against_the_runs_it_was_set_for() -> None:
    """Issue 33: goals were global, so every run without a matching cell (every import of other cells) grew a
    row of n/a, and a run of another machine was judged by a goal set for this one."""
    from dataclasses import replace

    goal = "4K QD4 rnd write >= 3000 IOPS"
    host = run([cell(iops=5000)], label="host")
    other = replace(run([cell(iops=100)], label="usb-stick"), plan_name="blog+custom")
    reads = run([cell(rw="randread", bs=65536, qd=1, iops=900)], label="imported")
    for_host, for_blog, for_any = (parse_goal(goal, label="host"), parse_goal(goal, plan="blog"), parse_goal(goal))
    assert [r.goal for r in evaluate([for_host, for_blog, for_any], host)] == [for_host, for_any]
    assert [r.goal for r in evaluate([for_host, for_blog, for_any], other)] == [for_blog, for_any]  # blog+custom
    assert evaluate([for_host, for_blog, for_any], reads) == []  # no n/a rows on a run the goals say nothing of
    both = parse_goal(goal, label="host", plan="quick")
    assert evaluate([both], host) == [] and evaluate([both], replace(host, plan_name="quick"))[0].passed is True


def test_geomean_ratio_interval_brackets_the_ratio() -> None:
    a = run([cell(runs=RUNS), cell(rw="randread", runs=RUNS)])
    b = run([cell(runs=_runs(1.5)), cell(rw="randread", runs=_runs(1.5))])
    result = compare_runs(a, b)
    low, high = result.geomean_ratio_ci()
    assert low <= result.geomean_ratio <= high
    assert result.geomean_ratio == pytest.approx(1.5, rel=0.01)
    # both rows have the same log-ratio interval, so the combined half-width is sqrt(2) * h / 2
    row = welch_ratio(RUNS, _runs(1.5))
    h = (math.log(row.high) - math.log(row.low)) / 2
    assert (low, high) == pytest.approx((1.5 * math.exp(-h / math.sqrt(2)), 1.5 * math.exp(h / math.sqrt(2))))
    assert result.to_json()["geomean_ratio_ci"] == [low, high]


def test_layer_values_are_the_geometric_mean_of_separate_runs_not_of_seconds() -> None:
    """A layer's value is what compare uses: the runs' geometric mean; per-second samples do not count."""
    lower = run([cell(runs=[1000.0, 4000.0], samples=[9999.0] * 10)], label="host")
    upper = run([cell(runs=[100.0, 400.0])], label="vm")
    (row,) = layer_gaps([lower, upper]).rows
    assert row.values == (pytest.approx(2000.0), pytest.approx(200.0))
    assert row.factors[0] == pytest.approx(10.0)
