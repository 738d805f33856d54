"""The time model behind `run --dry-run`, the run line and the progress ETA (analysis/estimate.py), on
plans whose parts are known; bench/estimate_bench.py measures it against real runs."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from stackbench.analysis.estimate import (
    ASSUMED_WRITE_RATE, FAST_WRITE_RATE, FINISH_S, RAM_SPREAD, SLOW_WRITE_RATE, STARTUP_S, UNKNOWN_SPREAD, Priors,
    expected_runs, layout_bytes, plan_time, priors_from, remaining_runs,
)
from stackbench.analysis.stopping import decide
from stackbench.cli.progress import ProgressObserver
from stackbench.model.plan import RUN_OVERHEAD_S, StoppingRule, build_plan
from synthetic import cell, run

MiB = 1024**2


def test_a_fixed_plan_counts_start_up_checks_layout_and_every_runs_overhead() -> None:
    """The old estimate was 15 x (2.5 + 0.4) s for the quick preset: 15-25 % below what runs took."""
    plan = build_plan("quick")
    estimate = plan_time(plan, setup_s=0.3, layout=layout_bytes(plan, new_file=True))
    fio = 15 * (0.5 + 2 + RUN_OVERHEAD_S) + 256 * MiB / ASSUMED_WRITE_RATE
    assert estimate.fio_seconds == pytest.approx(fio)
    assert estimate.seconds == pytest.approx(0.3 + fio + FINISH_S)
    assert plan_time(plan).setup_s == STARTUP_S  # nothing measured: the start-up assumed
    assert estimate.low < estimate.seconds < estimate.high  # the layout's rate is a range
    assert estimate.headline().startswith("about ")


def test_fio_lays_out_the_file_only_when_the_first_run_reads_a_file_that_is_not_there() -> None:
    reads_first = build_plan("quick")  # 4K QD1 rnd read first
    writes_first = build_plan(bs=["4k"], qd=["1"], rw=["randwrite", "randread"], size="64M")
    assert layout_bytes(reads_first, new_file=True) == 256 * MiB
    assert layout_bytes(reads_first, new_file=False, existing_bytes=256 * MiB) == 0
    assert layout_bytes(reads_first, new_file=False, existing_bytes=56 * MiB) == 200 * MiB
    assert layout_bytes(writes_first, new_file=True) == 0


def test_the_cache_exhaustion_estimate_is_its_size_at_a_write_rate_not_its_six_hour_cap() -> None:
    """It said 'about 6 h' for a 512 MiB device: the cap, where the file is written in about a second."""
    plan = build_plan("cache-exhaustion", size="512M")
    estimate = plan_time(plan)
    write = 512 * MiB / ASSUMED_WRITE_RATE
    assert estimate.fio_seconds == pytest.approx(write + RUN_OVERHEAD_S)
    assert estimate.low == pytest.approx(STARTUP_S + FINISH_S + 512 * MiB / FAST_WRITE_RATE + RUN_OVERHEAD_S)
    assert estimate.high == pytest.approx(STARTUP_S + FINISH_S + 512 * MiB / SLOW_WRITE_RATE + RUN_OVERHEAD_S)
    assert any("500 MB/s (assumed" in line for line in estimate.details())
    measured = plan_time(plan, priors=Priors(write_bytes_s=50e6, source="run 0123456789ab"))
    assert measured.fio_seconds == pytest.approx(512 * MiB / 50e6 + RUN_OVERHEAD_S)
    assert measured.high >= measured.seconds  # the slow end widens to the measured rate
    assert any("measured by run 0123456789ab" in line for line in measured.details())
    huge = build_plan("cache-exhaustion", size="1024G")
    assert plan_time(huge, priors=Priors(write_bytes_s=1e6)).fio_seconds == pytest.approx(
        huge.workloads[0].runtime + RUN_OVERHEAD_S)  # never past fio's cap


RULE = StoppingRule(ci_target=0.05, min_runs=5, max_runs=10)


def test_the_adaptive_rule_needs_more_runs_the_more_runs_differ() -> None:
    values = [expected_runs(RULE, spread) for spread in (0.0, 0.01, 0.03, 0.05, 0.08, 0.3)]
    assert values[0] == 5 and values[1] == pytest.approx(5, abs=0.05) and values[-1] == pytest.approx(10, abs=0.05)
    assert values == sorted(values) and all(5 <= v <= 10 for v in values)
    assert 5.5 < values[3] < 9.5  # between: some stop early, some late
    assert expected_runs(RULE, 0.3, cap=7) == pytest.approx(7, abs=0.05)  # the time cap


@pytest.mark.parametrize("spread", [0.02, 0.04, 0.06])
def test_the_expected_runs_are_what_the_stopping_rule_itself_does(spread: float) -> None:
    """The rule (analysis/stopping.decide) on log-normal runs with this spread, 300 times: its mean number
    of runs is the model's, within the simulations' error."""
    draw = random.Random(7)
    counts = []
    for _ in range(300):
        values: list[float] = []
        while True:
            values.append(1000 * math.exp(draw.gauss(0, spread)))
            stop, _ = decide(RULE, values, 0.0, 1.0)
            if stop:
                break
        counts.append(len(values))
    assert sum(counts) / len(counts) == pytest.approx(expected_runs(RULE, spread), abs=0.35)


def test_an_adaptive_plan_whose_runs_differ_is_estimated_near_its_cap_not_at_its_minimum() -> None:
    """An adaptive plan said 'about 38 s' (every cell at its minimum) and took 88 s."""
    plan = build_plan("crystal", size="64M", runtime="2", ramp="0.5")
    minimum = sum(5 * plan.run_seconds(w) for w in plan.workloads)
    assumed = plan_time(plan)
    assert assumed.fio_seconds > minimum
    noisy = plan_time(plan, priors=Priors(spreads={w.key: 0.25 for w in plan.workloads}, source="run x"))
    assert noisy.fio_seconds == pytest.approx(sum(10 * plan.run_seconds(w) for w in plan.workloads), rel=0.01)
    assert noisy.low == pytest.approx(STARTUP_S + FINISH_S + minimum)
    assert any("the spreads run x measured (median 25.0%)" in line for line in noisy.details())


def test_a_first_time_adaptive_estimate_assumes_a_disks_spread_and_says_it_is_not_yet_known() -> None:
    """bench/estimate_bench.py: first-time adaptive plans took 30-40 % longer than estimated, near the range's
    upper end, because a new cell was assumed to vary by 4 % where a disk's runs differ by 10-40 % and ran
    to --max-runs. Without earlier runs the point estimate now sits where such runs end, and says why."""
    plan = build_plan("crystal", size="64M", runtime="2", ramp="0.5")
    capped = sum(10 * plan.run_seconds(w) for w in plan.workloads)
    first = plan_time(plan)
    assert first.fio_seconds >= 0.9 * capped
    assert first.seconds <= first.high
    assert first.headline().endswith("; the runs' spread is not yet known)")
    assert any("10% (assumed, not yet known: no earlier run on this target" in line for line in first.details())
    assert first.not_yet_known == ("spread",) and first.to_json()["not_yet_known"] == ["spread"]
    known = plan_time(plan, priors=Priors(spreads={w.key: 0.01 for w in plan.workloads}, source="run x"))
    assert known.fio_seconds == pytest.approx(sum(5 * plan.run_seconds(w) for w in plan.workloads), rel=0.01)
    assert "not yet known" not in known.headline()  # a spread measured on the target: today's estimate
    ram = plan_time(plan, ram=True)  # tmpfs: runs that write RAM differ by 1-5 %
    assert ram.cells[0].spread == RAM_SPREAD and ram.fio_seconds < 0.75 * capped
    assert "runs on tmpfs differ by 1-5 %" in " ".join(ram.details())


def test_an_assumed_write_rate_is_said_to_be_not_yet_known() -> None:
    """The cache-exhaustion write's time is its size at a rate no run has measured yet: a guess in a range."""
    plan = build_plan("cache-exhaustion", size="512M")
    assert plan_time(plan).headline().endswith("; the write rate is not yet known)")
    assert plan_time(plan).to_json()["not_yet_known"] == ["write_rate"]
    measured = plan_time(plan, priors=Priors(write_bytes_s=1e9, source="run 0123456789ab"))
    assert "not yet known" not in measured.headline()
    assert "not yet known" not in plan_time(build_plan(bs=["4k"], qd=["1"], rw=["randwrite"], runs=2)).headline()
    quick = build_plan("quick")  # lays out 256 MiB at a rate not known: a second or two of a 46 s run
    assert "not yet known" not in plan_time(quick, layout=layout_bytes(quick, new_file=True)).headline()


def test_a_cell_still_running_is_expected_to_take_what_its_own_runs_say() -> None:
    steady, noisy = [1000.0, 1001.0, 999.0], [1000.0, 1400.0, 700.0]
    assert remaining_runs(RULE, steady, 10) == pytest.approx(5, abs=0.05)
    assert remaining_runs(RULE, noisy, 10) == pytest.approx(10, abs=0.05)
    assert remaining_runs(RULE, [1000.0] * 9, 10) == 10  # at least one more than it has
    assert remaining_runs(RULE, [1000.0], 10) is None  # one run tells no spread: the estimate's expectation stands


def _replicated(rw: str, bs: int, values: list[float], seconds: list[float]):  # noqa: ANN202
    made = cell(rw=rw, bs=bs, qd=1, runs=values)
    replicates = [{**r, "order": i + 1, "seconds": s} for i, (r, s) in enumerate(zip(made.measurement["replicates"],
                                                                                        seconds))]
    return replace(made, measurement={**made.measurement, "replicates": replicates})


def test_priors_are_what_this_hosts_newest_run_on_the_target_measured() -> None:
    here = {"system": {"hostname": "here"}}
    mine = run([_replicated("randread", 4096, [1000.0, 1100.0], [10.6, 10.6]),
                _replicated("write", 1024 * MiB // 1024, [100.0, 100.0], [10.6, 10.8])],
               facts=here, run_id="a" * 32)
    other = run([_replicated("randread", 4096, [1000.0, 3000.0], [12.0, 12.0])],
                facts={"system": {"hostname": "elsewhere"}}, run_id="b" * 32)
    priors = priors_from([other, mine], "here")
    key = mine.cells[0].workload.key
    assert priors.spreads == {key: pytest.approx(abs(math.log(1100 / 1000)) / math.sqrt(2)),
                              mine.cells[1].workload.key: 0.0}
    assert priors.write_bytes_s == mine.cells[1].result.bw_bytes
    assert priors.run_overhead_s == pytest.approx(0.6)  # 10.6 s for 10 s of runtime (synthetic runtime=10)
    assert priors.source == "run aaaaaaaaaaaa"
    same_cell = plan_time(build_plan(bs=["4k"], qd=["1"], rw=["randread"], runs=5, until_stable=True), priors=priors)
    assert same_cell.cells[0].spread_known and same_cell.cells[0].spread == priors.spreads[key]
    other_cell = plan_time(build_plan(bs=["4k"], qd=["4"], rw=["randread"], runs=5, until_stable=True), priors=priors)
    typical = (priors.spreads[key] + 0.0) / 2  # a cell new to the target varies as the target's cells did
    assert not other_cell.cells[0].spread_known and other_cell.cells[0].spread == pytest.approx(typical)
    assert any(f"runs that differ by {typical:.1%} (the median of the cells run aaaaaaaaaaaa measured" in line
               for line in other_cell.details())
    assert plan_time(build_plan("crystal")).cells[0].spread == UNKNOWN_SPREAD  # nothing measured: assumed
    assert priors_from([other], "here") == Priors()


def test_the_progress_bar_counts_toward_the_estimate_and_follows_the_outlook() -> None:
    plan = build_plan("crystal", size="64M", runtime="2", ramp="0.5")
    estimate = plan_time(plan, layout=64 * MiB)
    observer = ProgressObserver(plan, enabled=False, quiet=True)
    observer.run_started("0" * 32, plan, "/x", estimate=estimate)
    assert observer.total == pytest.approx(estimate.fio_seconds)
    before = observer.total
    observer.cell_outlook(0, 10.0)
    first_cell = estimate.cells[0]
    assert observer.total == pytest.approx(before + (10 - first_cell.expected_runs) * first_cell.run_seconds)
    observer.cell_started(0, plan.workloads[0])
    observer.cell_finished(0, plan.workloads[0], [])
    first = estimate.cells[0].run_seconds + estimate.layout_s  # the first run lays out the file
    assert observer.progress.tasks[0].completed == pytest.approx(first)
