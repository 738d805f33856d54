"""The cache-exhaustion detector (analysis/cache_exhaustion.py) and chart on real fio data.

A real fall: fio writes sequentially (1 MiB, O_DIRECT, capped at 100 MB/s by fio's rate_iops) to a blank loop
device through `stackbench run`; four seconds after fio starts, the kernel's block throttle
(cgroup v1 blkio.throttle.write_bps_device on that device only) is set to 20 MB/s, as a drive's write cache
running full drops it to the speed of the flash behind it. The throttle is a real kernel limit on the real
fio I/O; only the moment it starts is chosen, so the expected fall (100 -> 20 MB/s, about 80 %, after about
4 s) is a known effect, not a hard-coded measurement. Needs root (loop device, cgroup file); skipped otherwise.

A flat run: the same capped write to a file on a disk-backed directory, nothing changed during it: the
detector must claim no fall.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from report.charts.conftest import ids, svg_tree, texts
from stackbench.analysis.cache_exhaustion import find_fall
from stackbench.report.charts.cache import cache_samples
from stackbench.store import open_store

THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
CAPPED = ["--rw", "write", "--bs", "1m", "--qd", "1", "--rate-iops", "100", "--runs", "1", "--ramp", "0"]


def _fio_child(parent: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if name == "fio" and int(rest[1]) == parent:
            return True
    return False


def _run(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "stackbench", "run", *args, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_throttled_write_falls_where_the_throttle_starts(blank_loop: Path, tmp_path: Path) -> None:
    if not THROTTLE.exists():
        pytest.skip("no cgroup v1 blkio throttle on this kernel")
    rdev = os.stat(blank_loop).st_rdev
    device = f"{os.major(rdev)}:{os.minor(rdev)}"
    url = f"sqlite:///{tmp_path / 'r.db'}"
    process = _run("-t", str(blank_loop), "--destroy-data", "--size", "64M", "--runtime", "10", *CAPPED,
                   "--label", "throttled", "--db", url)
    fired = threading.Event()

    def throttle() -> None:
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            if _fio_child(process.pid):
                time.sleep(4)
                THROTTLE.write_text(f"{device} {20 * 1000**2}\n")
                fired.set()
                return
            time.sleep(0.05)

    worker = threading.Thread(target=throttle)
    worker.start()
    try:
        out, err = process.communicate(timeout=120)
    finally:
        worker.join()
        THROTTLE.write_text(f"{device} 0\n")
    assert process.returncode == 0, err
    assert fired.is_set()
    run_id = json.loads(out)["run_id"]
    store = open_store(url)
    run = store.get_run(run_id)
    store.dispose()
    fall = find_fall(cache_samples(run.cells[0]))
    assert fall.fell, fall.reason
    assert 2 <= fall.seconds <= 7
    assert 0.6 <= fall.drop <= 0.9
    assert fall.bytes_before == pytest.approx(fall.seconds * 100e6, rel=0.35)

    out_svg = tmp_path / "cache.svg"
    result = subprocess.run([sys.executable, "-m", "stackbench", "chart", run_id, "-k", "cache", "-o", str(out_svg),
                             "--db", url], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    root = svg_tree(out_svg)
    assert ids(root, "fall") == ["fall"] and ids(root, "before") and ids(root, "after")
    words = texts(root)
    assert "data written (GB, 10^9 bytes)" in words and "throughput (MB/s, 10^6 bytes per second)" in words
    assert any(t.startswith("throughput falls") for t in words)


@pytest.mark.slow
def test_a_flat_write_claims_no_fall(scratch_dir: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    process = _run("-t", str(scratch_dir), "--size", "64M", "--runtime", "8", *CAPPED, "--label", "flat", "--db", url)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    run_id = json.loads(out)["run_id"]
    store = open_store(url)
    run = store.get_run(run_id)
    store.dispose()
    samples = cache_samples(run.cells[0])
    assert len(samples) >= 6
    fall = find_fall(samples)
    assert not fall.fell, fall
    out_svg = tmp_path / "cache.svg"
    result = subprocess.run([sys.executable, "-m", "stackbench", "chart", run_id, "-k", "cache", "-o", str(out_svg),
                             "--db", url], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    root = svg_tree(out_svg)
    assert ids(root, "no-fall") and not ids(root, "fall")


def test_too_few_seconds_are_never_a_fall() -> None:
    fall = find_fall([500e6, 500e6, 100e6, 100e6, 100e6])
    assert not fall.fell and "too short" in fall.reason


def test_an_oscillation_is_not_a_fall() -> None:
    """A saw-tooth (ZFS txg flushes every few seconds) halves the median of some splits but never separates."""
    fall = find_fall([400e6, 400e6, 100e6, 400e6, 400e6, 100e6, 400e6, 100e6, 400e6, 100e6, 100e6, 400e6])
    assert not fall.fell


def test_a_step_is_a_fall_with_its_size_and_place() -> None:
    fall = find_fall([300e6] * 5 + [290e6, 310e6] + [60e6] * 8)
    assert fall.fell and fall.index == 7 and fall.seconds == 7
    assert fall.drop == pytest.approx(0.8) and fall.bytes_before == pytest.approx(300e6 * 5 + 600e6)
