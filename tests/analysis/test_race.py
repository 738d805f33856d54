"""A race's round order (round_order.race_orders) and its elimination rule (analysis/race.py) on synthetic
arms with known answers: the balance the order promises, a clearly worse candidate dropped, and arms that
differ only by noise never dropped (their false drops counted over many seeds)."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from stackbench.analysis.race import race_look
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
    assert look.alpha_each == pytest.approx(0.05 / 4 / 6)  # six pairs of four arms at this look: Bonferroni


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
