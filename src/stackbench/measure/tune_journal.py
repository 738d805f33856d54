"""The tune journal: every change a `tune` session makes is written here, with its undo, before it is made.

Why a file of its own and not the store: crash recovery must not depend on the thing being tuned or on a
database that may be remote, locked or on the tuned storage itself (recovery.py reasons the same way for
fio's output). A journal is JSON Lines under $XDG_STATE_HOME/stackbench/tune (~/.local/state/...), one file
per session, append-only; each record is written whole and fsynced before the next step, and the directory
is fsynced when a journal is created. A last line that does not parse is a torn write of a killed process
and is ignored: the step it described was never started (the intent is durable before the action runs).

A live session holds an exclusive flock on its journal for as long as it runs. The kernel drops the lock
when the process dies, however it dies (kill -9 included), so "the lock can be taken" is the test that the
session is dead, with no pid to be reused or clock to trust.

Records (`t`): `session` (who, on what, when, the scratch file it creates and the fio that writes it),
`snapshot` (a subject's state before the session touched it, written once), `intent` (seq, knob, subject,
the original state, the state the change will leave, the apply and undo actions, and for a user knob its
whole declaration: its read is needed to undo it, and the TOML file may be gone or changed by then),
`applied` and `undone` (what was read back), `conflict` (a value someone else changed, left alone),
`verdict` (a knob's decision), and `closed` (how the session ended, and which changes it left applied).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from stackbench.base.errors import StackbenchError
from stackbench.tune.knob import Action, State, Subject

VERSION = 1
SUFFIX = ".jsonl"


def journal_dir() -> Path:
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "stackbench" / "tune"


class JournalError(StackbenchError):
    """The journal cannot be written: nothing may be changed without it."""


@dataclass(frozen=True)
class Change:
    """One change as its intent recorded it: enough to undo it without the session that made it."""

    seq: int
    knob: str
    subject: Subject
    value: str
    original: State  # every view, before the session touched the subject
    expected: State  # the views the change sets (a subset: the kernel chooses some coupled values)
    apply: tuple[Action, ...]
    undo: tuple[Action, ...]
    declared: dict[str, Any] | None = None  # a user knob's declaration (tune/user_knobs.py): its read and undo

    def intent(self) -> dict[str, Any]:
        record = {"t": "intent", "seq": self.seq, "knob": self.knob, "subject": self.subject.to_json(),
                  "value": self.value, "from": dict(self.original), "to": dict(self.expected),
                  "apply": [a.to_json() for a in self.apply], "undo": [a.to_json() for a in self.undo]}
        return record | ({"declared": self.declared} if self.declared is not None else {})

    @staticmethod
    def from_intent(record: dict[str, Any]) -> "Change":
        declared = record.get("declared")
        return Change(int(record["seq"]), str(record["knob"]), Subject.from_json(record["subject"]),
                      str(record["value"]), dict(record["from"]), dict(record["to"]),
                      tuple(Action.from_json(a) for a in record["apply"]),
                      tuple(Action.from_json(a) for a in record["undo"]),
                      dict(declared) if declared is not None else None)


class Journal:
    """One session's journal, open for appending and locked by this process."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @property
    def session(self) -> str:
        return self.path.name.removesuffix(SUFFIX)

    @classmethod
    def create(cls, session: str, header: dict[str, Any], directory: Path | None = None) -> "Journal":
        directory = directory or journal_dir()
        path = directory / f"{session}{SUFFIX}"
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise JournalError(f"cannot create the tune journal {path}: {error.strerror or error}",
                               "Make $XDG_STATE_HOME (or ~/.local/state) writable; nothing was changed") from None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        journal = cls(path, fd)
        journal.append({"t": "session", "id": session, "pid": os.getpid(), "started": time.time(), **header})
        _fsync_directory(directory)
        return journal

    @classmethod
    def take_over(cls, path: Path) -> "Journal | None":
        """The journal of a session that is no longer running, locked by us; None while its process lives."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as error:
            raise JournalError(f"cannot open the tune journal {path}: {error.strerror or error}",
                               "Run the command as the user that ran the session (usually root)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(path, fd)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record whole and make it durable before returning."""
        line = (json.dumps({"v": VERSION, **record}, separators=(",", ":")) + "\n").encode()
        try:
            written = 0
            while written < len(line):
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)
        except OSError as error:
            raise JournalError(f"cannot write the tune journal {self.path}: {error.strerror or error}",
                               "Free space where the journal lives; what was changed is being undone") from None

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.path)

    def close(self) -> None:
        """Release the lock (the file stays: it is the session's record)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a journal; a line that does not parse (the torn last write of a killed process) is
    skipped."""
    records = []
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        raise JournalError(f"cannot read the tune journal {path}: {error.strerror or error}",
                           "Run stackbench as the user that ran the session (usually root)") from None
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("v") == VERSION:
            records.append(record)
    return records


def journals(directory: Path | None = None) -> Iterator[Path]:
    """Every journal in the directory, oldest name first (an empty iterator when there is none)."""
    directory = directory or journal_dir()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if name.endswith(SUFFIX):
            yield directory / name


@dataclass(frozen=True)
class Replay:
    """A journal read back: the changes it intended, which are still open (neither undone nor left alone as
    a conflict), and whether and how the session ended."""

    session: str
    header: dict[str, Any]
    changes: dict[int, Change]
    open: tuple[int, ...]  # seqs of intents without an `undone` or `conflict`, oldest first
    closed: dict[str, Any] | None  # the last `closed` record

    @property
    def left_applied(self) -> tuple[int, ...]:
        """Changes the session ended with on purpose (kept), and that nothing has undone since."""
        kept = self.closed.get("left_applied", []) if self.closed else []
        return tuple(seq for seq in kept if seq in self.open)

    @property
    def stranded(self) -> tuple[int, ...]:
        """Open changes the session did not mean to leave: every open one of an unclosed journal."""
        return self.open if self.closed is None else ()


def replay(path: Path) -> Replay:
    records = read_records(path)
    header = next((r for r in records if r.get("t") == "session"), {})
    changes: dict[int, Change] = {}
    finished: set[int] = set()
    closed = None
    for record in records:
        kind = record.get("t")
        try:
            if kind == "intent":
                change = Change.from_intent(record)
                changes[change.seq] = change
            elif kind in ("undone", "conflict"):
                finished.add(int(record["seq"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise JournalError(
                f"the tune journal {path} holds a record that is not one tune writes: {str(record)[:120]}",
                "Check what it names by hand, then move the file away") from None
        if kind == "closed":
            closed = record
    open_ = tuple(seq for seq in sorted(changes) if seq not in finished)
    return Replay(path.name.removesuffix(SUFFIX), header, changes, open_, closed)


def needs_recovery() -> bool:
    """Whether some journal is unclosed or unreadable: the cheap test every command makes at start."""
    for path in journals():
        try:
            if replay(path).closed is None:
                return True
        except JournalError:
            return True
    return False
