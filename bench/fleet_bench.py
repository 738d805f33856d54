#!/usr/bin/env python3
"""Coordination overhead of a fleet run against raw `fio --client` with the same job on the same hosts.

For each of N pairs (alternating, so drift hits both sides alike) this runs one `stackbench run --hosts`
cell (one fio run per host, whole command timed: checks on every host, servers and forwards started and
stopped, cleanup pass, storing) and then raw `fio --client=127.0.0.1,PORT job --client=...` with the job
files stackbench stored for that cell (same options, their own scratch files), against fio servers that
were started once beforehand and are not part of the raw side's time. It compares the fleet's total IOPS
(computed by stackbench from the per-host entries) with the sum of the raw per-host entries, and the wall
times. Goals: IOPS ratio >= 0.99, at most 2 s of extra wall time per run.

Hosts: `--hosts h1,h2,h3 --target /abs/dir` (your ssh config), or as root without --hosts, three network
namespace hosts with their own sshd made by tests/fleet_hosts.py (`--ssh-config` is then the rig's).

    sudo .venv/bin/python bench/fleet_bench.py --pairs 5 --runtime 10
    .venv/bin/python bench/fleet_bench.py --hosts node1,node2,node3 --target /srv/bench --pairs 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from stackbench.analysis.between_runs import estimate
from stackbench.engine.fio import find_fio, fio_version
from stackbench.fleet.preflight import preflight
from stackbench.fleet.servers import start_servers, stop_servers
from stackbench.fleet.ssh import Ssh
from stackbench.results import new_id
from stackbench.store import Store

TESTS = Path(__file__).resolve().parent.parent / "tests"


@contextlib.contextmanager
def hosts_to_use(args: argparse.Namespace) -> Iterator[tuple[list[str], str, str | None]]:
    if args.hosts:
        yield args.hosts.split(","), args.target, args.ssh_config
        return
    if os.geteuid() != 0:
        sys.exit("without --hosts the bench makes namespace hosts, which needs root")
    sys.path.insert(0, str(TESTS))
    from fleet_hosts import fleet_rig

    with fleet_rig(Path(tempfile.mkdtemp(prefix="sb-fleet-bench-", dir="/tmp")), count=args.count) as rig:
        yield rig.names, str(rig.hosts[0].target), str(rig.ssh_config)


def raw_jobs(stored: str, scratch_dir: str) -> list[str]:
    """The per-host job files stackbench stored for the cell, each writing its own raw scratch file."""
    parts = re.split(r"^# host\d+\.fio\n", stored, flags=re.M)[1:]
    return [re.sub(r"^filename=.*$", f"filename={scratch_dir}/stackbench-raw-{new_id()[:8]}-h{i}.scratch", job,
                   flags=re.M) for i, job in enumerate(parts)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", help="comma-separated hosts (default: make namespace hosts, as root)")
    parser.add_argument("--target", help="absolute directory on every host (with --hosts)")
    parser.add_argument("--ssh-config", help="ssh -F file (with --hosts)")
    parser.add_argument("--count", type=int, default=3, help="namespace hosts to make without --hosts")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", default="10")
    parser.add_argument("--size", default="256M")
    parser.add_argument("--rw", default="randread")
    parser.add_argument("--bs", default="4k")
    parser.add_argument("--qd", default="1")
    args = parser.parse_args()
    if args.hosts and not args.target:
        parser.error("--hosts needs --target")

    with hosts_to_use(args) as (hosts, target, ssh_config):
        workdir = Path(tempfile.mkdtemp(prefix="sb-fleet-bench-"))
        db = f"sqlite:///{workdir / 'bench.db'}"
        env = {**os.environ, **({"STACKBENCH_SSH_CONFIG": ssh_config} if ssh_config else {})}
        ssh = Ssh.from_environment(ssh_config)
        fio = find_fio()
        servers = preflight(ssh, hosts, target=target, size=1, scratch_id=new_id(), local_version=fio_version(fio))
        start_servers(servers)  # the raw side's servers, started once, untimed
        rows = []
        try:
            for pair in range(1, args.pairs + 1):
                clock = time.monotonic()
                made = subprocess.run(
                    [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(hosts), "-t", target,
                     "--rw", args.rw, "--bs", args.bs, "--qd", args.qd, "--runtime", args.runtime, "--size",
                     args.size, "--ramp", "0", "--runs", "1", "--db", db, "--json"],
                    capture_output=True, text=True, env=env,
                )
                if made.returncode != 0:
                    sys.exit(made.stderr)
                sb_wall = time.monotonic() - clock
                run = json.loads(made.stdout)
                sb_iops = next(c["iops"] for c in run["cells"] if c.get("host") == "(total)")
                jobs = raw_jobs(Store(db).fio_outputs(run["run_id"])[0]["job_file"], target)
                argv = [fio, "--output-format=json+", "--eta=never"]
                for index, (server, job) in enumerate(zip(servers, jobs)):
                    path = workdir / f"raw{index}.fio"
                    path.write_text(job)
                    argv += [f"--client=127.0.0.1,{server.port}", str(path)]
                clock = time.monotonic()
                # in workdir: the stored job files ask for per-second logs, which fio's client writes in its cwd
                raw = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=workdir)
                raw_wall = time.monotonic() - clock
                text = raw.stdout
                document = json.loads(text[text.index('{\n  "fio version"'):])
                raw_iops = sum(e["read" if "read" in args.rw else "write"]["iops"]
                               for e in document["client_stats"] if e["jobname"] != "All clients")
                rows.append((sb_iops, raw_iops, sb_wall, raw_wall))
                print(f"pair {pair}: fleet {sb_iops:,.0f} IOPS in {sb_wall:.2f} s, raw fio --client "
                      f"{raw_iops:,.0f} IOPS in {raw_wall:.2f} s, ratio {sb_iops / raw_iops:.4f}, "
                      f"extra wall {sb_wall - raw_wall:+.2f} s", flush=True)
        finally:
            stop_servers(servers)
            shutil.rmtree(workdir, ignore_errors=True)

    ratios = [s / r for s, r, _, _ in rows]
    extra = [sw - rw for _, _, sw, rw in rows]
    ratio = estimate(ratios)  # geometric mean and its 95 % interval over the pairs
    print(f"\n{len(hosts)} hosts, {args.rw} {args.bs} QD{args.qd}, {args.runtime} s per run, {len(rows)} pairs")
    if ratio.low is None or ratio.high is None:
        verdict = "one pair: no interval, run more pairs"
    elif ratio.low >= 0.99:
        verdict = "met (the whole interval is at or above 0.99)"
    elif ratio.high < 0.99:
        verdict = "NOT met (the whole interval is below 0.99)"
    else:
        verdict = "not decided: the interval spans 0.99 (a busy machine; run more pairs, longer)"
    interval = f", 95 % interval {ratio.low:.4f} to {ratio.high:.4f}" if ratio.low is not None else ""
    print(f"IOPS ratio fleet/raw: geometric mean {ratio.centre:.4f}{interval} (pairs from {min(ratios):.4f} to "
          f"{max(ratios):.4f}); goal >= 0.99: {verdict}")
    print(f"extra wall time per run: median {statistics.median(extra):.2f} s (max {max(extra):.2f} s); "
          f"goal <= 2 s: {'met' if statistics.median(extra) <= 2 else 'NOT met'}")


if __name__ == "__main__":
    main()
