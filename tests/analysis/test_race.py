"""A race's round order (round_order.race_orders) and its elimination rule (analysis/race.py) on synthetic
arms with known answers: the balance the order promises, a clearly worse candidate dropped, arms that differ
only by noise almost never dropped (their false drops counted over many seeded races of every look, with the
real paired test), the power Holm and the O'Brien-Fleming looks add over the even split, and the stop when
every arm left is the same."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations

import pytest

from stackbench.analysis.alpha_spending import look_alphas
from stackbench.analysis.compare import KEEP, REVERT
from stackbench.analysis.race import compare_arms, holm_pairs, race_look
from stackbench.model.round_order import arm_orders, race_orders
from synthetic import cell, run


@pytest.mark.parametrize("arms", range(1, 7))
def test_every_pair_of_arms_goes_first_equally_often_after_every_even_round(arms: int) -> None:
    orders = race_orders(arms, 4 * arms)
    assert all(sorted(order) == list(range(arms)) for order in orders)  # each round visits every arm once
    for rounds in range(2, len(orders) + 1, 2):
        done = orders[:rounds]
        for x, y in combinations(range(arms), 2):
            assert sum(order.index(x) < order.index(y) for order in done) == rounds // 2
        places = {arm: sum(order.index(arm) for order in done) for arm in range(arms)}
        assert set(places.values()) == {rounds * (arms - 1) // 2}  # every arm's mean place is the middle
    for block in range(2):  # every 2 x arms rounds: every arm in every place exactly twice
        done = orders[2 * arms * block:2 * arms * (block + 1)]
        assert all(Counter(order.index(arm) for order in done) == Counter({p: 2 for p in range(arms)})
                   for arm in range(arms))
    assert all(orders[r + 1][0] == orders[r][-1] for r in range(0, len(orders), 2))  # carry-over within a pair


def test_no_arm_is_always_first_or_last_unlike_the_plain_mirror() -> None:
    """Why the rotation: the mirror `slog` uses keeps the middle of three arms in the middle for ever."""
    assert {order[1] for order in arm_orders(3, 12)} == {1}
    for arms in (3, 4, 5):
        orders = race_orders(arms, 2 * arms)
        assert {order[0] for order in orders} == set(range(arms)) == {order[-1] for order in orders}


def test_the_sequence_continues_after_a_drop_from_the_round_reached() -> None:
    assert race_orders(3, 4, start=4) == race_orders(3, 8)[4:]
    with pytest.raises(ValueError):
        race_orders(0, 2)


def _race(centres: dict[str, float], rounds: int, noise: float, seed: int) -> tuple[dict, list[list[str]]]:
    """Arms of one race of one cell: per round each arm's IOPS = its centre x a shared round factor x its own
    noise (the round factor is the drift pairing removes)."""
    rng = random.Random(seed)
    names = list(centres)
    orders = [[names[i] for i in order] for order in race_orders(len(names), rounds)]
    shared = [rng.gauss(0, 0.1) for _ in range(rounds)]
    runs = {}
    for index, name in enumerate(names):
        values = [centres[name] * 2.718281828 ** (shared[r] + rng.gauss(0, noise)) for r in range(rounds)]
        runs[name] = run([cell(runs=values)], label=name, run_id=f"{index:032d}",
                         facts={"fio_version": "fio-3.33", "ab": {"session": "s", "arm": name}})
    return runs, orders


def test_a_clearly_worse_candidate_is_dropped_behind_the_best_and_the_original_never() -> None:
    runs, orders = _race({"0": 1000, "128": 3000, "512": 3100, "64": 1500}, 6, 0.02, seed=1)
    look = race_look(runs, orders, list(runs), "0", alpha=0.05 / 4, min_effect=0.05)
    assert look.best == "512" and look.ratios["128"] == pytest.approx(3, rel=0.1)
    assert [d.arm for d in look.dropped] == ["64"]  # 128 is within noise of 512; 0 is the original
    [dropped] = look.dropped
    assert dropped.behind == "512" and dropped.round == 6 and dropped.ratio < 0.6
    assert look.alpha == pytest.approx(0.05 / 4)
    assert f"at alpha {0.05 / 4 / 6:.4g} (Holm" in dropped.reason  # proven at Holm's first step: six pairs
    assert not look.all_same


def test_candidates_worse_than_the_original_are_dropped_behind_it() -> None:
    runs, orders = _race({"128": 1000, "0": 400, "8": 420}, 6, 0.02, seed=2)
    look = race_look(runs, orders, list(runs), "128", alpha=0.05, min_effect=0.05)
    assert look.best == "128" and {d.arm for d in look.dropped} == {"0", "8"}


def test_arms_that_differ_only_by_noise_are_almost_never_dropped() -> None:
    """The rule's false drops, over 200 null races of five arms at a noisy 5 % per round: below alpha."""
    drops = 0
    for seed in range(200):
        runs, orders = _race({name: 1000 for name in ("a", "b", "c", "d", "e")}, 6, 0.05, seed=seed)
        drops += bool(race_look(runs, orders, list(runs), "a", alpha=0.05, min_effect=0.05).dropped)
    assert drops <= 0.05 * 200


def test_holm_tests_the_pairs_left_at_the_look_s_alpha_over_the_fewer_pairs_left() -> None:
    """Step 1 compares all six pairs at alpha / 6; the pairs it proves leave, and the others are compared
    again at alpha over the pairs left (the even split stops at step 1)."""
    runs, orders = _race({"0": 1000, "128": 3000, "512": 3100, "64": 1500}, 6, 0.02, seed=1)
    verdicts = holm_pairs(runs, orders, [(x, y) for x, y in combinations(list(runs), 2)], alpha=0.05,
                          min_effect=0.05)
    proven = {pair for pair, (c, level) in verdicts.items() if c.verdict in (KEEP, REVERT)}
    assert ("128", "512") not in proven and ("0", "128") in proven and ("128", "64") in proven
    first = {pair for pair, (_, level) in verdicts.items() if level == pytest.approx(0.05 / 6)}
    assert proven <= first  # every proof here is clear enough for step 1
    assert verdicts[("128", "512")][1] == pytest.approx(0.05 / (6 - len(proven)))  # tested again, at more


def _full_race(centres: dict[str, float], looks: tuple[int, ...], noise: float, seed: int, *,
               even_split: bool = False, alpha: float = 0.05, min_effect: float = 0.05) -> tuple[set[str], bool]:
    """One race of one cell through every look as tune runs it (tune_session._race): arms dropped at a look
    are not measured after it, the race stops at one candidate left or every arm left the same. Each
    round's IOPS of an arm = its centre x a shared round factor x its own noise. `even_split`: the rule
    before Holm and O'Brien-Fleming (alpha / looks per look, / pairs per comparison, no stop on `same`).
    Returns the arms dropped and whether it stopped on `same`."""
    rng = random.Random(seed)
    names = list(centres)
    shared = [rng.gauss(0, 0.1) for _ in range(looks[-1])]
    values = {name: [centres[name] * math.exp(shared[r] + rng.gauss(0, noise)) for r in range(looks[-1])]
              for name in names}
    alive, orders, dropped, alphas = list(names), [], set(), look_alphas(looks, alpha)
    for index, look in enumerate(looks):
        orders += [[alive[i] for i in order] for order in race_orders(len(alive), look - len(orders), len(orders))]
        runs = {name: run([cell(runs=values[name][:sum(name in o for o in orders)])], label=name,
                          run_id=f"{names.index(name):032d}", facts={"fio_version": "fio-3.33",
                                                                      "ab": {"session": "s", "arm": name}})
                for name in names}
        if even_split:
            lost = _even_split_drops(runs, orders, alive, names[0], alpha / len(looks), min_effect)
            same = False
        else:
            result = race_look(runs, orders, alive, names[0], alpha=alphas[index], min_effect=min_effect)
            lost, same = {d.arm for d in result.dropped}, result.all_same
        dropped |= lost
        alive = [arm for arm in alive if arm not in lost]
        if same:
            return dropped, True
        if len(alive) < 3:
            break
    return dropped, False


def _even_split_drops(runs: dict, orders: list[list[str]], alive: list[str], original: str, alpha: float,
                      min_effect: float) -> set[str]:
    """The rule the race had before (the baseline of the power test): every pair once at alpha / pairs."""
    pairs = list(combinations(alive, 2))
    lost = set()
    for x, y in pairs:
        verdict = compare_arms(runs, orders, x, y, alpha=alpha / len(pairs), min_effect=min_effect).verdict
        if verdict == REVERT and y != original:
            lost.add(y)
        elif verdict == KEEP and x != original:
            lost.add(x)
    return lost


def _binomial_upper(n: int, p: float) -> int:
    """The count a Binomial(n, p) exceeds with a chance under 1 %: a rate of exactly p passes a seeded
    simulation of n with that margin."""
    total, k = 0.0, 0
    while True:
        total += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if total >= 0.99:
            return k
        k += 1


LOOKS = (4, 6, 8, 12)


def test_null_races_through_every_look_drop_an_equal_arm_at_most_alpha_of_the_time() -> None:
    """Five equal arms, every look of the default four: the family-wise error of the whole race (Holm within
    a look, O'Brien-Fleming shares across looks) at or below alpha, with a binomial margin for 200 races."""
    races = 200
    false = sum(bool(_full_race({n: 1000 for n in "abcde"}, LOOKS, 0.05, seed=seed)[0]) for seed in range(races))
    assert false <= _binomial_upper(races, 0.05)


def test_an_arm_as_good_as_the_best_is_rarely_dropped_when_a_worse_one_is_there() -> None:
    """The partial null: the original and two candidates equal, a third 15 % worse. Dropping the worse one
    is right (and happens); dropping one of the equal ones is a false drop, at most alpha's share."""
    races, false, right = 200, 0, 0
    for seed in range(races):
        dropped, _ = _full_race({"o": 1000, "a": 1000, "b": 1000, "w": 850}, LOOKS, 0.05, seed=seed)
        false += bool(dropped & {"a", "b"})
        right += "w" in dropped
    assert false <= _binomial_upper(races, 0.05) and right > races / 2


def test_holm_and_the_spent_looks_drop_a_planted_worse_arm_at_least_as_often_as_the_even_split() -> None:
    """A candidate 8 % worse than three equal arms under 5 % noise per round: over the same 200 seeded races,
    the race drops it by its last look more often than the rule before (even split over looks and pairs)."""
    centres = {"o": 1000, "a": 1000, "b": 1000, "w": 920}
    new = sum("w" in _full_race(centres, LOOKS, 0.05, seed=seed)[0] for seed in range(200))
    old = sum("w" in _full_race(centres, LOOKS, 0.05, seed=seed, even_split=True)[0] for seed in range(200))
    assert new > old


def test_a_look_says_all_same_when_every_arm_left_is_within_the_min_effect_of_every_other() -> None:
    """No candidate can then be proven better than the original: the race stops (tune keeps the original)."""
    runs, orders = _race({"o": 1000, "a": 1005, "b": 995}, 8, 0.005, seed=3)
    look = race_look(runs, orders, list(runs), "o", alpha=0.05, min_effect=0.05)
    assert look.all_same and not look.dropped
    runs, orders = _race({"o": 1000, "a": 1005, "b": 1300}, 8, 0.005, seed=3)  # b is better: the race goes on
    look = race_look(runs, orders, list(runs), "o", alpha=0.05, min_effect=0.05)
    assert not look.all_same and look.best == "b"
    assert _full_race({"o": 1000, "a": 1005, "b": 995}, LOOKS, 0.005, seed=4) == (set(), True)
