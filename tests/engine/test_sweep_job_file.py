"""A sweep job file (several cells as stonewalled jobs of one fio process) with real fio: what fio's JSON
gives per job, and that each job's numbers are that job's alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackbench.engine.fio import job_log_prefix, run_fio, section_name, sweep_job_file
from stackbench.engine.fio_json import parse_fio_jobs, parse_fio_json
from stackbench.engine.jobtext import read_back
from stackbench.engine.merge import bins_of
from stackbench.model.plan import Workload

MiB = 1024**2


def _write(bs: int, runtime: float = 1.2) -> Workload:
    """Buffered writes without sync: a 4 KiB write is a copy into the page cache (microseconds), an 8 MiB
    one copies 2048 times as much, so the two jobs' latencies are far apart on any machine."""
    return Workload(rw="randwrite", bs=bs, iodepth=1, size=32 * MiB, runtime=runtime, ioengine="psync")


def test_each_job_is_stonewalled_and_logs_under_its_own_prefix() -> None:
    jobs = [_write(4096), _write(8 * MiB)]
    options = read_back(sweep_job_file(jobs, "/srv/x.scratch", title="synclat, round 1"))
    sections = [s for s, _, _ in options if s != "global"]
    assert list(dict.fromkeys(sections)) == [section_name(w, i) for i, w in enumerate(jobs)]
    for index, name in enumerate(dict.fromkeys(sections)):
        mine = {o: v for s, o, v in options if s == name}
        assert mine["stonewall"] == "1" and mine["write_iops_log"] == job_log_prefix(index)
        assert mine["bs"] == str(jobs[index].bs) and mine["runtime"] == "1200ms"
    assert [(o, v) for s, o, v in options if s == "global"] == [("filename", "/srv/x.scratch"), ("group_reporting", "1")]


@pytest.mark.slow
def test_one_fio_process_gives_each_job_its_own_result_histogram_and_samples(tmp_path: Path, fio_path: str) -> None:
    """fio 3.x reports each stonewalled job in its own group; the json+ histogram of a job counts exactly
    that job's writes (not the process's so far), and its latencies are its own: the 8 MiB job's median
    is far above the 4 KiB job's. Each per-job document parses back on its own."""
    jobs = [_write(4096), _write(8 * MiB)]
    invocation = run_fio(fio_path, sweep_job_file(jobs, str(tmp_path / "f.scratch"), title="t"),
                         job_logs=(job_log_prefix(0), job_log_prefix(1)))
    assert invocation.exit_code == 0, invocation.stderr
    whole = parse_fio_json(invocation.stdout)
    assert [d.job_name for d in whole.directions] == [section_name(w, i) for i, w in enumerate(jobs)]
    groups = [job["groupid"] for job in whole.document["jobs"]]
    assert groups == [0, 1]
    each = parse_fio_jobs(invocation.stdout)
    assert len(each) == 2
    small, large = (result.directions[0] for result in each)
    assert (small.bs, large.bs) == (4096, 8 * MiB)
    for result in each:
        (direction,) = result.directions
        assert len(result.document["jobs"]) == 1
        assert sum(bins_of(result.document, "write").values()) == direction.total_ios  # that job's writes only
        assert parse_fio_json(result.raw_text).directions == result.directions  # stored text reads back alike
    assert large.clat.p50_ns > 20 * small.clat.p50_ns
    for prefix, result in zip((job_log_prefix(0), job_log_prefix(1)), each):
        samples = invocation.job_samples[prefix]["write"]
        assert samples and all(s.iops > 0 for s in samples)
    # the 4 KiB job's seconds hold thousands of writes, the 8 MiB job's far fewer: the logs were not mixed
    assert min(s.iops for s in invocation.job_samples[job_log_prefix(0)]["write"]) > \
        max(s.iops for s in invocation.job_samples[job_log_prefix(1)]["write"])
