"""What would decide a question the runs could not: how many runs (or `ab` rounds) per side, and which
option of which command gets them.

Every "no evidence", "no gap proven" and "runs differ a lot" ends with what would settle it, in the words
of the command that printed it: `run --runs N`, `ab --rounds N`, and for `compare` and `layers`, which
measure nothing, a rerun of each side with `run --runs N` or an `ab --rounds N` session. `ab` has no
`--runs`, so its advice never names it. N is the runs-per-arm arithmetic of the A/A study
(docs/statistics.md), computed from the spread the runs showed, in `runs_to_decide` alone.

Beyond MOST_RUNS_WORTH_ADVISING more runs is not the fix (a spread of 27 % needs about 460 runs per side
to resolve 5 %): the advice is then a quieter machine or longer runs, with the number said as a warning.
"""

from __future__ import annotations

import math
from statistics import NormalDist

FEWEST_RUNS = 3  # below three runs a side the t quantile alone makes every interval wide
MOST_RUNS_WORTH_ADVISING = 100
POWER = 0.8

# How the advice is worded: the option of the command that measures (run, ab), or the commands to rerun
# for one that only reads stored runs (compare, layers), paired by ab round or not.
RUN, AB, RERUN, RERUN_PAIRED, RERUN_LAYERS = "run", "ab", "rerun", "rerun-paired", "rerun-layers"


def runs_to_decide(log_sd: float, effect: float, *, paired: bool = False, alpha: float = 0.05,
                   power: float = POWER) -> int:
    """Runs per side (ab rounds, when `paired`) for a two-sided test at `alpha` to find a change of
    `effect` (0.05: 5 %) with `power`, given the between-run spread `log_sd` (sd of log IOPS).

    Independent runs (aa-study.md): R = 2 (z_a + z_b)^2 c^2 / d^2 + 1, c the between-run sd of the logs
    and d = ln(1 + effect). Runs paired by round: R = (z_a + z_b)^2 s^2 / d^2 + 1 with s the sd of the
    per-round log differences, which already holds both arms' noise (hence no factor 2). At least
    FEWEST_RUNS; the normal quantiles make it a slight underestimate at small R, which that floor covers.
    `compare` and `layers` pass alpha divided by the number of tested rows: the level the first row must
    reach under Holm, so the advice does not fall short on a 48-row compare.
    """
    if effect <= 0 or not math.isfinite(log_sd):
        raise ValueError("runs_to_decide needs a positive effect and a finite spread")
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    delta = math.log1p(effect)
    runs = (1 if paired else 2) * z * z * log_sd * log_sd / (delta * delta) + 1
    return max(FEWEST_RUNS, math.ceil(runs))


def more_runs(how: str, runs: int) -> str:
    """The advice that gets `runs` runs per side, worded for `how` (RUN, AB, RERUN, RERUN_PAIRED,
    RERUN_LAYERS); past MOST_RUNS_WORTH_ADVISING, a quieter machine or longer runs instead."""
    if runs > MOST_RUNS_WORTH_ADVISING:
        takes = {
            RUN: f"--runs {runs}",
            AB: f"--rounds {runs}",
            RERUN: f"`stackbench run --runs {runs}` on each side, or `stackbench ab --rounds {runs}`",
            RERUN_PAIRED: f"`stackbench ab --rounds {runs}`",
            RERUN_LAYERS: f"`stackbench run --runs {runs}` at each layer",
        }[how]
        return (f"it would take {takes}, too many to be the fix: measure on a quieter machine or with longer "
                "runs (--runtime) first")
    return {
        RUN: f"--runs {runs}",
        AB: f"--rounds {runs}",
        RERUN: f"rerun each side with `stackbench run --runs {runs}`, or use `stackbench ab --rounds {runs}`",
        RERUN_PAIRED: f"run `stackbench ab` again with --rounds {runs}",
        RERUN_LAYERS: f"rerun each layer with `stackbench run --runs {runs}`",
    }[how]
