"""`tune --persist SESSION [--write]`: the lines that keep a finished session's kept changes across a reboot,
written under a temporary root (STACKBENCH_TUNE_PERSIST_ROOT), never into the real /etc. The sessions are real
journals written by the journal's own code; nothing is applied to the machine (the lines only name devices)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.measure.tune_journal import Change, Journal
from stackbench.tune.knob import Action, Subject

UDEV = "etc/udev/rules.d/60-stackbench-tune.rules"
SYSCTL = "etc/sysctl.d/60-stackbench-tune.conf"
RA_LINE = 'ACTION=="add|change", KERNEL=="loop7", ATTR{queue/read_ahead_kb}="128"'


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("STACKBENCH_TUNE_PERSIST_ROOT", str(tmp_path / "root"))
    return tmp_path / "root"


def _change(seq: int, knob: str, subject: Subject, value: str) -> Change:
    return Change(seq, knob, subject, value, {"x": "0"}, {"x": value}, (Action(argv=("true",)),),
                  (Action(argv=("true",)),))


def session(name: str, changes: list[Change], left_applied: list[int] | None, undone: tuple[int, ...] = ()) -> None:
    """A journal as a session leaves it: intents, applied, then closed with what it kept (None: still open)."""
    journal = Journal.create(name, {"target": "/mnt/x"})
    try:
        for change in changes:
            journal.append(change.intent())
            journal.append({"t": "applied", "seq": change.seq})
        for seq in undone:
            journal.append({"t": "undone", "seq": seq})
        if left_applied is not None:
            journal.append({"t": "closed", "how": "completed", "left_applied": left_applied})
    finally:
        journal.close()


KEPT = [_change(1, "blockdev.read_ahead_kb", Subject("block-device", "loop7"), "128"),
        _change(2, "vm.dirty", Subject("host", "sysctl"), "10%/5%"),
        _change(3, "mount.atime", Subject("mount", "/mnt/x", {"source": "/dev/loop7", "fs_type": "ext4"}), "noatime"),
        _change(4, "zfs.compression", Subject("dataset", "tank/vm"), "lz4")]


def test_persist_prints_each_kept_change_and_writes_nothing_without_write(root: Path) -> None:
    session("s1aaaaaaaaaaaa", KEPT, [1, 2, 3, 4])
    result = cli_here("tune", "--persist", "s1aa")
    assert result.returncode == 0, result.stderr
    assert RA_LINE in result.stdout
    assert "vm.dirty_ratio=10" in result.stdout and "add noatime to the options of /mnt/x" in result.stdout
    assert "zfs.compression=lz4 on tank/vm: persistent (stored with it): nothing needed" in result.stdout
    assert not root.exists()


def test_write_writes_each_file_once_with_a_backup_and_refuses_a_second_value(root: Path) -> None:
    existing = root / SYSCTL
    existing.parent.mkdir(parents=True)
    existing.write_text("kernel.panic=10\n")
    session("s1aaaaaaaaaaaa", KEPT, [1, 2, 3, 4])
    result = cli_here("tune", "--persist", "s1aa", "--write", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {s["knob"]: s["how"] for s in data["steps"]} == {
        "blockdev.read_ahead_kb": "file", "vm.dirty": "file", "mount.atime": "by hand",
        "zfs.compression": "nothing needed"}
    assert [s["result"] for s in data["steps"]] == ["written", "written", None, None]
    udev = (root / UDEV).read_text().splitlines()
    assert udev[0].startswith("# stackbench tune --persist s1aaaaaaaaaaaa") and udev[1] == RA_LINE
    sysctl = existing.read_text()
    assert sysctl.startswith("kernel.panic=10\n") and "vm.dirty_ratio=10\nvm.dirty_background_ratio=5\n" in sysctl
    assert (root / f"{SYSCTL}.stackbench-s1aaaaaaaaaa.bak").read_text() == "kernel.panic=10\n"
    assert not (root / "etc/fstab").exists()
    log = Path(str(root.parent / "state/stackbench/tune/s1aaaaaaaaaaaa.persist.log")).read_text().splitlines()
    assert [json.loads(line)["t"] for line in log] == ["persist-intent"] * 2 + ["persist-written"] * 2

    again = cli_here("tune", "--persist", "s1aa", "--write")  # the same session: nothing written twice
    assert again.returncode == 0 and "[already there]" in again.stdout
    assert (root / UDEV).read_text().count(RA_LINE) == 1

    session("s2bbbbbbbbbbbb", [_change(1, "blockdev.read_ahead_kb", Subject("block-device", "loop7"), "512")], [1])
    before = (root / UDEV).read_text()
    refused = cli_here("tune", "--persist", "s2bb", "--write")
    assert refused.returncode == 1
    assert "line 2 already sets" in refused.stderr and "nothing was written" in refused.stderr
    assert (root / UDEV).read_text() == before


@pytest.mark.parametrize("left_applied, undone, said", [
    ([], (), "left nothing applied"),
    ([1], (1,), "left nothing applied"),  # kept, then rolled back
])
def test_a_session_with_nothing_to_persist_is_one_error_line(root: Path, left_applied, undone, said) -> None:
    session("s3cccccccccccc", KEPT[:1], left_applied, undone)
    result = cli_here("tune", "--persist", "s3cc", "--write")
    assert result.returncode == 1 and said in result.stderr
    assert result.stderr.count("\n") == 1 and not root.exists()


def test_an_unknown_session_or_write_alone_is_bad_usage(root: Path) -> None:
    unknown = cli_here("tune", "--persist", "nosuch")
    assert unknown.returncode == 2 and "no tune session matches 'nosuch'" in unknown.stderr
    alone = cli_here("tune", "--write")
    assert alone.returncode == 2 and "--persist" in alone.stderr


def test_a_running_session_is_refused(root: Path) -> None:
    journal = Journal.create("s4dddddddddddd", {"target": "/mnt/x"})  # held: the session is alive
    try:
        result = cli_here("tune", "--persist", "s4dd")
    finally:
        journal.close()
    assert result.returncode == 1 and "is still running" in result.stderr
