"""The SLOG ranking's claims on synthetic candidates (chosen per-run QD1 medians, not measurements): a class
only where the interval lies in one, "best" only when proven better than the next by compare's test (paired
by round within one session, Welch across sessions, Holm over the pairs), never a target that is not a
device, and advice whose number of runs does decide. The same on real fio: tests/cli/test_cli_slog.py."""

from __future__ import annotations

import re
import pytest

from stackbench.analysis.between_runs import holm, paired_ratio, welch_ratio
from stackbench.analysis.slog import candidate_from_run, rank
from stackbench.model.warning import WarningCode
from synthetic import cell, run, slog_candidate, spread

US = 1000.0  # ns


def _candidates(*runs):  # noqa: ANN002, ANN202
    return [candidate_from_run(r.label, r) for r in runs]


# -- classes on the interval ---------------------------------------------------------------------------


def test_a_class_is_named_when_the_whole_interval_lies_in_it() -> None:
    (fit,) = _candidates(slog_candidate("ssd", spread(300, 0.05, 5)))
    assert fit.classes == ("enterprise-SSD",)
    assert fit.verdict == "fit: enterprise-SSD class"
    low, high = fit.qd1_interval
    assert 100 * US < low < 300 * US < high < 600 * US


def test_an_interval_across_a_class_bound_says_the_runs_cannot_tell() -> None:
    """Issue 27's target was "fit: enterprise-SSD" at 362 µs in one measurement and "marginal: consumer-SSD"
    in the next. Five runs from 362 µs to 980 µs straddle the 600 µs bound only: no class is claimed."""
    ranking = rank(_candidates(slog_candidate("ext4", [362.0, 480.0, 600.0, 760.0, 980.0])))
    (candidate,) = ranking.candidates
    assert candidate.classes == ("enterprise-SSD", "consumer-SSD")
    assert candidate.verdict == "enterprise-SSD or consumer-SSD: the runs cannot tell"
    (advice,) = [w for w in ranking.warnings if w.subject == "ext4"]
    assert advice.code == WarningCode.SYNC_NOISE
    assert "straddles the 600 µs bound between enterprise-SSD and consumer-SSD" in advice.text


def test_the_runs_the_advice_names_do_decide_the_class() -> None:
    """The advice's --runs N, from the spread seen, is what it takes: N runs with the same spread and centre
    name one class, N - 1 (well, fewer) may not."""
    centre, log_sd = 480.0, 0.25  # 480 µs: 20 % below the 600 µs bound
    ranking = rank(_candidates(slog_candidate("noisy", spread(centre, log_sd, 3))))
    assert ranking.candidates[0].verdict.endswith("the runs cannot tell")
    (advice,) = ranking.warnings
    needed = int(re.search(r"--runs (\d+)", advice.fix).group(1))
    assert 3 < needed <= 100 and "`stackbench slog CANDIDATE...` with --runs" in advice.fix
    decided = candidate_from_run("noisy", slog_candidate("noisy", spread(centre, log_sd, needed)))
    assert decided.verdict == "fit: enterprise-SSD class"
    short = candidate_from_run("noisy", slog_candidate("noisy", spread(centre, log_sd, needed - 1)))
    assert short.verdict.endswith("the runs cannot tell")


def test_one_run_names_its_class_as_one_value_and_asks_for_runs() -> None:
    ranking = rank(_candidates(slog_candidate("once", [300.0])))
    assert ranking.candidates[0].verdict == "fit: enterprise-SSD class (one value: no interval)"
    (advice,) = ranking.warnings
    assert advice.subject == "once" and "--runs 3 or more" in advice.fix


# -- targets that are not devices ------------------------------------------------------------------------


@pytest.mark.parametrize("fs_type, sync, why", [
    ("tmpfs", True, "tmpfs is RAM and loses every write on power loss"),
    ("nfs4", True, "nfs4 is a file system without a device of this machine under it"),
    ("ext4", False, "the writes were neither synchronous nor O_DIRECT, so they stayed in the page cache"),
])
def test_a_target_that_is_not_a_device_is_never_best(fs_type: str, sync: bool, why: str) -> None:
    """Far faster than the device (10 µs against 400 µs, 10 runs each: any test would call it better), and
    still ranked after it, with its reason, and never named best."""
    fast = slog_candidate("ram", spread(10, 0.02, 10), fs_type=fs_type, sync=sync)
    slow = slog_candidate("ssd", spread(400, 0.02, 10))
    other = slog_candidate("hdd", spread(9000, 0.02, 10))
    ranking = rank(_candidates(fast, slow, other))
    assert [c.name for c in ranking.candidates] == ["ssd", "hdd", "ram"]
    assert ranking.candidates[-1].verdict.startswith(f"not a device: {why}")
    (size,) = ranking.sizes
    assert size.best is not None and size.best.name == "ssd"
    assert [(c.candidate.name, c.next.name) for c in size.comparisons] == [("ssd", "hdd")]
    only_ram = rank(_candidates(fast, slow)).sizes[0]
    assert only_ram.best is None and not only_ram.comparisons  # one device: nothing to rank it against


# -- "best" only when proven -------------------------------------------------------------------------------


def test_best_is_proven_better_than_the_next_by_compares_paired_test() -> None:
    a = slog_candidate("optane", spread(60, 0.05, 5))
    b = slog_candidate("ssd", spread(400, 0.05, 5))
    (size,) = rank(_candidates(b, a)).sizes
    (top,) = size.comparisons
    assert size.best is not None and size.best.name == "optane" and top.better
    assert top.test.method == "paired-log"  # one session: paired by round
    pairs = list(zip([m * US for m in spread(400, 0.05, 5)], [m * US for m in spread(60, 0.05, 5)]))
    assert top.test.p_value == pytest.approx(paired_ratio(pairs).p_value)
    assert top.test.ratio == pytest.approx(60 / 400)


def test_candidates_of_different_sessions_use_welch_on_log_values() -> None:
    a = slog_candidate("a", spread(300, 0.1, 4), session="1" * 32)
    b = slog_candidate("b", spread(330, 0.1, 5), session=None)
    (size,) = rank(_candidates(a, b)).sizes
    (top,) = size.comparisons
    assert top.test.method == "welch-log"
    expected = welch_ratio([m * US for m in spread(330, 0.1, 5)], [m * US for m in spread(300, 0.1, 4)])
    assert (top.test.ratio, top.test.p_value) == pytest.approx((expected.ratio, expected.p_value))


def test_no_candidate_proven_better_when_the_runs_overlap() -> None:
    """8 % apart with a 20 % spread over 3 runs: not proven, and the advice says how many runs would tell."""
    a = slog_candidate("a", spread(300, 0.2, 3), rounds=[0, 1, 2])
    b = slog_candidate("b", [m * 1.08 for m in spread(300, 0.2, 3)][::-1], rounds=[0, 1, 2])
    ranking = rank(_candidates(a, b))
    (size,) = ranking.sizes
    assert size.best is None and not size.comparisons[0].better
    (advice,) = [w for w in ranking.warnings if " vs " in w.subject]
    assert advice.subject == "a vs b" and advice.text.startswith("no candidate proven better")
    assert re.search(r"about \d+ runs per candidate would tell them apart", advice.fix)


def test_a_difference_below_the_minimum_effect_is_never_better() -> None:
    """2 % faster in every round: significant, but below compare's 5 %: no best, and more runs would not help."""
    a = slog_candidate("a", [300.0, 310.0, 305.0, 298.0, 302.0])
    b = slog_candidate("b", [306.0, 316.2, 311.1, 303.96, 308.04])
    ranking = rank(_candidates(a, b))
    (size,) = ranking.sizes
    assert size.comparisons[0].test.p_value < 0.05 and size.best is None
    assert size.comparisons[0].same  # the whole 90 % interval within ±5 %: the same


def test_holm_adjusts_over_every_pair_ranked() -> None:
    runs = [slog_candidate(name, spread(centre, 0.15, 4)) for name, centre in (("a", 100), ("b", 140), ("c", 200), ("d", 230))]
    (size,) = rank(_candidates(*runs)).sizes
    raw = [c.test.p_value for c in size.comparisons]
    assert [c.p_holm for c in size.comparisons] == pytest.approx(holm(raw))
    assert [c.candidate.name for c in size.comparisons] == ["a", "b", "c"]


def test_an_aa_pair_is_no_difference() -> None:
    """The same values twice (one session): the same, never better."""
    values = spread(350, 0.1, 5)
    (size,) = rank(_candidates(slog_candidate("a", values), slog_candidate("a #2", values[::-1]))).sizes
    assert size.best is None and not size.comparisons[0].better


# -- old results -------------------------------------------------------------------------------------------


def test_runs_without_per_run_medians_still_rank_by_their_one_value() -> None:
    """Runs stored before runs carried their medians (and imports): ranked by the one median, named with
    its class marked as one value, tested against nothing, never best."""
    old = [run([cell(rw="randwrite", bs=4096, qd=1, sync=True, p99_ns=2 * m * US, samples=[1e6 / m] * 3)],
               label=name, run_id=(name.encode().hex() + "0" * 32)[:32],
               facts={"fio_version": "fio-3.33", "target": {"fs_type": "xfs"}})
           for name, m in (("old-hdd", 8000.0), ("old-ssd", 400.0))]
    ranking = rank(_candidates(*old))
    assert [c.name for c in ranking.candidates] == ["old-ssd", "old-hdd"]
    assert ranking.candidates[0].verdict == "fit: enterprise-SSD class (one value: no interval)"
    (size,) = ranking.sizes
    assert size.best is None and size.comparisons[0].test is None
    assert ranking.to_json()["candidates"][0]["qd1"]["clat_median_us"] == pytest.approx(400.0)


# -- the order of the candidates in a round -----------------------------------------------------------------


def test_candidates_take_turns_as_ab_arms_do() -> None:
    """Two candidates go AB, BA, AB, ... exactly as `ab`'s arms; more go forward and backward, so every
    round starts with the candidate that ended the one before."""
    from stackbench.model.round_order import arm_orders, round_orders

    assert ["".join("AB"[i] for i in order) for order in arm_orders(2, 5)] == round_orders(5)
    orders = arm_orders(3, 4)
    assert orders == [[0, 1, 2], [2, 1, 0], [0, 1, 2], [2, 1, 0]]
    assert all(later[0] == earlier[-1] for earlier, later in zip(orders, orders[1:]))
    with pytest.raises(ValueError):
        arm_orders(0, 2)


def test_other_write_sizes_are_ranked_without_a_class() -> None:
    """`--sizes 4k,16k`: each size ranked on its own; the classes are bounds on 4 KiB writes, so a 16 KiB
    row names none and no warning asks for runs to decide one."""
    from dataclasses import replace as replaced

    noisy = slog_candidate("noisy", [362.0, 420.0, 480.0, 560.0, 700.0])
    at_16k = replaced(noisy, cells=tuple(replaced(c, workload=replaced(c.workload, bs=16384)) for c in noisy.cells))
    ranking = rank([candidate_from_run("noisy", noisy), candidate_from_run("noisy", at_16k, 16384)])
    assert [r.size for r in ranking.sizes] == [4096, 16384]
    small, large = ranking.candidates
    assert small.verdict.endswith("the runs cannot tell") and large.verdict == "no class: the classes are for 4K writes"
    assert large.classes == () and [w.subject for w in ranking.warnings] == ["noisy"]
