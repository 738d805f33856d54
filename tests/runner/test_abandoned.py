"""abandoned.py's leftover processes: only what is provably the dead run's is killed. Real processes stand in
for fio's leftovers (a `sleep` in the run's job directory is what a fio job process looks like to /proc)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from stackbench.measure.abandoned import WORKDIR_PREFIX, clean, leftover_processes, process_record

Start = Callable[..., subprocess.Popen]


@pytest.fixture
def start() -> Iterator[Start]:
    started: list[subprocess.Popen] = []

    def run(argv: list[str], **kwargs) -> subprocess.Popen:  # noqa: ANN003 - Popen's
        process = subprocess.Popen(argv, **kwargs)
        started.append(process)
        return process

    yield run
    for process in started:
        process.kill()
        process.wait()


def _record(tmp_path: Path, **changes) -> dict:  # noqa: ANN003 - record fields
    workdir = tmp_path / f"{WORKDIR_PREFIX}0123456789ab-xyz"
    (workdir / "stackbench-job-1").mkdir(parents=True, exist_ok=True)
    scratch = tmp_path / "stackbench-0123.scratch"
    scratch.write_bytes(b"x")
    return {**process_record(workdir=workdir, scratch=str(scratch)), "pid": 1, "start_ticks": 1, **changes}


def _holding(pid: int, path: str, binary: str) -> bool:
    """Whether process `pid` runs `binary` and has `path` open (the shell has exec'd it, fd 3 kept)."""
    try:
        return os.readlink(f"/proc/{pid}/exe") == os.path.realpath(binary) and path in [
            os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_only_the_runs_own_processes_are_matched(tmp_path: Path, start: Start) -> None:
    record = _record(tmp_path)
    workdir = Path(record["workdir"])
    sibling = tmp_path / f"{workdir.name}-other"  # the same prefix: not inside
    sibling.mkdir()
    in_job_dir = start(["sleep", "30"], cwd=workdir / "stackbench-job-1")
    by_argument = start([sys.executable, "-c", "import time; time.sleep(30)",
                         str(workdir / "stackbench-job-1" / "cell.fio")])
    elsewhere = start(["sleep", "30"], cwd=sibling)
    scratch_open = start(["sh", "-c", f"exec 3<{record['scratch']}; exec sleep 30"])
    sleep = shutil.which("sleep")
    _until(lambda: _holding(scratch_open.pid, record["scratch"], sleep))
    _until(lambda: os.path.basename(os.readlink(f"/proc/{by_argument.pid}/exe")).startswith("python"))
    found = leftover_processes(record, fio_path=None)
    assert in_job_dir.pid in found and by_argument.pid in found
    assert elsewhere.pid not in found and scratch_open.pid not in found  # a non-fio process with our file open
    # the scratch file open in the run's own fio binary: sleep stands in for it
    assert scratch_open.pid in leftover_processes(record, fio_path=sleep)
    assert leftover_processes({**record, "uid": os.geteuid() + 1}, fio_path=None) == []  # another user's


def test_clean_kills_the_leftovers_and_leaves_the_rest(tmp_path: Path, start: Start) -> None:
    record = _record(tmp_path)
    ours = start(["sleep", "30"], cwd=Path(record["workdir"]) / "stackbench-job-1")
    other = start(["sleep", "30"], cwd=tmp_path)
    cleanup = clean(record)
    assert cleanup.failed == [] and cleanup.by_hand == []
    assert f"killed the 1 fio process it left running ({ours.pid})" in cleanup.done
    assert ours.wait(timeout=5) == -9 and other.poll() is None
    assert not Path(record["workdir"]).exists() and not Path(record["scratch"]).exists()


def test_a_recorded_fio_pid_whose_process_was_replaced_is_left_alone(tmp_path: Path, start: Start) -> None:
    """A reused pid: the recorded fio's start time no longer matches what runs under that pid now."""
    stranger = start(["sleep", "30"], cwd=tmp_path)
    record = _record(tmp_path, fio={"pid": stranger.pid, "pgid": stranger.pid, "start_ticks": 1, "job_dir": "/nowhere"})
    assert leftover_processes(record) == []
