"""Runs whose process died without a word (SIGKILL, OOM killer, power cut): found and cleaned up later.

A run records, before fio starts, who is measuring it (pid, host, boot, the process's start time, so a
reused pid is not mistaken for it) and what it will leave behind (its scratch file, its job directory),
and, before each fio process gets its job, that process (`fio_record`). The next stackbench command that
opens the store looks at the runs still marked `running` on this host; those whose process is gone are
marked `abandoned`, fio processes still left of them are killed, and then their scratch file and job
directory are removed. fio normally stops when stackbench dies (parent-death signal, spawn.py), but its
job processes call setsid and outlive a fio that was itself killed outright; they are found by what only
this run's processes have: a working directory or an argument in the run's job directory, the recorded
fio process (pid and start time), or the run's scratch file open in the run's fio binary. Never by name
alone, and only processes of the user that ran it.

Cleaning up never breaks the store: whatever cannot be stopped or removed (a file whose directory gives
EACCES, a damaged file system's EIO) is named in the run's warning with how to remove it by hand, the run
is marked abandoned all the same, and so it is reported once and every command goes on working. Runs
started on another host are left alone: from here we cannot tell whether they still run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from stackbench.base import processes
from stackbench.model.warning import Warning, WarningCode

WORKDIR_PREFIX = "stackbench-run-"
CONTROL_DIR_PREFIX = "stackbench-ssh-"  # a fleet run's private directories of ssh control sockets
KILL_WAIT_S = 5.0  # how long the cleanup waits for killed leftovers to be gone before it removes their files


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def owner_record() -> dict[str, Any]:
    """This process as `is_gone` asks about it later: pid, host, boot and start time (a reused pid is not it)."""
    pid = os.getpid()
    return {"pid": pid, "host": socket.gethostname(), "boot_id": _boot_id(), "start_ticks": processes.start_ticks(pid),
            "uid": os.geteuid()}


def process_record(*, workdir: Path, scratch: str | None, control_dirs: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        **owner_record(),
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
    ticks = processes.start_ticks(pid)
    if ticks is None:
        return True
    return record.get("start_ticks") is not None and ticks != record["start_ticks"]  # pid reused


def fio_record(pid: int, job_dir: Path) -> dict[str, Any]:
    """A started fio process as its run records it (`facts.process.fio`)."""
    try:
        group: int | None = os.getpgid(pid)
    except OSError:
        group = None
    return {"pid": pid, "pgid": group, "start_ticks": processes.start_ticks(pid), "job_dir": str(job_dir)}


def _ours(record: dict[str, Any], fio_path: str | None) -> Callable[[int], bool]:
    """The test a process must pass to be killed as this dead run's leftover."""
    workdir = record.get("workdir")
    workdir = workdir if isinstance(workdir, str) and Path(workdir).name.startswith(WORKDIR_PREFIX) else None
    scratch = record.get("scratch") if isinstance(record.get("scratch"), str) else None
    fio = record.get("fio") if isinstance(record.get("fio"), dict) else {}
    uid = record.get("uid")
    fio_binary = os.path.realpath(fio_path) if fio_path else None

    def inside(path: str | None) -> bool:
        return bool(workdir and path and (path == workdir or path.startswith(workdir + "/")))

    def test(pid: int) -> bool:
        if (isinstance(uid, int) and processes.owner(pid) != uid) or not processes.alive(pid):
            return False
        if fio.get("pid") == pid and fio.get("start_ticks") is not None \
                and processes.start_ticks(pid) == fio["start_ticks"]:
            return True
        if inside(processes.cwd(pid)) or any(inside(argument) for argument in processes.arguments(pid)):
            return True
        return bool(scratch and fio_binary and processes.executable(pid) == fio_binary
                    and scratch in processes.open_files(pid))

    return test


def leftover_processes(record: dict[str, Any], fio_path: str | None = None) -> list[int]:
    """The processes a dead run left running (fio's job processes, or fio itself), by the rules above. A dead
    tune session's record has only its scratch file (tune_changes.py): its fio binary holding that file open."""
    if not isinstance(record.get("workdir"), str) and not isinstance(record.get("fio"), dict) \
            and not (isinstance(record.get("scratch"), str) and fio_path):
        return []
    test = _ours(record, fio_path)
    return [pid for pid in processes.pids() if test(pid)]


@dataclass
class Cleanup:
    """What cleaning up after a dead run did, and what it could not do (with how to do it by hand)."""

    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    by_hand: list[str] = field(default_factory=list)

    def could_not(self, what: str, error: OSError, command: str) -> None:
        self.failed.append(f"could not {what} ({error.strerror or error})")
        self.by_hand.append(command)


def _stop_leftovers(record: dict[str, Any], fio_path: str | None, cleanup: Cleanup) -> None:
    test = _ours(record, fio_path)
    killed = []
    for pid in leftover_processes(record, fio_path):
        try:
            if processes.end(pid, test):
                killed.append(pid)
        except OSError as error:
            cleanup.could_not(f"stop its leftover process {pid}", error, f"kill -9 {pid}")
    if not killed:
        return
    left = processes.wait_gone(killed, KILL_WAIT_S)
    gone = [pid for pid in killed if pid not in left]
    if gone:
        cleanup.done.append(f"killed the {len(gone)} fio process{'es' if len(gone) > 1 else ''} it left running "
                            f"({', '.join(map(str, gone))})")
    for pid in left:  # in uninterruptible sleep (a hung device): its files are removed all the same
        cleanup.failed.append(f"its leftover process {pid} did not end within {KILL_WAIT_S:.0f} s of SIGKILL")
        cleanup.by_hand.append(f"kill -9 {pid}")


def _remove(path: str, kind: str, cleanup: Cleanup, *, directory: bool) -> None:
    """Remove one thing the run left; a failure is noted, never raised."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        cleanup.could_not(f"reach its {kind} {path}", error, f"rm -{'rf' if directory else 'f'} -- {shlex.quote(path)}")
        return
    if directory != stat.S_ISDIR(st.st_mode):  # a symlink or something else put there since: not ours to remove
        return
    errors: list[OSError] = []
    try:
        if directory:
            shutil.rmtree(path, onerror=lambda _f, _p, info: errors.append(info[1]))
        else:
            os.unlink(path)
    except OSError as error:
        errors.append(error)
    if errors:
        cleanup.could_not(f"remove its {kind} {path}", errors[0],
                          f"rm -{'rf' if directory else 'f'} -- {shlex.quote(path)}")
    else:
        cleanup.done.append(f"removed its {kind} {path}")


def clean(record: dict[str, Any], fio_path: str | None = None) -> Cleanup:
    """Stop what a dead run left running, then remove what it left on disk; never raises OSError."""
    cleanup = Cleanup()
    _stop_leftovers(record, fio_path, cleanup)
    scratch = record.get("scratch")
    if isinstance(scratch, str) and scratch:
        _remove(scratch, "scratch file", cleanup, directory=False)
    workdir = record.get("workdir")
    if isinstance(workdir, str) and Path(workdir).name.startswith(WORKDIR_PREFIX):
        _remove(workdir, "job directory", cleanup, directory=True)
    for directory in record.get("control_dirs") or []:  # a fleet run's: its ssh connections died with it
        if isinstance(directory, str) and Path(directory).name.startswith(CONTROL_DIR_PREFIX):
            _remove(directory, "ssh control directory", cleanup, directory=True)
    return cleanup


def reap(store: Any, running: list[tuple[str, dict[str, Any]]] | None = None) -> list[Warning]:
    """Mark this host's dead `running` runs abandoned and clean up after them; one note per run. `running`:
    the store's `running_runs()`, when the caller has asked already."""
    notes = []
    for run_id, facts in store.running_runs() if running is None else running:
        record = (facts or {}).get("process")
        if not isinstance(record, dict) or not is_gone(record):
            continue
        fio_path = facts.get("fio_path") if isinstance(facts.get("fio_path"), str) else None
        cleanup = clean(record, fio_path)
        note = Warning(
            WarningCode.ABANDONED, "",
            "; ".join([
                f"run {run_id[:12]} was left running by process {record.get('pid')}, which is gone (killed or a "
                f"power cut): marked abandoned; its finished fio runs are kept",
                *cleanup.done, *cleanup.failed,
            ]),
            f"finish the cleanup by hand: {'; '.join(cleanup.by_hand)}" if cleanup.by_hand else "",
        )
        if store.mark_abandoned(run_id, note):
            notes.append(note)
    return notes
