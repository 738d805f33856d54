"""tests/loop_chain.py's chain is undone whatever happened: a set-up stopped after any of its steps, or a
test that ends with the chain still in use, leaves no mount and no loop device of the test behind (read from
the kernel: /proc/self/mounts and each loop device's backing file in sysfs).

Found in the CI: test_throttled_layer.py failed on a loaded machine and left its mounts and loop devices
attached; the chain's teardown ran `umount` and `losetup -d` once each and ignored their answers. Nothing is
faked but the interruption: the steps are the real commands, and what holds the chain is a real process.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import loop_chain
from mounts import leftovers

pytestmark = pytest.mark.root

STEPS = ("losetup", "mkfs.ext4", "mount")


class Interrupted(Exception):
    """What stops the set-up: as a timeout or Ctrl-C would, after a command did its work."""


@pytest.mark.parametrize("storey", ["outer", "inner"])
@pytest.mark.parametrize("step", STEPS)
def test_a_set_up_stopped_after_any_step_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        storey: str, step: str) -> None:
    """The step has been made and its answer is lost (the worst moment to stop: the set-up cannot know what
    it made); the undo finds it all the same, and removes the images."""
    run, seen = loop_chain._run, []

    def interrupted_after(*argv: str) -> str:
        answer = run(*argv)
        seen.append(argv[0])
        if argv[0] == step and seen.count(step) == (1 if storey == "outer" else 2):
            raise Interrupted(" ".join(argv))
        return answer

    monkeypatch.setattr(loop_chain, "_run", interrupted_after)
    with pytest.raises(Interrupted):
        next(loop_chain.build(tmp_path))
    assert leftovers(tmp_path) == []
    assert not (tmp_path / "outer.img").exists()


def test_a_chain_still_held_when_the_test_ends_is_undone_once_let_go(tmp_path: Path) -> None:
    """When the test ends, a process still works in the upper file system (as the fio of a stackbench killed
    by its timeout does) and another still has the upper loop device open (as udev's blkid has one for a
    while on a loaded machine, so that `losetup -d` only marks it to clear itself and its backing file keeps
    the lower file system busy); both let go two seconds later. The undo waits for them, then removes it all."""
    made = loop_chain.build(tmp_path)
    chain = next(made)
    assert leftovers(tmp_path)  # what the undo must remove: the two mounts and the two loop devices
    with open(chain.inner_device, "rb") as device:
        holders = [subprocess.Popen(["sleep", "2"], cwd=chain.upper), subprocess.Popen(["sleep", "2"], stdin=device)]
    try:
        with pytest.raises(StopIteration):
            next(made)  # what pytest does after the test, passed or failed
    finally:
        for holder in holders:
            holder.wait()
    assert all(holder.returncode == 0 for holder in holders)  # they were not killed: they let go by themselves
    assert leftovers(tmp_path) == []
