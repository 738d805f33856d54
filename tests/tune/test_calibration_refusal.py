"""The calibration's refusal rule on known noise figures (Calibration.refusal in measure/tune_session.py): the
CLI test of it (test_tune_session.py) can only judge the rule on whatever noise this machine had, so which
side of the threshold it lands on is not the test's to choose; here both sides, the edge and --force are."""

from __future__ import annotations

import math

import pytest

from stackbench.base.errors import StackbenchError
from stackbench.measure.tune_result import Calibration


MIN_EFFECT = 0.25  # three times it is 0.75 exactly in binary floating point: the edge is the rule's, not rounding's


def _calibration(provable: float) -> Calibration:
    return Calibration(rounds=4, noise=0.04, provable=provable, max_rounds=12, alpha=0.01)


@pytest.mark.parametrize("provable", [0.76, 2.0, math.inf])
def test_a_smallest_provable_change_over_three_times_min_effect_is_refused(provable: float) -> None:
    refusal = _calibration(provable).refusal(MIN_EFFECT, force=False)
    assert isinstance(refusal, StackbenchError) and refusal.exit_code == 1


@pytest.mark.parametrize("provable", [0.0, 0.25, 0.74, 0.75])
def test_up_to_three_times_min_effect_the_session_goes_on(provable: float) -> None:
    assert _calibration(provable).refusal(MIN_EFFECT, force=False) is None


@pytest.mark.parametrize("provable", [0.76, math.inf])
def test_force_goes_on_whatever_the_noise(provable: float) -> None:
    assert _calibration(provable).refusal(MIN_EFFECT, force=True) is None


def test_the_refusal_says_the_noise_and_names_every_way_out_in_one_line() -> None:
    line = _calibration(0.2).refusal(0.001, force=False).one_line()
    assert line.startswith("this machine is too noisy now to prove a change of 0.1%: noise 4.0% per round "
                           "(4 A/A rounds): changes of 20% or more can be proven in 12 rounds")
    assert all(way in line for way in ("Quiet the machine", "--runtime", "--min-effect", "--force"))
    assert "nothing was changed" in line and "\n" not in line
    assert "no change can be proven" in _calibration(math.inf).refusal(MIN_EFFECT, force=False).one_line()
