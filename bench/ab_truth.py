"""Are `compare` verdicts true? An A/A study (no effect: no verdict) and a power study (a known effect: found).

A/A: the same plan is run PAIRS+1 times as separate `stackbench run`s, and each run is compared with the
next (`stackbench compare --json`). Every keep or revert is a false positive; the target is at most 5 % of
rows (alpha 0.05, Holm over the rows of a compare) and of overall verdicts.

Power: a real effect of known size is made with fio's rate_iops: A runs unrestricted, B is capped at 90 %
(then 80 %) of the typical IOPS the A/A runs measured. `compare A B` should say revert; the goal is a 10 %
effect found in at least 80 % of pairs with the default settings (5 runs per cell).

--interleaved runs the A/A through `stackbench ab --a true --b true` instead: each pair is one ab session
whose arms alternate round by round (ABAB...) and are compared paired by round, the way the docs tell users
to prove a change on a machine whose speed drifts. No power part there: both arms of `ab` share one plan.

Uses only the installed `stackbench` (the same CLI users run) and Python; prints what it measured and a
summary to paste into bench/RESULTS.md.

    python bench/ab_truth.py --target /dev/shm --pairs 20
    python bench/ab_truth.py --target /var/tmp --pairs 20
    python bench/ab_truth.py --target /var/tmp --pairs 20 --interleaved
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AA_PLAN = ["--bs", "4k", "--rw", "randwrite,randread", "--qd", "1"]
POWER_PLAN = ["--bs", "4k", "--rw", "randwrite", "--qd", "1"]


def stackbench(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "stackbench", *args, "--json"], capture_output=True, text=True)
    if done.returncode not in (0,):
        raise SystemExit(f"stackbench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def measure(target: str, db: str, label: str, runs: int, runtime: str, ramp: str, plan: list[str]) -> dict:
    return stackbench("run", "-t", target, *plan, "--runs", str(runs), "--fixed", "--runtime", runtime, "--ramp", ramp,
                      "--label", label, "--db", db)


def ab_session(target: str, db: str, label: str, rounds: int, runtime: str, ramp: str, plan: list[str]) -> dict:
    """One `stackbench ab` session where A and B apply nothing: the compare JSON, paired by round."""
    return stackbench("ab", "-t", target, "--a", "true", "--b", "true", *plan, "--rounds", str(rounds),
                      "--runtime", runtime, "--ramp", ramp, "--label", label, "--db", db)


def summary(data: dict) -> tuple[list[str], str, int]:
    return [row["verdict"] for row in data["rows"]], data["verdict"], sum(bool(r["significant"]) for r in data["rows"])


def verdicts(db: str, a: str, b: str) -> tuple[list[str], str, int]:
    """Row verdicts, the overall verdict, and how many rows were significant (Holm-adjusted)."""
    return summary(stackbench("compare", a, b, "--db", db, "--force"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="directory for the scratch file (RAM- or disk-backed)")
    parser.add_argument("--pairs", type=int, default=20, help="A/A compares (runs = pairs + 1)")
    parser.add_argument("--power-pairs", type=int, default=5, help="compares per known effect")
    parser.add_argument("--runs", type=int, default=5, help="fio runs per cell in each stackbench run")
    parser.add_argument("--runtime", default="1", help="measured seconds per fio run")
    parser.add_argument("--ramp", default="0.5", help="ramp seconds per fio run")
    parser.add_argument("--caps", default="0.9,0.8", help="B's rate caps as fractions of the typical IOPS")
    parser.add_argument("--interleaved", action="store_true", help="A/A and power through `stackbench ab` sessions "
                        "(--runs rounds each), not separate `run`s compared afterwards")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ab-truth-"))
    db = str(workdir / "truth.db")
    started = time.monotonic()
    print(f"# {' '.join(sys.argv)}  (fio runs per cell {options.runs}, {options.ramp}+{options.runtime} s each)")

    if options.interleaved:
        interleaved(options, db, started)
        return
    labels, medians = [], []
    for index in range(options.pairs + 1):
        label = f"aa-{index}"
        run = measure(options.target, db, label, options.runs, options.runtime, options.ramp, AA_PLAN)
        labels.append(label)
        medians.append({c["pattern"]: c["runs"]["iops"] for c in run["cells"]})
        print(f"A/A run {index:>2}: " + ", ".join(f"{p} {v:,.0f}" for p, v in medians[-1].items()), flush=True)
    rows_flagged = rows_total = overall_flagged = rows_significant = 0
    for a, b in zip(labels, labels[1:]):
        row_verdicts, overall, significant = verdicts(db, a, b)
        flagged = [v for v in row_verdicts if v in ("keep", "revert")]
        rows_flagged += len(flagged)
        rows_significant += significant
        rows_total += len(row_verdicts)
        overall_flagged += overall in ("keep", "revert")
        print(f"compare {a} {b}: rows {row_verdicts} overall {overall}", flush=True)

    write_cell = next(p for p in medians[0] if "write" in p)
    typical = statistics.median(m[write_cell] for m in medians)
    power = {}
    for fraction in (float(cap) for cap in options.caps.split(",")):
        found = 0
        for index in range(options.power_pairs):
            a, b = f"cap-{fraction}-{index}-a", f"cap-{fraction}-{index}-b"
            measure(options.target, db, a, options.runs, options.runtime, options.ramp, POWER_PLAN)
            measure(options.target, db, b, options.runs, options.runtime, options.ramp,
                    [*POWER_PLAN, "--rate-iops", str(int(typical * fraction))])
            row_verdicts, overall, _ = verdicts(db, a, b)
            found += overall == "revert"
            print(f"power {fraction:.0%}: compare {a} {b}: rows {row_verdicts} overall {overall}", flush=True)
        power[fraction] = found

    report(options, db, started, rows_total, rows_significant, rows_flagged, overall_flagged, power, typical)


def interleaved(options: argparse.Namespace, db: str, started: float) -> None:
    """The A/A pairs as `ab` sessions: each pair is independent (its own runs), its arms interleaved."""
    rows_flagged = rows_total = overall_flagged = rows_significant = 0
    rates = []
    for index in range(options.pairs):
        data = ab_session(options.target, db, f"aa-{index}", options.runs, options.runtime, options.ramp, AA_PLAN)
        row_verdicts, overall, significant = summary(data)
        rows_flagged += sum(v in ("keep", "revert") for v in row_verdicts)
        rows_significant += significant
        rows_total += len(row_verdicts)
        overall_flagged += overall in ("keep", "revert")
        rates += [row["base_iops"] for row in data["rows"] if "write" in row["pattern"]]
        print(f"ab A/A {index:>2}: rows {row_verdicts} overall {overall} "
              + ", ".join(f"{row['pattern']} {row['base_iops']:,.0f}/{row['other_iops']:,.0f}" for row in data["rows"]),
              flush=True)
    # `ab` gives both arms the same plan and differs only in the shell commands, so a rate cap cannot make
    # the known effect here; power is measured by the separate-runs mode.
    typical = statistics.median(rates)
    power: dict[float, int] = {}
    report(options, db, started, rows_total, rows_significant, rows_flagged, overall_flagged, power, typical)


def report(options: argparse.Namespace, db: str, started: float, rows_total: int, rows_significant: int,
           rows_flagged: int, overall_flagged: int, power: dict[float, int], typical: float) -> None:
    minutes = (time.monotonic() - started) / 60
    print()
    mode = "ab sessions (interleaved, paired by round)" if options.interleaved else "separate runs compared"
    print(f"target {options.target}, {mode}: {options.pairs} A/A compares of {rows_total // options.pairs} rows each")
    print(f"  significant rows: {rows_significant} of {rows_total} ({rows_significant / rows_total:.1%})")
    print(f"  rows with keep/revert (false positives): {rows_flagged} of {rows_total} "
          f"({rows_flagged / rows_total:.1%}); overall keep/revert: {overall_flagged} of {options.pairs} "
          f"({overall_flagged / options.pairs:.1%})")
    for fraction, found in power.items():
        print(f"  power, B capped at {fraction:.0%} of the typical {typical:,.0f} IOPS: revert in {found} of "
              f"{options.power_pairs}")
    per_cell = options.runs * (float(options.ramp) + float(options.runtime))
    print(f"  fio time per cell: {options.runs} runs x {options.ramp}+{options.runtime} s = {per_cell:g} s")
    print(f"  wall time {minutes:.1f} min; store {db}")


if __name__ == "__main__":
    main()
