"""A local fio is recorded before it can write: it reads its job file from stdin, given only once the
caller's `on_started` has returned (what a run stores so that the next command can find fio after a
SIGKILL). Real fio."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from stackbench.engine.fio import job_file, run_fio
from stackbench.model.plan import Workload


def _workload() -> Workload:
    return Workload(rw="randwrite", bs=4096, iodepth=1, size=4 * 1024**2, runtime=0.2)


def test_fio_is_held_until_on_started_returns(fio_path: str, tmp_path: Path) -> None:
    target = tmp_path / "f.scratch"
    seen: list[tuple[int, Path, str, bool]] = []

    def started(pid: int, job_dir: Path) -> None:
        cwd = os.readlink(f"/proc/{pid}/cwd")
        time.sleep(1.0)  # a slow store: fio must still be waiting for its job
        seen.append((pid, job_dir, cwd, target.exists()))

    invocation = run_fio(fio_path, job_file(_workload(), str(target)), workdir_parent=tmp_path, on_started=started)
    assert invocation.exit_code == 0, invocation.stderr
    ((pid, job_dir, cwd, written),) = seen
    assert cwd == str(job_dir) and job_dir.parent == tmp_path  # what the cleanup matches fio's processes by
    assert not written  # nothing of the target existed while the caller recorded fio
    assert target.stat().st_size == 4 * 1024**2 and invocation.command[-1] == "cell.fio"


def test_a_failing_record_stops_fio_before_it_writes(fio_path: str, tmp_path: Path) -> None:
    target = tmp_path / "f.scratch"
    pids: list[int] = []

    def started(pid: int, _job_dir: Path) -> None:
        pids.append(pid)
        raise RuntimeError("the store refused")

    with pytest.raises(RuntimeError):
        run_fio(fio_path, job_file(_workload(), str(target)), on_started=started)
    assert not target.exists()
    assert not Path(f"/proc/{pids[0]}").exists()
