"""What would decide it: the runs-per-arm arithmetic of the A/A study and the words of each command.

The arithmetic is checked against the formula written out (aa-study.md), against its own promise by
simulation (runs_to_decide runs per side find the effect about 80 % of the time), and the wording against
each command's options: `ab` has no `--runs`, so nothing said on its behalf may name it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from stackbench.analysis.advice import (
    AB, FEWEST_RUNS, MOST_RUNS_WORTH_ADVISING, RERUN, RERUN_LAYERS, RERUN_PAIRED, RUN, more_runs, runs_to_decide,
)
from stackbench.analysis.between_runs import paired_ratio, welch_ratio


@pytest.mark.parametrize("spread, effect", [(0.03, 0.05), (0.10, 0.05), (0.27, 0.05), (0.10, 0.20)])
def test_independent_runs_follow_the_aa_study_formula(spread: float, effect: float) -> None:
    expected = 2 * (1.959964 + 0.841621) ** 2 * spread**2 / math.log1p(effect) ** 2 + 1
    assert runs_to_decide(spread, effect) == max(FEWEST_RUNS, math.ceil(expected - 1e-6))


def test_the_study_s_numbers() -> None:
    """aa-study.md: c = 3 % resolves 5 % with 8-10 runs (78-87 % power at 8 and 10; 80 % lies between), and
    c = 27 % needs about 460 runs per arm."""
    assert runs_to_decide(0.03, 0.05) in range(7, 10)
    assert 400 <= runs_to_decide(0.27, 0.05) <= 520


def test_paired_rounds_need_no_factor_two_on_the_sd_of_the_differences() -> None:
    """The sd of per-round log differences already holds both arms' noise."""
    assert runs_to_decide(0.10, 0.05, paired=True) == math.ceil(
        (1.959964 + 0.841621) ** 2 * 0.10**2 / math.log1p(0.05) ** 2 + 1 - 1e-6)
    assert runs_to_decide(0.0, 0.05) == FEWEST_RUNS


def test_a_stricter_alpha_needs_more_runs() -> None:
    assert runs_to_decide(0.1, 0.05, alpha=0.05 / 48) > runs_to_decide(0.1, 0.05)


@pytest.mark.parametrize("paired", [False, True])
def test_the_runs_it_advises_find_the_effect_about_four_times_in_five(paired: bool) -> None:
    """Simulated, not measured: only a simulation knows the true effect (10 %, between-run sd 8 %)."""
    rng = np.random.default_rng(3)
    spread, effect = 0.08, 0.10
    n = runs_to_decide(spread * (math.sqrt(2) if paired else 1), effect, paired=paired)
    found = 0
    trials = 1000
    for _ in range(trials):
        a = np.exp(rng.normal(0, spread, n)) * 1000
        b = np.exp(rng.normal(math.log1p(effect), spread, n)) * 1000
        test = paired_ratio(list(zip(a, b))) if paired else welch_ratio(list(a), list(b))
        found += test.p_value < 0.05
    assert 0.72 <= found / trials <= 0.92


def test_each_command_is_told_its_own_option() -> None:
    assert more_runs(RUN, 8) == "--runs 8"
    assert more_runs(AB, 8) == "--rounds 8"
    assert more_runs(RERUN, 8) == "rerun each side with `stackbench run --runs 8`, or use `stackbench ab --rounds 8`"
    assert more_runs(RERUN_PAIRED, 8) == "run `stackbench ab` again with --rounds 8"
    assert more_runs(RERUN_LAYERS, 8) == "rerun each layer with `stackbench run --runs 8`"
    for how in (AB, RERUN_PAIRED):
        for runs in (5, MOST_RUNS_WORTH_ADVISING + 1):
            assert "--runs" not in more_runs(how, runs)


def test_past_a_hundred_runs_the_advice_is_a_quieter_machine_or_longer_runs() -> None:
    text = more_runs(RUN, 460)
    assert text.startswith("it would take --runs 460, too many") and "quieter machine" in text and "--runtime" in text


def test_the_smallest_provable_change_is_what_runs_to_decide_needs_those_rounds_for() -> None:
    """tune's calibration and compare's advice are one formula read both ways."""
    from stackbench.analysis.advice import smallest_provable

    for log_sd, rounds in ((0.03, 12), (0.1, 8), (0.35, 4)):
        effect = smallest_provable(log_sd, rounds, alpha=0.0125)
        assert runs_to_decide(log_sd, effect * 1.001, paired=True, alpha=0.0125) <= max(rounds, 3)
        assert runs_to_decide(log_sd, effect * 0.95, paired=True, alpha=0.0125) > rounds
    assert smallest_provable(0.1, 1) == math.inf
