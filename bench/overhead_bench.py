#!/usr/bin/env python3
"""Overhead of stackbench against raw fio running the same job file.

For each of N pairs (alternating, so drift hits both sides alike) this runs one `stackbench run` cell and
then raw `fio` on the job file stackbench stored for that cell (same options, its own scratch file), and
compares IOPS. Target: stackbench within 1 % of raw fio (it adds a Python parent that polls every 0.2 s,
parsing and an SQLite write after fio exits, none of which should touch fio's measured interval).

    .venv/bin/python bench/overhead_bench.py --target /var/tmp --pairs 5 --runtime 10

With --sampling it measures instead what the per-second conditions sampler (probe/conditions.py), which
every run starts around every fio process, costs fio: N pairs of the same raw fio job, one with the sampler
running in this process on the target's devices and one without, in alternating order (AB, BA, ...), and
the sampler's own CPU time per sample. Target: IOPS with sampling within 1 % of without.

    .venv/bin/python bench/overhead_bench.py --sampling --target /var/tmp --pairs 10 --runtime 10

One sample a second costs too little for pairs to see: their spread (+-6 % on a virtio disk, +-20 % on
/dev/shm) is many times the 1 % asked about. With --rates the sampler runs at several rates instead (its
interval is 1/rate), each rate's pairs alternating with and without it; the cost grows with the rate, so
the pairs at 100 samples a second show what one costs. Per rate it prints the paired log ratio's geometric
mean with its 95 % t-interval (analysis/between_runs.paired_ratio, as compare pairs ab's rounds); then the
least-squares slope of every pair's log ratio on the rate the sampler reached, through the origin
(analysis/between_runs.rate_slope), and what that implies at one sample a second, the upper end of its
interval against the 1 % goal.

    .venv/bin/python bench/overhead_bench.py --sampling --rates 1,10,50,100 --target /dev/shm --pairs 8 --runtime 5
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

from stackbench.engine.fio_json import parse_fio_json
from stackbench.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="/var/tmp", help="directory for the scratch files")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", default="10")
    parser.add_argument("--size", default="256M")
    parser.add_argument("--rw", default="randread")
    parser.add_argument("--bs", default="4k")
    parser.add_argument("--qd", default="1")
    parser.add_argument("--sampling", action="store_true", help="measure the conditions sampler's overhead instead")
    parser.add_argument("--rates", default=None,
                        help="with --sampling: samples a second to run the sampler at, comma-separated (e.g. 1,10,50,100), "
                             "and fit the cost per sample through them")
    args = parser.parse_args()
    if args.sampling:
        sampling_overhead(args)
        return

    workdir = Path(tempfile.mkdtemp(prefix="sb-overhead-", dir=args.target))
    db = f"sqlite:///{workdir / 'bench.db'}"
    rows = []
    for pair in range(1, args.pairs + 1):
        clock = time.monotonic()
        made = subprocess.run(
            [sys.executable, "-m", "stackbench", "run", "-t", str(workdir), "--rw", args.rw, "--bs", args.bs,
             "--qd", args.qd, "--runtime", args.runtime, "--size", args.size, "--db", db, "--json"],
            capture_output=True, text=True, check=True,
        )
        sb_wall = time.monotonic() - clock
        run = json.loads(made.stdout)
        sb_iops = run["cells"][0]["iops"]
        job_text = Store(db).fio_outputs(run["run_id"])[0]["job_file"]
        job_text = "\n".join(
            f"filename={workdir / 'raw.scratch'}" if line.startswith("filename=") else line
            for line in job_text.splitlines()
        )
        job = workdir / "raw.fio"
        job.write_text(job_text + "\n")
        clock = time.monotonic()
        raw = subprocess.run(["fio", "--output-format=json+", "--eta=never", str(job)],
                             capture_output=True, text=True, check=True)
        raw_wall = time.monotonic() - clock
        (workdir / "raw.scratch").unlink(missing_ok=True)
        raw_iops = parse_fio_json(raw.stdout).directions[0].iops
        rows.append((pair, sb_iops, raw_iops, sb_iops / raw_iops, sb_wall, raw_wall))
        print(f"pair {pair}: stackbench {sb_iops:,.0f} IOPS ({sb_wall:.1f} s wall)   "
              f"raw fio {raw_iops:,.0f} IOPS ({raw_wall:.1f} s wall)   ratio {sb_iops / raw_iops:.4f}", flush=True)
    for leftover in workdir.iterdir():
        leftover.unlink()
    workdir.rmdir()
    ratios = [r[3] for r in rows]
    median_ratio = statistics.median(ratios)
    sb_median = statistics.median(r[1] for r in rows)
    raw_median = statistics.median(r[2] for r in rows)
    print()
    print(f"cell: {args.bs} QD{args.qd} {args.rw}, {args.runtime} s, {args.size} file, {args.pairs} pairs")
    print(f"median IOPS: stackbench {sb_median:,.0f}, raw fio {raw_median:,.0f}")
    print(f"IOPS ratio stackbench/raw fio: median {median_ratio:.4f} (min {min(ratios):.4f}, max {max(ratios):.4f})")
    print(f"ratio of medians: {sb_median / raw_median:.4f}; within 1 %: {'yes' if abs(sb_median / raw_median - 1) <= 0.01 else 'NO'}")
    print(f"wall time per cell: stackbench {statistics.median(r[4] for r in rows):.2f} s, "
          f"raw fio {statistics.median(r[5] for r in rows):.2f} s")


def _raw_fio(args: argparse.Namespace, scratch: Path) -> float:
    done = subprocess.run(
        ["fio", "--name=overhead", f"--filename={scratch}", f"--size={args.size}", f"--rw={args.rw}",
         f"--bs={args.bs}", f"--iodepth={args.qd}", "--ioengine=libaio", "--direct=1", "--time_based",
         f"--runtime={args.runtime}", "--output-format=json", "--eta=never"],
        capture_output=True, text=True, check=True)
    return parse_fio_json(done.stdout).directions[0].iops


def _sampled(args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The devices and pools a run on the target samples (the run's own choice, from its stack)."""
    from stackbench.measure.telemetry import sampled_layers
    from stackbench.probe.block import collect_target_facts
    from stackbench.stack.discover import stack_facts

    devices, pools = sampled_layers({"target": collect_target_facts(Path(args.target)),
                                     "stack": stack_facts(args.target)})
    return tuple(devices), tuple(pools)


def sampling_overhead(args: argparse.Namespace) -> None:
    """IOPS of one raw fio job with and without the sampler beside it, paired and counterbalanced."""
    from stackbench.probe.conditions import ConditionSampler

    if args.rates:
        dose_response(args)
        return
    devices, pools = _sampled(args)
    workdir = Path(tempfile.mkdtemp(prefix="sb-sampling-", dir=args.target))
    scratch = workdir / "raw.scratch"
    ratios, with_iops, without_iops = [], [], []
    try:
        for pair in range(args.pairs):
            iops = {}
            for sampled in ((True, False) if pair % 2 == 0 else (False, True)):
                if sampled:
                    with ConditionSampler(devices, pools):
                        iops[True] = _raw_fio(args, scratch)
                else:
                    iops[False] = _raw_fio(args, scratch)
            with_iops.append(iops[True])
            without_iops.append(iops[False])
            ratios.append(iops[True] / iops[False])
            print(f"pair {pair + 1}: with sampling {iops[True]:,.0f} IOPS, without {iops[False]:,.0f}, "
                  f"ratio {ratios[-1]:.4f}", flush=True)
    finally:
        scratch.unlink(missing_ok=True)
        workdir.rmdir()
    sampler = ConditionSampler(devices, pools, interval=0.01, max_samples=100_000)
    cpu = time.process_time()
    with sampler:
        time.sleep(2)
    per_sample = (time.process_time() - cpu) / max(1, len(sampler.samples))
    print()
    print(f"cell: {args.bs} QD{args.qd} {args.rw}, {args.runtime} s, {args.size} file, {args.pairs} pairs; "
          f"devices sampled: {', '.join(devices) or 'none'}")
    median = statistics.median(ratios)
    print(f"IOPS with/without sampling: median ratio {median:.4f} (min {min(ratios):.4f}, max {max(ratios):.4f}); "
          f"ratio of medians {statistics.median(with_iops) / statistics.median(without_iops):.4f}; "
          f"within 1 %: {'yes' if abs(median - 1) <= 0.01 else 'NO'}")
    print(f"sampler CPU per sample: {per_sample * 1e3:.2f} ms ({per_sample * 100:.3f} % of one CPU at one a second)")


def _rates(text: str) -> list[float]:
    try:
        rates = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"--rates {text!r}: give samples a second, comma-separated, e.g. 1,10,50,100") from None
    if not rates or not all(0 < rate <= 1000 for rate in rates):
        raise SystemExit(f"--rates {text!r}: each rate must be above 0 and at most 1000 samples a second")
    return rates


def _paired_at(args: argparse.Namespace, devices: tuple[str, ...], pools: tuple[str, ...], rate: float,
               scratch: Path, sampled_first: bool) -> tuple[float, float, float]:
    """One pair at `rate`: IOPS without and with the sampler, in the order given, and the rate the sampler
    reached (its samples over fio's wall time, which a sampler that cannot keep up falls short of)."""
    from stackbench.probe.conditions import ConditionSampler

    iops: dict[bool, float] = {}
    reached = rate
    for sampled in ((True, False) if sampled_first else (False, True)):
        if not sampled:
            iops[False] = _raw_fio(args, scratch)
            continue
        sampler = ConditionSampler(devices, pools, interval=1 / rate, max_samples=1_000_000)
        clock = time.monotonic()
        with sampler:
            iops[True] = _raw_fio(args, scratch)
        reached = len(sampler.samples) / (time.monotonic() - clock)
    return iops[False], iops[True], reached


def dose_response(args: argparse.Namespace) -> None:
    """The sampler's cost at several rates, paired with and without at each, and the cost per sample fitted
    through them: the bench's --rates mode (see the module's docstring)."""
    from stackbench.analysis.between_runs import paired_ratio, rate_slope

    rates = _rates(args.rates)
    devices, pools = _sampled(args)
    workdir = Path(tempfile.mkdtemp(prefix="sb-sampling-", dir=args.target))
    scratch = workdir / "raw.scratch"
    pairs: dict[float, list[tuple[float, float]]] = {rate: [] for rate in rates}
    points: list[tuple[float, float, float]] = []
    try:
        for round_ in range(args.pairs):
            for index, rate in enumerate(rates):  # the order of the sides alternates pair by pair
                without, with_, reached = _paired_at(args, devices, pools, rate, scratch, (round_ + index) % 2 == 0)
                pairs[rate].append((without, with_))
                points.append((reached, without, with_))
                print(f"round {round_ + 1}, {rate:g}/s (reached {reached:.1f}/s): with {with_:,.0f} IOPS, "
                      f"without {without:,.0f}, ratio {with_ / without:.4f}", flush=True)
    finally:
        scratch.unlink(missing_ok=True)
        workdir.rmdir()
    print()
    print(f"cell: {args.bs} QD{args.qd} {args.rw}, {args.runtime} s, {args.size} file, {args.pairs} pairs a rate; "
          f"devices sampled: {', '.join(devices) or 'none'}")
    for rate in rates:
        test = paired_ratio(pairs[rate])
        interval = f"95 % interval {test.low:.4f}-{test.high:.4f}" if test.testable else "no interval (one pair)"
        print(f"{rate:g} samples/s: with/without geometric mean {test.ratio:.4f}, {interval}, {test.n_base} pairs")
    fit = rate_slope(points)
    print(f"IOPS change per sample a second (the log ratio's slope through the origin, x100): {fit.slope * 100:+.4f} %"
          + (f" (95 % interval {fit.low * 100:+.4f} to {fit.high * 100:+.4f} %)" if fit.low is not None else "")
          + f", {fit.n} pairs")
    centre, low, _ = fit.ratio_at(1.0)
    if low is None:
        print("at 1 sample a second: one pair gives no interval; run more pairs")
        return
    cost, bound = 1 - centre, 1 - low
    print(f"at 1 sample a second: cost {cost * 100:+.3f} % of IOPS, at most {bound * 100:.3f} % (95 % upper bound); "
          f"within the 1 % goal: {'yes' if bound <= 0.01 else 'NOT SHOWN'}")


if __name__ == "__main__":
    main()
