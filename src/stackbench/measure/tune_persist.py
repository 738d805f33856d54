"""`stackbench tune --persist SESSION [--write]`: how the changes a finished session kept survive a reboot.

Why from the journal and not the stored session: the journal says what is set on this host now (a kept change
that `--rollback` undid since is no longer "kept"), and it is on the host whose files are written. Each knob
already says how its volatile value is made persistent (`Knob.persist`: `FILE: LINE[; LINE...]`, or an fstab
instruction); a persistent knob (a ZFS property) needs nothing.

`--write` appends each file's lines in a block marked with the session, after a backup of a file that existed
(`FILE.stackbench-SESSION.bak`), each step journaled (`SESSION.persist.log` beside the journal, an intent
fsynced before the files are replaced, then `written`), every file and backup put in place together or
not at all by the one writer (base/output_files.py). The rule that keeps it
safe: a file that already sets one of the keys the block sets (a udev rule's device and attribute, a sysctl's
name, a module option's name), whoever wrote that line, stackbench included, is refused before anything is
written, since two values for one key leave which wins to the order the tool reads them in; the session's own
block is recognised and not written twice. /etc/fstab is never edited: an option is added to a line a person
wrote, so it is printed as a step to do by hand.

`STACKBENCH_TUNE_PERSIST_ROOT` (a test hook, as STACKBENCH_TUNE_CRASH_AT) puts the files under another root.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackbench.base.errors import StackbenchError, UsageError
from stackbench.base.output_files import Destination, write_files
from stackbench.measure.tune_journal import Change, Journal, journal_dir, journals, replay
from stackbench.tune.knob import Persistence
from stackbench.tune.knobs import BY_ID

ROOT_ENV = "STACKBENCH_TUNE_PERSIST_ROOT"
FSTAB = "/etc/fstab"
WRITE, BY_HAND, NOTHING = "file", "by hand", "nothing needed"


@dataclass(frozen=True)
class PersistStep:
    """What keeps one kept change across a reboot: lines for a file, an instruction, or nothing."""

    knob: str
    subject: str
    value: str
    how: str  # file | by hand | nothing needed
    file: str | None = None  # the real path (/etc/...), not the test root's
    lines: tuple[str, ...] = ()
    said: str = ""
    result: str = ""  # with --write: written, already there

    def to_json(self) -> dict[str, Any]:
        return {"knob": self.knob, "subject": self.subject, "value": self.value, "how": self.how,
                "file": self.file, "lines": list(self.lines), "said": self.said, "result": self.result or None}


def find_session_journal(session: str) -> Path:
    """The journal of a session by its id or a unique prefix; none or several is a usage error."""
    matches = [path for path in journals() if path.name.startswith(session)] if session else []
    if len(matches) != 1:
        how_many = "no" if not matches else "more than one"
        raise UsageError(f"{how_many} tune session matches {session!r} in {journal_dir()}",
                         "Give the id `stackbench tune --status` lists")
    return matches[0]


def persist_steps(session: str) -> tuple[str, list[PersistStep]]:
    """The session's full id and one step per change it left applied, oldest first."""
    path = find_session_journal(session)
    state = replay(path)
    short = state.session[:12]
    if state.closed is None:
        journal = Journal.take_over(path)
        if journal is None:
            raise StackbenchError(f"tune session {short} is still running: what it keeps is not known yet",
                                  f"Wait for it to end, then run `stackbench tune --persist {short}` again")
        journal.close()
        raise StackbenchError(f"tune session {short} stopped without closing its journal",
                              "Run `stackbench tune --status`, which restores what it stranded, then tune again")
    if not state.left_applied:
        raise StackbenchError(f"tune session {short} left nothing applied (nothing kept, or rolled back since)",
                              "Only changes a session kept can be made persistent: tune again with --apply")
    return state.session, [_step(state.changes[seq].knob, state.changes[seq].subject.name,
                                 state.changes[seq].value, state.changes[seq].subject) for seq in state.left_applied]


def _step(knob_id: str, subject_name: str, value: str, subject: Any) -> PersistStep:
    knob = BY_ID.get(knob_id)
    if knob is None:
        return PersistStep(knob_id, subject_name, value, BY_HAND,
                           said=f"{knob_id} is not in this stackbench's catalogue: keep {value} by hand")
    if knob.persistence is Persistence.PERSISTENT:
        return PersistStep(knob_id, subject_name, value, NOTHING,
                           said="persistent (stored with it): nothing needed")
    if knob.persist is None:
        return PersistStep(knob_id, subject_name, value, BY_HAND,
                           said=f"{knob_id} does not say how it is made persistent: keep {value} by hand")
    text = knob.persist(subject, value)
    file, sep, rest = text.partition(": ")
    if not sep or not file.startswith("/") or file == FSTAB:
        return PersistStep(knob_id, subject_name, value, BY_HAND, file=file if file.startswith("/") else None,
                           said=text + " (by hand: tune does not edit a file whose lines a person wrote)")
    return PersistStep(knob_id, subject_name, value, WRITE, file=file, lines=tuple(rest.split("; ")), said=text)


def persist_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or "/")


def _key(line: str) -> str:
    """What a line sets, without the value: `vm.dirty_ratio`, `options zfs zfs_arc_max`, a udev rule's match
    and attribute."""
    return line.rsplit("=", 1)[0].strip()


def _begin(session: str) -> str:
    return f"# stackbench tune --persist {session}"


def write_steps(session: str, steps: list[PersistStep]) -> list[PersistStep]:
    """Write the steps' lines, every file checked before any is changed; the steps with their result."""
    root = persist_root()
    by_file: dict[str, list[str]] = {}
    for step in steps:
        if step.how == WRITE and step.file is not None:
            lines = by_file.setdefault(step.file, [])
            lines.extend(line for line in step.lines if line not in lines)
    olds = {file: _old(root / file.lstrip("/"), file) for file in by_file}
    already = {file for file, lines in by_file.items() if _check(olds[file], file, session, lines)}
    pending = {file: (lines, olds[file]) for file, lines in by_file.items() if file not in already}
    if pending:
        _write(root, session, pending, journal_dir() / f"{session}.persist.log")
    return [step if step.how != WRITE else
            PersistStep(**{**step.__dict__, "result": "already there" if step.file in already else "written"})
            for step in steps]


def _old(target: Path, shown: str) -> bytes | None:
    """The file as it is now; None when there is none."""
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StackbenchError(f"cannot read {shown}: {error.strerror or error}; nothing was written",
                              "Run as root, or check the file") from None


def _check(old: bytes | None, shown: str, session: str, lines: list[str]) -> bool:
    """True when the file holds this session's block already; an error when it sets one of the keys."""
    if old is None:
        return False
    text = old.decode("utf-8", errors="replace")
    if any(line.split(" (")[0] == _begin(session) for line in text.splitlines()):
        return True
    keys = {_key(line) for line in lines}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#") and _key(line) in keys:
            raise StackbenchError(f"{shown} line {number} already sets {_key(line)}; nothing was written",
                                  "Remove or edit that line by hand (two values for one setting leave which "
                                  "wins to the reading order), then run again")
    return False


def _write(root: Path, session: str, pending: dict[str, tuple[list[str], bytes | None]], log: Path) -> None:
    """Every file's block and every backup through the one writer (base/output_files.py): all or none, an
    existing file replaced atomically keeping its mode, a backup never replaced (the first one is the original)."""
    files: list[tuple[Path, bytes]] = []
    for file, (lines, old) in pending.items():
        target = root / file.lstrip("/")
        backup = target.with_name(f"{target.name}.stackbench-{session[:12]}.bak") if old is not None else None
        _log(log, {"t": "persist-intent", "file": str(target), "backup": str(backup) if backup else None,
                   "lines": lines})
        block = "\n".join([f"{_begin(session)} ({time.strftime('%Y-%m-%d %H:%M:%S')})", *lines,
                           f"# end stackbench tune {session}"]) + "\n"
        text = b"" if not old else old if old.endswith(b"\n") else old + b"\n"
        files.append((target, text + block.encode()))
        if backup is not None and old is not None and not backup.exists():
            files.append((backup, old))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StackbenchError(f"cannot create {target.parent}: {error.strerror or error}; nothing was written",
                                  "Run as root") from None
    write_files(files, force=True, destination=Destination("--persist --write", force=None,
                                                           instead="write the lines by hand"))
    for target, _ in files:
        if not target.name.endswith(".bak"):
            _log(log, {"t": "persist-written", "file": str(target)})


def _log(log: Path, record: dict[str, Any]) -> None:
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log, "a") as handle:
        handle.write(json.dumps({**record, "at": time.time()}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def persist_lines(kept: list[Change]) -> list[str]:
    """How to make the kept values that a reboot would lose survive it (`tune --persist SESSION --write` writes them)."""
    lines = []
    for change in kept:
        knob = BY_ID.get(change.knob)
        if knob is not None and knob.persistence is Persistence.VOLATILE and knob.persist is not None:
            lines.append(knob.persist(change.subject, change.value))
    return lines
