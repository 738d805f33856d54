"""Per-second samples in fleet mode, on the real 3-host rig (tests/fleet_hosts.py): fio's servers send each
host's logs to the client (client.c, fio_client_handle_iolog), every host's job file names them with its own
prefix, and each host's cell stores its own samples as a local run does (a segment per separate fio run)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import pytest

from stackbench.store import open_store

pytestmark = [pytest.mark.root, pytest.mark.slow]


def _fleet_run(fleet, db_url: str, runtime: str):  # noqa: ANN001, ANN202 - the rig; a stored Run
    """Two separate 4k random-read runs of `runtime` on every host of the rig, as stored."""
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", str(fleet.hosts[0].target),
         "--db", db_url, "--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0",
         "--runtime", runtime, "--runs", "2", "--json"],
        env={**os.environ, **fleet.env()}, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return open_store(db_url).get_run(json.loads(done.stdout)["run_id"])


def test_each_hosts_cell_has_its_own_samples_that_agree_with_its_result(fleet, db_url: str) -> None:
    run = _fleet_run(fleet, db_url, "4s")
    by_host = {c.result.host: c for c in run.cells}
    assert set(by_host) == {*fleet.names, "(total)"}
    means = {}
    for name in fleet.names:
        cell = by_host[name]
        assert len(cell.samples) >= 6, (name, cell.samples)  # about 4 per fio run, 2 runs
        assert {s.segment for s in cell.samples} == {0, 1}
        means[name] = sum(s.iops for s in cell.samples) / len(cell.samples)
        # the host's own samples agree with the host's own result (fio's per-second windows vs its summary)
        assert means[name] == pytest.approx(cell.result.iops, rel=0.15), (name, means[name], cell.result.iops)
    assert len(set(means.values())) == len(fleet.names)  # three hosts' logs, not one host's three times
    assert by_host["(total)"].samples == ()  # the total is computed from the hosts, not sampled
    # one IOPS per cell: each host's and the total's is the geometric mean of its two runs (the total's runs
    # each the hosts' sum in that run), fio's pooled figure kept beside it
    for cell in by_host.values():
        runs = [r["iops"] for r in cell.measurement["replicates"]]
        assert len(runs) == 2 and cell.result.iops == pytest.approx(math.sqrt(runs[0] * runs[1]))
        assert cell.measurement["fio_pooled_iops"] > 0
    assert sum(by_host[n].measurement["replicates"][0]["iops"] for n in fleet.names) == pytest.approx(
        by_host["(total)"].measurement["replicates"][0]["iops"])
    # the servers sent their logs to us: nothing was written on the hosts (scratch or home directory)
    for host in fleet.hosts:
        assert list(host.scratch.iterdir()) == []
        assert [p.name for p in (host.scratch.parent / "home").rglob("*.log*")] == []


def test_a_hosts_run_shorter_than_a_second_keeps_its_whole_run_as_its_one_sample(fleet, db_url: str) -> None:
    """fio logs a window only when it is full, so a host's 0.5 s run sends an empty log: each host's cell
    stored no sample until a host's run got the rule a local run and a sweep's job have (`samples_of_run`),
    its whole run as its one sample."""
    run = _fleet_run(fleet, db_url, "500ms")
    by_host = {c.result.host: c for c in run.cells}
    for name in fleet.names:
        cell = by_host[name]
        assert [s.segment for s in cell.samples] == [0, 1], (name, cell.samples)  # one per run: none before
        iops = {r["index"]: r["iops"] for r in cell.measurement["replicates"]}
        for sample in cell.samples:  # the run's own figure, over its whole (sub-second) run
            assert sample.t_s < 1 and sample.iops == pytest.approx(iops[sample.segment], rel=1e-6), (name, sample)
