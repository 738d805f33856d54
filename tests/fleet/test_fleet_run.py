"""Fleet runs on real hosts: three network namespaces, each with its own sshd, address and scratch directory
(tests/fleet_hosts.py), reached through the real OpenSSH client, running the real fio server and client.

The two fakes, both because the namespaces share one file system and one set of binaries: "fio is not
installed" removes the host's fio from the PATH its sshd gives it, and "another fio version" puts a wrapper
script there that answers `--version` with fio-3.99 (and runs the real fio otherwise).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from stackbench.engine.merge import percentile_from_bins
from stackbench.store import open_store

pytestmark = [pytest.mark.root, pytest.mark.slow]

CELL = ["--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0"]


def _cli(fleet, db: str, *args: str, hosts: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(hosts or fleet.names),
            "-t", str(fleet.hosts[0].target), "--db", db, *args]


def _start(fleet, db: str, block_sizes: str, runtime: str) -> subprocess.Popen:
    """A fleet run of one cell per block size, in the background, printing its JSON."""
    return subprocess.Popen(
        _cli(fleet, db, "--bs", block_sizes, "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0",
             "--runtime", runtime, "--runs", "1", "--json"),
        env=_env(fleet), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _assert_partial(fleet, process: subprocess.Popen, db: str, dropped: str, cells: dict[str, int]) -> None:
    """The run ended partial with exit 1, `dropped` named, `cells` per host, nothing left on any host."""
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and "partial" in stderr and dropped in stderr, stderr
    run = open_store(db).get_run(json.loads(stdout)["run_id"])
    assert run.status == "partial"
    assert [w.subject for w in run.warnings if w.code == "HOST_DROPPED"] == [dropped], stderr
    hosts = Counter(c.result.host for c in run.cells)
    assert {host: hosts[host] for host in cells} == cells, stderr
    assert _scratch_left(fleet) == [] and _no_fio_left(fleet) == []


def _env(fleet) -> dict[str, str]:
    return {**os.environ, **fleet.env()}


def _scratch_left(fleet) -> list[str]:
    return [str(p) for h in fleet.hosts for p in h.scratch.iterdir()]


def _our_listeners(parent: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket that a child of `parent` (our ssh forwards) listens on."""
    done = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True)
    found = []
    for line in done.stdout.splitlines():
        for pid in re.findall(r"pid=(\d+)", line):
            try:
                ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == parent:
                address, _, port = line.split()[3].rpartition(":")
                found.append((address, int(port)))
    return found


def _no_fio_left(fleet) -> list[int]:
    deadline = time.monotonic() + 10
    while True:
        left = [pid for h in fleet.hosts for pid in h.processes("fio")]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def test_three_hosts_cell_by_cell_against_each_hosts_own_fio_json(fleet, db_url: str) -> None:
    """Each host's cell equals its own client_stats entry; the total is the sum and the merged histogram.
    While it runs, no fio listens on any TCP address in any namespace (the server is on a Unix socket) and
    our forwards listen on loopback only."""
    process = subprocess.Popen(_cli(fleet, db_url, *CELL, "--runtime", "2s", "--runs", "1", "--json"),
                               env=_env(fleet), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen_fio = set()
    listening = []
    forwards = set()
    while process.poll() is None:
        for host in fleet.hosts:
            if host.processes("fio"):
                seen_fio.add(host.name)
            listening += [(host.name, line) for line in host.listening() if '"fio"' in line]
        forwards |= set(_our_listeners(process.pid))
        time.sleep(0.1)
    stdout, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert seen_fio == set(fleet.names)  # the servers ran in every namespace while we looked
    assert listening == []  # and none of them listened on a TCP address, loopback or not
    assert len({port for _, port in forwards}) == 3  # one forward per host on our side...
    assert {address for address, _ in forwards} == {"127.0.0.1"}  # ...each on loopback only

    store = open_store(db_url)
    run = store.get_run(json.loads(stdout)["run_id"])
    assert run.status == "complete"
    assert set(run.facts["hosts"]) == set(fleet.names)
    assert all(h["fio_version"] == run.facts["fio_version"] for h in run.facts["hosts"].values())
    [output] = store.fio_outputs(run.id)
    command = output["command"]
    ports = [int(a.split(",")[1]) for a in command if a.startswith("--client=")]
    text = output["raw_text"]
    document = json.loads(text[text.index("{"):])
    entries = {e["port"]: e for e in document["client_stats"] if e["jobname"] != "All clients"}
    assert sorted(entries) == sorted(ports)
    by_host = {c.result.host: c for c in run.cells}
    assert set(by_host) == {*fleet.names, "(total)"}
    merged: Counter[int] = Counter()
    for name, port in zip(fleet.names, ports):  # clients are given in the host order
        own = entries[port]["read"]
        cell = by_host[name].result
        assert cell.iops == own["iops"] and cell.bw_bytes == own["bw_bytes"]
        assert cell.total_ios == own["total_ios"]
        assert cell.clat.p99_ns == own["clat_ns"]["percentile"]["99.000000"]
        merged.update({int(k): v for k, v in own["clat_ns"]["bins"].items()})
    total = by_host["(total)"].result
    assert total.iops == pytest.approx(sum(entries[p]["read"]["iops"] for p in ports))
    assert total.bw_bytes == pytest.approx(sum(entries[p]["read"]["bw_bytes"] for p in ports))
    assert total.clat.p99_ns == percentile_from_bins(merged, 99.0)
    assert total.clat.p50_ns == percentile_from_bins(merged, 50.0)
    assert _scratch_left(fleet) == []
    assert _no_fio_left(fleet) == []
    shown = subprocess.run([sys.executable, "-m", "stackbench", "show", run.id, "--db", db_url],
                           capture_output=True, text=True, env={**_env(fleet), "COLUMNS": "200"})
    slowest = min((by_host[n] for n in fleet.names), key=lambda c: c.result.iops).result.host
    assert "Across hosts" in shown.stdout and "@(total)" in shown.stdout
    assert re.search(rf"4K QD1 rnd read .* {slowest} [\d,]+ IOPS", shown.stdout.split("Across hosts")[1])


def test_every_failing_host_is_named_and_nothing_runs_anywhere(fleet, db_url: str, tmp_path: Path) -> None:
    """node2 has no fio (removed from its PATH) and node3 a wrapper that reports fio-3.99 (the allowed
    fakes); badkey cannot log in, refused has no sshd, blackhole drops every packet (a timeout),
    nosuch.invalid does not resolve. node1 is fine and is not named."""
    fleet.host("node2").use_fio(None)
    wrapper = tmp_path / "fio"
    wrapper.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo fio-3.99; exit 0; }\nexec /usr/bin/fio "$@"\n')
    wrapper.chmod(0o755)
    fleet.host("node3").use_fio(str(wrapper))
    hosts = ["node1", "node2", "node3", "badkey", "refused", "blackhole", "nosuch.invalid"]
    done = subprocess.run(_cli(fleet, db_url, *CELL, "--runtime", "1s", "--runs", "1", "--connect-timeout", "1",
                               hosts=hosts),
                          env=_env(fleet), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    named = {line.split()[1].rstrip(":") for line in lines if line.startswith("Error: ")}
    assert named == {"node2", "node3", "badkey", "refused", "blackhole", "nosuch.invalid", "6"}  # "6 of 7 ..."
    assert any("blackhole: the connection timed out" in line for line in lines)
    assert any("refused: the connection was refused" in line for line in lines)
    assert any("badkey: the login failed" in line for line in lines)
    assert any("nosuch.invalid: the name is unknown" in line for line in lines)
    assert "node1:" not in done.stderr
    assert any("node2: fio is not installed" in line for line in lines)
    assert any("node3: runs fio-3.99 but this machine runs fio-" in line for line in lines)
    assert "nothing ran on any host" in done.stderr
    assert open_store(db_url).list_runs() == []
    assert _scratch_left(fleet) == [] and _no_fio_left(fleet) == []


def test_a_block_device_target_is_refused_on_the_host(fleet, db_url: str, blank_loop: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "--hosts", "node1", "-t", str(blank_loop), "--db", db_url,
         *CELL, "--runtime", "1s", "--runs", "1"], env=_env(fleet), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "node1: the target is refused" in done.stderr and "block device" in done.stderr


def test_a_host_whose_fio_is_killed_drops_out_and_the_others_are_kept(fleet, db_url: str) -> None:
    """fio is SIGKILLed in node2's namespace during the second cell: node2's later cells are missing with a
    warning naming it, node1 and node3 finish every cell, the run is partial, no scratch file is left."""
    process = _start(fleet, db_url, "4k,8k,16k", "2s")
    victim = fleet.host("node2")
    killed = False
    store = open_store(db_url)
    while process.poll() is None and not killed:
        runs = store.list_runs()
        if runs and len(store.get_run(runs[0][0].id).cells) >= 4:  # the first cell is stored on every host
            time.sleep(0.8)  # into the second cell
            for pid in victim.processes("fio"):
                os.kill(pid, signal.SIGKILL)
            killed = True
        time.sleep(0.05)
    assert killed
    # the total only where every host reported
    _assert_partial(fleet, process, db_url, "node2", {"node1": 3, "node2": 1, "node3": 3, "(total)": 1})


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_servers_and_tunnels_everywhere(fleet, db_url: str, sig: signal.Signals) -> None:
    """SIGTERM (a service manager) or SIGINT (Ctrl-C) mid-cell: fio's client, every server and forward stop,
    no scratch file is left on any host, the run is kept as incomplete."""
    process = subprocess.Popen(_cli(fleet, db_url, *CELL, "--runtime", "5s", "--runs", "1"), env=_env(fleet),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not all(h.processes("fio") for h in fleet.hosts) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert ("SIGTERM" if sig == signal.SIGTERM else "Ctrl-C") in stderr
    assert _no_fio_left(fleet) == []
    assert _scratch_left(fleet) == []
    children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout
    assert children.strip() == ""
    [(run, _)] = open_store(db_url).list_runs()
    assert run.status == "incomplete"


def test_a_killed_stackbench_leaves_nothing_running_or_written_on_the_hosts(fleet, db_url: str, request) -> None:
    """SIGKILL gives no chance to clean up: ssh dies with us (parent-death signal), each host's agent sees its
    stdin close, and stops fio and removes the scratch file there by itself. Here, the next command finds the
    run abandoned and removes what it left (its job directory, its ssh control directories)."""
    local_tmp = Path(tempfile.mkdtemp(prefix="sbt-", dir="/tmp"))  # its own: other runs share /tmp
    request.addfinalizer(lambda: shutil.rmtree(local_tmp, ignore_errors=True))
    process = subprocess.Popen(_cli(fleet, db_url, *CELL, "--runtime", "10s", "--runs", "1"),
                               env={**_env(fleet), "TMPDIR": str(local_tmp)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not all(list(h.scratch.iterdir()) for h in fleet.hosts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(list(h.scratch.iterdir()) for h in fleet.hosts)  # fio is writing on every host
    controls = list(local_tmp.glob("stackbench-ssh-*"))
    assert len(controls) == 3  # one per host's connection
    process.kill()
    process.wait()
    assert _no_fio_left(fleet) == []
    deadline = time.monotonic() + 10
    while _scratch_left(fleet) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _scratch_left(fleet) == []
    listed = subprocess.run([sys.executable, "-m", "stackbench", "runs", "--db", db_url, "--json"],
                            capture_output=True, text=True, env=_env(fleet))
    assert json.loads(listed.stdout)["runs"][0]["status"] == "abandoned", listed.stderr
    assert [p for p in controls if p.exists()] == []


@pytest.mark.postgres
def test_a_fleet_run_goes_to_postgresql(fleet, pg_url: str) -> None:
    done = subprocess.run(_cli(fleet, pg_url, *CELL, "--runtime", "1s", "--runs", "1", "--json"),
                          env=_env(fleet), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = open_store(pg_url).get_run(json.loads(done.stdout)["run_id"])
    assert sorted(c.result.host for c in run.cells) == sorted([*fleet.names, "(total)"])
    assert set(run.facts["hosts"]) == set(fleet.names)


def test_a_dropped_connection_ends_that_host_and_the_cleanup_pass_covers_it(fleet, db_url: str) -> None:
    """Our ssh to node3 is killed mid-cell (a dropped connection, seen from our side): node3 is dropped with a
    warning, the others finish, and node3's scratch file is gone (its agent and our cleanup pass)."""
    process = _start(fleet, db_url, "4k,8k", "2s")
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline and process.poll() is None:
        if all(list(h.scratch.iterdir()) for h in fleet.hosts):  # fio is writing everywhere
            for pid in subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True,
                                      text=True).stdout.split():
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if b"ControlMaster=yes" in argv and b"node3" in argv:  # its connection (the forward's too)
                    victim = int(pid)
        time.sleep(0.05)
    assert victim is not None
    os.kill(victim, signal.SIGKILL)
    _assert_partial(fleet, process, db_url, "node3", {"node1": 2, "node2": 2, "node3": 0})


def test_a_host_cut_off_the_network_drops_out_and_is_cleaned_up_when_it_is_back(fleet, db_url: str) -> None:
    """node1's link goes down during the first cell: ssh gives up on it (ServerAlive, about 15 s), fio's
    client loses it, the other hosts finish, the run is partial. The link is back before the cleanup pass,
    which stops the fio server still running there and removes what is left."""
    process = _start(fleet, db_url, "4k,8k", "3s")
    victim = fleet.host("node1")
    deadline = time.monotonic() + 60
    while not all(list(h.scratch.iterdir()) for h in fleet.hosts) and time.monotonic() < deadline:
        time.sleep(0.05)  # until fio writes on every host: the first cell runs
    victim.network(False)
    store = open_store(db_url)
    try:
        deadline = time.monotonic() + 90
        while process.poll() is None and time.monotonic() < deadline:
            cells = store.get_run(store.list_runs()[0][0].id).cells
            if any(c.result.host == "node2" and c.workload.bs == 8192 for c in cells):
                break  # the second cell is done on the others: node1 was given up
            time.sleep(0.2)
    finally:
        victim.network(True)  # back before the cleanup pass (which waits up to --connect-timeout)
    _assert_partial(fleet, process, db_url, "node1", {"node1": 0, "node2": 2, "node3": 2})


def test_a_host_whose_sshd_refuses_forwarding_is_named_with_the_fix(fleet, db_url: str) -> None:
    """noforward's sshd has AllowStreamLocalForwarding no: its checks pass, but fio's client cannot reach
    its server; it drops out with ssh's reason and the fix, node1 is measured."""
    done = subprocess.run(_cli(fleet, db_url, *CELL, "--runtime", "1s", "--runs", "1", "--json",
                               hosts=["node1", "noforward"]),
                          env=_env(fleet), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    run = open_store(db_url).get_run(json.loads(done.stdout)["run_id"])
    [dropped] = [w for w in run.warnings if w.code == "HOST_DROPPED"]
    assert dropped.subject == "noforward" and "could not open the forward to fio's socket" in dropped.text
    assert "AllowStreamLocalForwarding yes" in dropped.fix
    assert {c.result.host for c in run.cells} == {"node1"}
    assert _scratch_left(fleet) == [] and [p for h in fleet.extra for p in h.scratch.iterdir()] == []
    assert _no_fio_left(fleet) == [] and not any(h.processes("fio") for h in fleet.extra)
