"""`layers --auto` on the real loop chain of tests/loop_chain.py: what it proposes at each layer and why,
what it refuses, and (slow) the runs it makes with a short plan, leaving every file system as it was.
Read-only runs of devices that hold data are checked on a real loop device with ext4 on it."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from conftest import cli_here
from loop_chain import LoopChain, build, findmnt
from stackbench.base.errors import UsageError
from stackbench.measure.layer_plan import propose
from stackbench.measure.runner import RunRequest, execute_run
from stackbench.model.plan import build_plan
from stackbench.stack.discover import discover
from stackbench.stack.layer import Stack
from stackbench.store import open_store

pytestmark = pytest.mark.root
SHORT = ["--rw", "randread,randwrite", "--bs", "4k", "--qd", "1", "--runtime", "1", "--runs", "2", "--size", "8M"]


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[LoopChain]:
    yield from build(tmp_path)


def _plan(*rw: str):  # noqa: ANN202
    return build_plan("quick", bs=["4k"], qd=[1], rw=list(rw), size="8M", runtime=1.0, runs=2)


def test_the_proposal_names_each_layer_and_how_it_is_safe(chain: LoopChain) -> None:
    steps = propose(discover(chain.upper), _plan("randread", "randwrite")).steps
    host_fs = findmnt(chain.outer_image, "TARGET")
    expected = [
        (f"ext4 {chain.upper}", "scratch-file", str(chain.upper), ["randread", "randwrite"]),
        (f"loop {chain.inner_device}", "read-device", str(chain.inner_device), ["randread"]),
        (f"ext4 {chain.lower}", "scratch-file", str(chain.lower), ["randread", "randwrite"]),
        (f"loop {chain.outer_device}", "read-device", str(chain.outer_device), ["randread"]),
        (f"{findmnt(chain.outer_image, 'FSTYPE')} {host_fs}", "scratch-file", str(chain.outer_image.parent),
         ["randread", "randwrite"]),
    ]
    assert [(s.name, s.how, s.where, [w.rw for w in s.cells]) for s in steps[:5]] == expected
    assert all(w.direct for s in steps if s.how == "read-device" for w in s.cells)
    assert "read-only" in steps[1].why and "--readonly" in steps[1].why
    # under the host's file system: its device, read where this machine lets it be opened, else refused
    assert all(s.how == "read-device" or (s.refused and "cannot be opened" in s.why) for s in steps[5:])


def test_devices_that_hold_data_are_refused_for_a_plan_without_reads(chain: LoopChain) -> None:
    steps = propose(discover(chain.upper), _plan("randwrite")).steps
    loops = [s for s in steps if s.kind == "loop"]
    assert [s.how for s in loops] == ["refused", "refused"]
    assert all("holds data" in s.why and "no read cells" in s.why for s in loops)


def test_a_read_only_file_system_gets_no_scratch_file(chain: LoopChain) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(chain.upper)], check=True)
    step = propose(discover(chain.upper), _plan("randread")).steps[0]
    assert step.refused and "not writable" in step.why and "mounted read-only" in step.why


def test_a_plan_sized_by_its_target_is_refused() -> None:
    with pytest.raises(UsageError, match="one plan"):
        propose(discover("/"), build_plan("cache-exhaustion"))


def test_the_proposal_as_json_and_table(chain: LoopChain) -> None:
    done = cli_here("layers", "--auto", str(chain.upper), "--json", *SHORT)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["target"] == str(chain.upper)
    assert [s["how"] for s in document["steps"][:2]] == ["scratch-file", "read-device"]
    table = cli_here("layers", "--auto", str(chain.upper), *SHORT)
    assert "can be measured safely" in table.stdout and "Add --run" in table.stdout


def test_auto_and_runs_together_are_refused(chain: LoopChain) -> None:
    done = cli_here("layers", "--auto", str(chain.upper), "abc1", "def2")
    assert done.returncode == 2 and "--auto" in done.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_a_read_only_run_reads_a_device_that_holds_data_and_leaves_it(tmp_path: Path, blank_loop: Path) -> None:
    """ext4 on a loop device: `run` refuses it (it holds data), a read-only run reads it and the bytes of
    its backing file stay the same; a read-only run with a write cell is refused before anything runs."""
    subprocess.run(["mkfs.ext4", "-q", "-F", str(blank_loop)], check=True, capture_output=True)
    backing = tmp_path / "loop-backing.img"
    before = _sha(backing)
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    run = execute_run(store, RunRequest(blank_loop, _plan("randread").with_size(4 * 1024**2), read_only=True))
    assert run.status == "complete" and run.facts["target"]["kind"] == "device"
    assert Stack.from_json(run.facts["stack"]).root.name == str(blank_loop)  # facts.stack
    assert _sha(backing) == before
    with pytest.raises(UsageError, match="cells that write"):
        execute_run(store, RunRequest(blank_loop, _plan("randread", "randwrite"), read_only=True))
    refused = cli_here("run", "-t", str(blank_loop), "--rw", "randread", "--size", "4M", "--db", str(tmp_path / "r.db"))
    assert refused.returncode == 1 and "would destroy" in refused.stderr


@pytest.mark.slow
def test_run_measures_every_safe_layer_and_leaves_the_file_systems(chain: LoopChain, tmp_path: Path) -> None:
    (chain.upper / "kept.txt").write_text("upper")
    (chain.lower / "kept.txt").write_text("lower")
    db = tmp_path / "r.db"
    done = cli_here("layers", "--auto", str(chain.upper), "--run", "--json", "--db", str(db), *SHORT)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    measured = [s for s in document["proposal"]["steps"] if s["how"] != "refused"]
    assert [layer["name"] for layer in document["layers"]] == [s["layer"] for s in reversed(measured)]
    store = open_store(f"sqlite:///{db}")
    runs = [store.get_run(layer["run_id"]) for layer in document["layers"]]
    assert all(run.status == "complete" for run in runs)
    for run, step in zip(runs, reversed(measured)):
        assert sorted(c.workload.rw for c in run.cells) == sorted(k.split("/")[0][3:] for k in step["cells"])
        assert run.facts["stack"]["target"] == step["where"]
    patterns = {row["pattern"] for row in document["rows"]}
    assert patterns == {"4K QD1 rnd read", "4K QD1 rnd write"}  # the writes of the upper layers kept
    assert (chain.upper / "kept.txt").read_text() == "upper" and (chain.lower / "kept.txt").read_text() == "lower"
    for directory in (chain.upper, chain.lower, chain.outer_image.parent):
        assert list(directory.glob("stackbench-*.scratch")) == []
    subprocess.run(["umount", str(chain.upper)], check=True)
    fsck = subprocess.run(["fsck.ext4", "-n", "-f", str(chain.inner_device)], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    subprocess.run(["mount", str(chain.inner_device), str(chain.upper)], check=True)


def test_a_scratch_volume_is_filled_before_it_is_read(blank_loop: Path) -> None:
    """A new zvol's or thin LV's unwritten blocks read as zeros without I/O: layers --auto writes the
    volume once before a plan with reads measures it (here a blank loop device stands for the new volume)."""
    from stackbench.measure.layer_runs import _fill

    _fill(str(blank_loop), 8 * 1024**2, None)
    with open(blank_loop, "rb") as device:
        written = device.read(8 * 1024**2)
        after = device.read(1024**2)
    assert written.count(0) < len(written) // 2 and after == bytes(len(after))
