"""`stackbench run` against real block devices and real full file systems (root: loop devices, tmpfs)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.engine.fio import failure_from_output, job_file, run_fio
from stackbench.model.plan import Workload

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mounts")
MiB = 1024**2






@pytest.mark.slow
def test_blank_device_runs_only_with_destroy_data_and_records_the_device(tmp_path: Path, blank_loop: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    args = ["run", "-t", str(blank_loop), "--bs", "4k", "--qd", "1", "--rw", "randwrite", "--runtime", "1",
            "--size", "16M", "--db", db, "--json"]
    refused = cli_here(*args)
    assert refused.returncode == 1
    assert "--destroy-data" in refused.stderr
    made = cli_here(*args, "--destroy-data")
    assert made.returncode == 0, made.stderr
    run = json.loads(made.stdout)
    assert run["facts"]["target"]["kind"] == "device"
    assert run["facts"]["target"]["block_devices"][0]["name"] == blank_loop.name
    assert run["cells"][0]["iops"] > 0


def test_device_with_a_file_system_is_never_written(tmp_path: Path, blank_loop: Path) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", str(blank_loop)], check=True, capture_output=True)
    before = blank_loop.read_bytes()
    result = cli_here("run", "-t", str(blank_loop), "--destroy-data", "--runtime", "1", "--size", "16M",
                     "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1
    assert "ext4 file system" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert blank_loop.read_bytes() == before


def test_too_small_file_system_is_refused_before_writing(tmp_path: Path, tmpfs_mount) -> None:
    tiny_tmpfs = tmpfs_mount("4M")
    result = cli_here("run", "-t", str(tiny_tmpfs), "--size", "64M", "--runtime", "1",
                     "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1
    assert "free on" in result.stderr and "smaller --size" in result.stderr
    assert os.listdir(tiny_tmpfs) == []


def test_a_disk_that_fills_up_during_fio_is_a_clear_error(tmpfs_mount, fio_path: str) -> None:
    """The free-space check is bypassed on purpose here (fio is called directly) to hit a real ENOSPC."""
    tiny_tmpfs = tmpfs_mount("4M")
    workload = Workload(rw="write", bs=1024 * 1024, iodepth=1, size=64 * MiB, runtime=2.0, ioengine="psync")
    invocation = run_fio(fio_path, job_file(workload, str(tiny_tmpfs / "fill.scratch")))
    assert invocation.exit_code != 0
    error = failure_from_output(invocation, "cell 1")
    assert "No space left on device" in error.one_line()
    assert "Free space on the target or lower --size" in error.one_line()
