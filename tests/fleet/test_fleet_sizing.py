"""`--preset cache-exhaustion` with --hosts: one file size for every host, from the hosts' own facts (the
largest host's need, 2x its RAM, capped by the tightest host's room), never from this machine's RAM.

The rig's namespaces share this machine's RAM and disk, so the sizing itself is tested on facts as the
hosts' agents report them; the real runs give each host's target a small tmpfs of its own (mounted inside
that host's mount namespace), so the tightest room decides the size, and one host's room is too small."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

import pytest

from stackbench.base.errors import UsageError
from stackbench.fleet.servers import ReadyHost
from stackbench.fleet.run import fleet_size
from stackbench.measure.safety import largest_size
from stackbench.store import open_store

GIB, MIB = 1024**3, 1024**2


def _host(name: str, ram: int | None, room: int | None) -> ReadyHost:
    return ReadyHost(name, 0, f"/srv/{name}.scratch", True,
                     {"system": {"ram_bytes": ram}, "target": {"kind": "directory", "room": room}})


def test_the_largest_hosts_need_capped_by_the_tightest_room() -> None:
    hosts = [_host("a", 8 * GIB, 100 * GIB), _host("b", 32 * GIB, 500 * GIB), _host("c", 4 * GIB, 50 * GIB)]
    assert fleet_size(hosts) == int(50 * GIB * 0.9) // MIB * MIB  # b needs 64 GiB, c has room for 45
    roomy = [_host("a", 8 * GIB, 900 * GIB), _host("b", 32 * GIB, 500 * GIB)]
    assert fleet_size(roomy) == 64 * GIB  # 2x the largest RAM, not the first host's or this machine's


def test_a_host_without_room_is_named_in_one_line() -> None:
    hosts = [_host("node1", 8 * GIB, 100 * GIB), _host("node2", 8 * GIB, 10 * MIB)]
    with pytest.raises(UsageError) as raised:
        fleet_size(hosts)
    assert raised.value.what.startswith("node2: ") and "room for only" in raised.value.what
    assert "Free some space on node2" in raised.value.fix and "\n" not in str(raised.value)


def test_unknown_ram_and_room_everywhere_asks_for_a_size() -> None:
    with pytest.raises(UsageError, match="Give --size"):
        fleet_size([_host("a", None, None), _host("b", None, None)])
    assert fleet_size([_host("a", None, 100 * MIB), _host("b", 2 * GIB, None)]) == 90 * MIB


@contextmanager
def _small_targets(fleet, sizes_mib: dict[str, int]) -> Iterator[str]:
    """A directory `small` in the common target path: a tmpfs of the given size on each named host, mounted
    inside that host's own mount namespace (its sshd's), so only that host sees it there."""
    mounted = []
    try:
        for host in fleet.hosts:
            (host.scratch / "small").mkdir()
            size = sizes_mib[host.name]
            subprocess.run(["nsenter", "-t", str(host.sshd.pid), "-m", "mount", "-t", "tmpfs", "-o",
                            f"size={size}m,mode=0755", "tmpfs", str(host.target / "small")], check=True)
            mounted.append(host)
        yield str(fleet.hosts[0].target / "small")
    finally:
        for host in mounted:
            subprocess.run(["nsenter", "-t", str(host.sshd.pid), "-m", "umount", str(host.target / "small")],
                           check=False)
        for host in fleet.hosts:
            if (host.scratch / "small").is_dir():
                (host.scratch / "small").rmdir()


def _run(fleet, db_url: str, sizes_mib: dict[str, int]) -> tuple[subprocess.CompletedProcess, list]:
    """The preset on every host's own tmpfs of `sizes_mib`; its process and what it left on the hosts."""
    with _small_targets(fleet, sizes_mib) as target:
        done = subprocess.run(
            [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", target, "--db",
             db_url, "--preset", "cache-exhaustion", "--json"],
            env={**os.environ, **fleet.env()}, capture_output=True, text=True, timeout=180)
        return done, [p for h in fleet.hosts for p in (h.scratch / "small").iterdir()]


@pytest.mark.root
@pytest.mark.slow
def test_a_real_fleet_is_sized_by_its_tightest_host(fleet, db_url: str) -> None:
    done, left = _run(fleet, db_url, {"node1": 96, "node2": 64, "node3": 80})
    assert done.returncode == 0, done.stderr
    run = open_store(db_url).get_run(json.loads(done.stdout)["run_id"])
    # node2's room: what its free-space check accepts, 90 % of it; 2x this machine's RAM is far more
    expected = int(largest_size(64 * MIB) * 0.9) // MIB * MIB
    assert {c.workload.size for c in run.cells} == {expected}
    assert {c.result.host for c in run.cells} == {*fleet.names, "(total)"}
    assert left == []


@pytest.mark.root
@pytest.mark.slow
def test_a_host_too_small_for_the_preset_is_refused_before_anything_runs(fleet, db_url: str) -> None:
    done, left = _run(fleet, db_url, {"node1": 96, "node2": 8, "node3": 96})
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert errors[0].startswith("Error: node2: ") and "free" in errors[0], done.stderr
    assert not any("node1" in line or "node3" in line for line in errors[:-1])
    assert "nothing ran on any host" in done.stderr
    assert open_store(db_url).list_runs() == [] and left == []
