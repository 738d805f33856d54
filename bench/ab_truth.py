"""Are `compare` verdicts true? An A/A study (no effect: no verdict) and a power study (a known effect: found).

A/A: the same plan is run PAIRS+1 times as separate `stackbench run`s, and each run is compared with the
next (`stackbench compare --json`). Every keep or revert is a false positive; the target is at most 5 % of
rows (alpha 0.05, Holm over the rows of a compare) and of overall verdicts.

Power: a real effect of known size is made with fio's rate_iops: A runs unrestricted, B is capped at 90 %
(then 80 %) of the typical IOPS the A/A runs measured. `compare A B` should say revert; the goal is a 10 %
effect found in at least 80 % of pairs with the default settings (5 runs per cell).

--interleaved runs the A/A through `stackbench ab --a true --b true` instead: each pair is one ab session
whose arms alternate round by round, A first and B first in turn (AB, BA, AB, ...: round_order.py), and
are compared paired by round, the way the docs tell users to prove a change on a machine whose speed
drifts. It also reports the sessions' order effect (second vs first in a round), which the counterbalanced
rounds keep out of the verdict. No power part there: both arms of `ab` share one plan.

--simulate runs no fio: it plants an order effect (`--order-effect 0.03`: the arm measured second in a
round does 3 % more) in simulated A/A sessions (per-round noise `--noise`, heavy-tailed: Student t with 5
degrees of freedom; drift between rounds), gives them to stackbench's own compare as the two arms of an
ab session, once with A first in every round (the order before counterbalancing) and once in the
counterbalanced order, and counts false keeps/reverts and how often the order-effect diagnostic flags it
(the goal: at most 2 % false keeps counterbalanced; tests/analysis/test_order_effect.py checks it).

--disturbed runs the separate-runs A/A under a controlled disturbance: a hog (`--hog cpu`: two busy loops
per CPU; `--hog io`: a second fio writing to its own file beside the target) runs during a random half of
the runs, and each run is compared with the next. A false keep/revert whose verdict is marked weak (the
sessions' conditions differed: CONDITIONS_DIFFER, SETUP_DIFFERS) is said to be weak, which is true; the
goal (issue 35) is at most 5 % of compares with an unflagged false keep/revert.

Uses only the installed `stackbench` (the same CLI users run; its library for --simulate) and Python;
prints what it measured and a summary to paste into bench/RESULTS.md.

    python bench/ab_truth.py --target /dev/shm --pairs 20
    python bench/ab_truth.py --target /var/tmp --pairs 20
    python bench/ab_truth.py --target /var/tmp --pairs 20 --interleaved
    python bench/ab_truth.py --simulate --sessions 2000 --order-effect 0.03 --noise 0.03
    python bench/ab_truth.py --target /var/tmp --pairs 40 --disturbed --hog cpu
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
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
    """One `stackbench ab` session where A and B apply nothing: the compare JSON, paired by round (an odd
    number of rounds is raised by one by `ab`)."""
    return stackbench("ab", "-t", target, "--a", "true", "--b", "true", *plan, "--rounds", str(rounds),
                      "--runtime", runtime, "--ramp", ramp, "--label", label, "--db", db)


def summary(data: dict) -> tuple[list[str], str, int]:
    return [row["verdict"] for row in data["rows"]], data["verdict"], sum(bool(r["significant"]) for r in data["rows"])


def verdicts(db: str, a: str, b: str) -> tuple[list[str], str, int]:
    """Row verdicts, the overall verdict, and how many rows were significant (Holm-adjusted)."""
    return summary(stackbench("compare", a, b, "--db", db, "--force"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", help="directory for the scratch file (RAM- or disk-backed)")
    parser.add_argument("--pairs", type=int, default=20, help="A/A compares (runs = pairs + 1)")
    parser.add_argument("--power-pairs", type=int, default=5, help="compares per known effect")
    parser.add_argument("--runs", type=int, default=5, help="fio runs per cell in each stackbench run")
    parser.add_argument("--runtime", default="1", help="measured seconds per fio run")
    parser.add_argument("--ramp", default="0.5", help="ramp seconds per fio run")
    parser.add_argument("--caps", default="0.9,0.8", help="B's rate caps as fractions of the typical IOPS")
    parser.add_argument("--interleaved", action="store_true", help="A/A and power through `stackbench ab` sessions "
                        "(--runs rounds each), not separate `run`s compared afterwards")
    parser.add_argument("--simulate", action="store_true", help="no fio: simulated A/A ab sessions with a planted "
                        "order effect, fixed order against counterbalanced rounds")
    parser.add_argument("--sessions", type=int, default=2000, help="--simulate: sessions per order")
    parser.add_argument("--rounds", type=int, default=6, help="--simulate: rounds per session")
    parser.add_argument("--cells", type=int, default=1, help="--simulate: cells (rows) per session")
    parser.add_argument("--order-effect", type=float, default=0.03, help="--simulate: what going second adds")
    parser.add_argument("--noise", type=float, default=0.03, help="--simulate: sd of a round's log B/A ratio")
    parser.add_argument("--seed", type=int, default=27, help="--simulate, --disturbed: random seed")
    parser.add_argument("--disturbed", action="store_true", help="separate-runs A/A with a hog during a random "
                        "half of the runs: how many false verdicts go unflagged")
    parser.add_argument("--hog", choices=("cpu", "io"), default="cpu", help="--disturbed: what the hog loads")
    options = parser.parse_args()
    if options.simulate:
        simulate(options)
        return
    if not options.target:
        parser.error("--target is required (unless --simulate)")
    workdir = Path(tempfile.mkdtemp(prefix="ab-truth-"))
    db = str(workdir / "truth.db")
    started = time.monotonic()
    if options.interleaved:
        options.runs += options.runs % 2  # the rounds `ab` runs: an even number, each arm first in half of them
    print(f"# {' '.join(sys.argv)}  (fio runs per cell {options.runs}, {options.ramp}+{options.runtime} s each)")

    if options.interleaved:
        interleaved(options, db, started)
        return
    if options.disturbed:
        disturbed(options, db, started)
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
    """The A/A pairs as `ab` sessions: each pair is independent (its own runs), its arms interleaved in
    counterbalanced rounds; each session's order effect is collected too."""
    rows_flagged = rows_total = overall_flagged = rows_significant = 0
    rates, effects, b_ahead = [], [], 0
    order_flagged = 0
    for index in range(options.pairs):
        data = ab_session(options.target, db, f"aa-{index}", options.runs, options.runtime, options.ramp, AA_PLAN)
        row_verdicts, overall, significant = summary(data)
        rows_flagged += sum(v in ("keep", "revert") for v in row_verdicts)
        rows_significant += significant
        rows_total += len(row_verdicts)
        overall_flagged += overall in ("keep", "revert")
        rates += [row["base_iops"] for row in data["rows"] if "write" in row["pattern"]]
        order = data["order_effect"] or {}
        if order.get("ratio") is not None:
            effects.append(order["ratio"])
            order_flagged += bool(order.get("significant"))
        b_ahead += (data["geomean_ratio"] or 1) > 1
        shown = f"{(order['ratio'] - 1) * 100:+.1f}%" if order.get("ratio") is not None else "-"
        print(f"ab A/A {index:>2}: rows {row_verdicts} overall {overall} order effect {shown} "
              f"({' '.join(order.get('orders') or [])}) "
              + ", ".join(f"{row['pattern']} {row['base_iops']:,.0f}/{row['other_iops']:,.0f}" for row in data["rows"]),
              flush=True)
    # `ab` gives both arms the same plan and differs only in the shell commands, so a rate cap cannot make
    # the known effect here; power is measured by the separate-runs mode.
    typical = statistics.median(rates)
    power: dict[float, int] = {}
    report(options, db, started, rows_total, rows_significant, rows_flagged, overall_flagged, power, typical)
    print(f"  B ahead of A (geometric mean of the cells): {b_ahead} of {options.pairs} sessions")
    if effects:
        mean = math.exp(statistics.fmean(math.log(r) for r in effects))
        print(f"  order effect (second vs first in a round): mean {(mean - 1) * 100:+.1f}% over {len(effects)} "
              f"sessions, significant in {order_flagged}")


def start_hog(kind: str, target: str) -> list[subprocess.Popen]:
    """The disturbance: two busy loops per CPU, or a second fio writing its own file beside the target."""
    if kind == "cpu":
        return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2 * (os.cpu_count() or 1))]
    return [subprocess.Popen(["fio", "--name=hog", f"--filename={Path(target) / 'ab-truth-hog.scratch'}",
                              "--size=64m", "--rw=randwrite", "--bs=64k", "--direct=1", "--time_based",
                              "--runtime=3600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]


def stop_hog(processes: list[subprocess.Popen], target: str) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()
    (Path(target) / "ab-truth-hog.scratch").unlink(missing_ok=True)


def disturbed(options: argparse.Namespace, db: str, started: float) -> None:
    """Separate A/A runs, a hog during a random half of them (`--seed`), each compared with the next: the
    false keep/reverts, and how many of them the verdict marked weak."""
    rng = random.Random(options.seed)
    count = options.pairs + 1
    hogged = [True] * (count // 2) + [False] * (count - count // 2)
    rng.shuffle(hogged)
    labels = []
    for index, hog in enumerate(hogged):
        label = f"dist-{index}"
        processes = start_hog(options.hog, options.target) if hog else []
        try:
            if hog:
                time.sleep(1)  # let the hog get going
            run = measure(options.target, db, label, options.runs, options.runtime, options.ramp, AA_PLAN)
        finally:
            stop_hog(processes, options.target)
        labels.append(label)
        codes = sorted({w["code"] for w in run["warnings"]})
        print(f"run {index:>2} ({'hog ' + options.hog if hog else 'quiet'}): "
              + ", ".join(f"{c['pattern']} {c['runs']['iops']:,.0f}" for c in run["cells"])
              + f"; warnings {codes}", flush=True)
    false = flagged = weak = rows_total = rows_significant = rows_flagged = 0
    mixed = 0
    for index, (a, b) in enumerate(zip(labels, labels[1:])):
        data = stackbench("compare", a, b, "--db", db, "--force")
        row_verdicts, overall, significant = summary(data)
        rows_total += len(row_verdicts)
        rows_significant += significant
        rows_flagged += sum(v in ("keep", "revert") for v in row_verdicts)
        mixed += hogged[index] != hogged[index + 1]
        weak += bool(data["weak"])
        if overall in ("keep", "revert"):
            false += 1
            flagged += bool(data["weak"])
        codes = sorted({w["code"] for w in data["warnings"]})
        print(f"compare {a} ({'hog' if hogged[index] else 'quiet'}) {b} ({'hog' if hogged[index + 1] else 'quiet'}):"
              f" rows {row_verdicts} overall {overall}{' (weak)' if data['weak'] else ''} {codes}", flush=True)
    minutes = (time.monotonic() - started) / 60
    pairs = options.pairs
    print()
    print(f"target {options.target}, separate runs compared, a {options.hog} hog during {sum(hogged)} of {count} "
          f"runs: {pairs} A/A compares ({mixed} with the hog on one side only)")
    print(f"  rows with keep/revert: {rows_flagged} of {rows_total}; significant rows: {rows_significant}")
    print(f"  overall false keep/revert: {false} of {pairs} ({false / pairs:.1%}); marked weak: {flagged}; "
          f"unflagged: {false - flagged} of {pairs} ({(false - flagged) / pairs:.1%}; goal <= 5 %)")
    print(f"  compares marked weak: {weak} of {pairs}")
    print(f"  wall time {minutes:.1f} min; store {db}")


def simulate(options: argparse.Namespace) -> None:
    """Planted order effect, no true change: false keeps/reverts of compare under each order, and how often
    the order-effect diagnostic finds the planted effect."""
    from stackbench.analysis.compare import compare_runs
    from stackbench.model.round_order import AB, round_orders

    rng = random.Random(options.seed)
    started = time.monotonic()
    print(f"# {' '.join(sys.argv)}")
    print(f"simulated A/A ab sessions: {options.sessions} per order, {options.rounds} rounds, {options.cells} "
          f"cell(s), second in a round +{options.order_effect:.1%}, per-round noise sd {options.noise:.1%} (t5)")
    for name, orders in (("A first in every round", [AB] * options.rounds),
                         ("counterbalanced (AB, BA, ...)", round_orders(options.rounds))):
        flagged = diagnosed = 0
        for _ in range(options.sessions):
            result = compare_runs(*_simulated_arms(rng, orders, options))
            flagged += result.verdict in ("keep", "revert")
            diagnosed += result.order_effect is not None and result.order_effect.significant
        print(f"  {name:<31} false keep/revert {flagged / options.sessions:6.1%}   order effect found "
              f"{diagnosed / options.sessions:6.1%}")
    print(f"  wall time {time.monotonic() - started:.0f} s")


def _simulated_arms(rng: random.Random, orders: list[str], options: argparse.Namespace) -> tuple:
    """The two arms of one simulated ab session, as `ab` stores them: per cell one replicate per round."""
    from stackbench.model.fio_result import DirectionResult, Latency
    from stackbench.model.plan import Workload
    from stackbench.model.results import Cell, Run

    scale = options.noise / math.sqrt(2) / math.sqrt(5 / 3)  # t5 has sd sqrt(5/3); each arm carries half the variance
    second = math.log1p(options.order_effect)
    arms: dict[str, list[Cell]] = {"A": [], "B": []}
    for index in range(options.cells):
        values: dict[str, list[float]] = {"A": [], "B": []}
        for order in orders:
            level = math.log(10_000) + rng.gauss(0, 0.2)  # drift between rounds hits both arms
            for place, arm in enumerate(order):
                noise = rng.gauss(0, 1) / math.sqrt(rng.gammavariate(2.5, 2) / 5)  # Student t, 5 df
                values[arm].append(math.exp(level + scale * noise + place * second))
        for arm, runs in values.items():
            workload = Workload(rw="randwrite", bs=4096 * (index + 1), iodepth=1, size=1024**3, runtime=1)
            mean = statistics.fmean(runs)
            result = DirectionResult(
                job_name="j", direction="write", rw="randwrite", bs=workload.bs, iodepth=1, numjobs=1, iops=mean,
                bw_bytes=mean * workload.bs, io_bytes=0, total_ios=0, runtime_ms=1000, usr_cpu=0.0, sys_cpu=0.0,
                clat=Latency(mean_ns=1e5, p50_ns=1e5, p99_ns=2e5, p999_ns=3e5))
            replicates = [{"index": r, "round": r, "iops": v} for r, v in enumerate(runs)]
            arms[arm].append(Cell(id=f"{arm}{index}", seq=index, workload=workload, result=result, samples=(),
                                  measurement={"mode": "fixed", "replicates": replicates}))
    made = []
    for arm in "AB":
        facts = {"fio_version": "fio-3.33",
                 "ab": {"session": "sim", "arm": arm, "command": "true", "rounds": len(orders), "orders": orders}}
        made.append(Run(id=("1" if arm == "A" else "2") * 32, label=f"sim-{arm.lower()}",
                        status="complete", source="measured", created_at=datetime.now(timezone.utc), finished_at=None,
                        target="/sim", plan_name="custom", facts=facts, cells=tuple(arms[arm])))
    return tuple(made)


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
