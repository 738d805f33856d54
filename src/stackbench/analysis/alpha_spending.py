"""How much of alpha each sequential look of `tune` may spend: the O'Brien-Fleming-type spending function.

tune reads a knob's verdict after several rounds (its looks) and stops at the first that decides. Testing
every look at the whole alpha would let chance decide far more often than alpha; splitting alpha evenly
(Bonferroni, alpha / K per look) keeps the family-wise error at most alpha but gives the last look, where
most of a small effect's evidence is, only a K-th of it. Lan & DeMets (1983, "Discrete sequential boundaries
for clinical trials", Biometrika 70:659-663) spend alpha as a function of the information so far, t in
(0, 1]; their O'Brien-Fleming-type function

    alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))

spends almost nothing early and most at the end. Look k is tested at the increment alpha(t_k) - alpha(t_{k-1}):
the increments sum to alpha(1) = alpha, so by the union bound the chance that any look decides falsely stays
at most alpha whatever the looks' dependence (no joint distribution of the looks is assumed, unlike the exact
group-sequential boundaries, which are a little more powerful but assume normal increments).
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["obrien_fleming_spent", "look_alphas", "alpha_left"]


def obrien_fleming_spent(t: float, alpha: float) -> float:
    """Alpha spent by information fraction `t` (0 to 1): 0 at t = 0, alpha at t = 1."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return alpha
    normal = NormalDist()
    return 2 - 2 * normal.cdf(normal.inv_cdf(1 - alpha / 2) / math.sqrt(t))


def look_alphas(looks: tuple[int, ...], alpha: float) -> tuple[float, ...]:
    """The alpha each look is tested at: the increments of the spending function at t = round / last round.

    Rounds stand for information: every round adds one paired difference, so the t of a look is its share of
    the last look's rounds. The last increment takes whatever the earlier ones left, so the sum is alpha
    exactly (not alpha up to rounding)."""
    if not looks:
        return ()
    last = looks[-1]
    spent = [obrien_fleming_spent(look / last, alpha) for look in looks[:-1]]
    increments = [b - a for a, b in zip([0.0, *spent], spent)]
    return (*increments, alpha - sum(increments))


def alpha_left(alphas: tuple[float, ...], tested: int, alpha: float) -> float:
    """What an unplanned last test may spend after `tested` looks: everything not spent yet. --max-time can
    end a knob between looks; testing what it has at the rest of alpha keeps the sum at alpha, since no look
    follows."""
    return max(0.0, alpha - sum(alphas[:tested]))
