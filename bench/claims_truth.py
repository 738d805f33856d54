"""Does every claim pass the same proof? A/A pairs must make no claim; a real 2x slowdown must be named.

A/A (issue 27): PAIRS pairs of separate `stackbench run`s of the same plan on the same target (each pair its
own two runs), each pair shown by `stackbench layers A B --json` and `stackbench compare A B --json`. Any
named layer gap (`biggest_gap`) or overall keep/revert is a false claim; the goal is none in at least 95 %
of the pairs.

Power: a real 2x slowdown made by the kernel, not by fio. A loop device over a file in /var/tmp is measured
as it is (A), then by a stackbench started inside a new cgroup-v1 blkio child whose
`blkio.throttle.write_iops_device` and `read_iops_device` allow the loop device half the IOPS A measured
(B): fio inherits the cgroup from stackbench, so every fio run of B is throttled. `stackbench layers A B`
must name the A->B gap, about 2x, on every cell, and `compare A B` must say revert. The cgroup, the loop
device and its file are this script's own and are removed at the end, whatever happens.

Uses only `python -m stackbench` (the CLI users run) and Python; needs root for the power part (losetup,
cgroup), which `--no-power` skips. Prints what it measured and a summary in bench/RESULTS.md's form.

    python bench/claims_truth.py --target /var/tmp --pairs 20
    python bench/claims_truth.py --target /var/tmp --pairs 3 --power-pairs 1     # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

# O_DIRECT: the blkio throttle of cgroup v1 sees the I/O a process submits, not the page cache's writeback
PLAN = ["--bs", "4k", "--qd", "1", "--rw", "randwrite,randread", "--direct", "--size", "128M"]
CGROUP_ROOT = Path("/sys/fs/cgroup/blkio")
LOOP_SIZE = 256 * 1024**2


def stackbench(*args: str, preexec: Callable[[], None] | None = None) -> dict:
    """One stackbench command with --json; its JSON document (a failure stops the study with its words)."""
    done = subprocess.run([sys.executable, "-m", "stackbench", *args, "--json"], capture_output=True, text=True,
                          preexec_fn=preexec)
    if done.returncode != 0:
        raise SystemExit(f"stackbench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def measure(target: str, db: str, label: str, options: argparse.Namespace, *extra: str,
            preexec: Callable[[], None] | None = None) -> dict:
    return stackbench("run", "-t", target, *PLAN, *extra, "--runs", str(options.runs), "--fixed", "--runtime",
                      options.runtime, "--ramp", options.ramp, "--label", label, "--db", db, preexec=preexec)


def claims(db: str, a: str, b: str) -> tuple[dict, dict]:
    """`layers A B` and `compare A B`, as JSON."""
    return stackbench("layers", a, b, "--db", db), stackbench("compare", a, b, "--db", db, "--force")


def describe_pair(layers: dict, compare: dict) -> str:
    gap = layers["biggest_gap"]
    named = f"gap {gap['factor']:.2f}x on {gap['pattern']}" if gap else "no gap proven"
    factors = ", ".join(f"{row['pattern']} {row['values'][0]:,.0f}/{row['values'][1]:,.0f} = "
                        f"{row['factors_lost'][0]:.2f}x" for row in layers["rows"] if row["factors_lost"][0] is not None)
    return f"layers: {named} ({factors}); compare: {compare['verdict']} rows {[r['verdict'] for r in compare['rows']]}"


def aa(options: argparse.Namespace, db: str) -> dict:
    """PAIRS independent pairs of separate runs of the same plan: how many make a claim."""
    pairs_with_claim = gaps = overall = rows_flagged = rows = 0
    for index in range(options.pairs):
        a, b = f"aa-{index}-a", f"aa-{index}-b"
        measure(options.target, db, a, options)
        measure(options.target, db, b, options)
        layers, compare = claims(db, a, b)
        gap = layers["biggest_gap"] is not None
        keep_revert = compare["verdict"] in ("keep", "revert")
        flagged = sum(r["verdict"] in ("keep", "revert") for r in compare["rows"])
        gaps += gap
        overall += keep_revert
        rows_flagged += flagged
        rows += len(compare["rows"])
        pairs_with_claim += gap or keep_revert
        print(f"A/A {index:>2}: {describe_pair(layers, compare)}", flush=True)
    return {"pairs": options.pairs, "with_claim": pairs_with_claim, "gaps": gaps, "overall": overall,
            "rows_flagged": rows_flagged, "rows": rows}


@contextmanager
def loop_device(directory: Path) -> Iterator[str]:
    """A loop device over a new file of LOOP_SIZE bytes in `directory`; detached and removed afterwards."""
    handle, name = tempfile.mkstemp(prefix="claims-truth-", suffix=".img", dir=directory)
    os.close(handle)
    backing = Path(name)
    device = ""
    try:
        os.truncate(backing, LOOP_SIZE)
        device = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True,
                                check=True).stdout.strip()
        yield device
    finally:
        if device:
            subprocess.run(["losetup", "-d", device], check=False)
        backing.unlink(missing_ok=True)


@contextmanager
def throttled_cgroup(device: str, write_iops: int, read_iops: int) -> Iterator[Path]:
    """A new blkio child cgroup allowing `device` these IOPS; removed afterwards (it is empty by then: every
    process put in it has exited)."""
    group = CGROUP_ROOT / f"stackbench-claims-{os.getpid()}"
    group.mkdir()
    try:
        rdev = os.stat(device).st_rdev
        node = f"{os.major(rdev)}:{os.minor(rdev)}"
        (group / "blkio.throttle.write_iops_device").write_text(f"{node} {write_iops}\n")
        (group / "blkio.throttle.read_iops_device").write_text(f"{node} {read_iops}\n")
        yield group
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)  # the last fio may still be leaving


def joiner(group: Path) -> Callable[[], None]:
    """Run in the child between fork and exec: the child (stackbench, and the fio runs it starts) joins
    `group`."""
    def join() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))
    return join


def power(options: argparse.Namespace, db: str) -> dict:
    """A (the loop device as it is) against B (half its IOPS, by the kernel's blkio throttle), alternating."""
    if os.geteuid() != 0 or not (CGROUP_ROOT / "blkio.throttle.write_iops_device").exists():
        raise SystemExit("the power part needs root and cgroup v1's blkio controller; run with --no-power")
    with loop_device(Path(options.loop_dir)) as device:
        calibration = measure(device, db, "power-calibration", options, "--destroy-data")
        rates = {c["direction"]: c["iops"] for c in calibration["cells"]}
        limits = {d: max(1, int(rates[d] / 2)) for d in ("write", "read")}
        print(f"loop device {device}: unthrottled {rates['write']:,.0f} write / {rates['read']:,.0f} read IOPS; "
              f"B throttled to {limits['write']:,} / {limits['read']:,}", flush=True)
        named = reverts = 0
        factors: list[float] = []
        with throttled_cgroup(device, limits["write"], limits["read"]) as group:
            for index in range(options.power_pairs):
                a, b = f"power-{index}-a", f"power-{index}-b"
                measure(device, db, a, options, "--destroy-data")
                measure(device, db, b, options, "--destroy-data", preexec=joiner(group))
                layers, compare = claims(db, a, b)
                gap = layers["biggest_gap"]
                named += gap is not None and (gap["from"], gap["to"]) == (a, b)
                reverts += compare["verdict"] == "revert"
                factors += [row["factors_lost"][0] for row in layers["rows"] if row["factors_lost"][0]]
                print(f"power {index}: {describe_pair(layers, compare)}", flush=True)
    return {"pairs": options.power_pairs, "named": named, "reverts": reverts, "rates": rates, "limits": limits,
            "factor": statistics.median(factors) if factors else None}


def report(options: argparse.Namespace, db: str, started: float, found: dict | None, strength: dict | None) -> None:
    minutes = (time.monotonic() - started) / 60
    print()
    if found:
        share = found["with_claim"] / found["pairs"]
        pairs = f"{found['pairs']} A/A pair{'s' if found['pairs'] != 1 else ''}"
        print(f"target {options.target}, separate runs: {pairs} of {found['rows'] // found['pairs']} cells each")
        print(f"  pairs with a claim (layer gap or compare keep/revert): {found['with_claim']} of {found['pairs']} "
              f"({share:.1%}); goal: none in at least 95 % of pairs — {'met' if share <= 0.05 else 'NOT met'}")
        print(f"  layer gaps named: {found['gaps']}; overall keep/revert: {found['overall']}; rows with keep/revert: "
              f"{found['rows_flagged']} of {found['rows']}")
    if strength:
        print(f"  power, loop device throttled by blkio to half its IOPS ({strength['limits']['write']:,} write / "
              f"{strength['limits']['read']:,} read of {strength['rates']['write']:,.0f} / "
              f"{strength['rates']['read']:,.0f}): gap named A->B in {strength['named']} of {strength['pairs']}, "
              f"revert in {strength['reverts']} of {strength['pairs']}; median factor {strength['factor']:.2f}x")
    per_cell = options.runs * (float(options.ramp) + float(options.runtime))
    print(f"  fio time per cell: {options.runs} runs x {options.ramp}+{options.runtime} s = {per_cell:g} s")
    print(f"  wall time {minutes:.1f} min; store {db}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="directory for the A/A runs' scratch file")
    parser.add_argument("--pairs", type=int, default=20, help="A/A pairs (each pair two separate runs)")
    parser.add_argument("--power-pairs", type=int, default=3, help="A (as is) / B (throttled) pairs")
    parser.add_argument("--runs", type=int, default=5, help="fio runs per cell in each stackbench run")
    parser.add_argument("--runtime", default="1", help="measured seconds per fio run")
    parser.add_argument("--ramp", default="0.5", help="ramp seconds per fio run")
    parser.add_argument("--loop-dir", default="/var/tmp", help="where the loop device's backing file goes")
    parser.add_argument("--no-power", action="store_true", help="skip the throttled loop device part")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="claims-truth-"))
    db = str(workdir / "claims.db")
    started = time.monotonic()
    print(f"# {' '.join(sys.argv)}  (fio runs per cell {options.runs}, {options.ramp}+{options.runtime} s each)",
          flush=True)
    found = aa(options, db) if options.pairs else None
    strength = None if options.no_power else power(options, db)
    report(options, db, started, found, strength)


if __name__ == "__main__":
    main()
