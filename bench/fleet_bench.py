#!/usr/bin/env python3
"""Coordination overhead of a fleet run against raw `fio --client` with the same job on the same hosts.

Each of N pairs runs one `stackbench run --hosts` cell (one fio run per host, whole command timed: checks on
every host, servers and forwards started and stopped, cleanup pass, storing) and raw
`fio --client=127.0.0.1,PORT job --client=...` with the job files stackbench stored for the cell (same
options, their own scratch files), against fio servers that were started once beforehand and are not part
of the raw side's time. The order alternates pair by pair (fleet first, then raw first), so whatever the
first run of a pair leaves to the second (dirty pages of its laid-out files being written back, a warmer
cache) hits both sides alike; one untimed fleet run first warms the caches and gives the job files. It
compares the fleet's total IOPS (computed by stackbench from the per-host entries) with the sum of the raw
per-host entries, and the wall times: the extra wall time's median and maximum, and where it goes (the
median of each phase the fleet run records with STACKBENCH_FLEET_TIMING, fleet/timing.py).
Goals: IOPS ratio >= 0.99, at most 2 s of extra wall time per run.

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
from typing import Any, Iterator

from stackbench.analysis.between_runs import estimate
from stackbench.engine.fio import find_fio, fio_version
from stackbench.fleet.preflight import preflight
from stackbench.fleet.servers import start_servers, stop_servers
from stackbench.fleet.ssh import Ssh
from stackbench.fleet.timing import ENV
from stackbench.model.results import new_id
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


def fleet_run(hosts: list[str], target: str, args: argparse.Namespace, db: str, env: dict[str, str],
              workdir: Path) -> tuple[float, float, dict[str, Any], str]:
    """One timed `stackbench run --hosts` cell: its total IOPS, wall time, phases and stored job files."""
    timing_file = workdir / "timing.json"
    launched = time.time()
    clock = time.monotonic()
    made = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(hosts), "-t", target,
         "--rw", args.rw, "--bs", args.bs, "--qd", args.qd, "--runtime", args.runtime, "--size",
         args.size, "--ramp", "0", "--runs", "1", "--db", db, "--json"],
        capture_output=True, text=True, env={**env, ENV: str(timing_file)},
    )
    wall = time.monotonic() - clock
    ended = time.time()
    if made.returncode != 0:
        sys.exit(made.stderr)
    run = json.loads(made.stdout)
    iops = next(c["iops"] for c in run["cells"] if c.get("host") == "(total)")
    jobs = Store(db).fio_outputs(run["run_id"])[0]["job_file"]
    return iops, wall, phases(json.loads(timing_file.read_text()), launched, ended), jobs


def phases(document: dict[str, Any], launched: float, ended: float) -> dict[str, Any]:
    """A run's phases in seconds, with its start-up counted from our launch (fork and exec included) and
    `exit` from its timing file's writing to our seeing it gone (the interpreter's teardown)."""
    totals = dict(document["totals"])
    began = document["process_started_epoch"]
    totals["startup"] = totals.get("startup", 0.0) + began - launched
    totals["exit"] = ended - (began + document["ended_s"])
    slowest: dict[str, float] = {}
    for values in document["hosts"].values():  # the slowest host's steps: the others wait for it
        for key, value in values.items():
            if isinstance(value, (int, float)):
                slowest[key] = max(slowest.get(key, 0.0), value)
    return {"totals": totals, "hosts": slowest}


def raw_run(fio: str, servers: list[Any], jobs: list[str], workdir: Path, rw: str) -> tuple[float, float]:
    """Raw fio --client with the given job files on the running servers: summed IOPS and wall time."""
    argv = [fio, "--output-format=json+", "--eta=never"]
    for index, (server, job) in enumerate(zip(servers, jobs)):
        path = workdir / f"raw{index}.fio"
        path.write_text(job)
        argv += [f"--client=127.0.0.1,{server.port}", str(path)]
    clock = time.monotonic()
    # in workdir: the stored job files ask for per-second logs, which fio's client writes in its cwd
    raw = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=workdir)
    wall = time.monotonic() - clock
    text = raw.stdout
    document = json.loads(text[text.index('{\n  "fio version"'):])
    iops = sum(e["read" if "read" in rw else "write"]["iops"]
               for e in document["client_stats"] if e["jobname"] != "All clients")
    return iops, wall


def breakdown(timings: list[dict[str, Any]], raw_walls: list[float]) -> list[str]:
    """The median of each phase over the pairs, in the order of a run, and the slowest host's steps."""
    names: list[str] = []
    for one in timings:
        names += [n for n in one["totals"] if n not in names]
    order = ["startup", *[n for n in names if n not in ("startup", "unaccounted", "exit")], "unaccounted", "exit"]
    lines = ["fleet run's wall time by phase (median over the pairs; phases of the main thread, one after the other):"]
    for name in order:
        values = [one["totals"].get(name, 0.0) for one in timings]
        lines.append(f"  {name:<16} {statistics.median(values):7.3f} s   (max {max(values):.3f} s)  {PHASES.get(name, '')}")
    fio = [one["totals"].get("fio_client", 0.0) - raw for one, raw in zip(timings, raw_walls)]
    lines.append(f"  {'':<16} fio_client minus raw fio --client's wall: median {statistics.median(fio):+.3f} s")
    keys: list[str] = []
    for one in timings:
        keys += [k for k in one["hosts"] if k not in keys]
    if keys:
        lines.append("the slowest host's side (median over the pairs; these overlap the phases above):")
        for key in keys:
            values = [one["hosts"].get(key, 0.0) for one in timings]
            lines.append(f"  {key:<18} {statistics.median(values):7.3f} s   {HOST_STEPS.get(key, '')}")
    return lines


PHASES = {
    "startup": "python, stackbench's imports, the command line (from our launch)",
    "sessions_open": "host list checked, one ssh per host started, the agent sent",
    "store_open": "the store's and the run's modules imported, the store opened",
    "local_fio": "this machine's fio found and its version asked",
    "checks_wait": "waiting for the hosts' check answers",
    "store_run": "the run row stored",
    "forwards": "ssh -O forward to each host's fio socket",
    "servers_start": "'go', waiting for each fio server's socket",
    "fio_client": "the fio --client call (fio's own run included)",
    "store_cell": "per-host results parsed, the cell stored",
    "servers_stop": "lifelines closed, each agent stops fio and cleans up, ssh exits",
    "cleanup_pass": "the cleanup over new ssh, for hosts that did not confirm",
    "store_finish": "the run finished in the store and read back",
    "print": "the run printed",
    "unaccounted": "the gaps between the phases",
    "exit": "the interpreter's teardown, until we see the process gone",
}
HOST_STEPS = {
    "answered_s": "from its ssh started to its check answer here",
    "ssh_s": "of that: ssh's connection, login and remote shell (the rest is the agent's own)",
    "python_s": "the remote python3's start, the agent read and its imports",
    "fio_version_s": "fio --version there",
    "target_check_s": "the target's safety checks",
    "target_facts_s": "the target's file system and devices",
    "direct_io_s": "O_DIRECT probe",
    "system_facts_s": "kernel, CPU, RAM",
    "server_start_s": "fio --server until its socket exists",
    "server_stop_s": "its lifeline closed: fio stopped, scratch file and socket directory removed",
}


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
        timings = []
        try:
            _, _, _, stored = fleet_run(hosts, target, args, db, env, workdir)  # untimed warm-up: caches, job files
            for pair in range(1, args.pairs + 1):
                raw_first = pair % 2 == 0
                if raw_first:
                    raw_iops, raw_wall = raw_run(fio, servers, raw_jobs(stored, target), workdir, args.rw)
                sb_iops, sb_wall, timed, stored = fleet_run(hosts, target, args, db, env, workdir)
                if not raw_first:
                    raw_iops, raw_wall = raw_run(fio, servers, raw_jobs(stored, target), workdir, args.rw)
                rows.append((sb_iops, raw_iops, sb_wall, raw_wall))
                timings.append(timed)
                print(f"pair {pair} ({'raw' if raw_first else 'fleet'} first): fleet {sb_iops:,.0f} IOPS in "
                      f"{sb_wall:.2f} s, raw fio --client {raw_iops:,.0f} IOPS in {raw_wall:.2f} s, ratio "
                      f"{sb_iops / raw_iops:.4f}, extra wall {sb_wall - raw_wall:+.2f} s", flush=True)
        finally:
            stop_servers(servers)
            shutil.rmtree(workdir, ignore_errors=True)

    ratios = [s / r for s, r, _, _ in rows]
    extra = [sw - rw for _, _, sw, rw in rows]
    ratio = estimate(ratios)  # geometric mean and its 95 % interval over the pairs
    print(f"\n{len(hosts)} hosts, {args.rw} {args.bs} QD{args.qd}, {args.runtime} s per run, {len(rows)} pairs "
          f"(order alternating), load average {os.getloadavg()[0]:.2f} at the end")
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
    worst = max(extra)
    print(f"extra wall time per run: median {statistics.median(extra):.2f} s, max {worst:.2f} s; goal <= 2 s: "
          f"{'met in every pair' if worst <= 2 else 'met at the median, not in every pair' if statistics.median(extra) <= 2 else 'NOT met'}")
    # the same without fio's own run-to-run spread: the fleet command's wall less its fio --client call
    outside = [sw - one["totals"].get("fio_client", 0.0) for (_, _, sw, _), one in zip(rows, timings)]
    print(f"the fleet command's time outside its fio --client call: median {statistics.median(outside):.2f} s, "
          f"max {max(outside):.2f} s (the extra wall less the difference between the two fio runs)")
    print("\n".join(breakdown(timings, [rw for _, _, _, rw in rows])))


if __name__ == "__main__":
    main()
