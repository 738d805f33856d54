"""The scratch-volume journal of `layers --auto`: recorded before the volume is created, removed only with
stackbench's mark, and a dead process's volumes removed by the next command.

ZFS cannot run on this machine (no module): `zfs` here is a small shell script that logs its arguments and
answers as zfs does (a property value, `dataset does not exist`). The real zfs and lvm2, and a real kill -9,
are in the lab guests (tests/stack/test_stack_guest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.base.errors import StackbenchError
from stackbench.measure import scratch_volumes
from stackbench.measure.abandoned import owner_record

FAKE_ZFS = """#!/bin/sh
echo "$*" >> "$ZFS_LOG"
case "$1" in
  create) ls "$JOURNAL" >> "$ZFS_LOG"; echo "cannot create: permission denied" >&2; exit 1 ;;
  get) if [ -e "$ZFS_STATE" ]; then cat "$ZFS_STATE"; else echo "cannot open '$6': dataset does not exist" >&2; exit 1; fi ;;
  destroy) rm -f "$ZFS_STATE" ;;
esac
"""


@pytest.fixture
def fake_zfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "zfs").write_text(FAKE_ZFS)
    (bin_dir / "zfs").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("ZFS_LOG", str(tmp_path / "zfs.log"))
    monkeypatch.setenv("ZFS_STATE", str(tmp_path / "zfs.state"))
    monkeypatch.setenv("JOURNAL", str(tmp_path / "state" / "stackbench" / "scratch-volumes"))
    return tmp_path


def _dead_process() -> dict:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    record = {**owner_record(), "pid": child.pid}
    child.wait()
    return record


def _journal_entry(volume: scratch_volumes.ScratchVolume, process: dict) -> None:
    scratch_volumes.journal_dir().mkdir(parents=True, exist_ok=True)
    document = {"volume": volume.__dict__, "process": process}
    (scratch_volumes.journal_dir() / f"{volume.token}.json").write_text(json.dumps(document))


def test_the_volume_is_journaled_before_zfs_create_runs(fake_zfs: Path) -> None:
    with pytest.raises(StackbenchError, match="nothing was left behind"):
        scratch_volumes.create_dataset("tank", "abc123")
    log = (fake_zfs / "zfs.log").read_text().splitlines()
    assert log[0].startswith("create -o stackbench:scratch=abc123 -o mountpoint=")
    assert log[1] == "abc123.json"  # the journal entry existed while zfs create ran
    assert log[2].startswith("get -H -o value stackbench:scratch tank/stackbench-scratch-abc123")
    assert scratch_volumes.journal() == []
    assert not list(Path(log[0].split("mountpoint=")[1].split()[0]).parent.glob("stackbench-scratch-abc123-*"))


def test_a_dead_process_volume_is_destroyed_by_the_next_command(fake_zfs: Path) -> None:
    volume = scratch_volumes.ScratchVolume("zvol", "tank/stackbench-scratch-def456", "def456")
    dead = _dead_process()
    _journal_entry(volume, dead)
    (fake_zfs / "zfs.state").write_text("def456\n")
    assert scratch_volumes.reap() == [
        f"removed the scratch zvol {volume.name} that stackbench process {dead['pid']} left when it died"]
    assert "destroy tank/stackbench-scratch-def456" in (fake_zfs / "zfs.log").read_text()
    assert scratch_volumes.journal() == []


def test_a_volume_without_our_mark_is_left_alone(fake_zfs: Path) -> None:
    volume = scratch_volumes.ScratchVolume("zvol", "tank/stackbench-scratch-aaa111", "aaa111")
    _journal_entry(volume, _dead_process())
    (fake_zfs / "zfs.state").write_text("-\n")  # exists, the property unset: not ours
    notes = scratch_volumes.reap()
    assert len(notes) == 1 and "left alone" in notes[0] and "zfs destroy tank/stackbench-scratch-aaa111" in notes[0]
    assert not any(line.startswith("destroy") for line in (fake_zfs / "zfs.log").read_text().splitlines())


def test_a_running_process_volume_is_not_touched(fake_zfs: Path) -> None:
    volume = scratch_volumes.ScratchVolume("zvol", "tank/stackbench-scratch-bbb222", "bbb222")
    _journal_entry(volume, owner_record())
    assert scratch_volumes.reap() == []
    assert not (fake_zfs / "zfs.log").exists()
    assert len(scratch_volumes.journal()) == 1


def test_a_volume_that_never_came_to_be_is_forgotten_quietly(fake_zfs: Path) -> None:
    """Killed between the record and zfs create: nothing exists, nothing to say."""
    volume = scratch_volumes.ScratchVolume("zvol", "tank/stackbench-scratch-ccc333", "ccc333")
    _journal_entry(volume, _dead_process())
    assert scratch_volumes.reap() == []
    assert scratch_volumes.journal() == []
