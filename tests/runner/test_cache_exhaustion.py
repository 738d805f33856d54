"""`--preset cache-exhaustion`: one 1M sequential O_DIRECT write through the whole file, once, its size chosen
for the target (2x RAM, at most the room there), per-second bandwidth kept, and the run's safety rules
(space checked first, scratch file removed on success, Ctrl-C and SIGTERM) with real fio on real file systems."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.engine.fio import job_file
from stackbench.base.errors import UsageError
from stackbench.model.plan import AUTO_FREE_SHARE, PLACEHOLDER_SIZE, auto_size, build_plan
from stackbench.report.charts.cache import data_written
from stackbench.measure.preparation import settle_size
from stackbench.store import Store

MiB, GiB = 1024**2, 1024**3


def test_the_preset_is_one_sequential_1m_direct_write_of_the_file_once() -> None:
    plan = build_plan("cache-exhaustion")
    (cell,) = plan.workloads
    assert (cell.rw, cell.bs, cell.iodepth, cell.direct, cell.ramp_time, plan.runs) == ("write", MiB, 8, True, 0, 1)
    assert cell.time_based is False and cell.key.endswith("/direct=1/once")
    assert plan.size_from_target and cell.size == PLACEHOLDER_SIZE
    text = job_file(cell, "/x/f")
    assert "time_based" not in text and "write_bw_log=cell" in text and "log_avg_msec=1000" in text
    given = build_plan("cache-exhaustion", size="20G")
    assert not given.size_from_target and given.size == 20 * GiB
    assert settle_size(given, Path("/nonexistent")) is given  # --size is taken as given, target or not
    assert "time_based=1" in job_file(build_plan("quick").workloads[0], "/x/f")  # the others loop for a time


@pytest.mark.parametrize("ram, room, device, expected", [
    (16 * GiB, 1000 * GiB, False, 32 * GiB),  # 2x RAM
    (16 * GiB, 20 * GiB, False, int(20 * GiB * AUTO_FREE_SHARE) // MiB * MiB),  # 90 % of the free space
    (16 * GiB, 20 * GiB, True, 20 * GiB),  # a whole blank device (--destroy-data)
    (None, 10 * GiB, False, 9 * GiB),  # RAM unknown: the room alone
    (3 * GiB + 12345, None, False, 6 * GiB),  # room unknown: 2x RAM, whole MiB
])
def test_the_size_is_twice_ram_but_never_more_than_the_room(ram, room, device, expected) -> None:
    assert auto_size(ram, room, device=device) == expected


def test_no_room_or_nothing_known_is_a_usage_error_with_the_fix() -> None:
    with pytest.raises(UsageError, match="room for only") as caught:
        auto_size(16 * GiB, 10 * MiB)
    assert "Free some space" in caught.value.fix
    with pytest.raises(UsageError) as unknown:
        auto_size(None, None)
    assert unknown.value.fix == "Give --size"


def test_the_dry_run_sizes_the_file_for_the_target_file_system_as_the_run_accepts(tmp_path: Path, tmpfs_mount) -> None:
    """The size chosen leaves the free-space check's margin: the dry run said 57 MiB (90 % of 64 MiB) on a
    64 MiB tmpfs, a size the run then refused because 57 MiB + its 16 MiB margin is more than 64 MiB."""
    target = tmpfs_mount("64M")
    done = cli_here("run", "-t", str(target), "--preset", "cache-exhaustion", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "file 43.0 MiB" in done.stdout and "/once)" in done.stdout  # 90 % of (64 - 16) MiB, whole MiB
    assert list(target.iterdir()) == []
    made = cli_here("run", "-t", str(target), "--preset", "cache-exhaustion", "--db", str(tmp_path / "r.db"), "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["cells"][0]["bw_bytes"] > 0 and list(target.iterdir()) == []


def test_too_little_space_for_the_given_size_refuses_in_one_line_and_writes_nothing(tmp_path: Path, tmpfs_mount) -> None:
    target = tmpfs_mount("32M")
    done = cli_here("run", "-t", str(target), "--preset", "cache-exhaustion", "--size", "64M",
                   "--db", str(tmp_path / "r.db"))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "free on" in lines[0] and "Use a smaller --size or another --target" in lines[0]
    assert list(target.iterdir()) == []


def _fio_outputs(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("select raw_text, job_file from fio_outputs").fetchall()


@pytest.mark.slow
def test_a_real_run_writes_the_file_once_keeps_bandwidth_per_second_and_removes_the_scratch(
    tmp_path: Path, scratch_dir: Path
) -> None:
    db = tmp_path / "r.db"
    # 24 MiB at 8 writes of 1 MiB per second: about 3 s, so fio logs per-second samples
    done = cli_here("run", "-t", str(scratch_dir), "--preset", "cache-exhaustion", "--size", "24M", "--rate-iops", "8",
                   "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["plan"] == "cache-exhaustion" and run["status"] == "complete"
    assert list(scratch_dir.iterdir()) == []
    ((raw, job),) = _fio_outputs(db)
    assert "time_based" not in job
    (fio_job,) = json.loads(raw)["jobs"]
    assert fio_job["write"]["io_bytes"] == 24 * MiB  # every byte written exactly once, then fio stopped
    with sqlite3.connect(db) as connection:
        samples = connection.execute("select t_s, bw_bytes, ramp from samples order by idx").fetchall()
    assert len(samples) >= 2 and all(bw and bw > 0 and not ramp for _, bw, ramp in samples)
    assert [t for t, _, _ in samples] == sorted(t for t, _, _ in samples)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_removes_the_scratch_file(tmp_path: Path, scratch_dir: Path, sig: int) -> None:
    db = tmp_path / "r.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "-t", str(scratch_dir), "--preset", "cache-exhaustion",
         "--size", "64M", "--rate-iops", "4", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 30
    while not any(scratch_dir.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(scratch_dir.iterdir()), "fio never created the scratch file"
    time.sleep(1.0)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert f"{'Ctrl-C' if sig == signal.SIGINT else 'SIGTERM'} stopped the run" in stderr
    assert "the scratch file was removed" in stderr
    assert list(scratch_dir.iterdir()) == []
    with sqlite3.connect(db) as connection:
        assert connection.execute("select status from runs").fetchall() == [("incomplete",)]


def test_a_write_done_before_fios_first_second_is_kept_as_one_sample_and_charts(tmp_path: Path, scratch_dir: Path) -> None:
    """fio logs a window only when it is full: a 4 MiB write done in 0.1 s used to leave no sample, and the
    cache chart then named an unrelated fix (`--runtime 10m`, which this preset does not use)."""
    db = tmp_path / "r.db"
    done = cli_here("run", "-t", str(scratch_dir), "--preset", "cache-exhaustion", "--size", "4M",
                    "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    ((raw, _),) = _fio_outputs(db)
    written = json.loads(raw)["jobs"][0]["write"]
    if written["runtime"] >= 1000:
        pytest.skip(f"the 4 MiB write took {written['runtime']} ms here: fio logged a full window itself")
    with sqlite3.connect(db) as connection:
        samples = connection.execute("select t_s, bw_bytes, iops from samples").fetchall()
    assert samples == [(pytest.approx(written["runtime"] / 1000), pytest.approx(written["bw_bytes"]),
                        pytest.approx(written["iops"]))]
    chart = cli_here("chart", json.loads(done.stdout)["run_id"], "--kind", "cache", "-o", str(tmp_path / "c.svg"),
                     "--db", str(db))
    assert chart.returncode == 0, chart.stderr
    (cell,) = Store(f"sqlite:///{db}").get_run(json.loads(done.stdout)["run_id"]).cells
    assert data_written(cell) == [pytest.approx(written["io_bytes"], rel=0.01)]  # the chart's x axis
    one = [w for w in json.loads(done.stdout)["warnings"] if w["code"] == "TOO_FEW_RUNS"]
    assert one and "written once by design" in one[0]["text"] and "--runs" not in one[0]["text"]


def test_a_stored_write_without_samples_is_explained_with_the_fix_that_applies(tmp_path: Path, scratch_dir: Path) -> None:
    """A run stored before short writes were kept as a sample (made here by deleting the sample)."""
    db = tmp_path / "r.db"
    done = cli_here("run", "-t", str(scratch_dir), "--preset", "cache-exhaustion", "--size", "4M",
                    "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:
        connection.execute("delete from samples")
    chart = cli_here("chart", json.loads(done.stdout)["run_id"], "--kind", "cache", "-o", str(tmp_path / "c.svg"),
                     "--db", str(db))
    assert chart.returncode == 1
    assert "less than fio's one-second sample window" in chart.stderr and "larger --size" in chart.stderr
    assert "--runtime" not in chart.stderr and "imported" not in chart.stderr
