"""The refusals before a tune session changes anything that are about its journal: a second live session
(two would measure each other's changes) and a journal on the storage under test (a crash there could take
the record of what to undo with it). Apart from tune_journal.py, which every command's start-up loads to
find an unclosed journal, so that start-up does not load the target probes these need.
"""

from __future__ import annotations

import os

from stackbench.base.errors import StackbenchError
from stackbench.measure.tune_journal import Journal, journal_dir, journals, replay
from stackbench.probe.block import collect_target_facts
from stackbench.tune.subjects import TargetInfo


def refuse_second_session() -> None:
    """One live session at a time: two would measure each other's changes."""
    for path in journals():
        state = replay(path)
        if state.closed is None and state.header:
            journal = Journal.take_over(path)
            if journal is None:
                raise StackbenchError(f"tune session {state.session[:12]} is running (pid {state.header.get('pid')})",
                                      "Wait for it to end, or stop it with Ctrl-C, which restores what it changed")
            journal.close()


def refuse_journal_under_test(info: TargetInfo) -> None:
    """The journal must outlive what the session does to the storage under test: never on its file system,
    nor on a dataset of its ZFS pool (a crash there could take the record of what to undo with it)."""
    place = journal_dir()
    while not place.exists() and place != place.parent:
        place = place.parent
    same_fs = os.stat(place).st_dev == os.stat(info.path).st_dev
    pool = (collect_target_facts(place).get("zfs_dataset") or "").split("/", 1)[0] if info.pool else ""
    if same_fs or (info.pool and pool == info.pool):
        raise StackbenchError(f"the tune journal would be written in {journal_dir()}, on the "
                              f"{'file system' if same_fs else 'ZFS pool'} under test",
                              "Set XDG_STATE_HOME to a directory on other storage; nothing was changed")
