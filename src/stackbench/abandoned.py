"""Runs whose process died without a word (SIGKILL, OOM killer, power cut): found and cleaned up later.

A run records, before fio starts, who is measuring it (pid, host, boot, the process's start time, so a
reused pid is not mistaken for it) and what it will leave behind (its scratch file, its job directory).
The next stackbench command that opens the store looks at the runs still marked `running` on this host;
those whose process is gone are marked `abandoned`, and their scratch file and job directory are removed.
fio itself dies with stackbench (parent-death signal), so nothing is still writing by then. Runs started
on another host are left alone: from here we cannot tell whether they still run.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Any

from stackbench.warning import Warning, WarningCode

WORKDIR_PREFIX = "stackbench-run-"
CONTROL_DIR_PREFIX = "stackbench-ssh-"  # a fleet run's private directories of ssh control sockets


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def process_record(*, workdir: Path, scratch: str | None, control_dirs: tuple[str, ...] = ()) -> dict[str, Any]:
    pid = os.getpid()
    return {
        "pid": pid,
        "host": socket.gethostname(),
        "boot_id": _boot_id(),
        "start_ticks": _start_ticks(pid),
        "workdir": str(workdir),
        "scratch": scratch,
        **({"control_dirs": list(control_dirs)} if control_dirs else {}),
    }


def is_gone(record: dict[str, Any]) -> bool:
    """True only when we can tell that the recorded process no longer runs."""
    if record.get("host") != socket.gethostname():
        return False
    if record.get("boot_id") and _boot_id() and record["boot_id"] != _boot_id():
        return True  # rebooted since
    pid = record.get("pid")
    if not isinstance(pid, int):
        return False
    ticks = _start_ticks(pid)
    if ticks is None:
        return True
    return record.get("start_ticks") is not None and ticks != record["start_ticks"]  # pid reused


def _clean(record: dict[str, Any]) -> list[str]:
    removed = []
    scratch = record.get("scratch")
    if scratch and Path(scratch).is_file() and not Path(scratch).is_symlink():
        try:
            os.unlink(scratch)
            removed.append(f"scratch file {scratch}")
        except OSError:
            pass
    workdir = record.get("workdir")
    if workdir and Path(workdir).name.startswith(WORKDIR_PREFIX) and Path(workdir).is_dir():
        shutil.rmtree(workdir, ignore_errors=True)
        removed.append(f"job directory {workdir}")
    controls = [d for d in record.get("control_dirs") or [] if isinstance(d, str)
                and Path(d).name.startswith(CONTROL_DIR_PREFIX) and Path(d).is_dir() and not Path(d).is_symlink()]
    for directory in controls:  # a fleet run's: its ssh connections died with it, their sockets are stale
        shutil.rmtree(directory, ignore_errors=True)
    if controls:
        removed.append(f"ssh control director{'y' if len(controls) == 1 else 'ies'} {', '.join(controls)}")
    return removed


def reap(store: Any) -> list[Warning]:
    """Mark this host's dead `running` runs abandoned and remove what they left; one note per run."""
    notes = []
    for run_id, facts in store.running_runs():
        record = (facts or {}).get("process")
        if not isinstance(record, dict) or not is_gone(record):
            continue
        removed = _clean(record)
        note = Warning(
            WarningCode.ABANDONED, "",
            f"run {run_id[:12]} was left running by process {record.get('pid')}, which is gone (killed or a "
            f"power cut): marked abandoned; its finished fio runs are kept"
            + (f"; removed its {' and '.join(removed)}" if removed else ""),
        )
        if store.mark_abandoned(run_id, note):
            notes.append(note)
    return notes
