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


def sampling_overhead(args: argparse.Namespace) -> None:
    """IOPS of one raw fio job with and without the sampler beside it, paired and counterbalanced."""
    from stackbench.measure.telemetry import sampled_layers
    from stackbench.probe.block import collect_target_facts
    from stackbench.probe.conditions import ConditionSampler
    from stackbench.stack.discover import stack_facts

    devices, pools = sampled_layers({"target": collect_target_facts(Path(args.target)),
                                     "stack": stack_facts(args.target)})
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


if __name__ == "__main__":
    main()
