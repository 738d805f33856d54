"""Which per-second samples a fio run stores: fio's own when its log has any, else the whole run as one.
The empty-log case is made by handing over no samples with a real captured fio report (a time-based
`runtime=1` randread, tests/data/fio/randread-psync.json): on a loaded CI machine such a run's one window
closed after fio stopped and the run stored no sample, which the push test then found missing. The jobs of one
fio process (synclat, slog) are checked on a real short run."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from stackbench.engine.fio import FioInvocation
from stackbench.engine.fio_json import parse_fio_json
from stackbench.measure.runner import samples_of_run
from stackbench.model.results import Sample
from stackbench.store import Store
from conftest import cli_here

REPORT = Path(__file__).parent.parent / "data" / "fio" / "randread-psync.json"


def _invocation(samples: dict[str, list[Sample]]) -> FioInvocation:
    text = REPORT.read_text()
    return FioInvocation(command=["fio"], job_file="", stdout=text, stderr="", exit_code=0,
                         started_at=datetime.now(timezone.utc), seconds=1.0, samples=samples)


def test_a_time_based_run_whose_log_is_empty_keeps_the_whole_run_as_its_one_sample() -> None:
    invocation = _invocation({})
    parsed = parse_fio_json(invocation.stdout, source=REPORT.name)
    (read,) = parsed.directions
    assert read.runtime_ms >= 1000  # a full second of I/O, still no full log window
    assert samples_of_run(invocation, parsed) == {
        "read": [Sample(t_s=pytest.approx(read.runtime_ms / 1000), iops=pytest.approx(read.iops),
                        bw_bytes=pytest.approx(read.bw_bytes),
                        clat_mean_ns=pytest.approx(read.clat.mean_ns) if read.clat else None)]}


def test_fios_own_samples_are_kept_as_they_are() -> None:
    logged = [Sample(t_s=1.0, iops=900.0, bw_bytes=3_686_400.0, clat_mean_ns=1_000.0)]
    invocation = _invocation({"read": logged})
    parsed = parse_fio_json(invocation.stdout, source=REPORT.name)
    assert samples_of_run(invocation, parsed) == {"read": logged}



def test_a_fleet_hosts_samples_are_its_own_log_or_its_whole_run() -> None:
    """`fio --client`: each host's samples come from its own log (by its job file's log prefix), never the
    client process's, and a host whose log is empty (a run shorter than a second) keeps its whole run as one
    sample as a local run does; tests/fleet/test_fleet_samples.py runs it for real."""
    logged = [Sample(t_s=1.0, iops=900.0, bw_bytes=3_686_400.0, clat_mean_ns=1_000.0)]
    elsewhere = [Sample(t_s=1.0, iops=1.0, bw_bytes=4096.0, clat_mean_ns=1.0)]
    invocation = replace(_invocation({"read": elsewhere}), client_samples={"host-a": {"read": logged}})
    parsed = parse_fio_json(invocation.stdout, source=REPORT.name)
    assert samples_of_run(invocation, parsed, client="host-a") == {"read": logged}
    (whole,) = samples_of_run(invocation, parsed, client="host-b")["read"]
    assert whole.iops == pytest.approx(parsed.directions[0].iops) and whole != elsewhere[0]


def test_every_job_of_a_sweep_shorter_than_a_second_keeps_its_whole_run_as_its_one_sample(tmp_path: Path) -> None:
    """synclat's sizes (and slog's depths) are stonewalled jobs of one fio process, each read from its own
    log: a real `synclat --runtime 0.3` leaves every job's log empty, and each size stored no sample until
    the jobs of one process got the rule a fio process of its own has (`samples_of_run`)."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    target = tmp_path / "bench"
    target.mkdir()
    done = cli_here("synclat", str(target), "--sizes", "4k,8k", "--runtime", "0.3", "--runs", "1", "--size", "4M",
                    "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    store = Store(db)
    [run] = store.with_samples([store.get_run(json.loads(done.stdout)["run_id"])])
    assert sorted(cell.workload.bs for cell in run.cells) == [4096, 8192]
    for cell in run.cells:
        (sample,) = cell.samples  # one each, none before: fio's log of a 0.3 s job is empty
        assert sample.t_s < 1 and sample.iops == pytest.approx(cell.result.iops, rel=1e-6), cell.pattern
