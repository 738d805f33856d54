"""A layer slowed for real on this machine is named the busiest: a cgroup v1 blkio throttle on a device of
the chain tests/loop_chain.py builds (ext4 on loop over a file on ext4 on loop over a file on the root disk),
its loop devices with direct I/O (each passes a request on in the context of whoever sent it, so the
throttle of the sender's cgroup applies to it: loop charges the originating cgroup since Linux 5.14).

The cgroup is the test's own child group under /sys/fs/cgroup/blkio; only `stackbench run` and its fio are in
it, and it is removed afterwards, its rules cleared first: nothing host-wide is set. The throttle holds the
requests before the throttled device counts them (docs/stack.md, "A throttled layer"), so what names it is
the throttle the run's stack recorded (stack/throttle.py), under the saturated layer whose requests waited.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from loop_chain import LoopChain, build, findmnt

pytestmark = [pytest.mark.root, pytest.mark.slow]

BLKIO = Path("/sys/fs/cgroup/blkio")
RULES = ("blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device")
THROTTLE_IOPS = 100  # far below what the chain does unthrottled (thousands of 4K writes a second)


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[LoopChain]:
    yield from build(tmp_path, direct_io=True)


@pytest.fixture
def group() -> Iterator[Path]:
    """A blkio child group of the test's own, its rules cleared and itself removed afterwards. What is still
    in it then was put there by the test (a stackbench killed by its timeout leaves its fio, which keeps the
    chain's file system busy): it is killed first, before the chain is undone (set up before the group, the
    chain is torn down after it)."""
    if not (BLKIO / RULES[0]).exists():
        pytest.skip(f"no cgroup v1 blkio hierarchy at {BLKIO}")
    made = BLKIO / f"stackbench-test-{os.getpid()}-{secrets.token_hex(3)}"
    made.mkdir()
    try:
        yield made
    finally:
        for pid in (made / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        for rule in RULES:
            for line in (made / rule).read_text().splitlines():
                if line.strip():
                    (made / rule).write_text(f"{line.split()[0]} 0\n")
        for attempt in range(100):  # the processes in it have ended, but the kernel may still be letting go
            try:
                made.rmdir()
                break
            except OSError:
                if attempt == 99:
                    raise
                time.sleep(0.1)


def _throttle(group: Path, device: str) -> None:
    number = (Path("/sys/class/block") / device / "dev").read_text().strip()
    for rule in RULES:
        (group / rule).write_text(f"{number} {THROTTLE_IOPS}\n")


def _stackbench(group: Path | None, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}

    def enter() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    done = subprocess.run([sys.executable, "-m", "stackbench", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False, preexec_fn=enter)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _layers(group: Path, chain: LoopChain, tmp_path: Path) -> dict:
    """The layer table of one 4K random-write cell (QD4, 4 s) run by stackbench in the group, as `show` has it."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    run = json.loads(_stackbench(group, "run", "-t", str(chain.upper), "--rw", "randwrite", "--bs", "4k", "--qd", "4",
                                 "--size", "8M", "--runtime", "4", "--ramp", "0", "--runs", "1", "--db", db,
                                 "--json"))
    [cell] = json.loads(_stackbench(None, "show", run["run_id"], "--db", db, "--json"))["cells"]
    return cell["layers"]


def _by_device(layers: dict) -> dict[str, dict]:
    return {layer["device"]: layer for layer in layers["layers"]}


def test_a_throttle_on_the_bottom_loop_device_names_it_though_its_counters_show_it_idle(
        chain: LoopChain, group: Path, tmp_path: Path) -> None:
    """The upper loop device's requests wait in the lower one's throttle: the upper one is saturated, the
    lower one's own counters are not, and the lower one is named for its throttle."""
    top, bottom = chain.inner_device.name, chain.outer_device.name
    _throttle(group, bottom)
    layers = _layers(group, chain, tmp_path)
    found = _by_device(layers)
    assert layers["busiest"] == bottom, layers
    assert f"{THROTTLE_IOPS} IOPS" in layers["busiest_reason"] and top in layers["busiest_reason"], layers
    assert found[top]["saturated"] and found[bottom]["throttle"] and not found[top]["throttle"], layers
    # where the time went: the upper device's requests waited far longer than the lower one's took
    assert found[top]["await_ms"] > 4 * found[bottom]["await_ms"], layers


def test_a_throttle_on_the_disk_under_the_bottom_loop_device_names_the_disk(
        chain: LoopChain, group: Path, tmp_path: Path) -> None:
    """The lower loop device's requests wait in the throttle of the disk its backing file is on: both loop
    devices are saturated, the lower one holding the upper one's time, and the disk is named for its throttle."""
    top, bottom = chain.inner_device.name, chain.outer_device.name
    disk = Path(findmnt(chain.outer_image, "SOURCE")).name
    if not (Path("/sys/class/block") / disk / "dev").exists() or (Path("/sys/class/block") / disk / "partition").exists():
        pytest.skip(f"the file system under {chain.outer_image} is not on a whole disk ({disk}): a throttle needs one")
    _throttle(group, disk)
    layers = _layers(group, chain, tmp_path)
    found = _by_device(layers)
    assert layers["busiest"] == disk, layers
    assert found[top]["saturated"] and found[bottom]["saturated"] and found[disk]["throttle"], layers
    assert found[bottom]["await_ms"] > 4 * found[disk]["await_ms"], layers
