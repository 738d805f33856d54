"""A tune session's changes: each journaled with its undo before it is made, verified after, and undone only
where it still holds what tune set.

The rules (docs/tune.md, "The journal"), and why:

- the intent (the original state, the state the change leaves, the apply and undo actions) is durable in the
  journal before the first action runs, so a process killed at any instant leaves a journal that names
  every change that may have happened;
- a subject's original state is read once, before the session first touches it (`snapshot`), and every
  undo restores that, never an intermediate value;
- an undo is compare-and-swap: the current state is read first (every view); if it still holds what tune
  set, the undo runs and is verified against the original; if it already is the original (the kill came
  before the apply, or a reboot reset a volatile value) nothing runs; anything else was changed by someone
  else since, and is left as it is and reported with the command that would restore it (TuneD's restores
  that overwrote a value set at runtime are the bug class this avoids);
- a rollback undoes newest first and journals every step, so a rollback that is itself killed is finished
  by running it again, and running it twice changes nothing.

`STACKBENCH_TUNE_CRASH_AT=POINT:N` (after-intent, after-apply, mid-undo) kills the process with SIGKILL
the Nth time it passes POINT: the tests' injected crashes, at instants an outside kill rarely hits.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Callable

from stackbench.base.errors import StackbenchError
from stackbench.measure import abandoned
from stackbench.measure.tune_journal import Change, Journal, Replay, journals, replay
from stackbench.tune import actions
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Knob, State, Subject, differing_views
from stackbench.tune.knobs import lookup
from stackbench.tune.user_knobs import KnobFileError, declaration_of, from_journal

CRASH_ENV = "STACKBENCH_TUNE_CRASH_AT"
_passed: dict[str, int] = {}

UNDONE, ALREADY, CONFLICT, FAILED = "undone", "already original", "conflict", "failed"


def crash_point(name: str) -> None:
    """Die here, as kill -9 would, when STACKBENCH_TUNE_CRASH_AT names this point and count."""
    wanted = os.environ.get(CRASH_ENV, "")
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _passed[name] = _passed.get(name, 0) + 1
    if str(_passed[name]) == (count or "1"):
        os.kill(os.getpid(), signal.SIGKILL)


def _shown_state(state: State, views: list[str]) -> str:
    return ", ".join(f"{view}={state.get(view, '?')}" for view in views)


@dataclass(frozen=True)
class Outcome:
    """What undoing one change did: `undone`, `already original`, `conflict` (left alone) or `failed`."""

    change: Change
    result: str
    now: State | None = None
    said: str = ""

    def describe(self) -> str:
        change = self.change
        where = f"{change.knob} on {change.subject.name}"
        undo = "; ".join(action.shown() for action in change.undo)
        original = _shown_state(change.original, list(change.original))
        if self.result == UNDONE:
            return f"{where} set back to {original}"
        if self.result == ALREADY:
            return f"{where} already held its original value ({original})"
        if self.result == CONFLICT:
            now = _shown_state(self.now or {}, list(change.original))
            tune_set = _shown_state(change.expected, list(change.expected))
            return (f"{where} left alone: it reads {now}, neither what tune set ({tune_set}) nor the original "
                    f"({original}), so someone else changed it; to restore the original: {undo}")
        return f"{where} could not be undone ({self.said}); to restore the original by hand: {undo}"


def knob_of(journal: Journal, change: Change) -> Knob | None:
    """The knob that made a change: a user knob rebuilt from the declaration its intent carries (its file is
    not needed, and a file edited since cannot change what the undo does), else this version's catalogue."""
    if change.declared is not None:
        return from_journal(change.declared, str(journal.path))
    return lookup(change.knob)


def undo_change(journal: Journal, change: Change, knob: Knob | None) -> Outcome:
    """Undo one change by the compare-and-swap rule above, journaling what happened."""
    if knob is None:
        journal.append({"t": "conflict", "seq": change.seq, "why": f"the knob {change.knob} is not in this version"})
        return Outcome(change, FAILED, said=f"this version of stackbench has no knob {change.knob}")
    now = knob.access.read(change.subject)
    if not differing_views(change.expected, now, list(change.expected)):
        crash_point("mid-undo")
        for action in change.undo:
            actions.run(action)
        after = knob.access.read(change.subject)
        wrong = differing_views(change.original, after, list(change.original))
        if wrong:
            raise ActionFailed(
                f"undoing {change.knob} on {change.subject.name} left {_shown_state(after, wrong)}, not the original "
                f"{_shown_state(change.original, wrong)}",
                "Restore it by hand; the knob's undo is wrong: report it")
        journal.append({"t": "undone", "seq": change.seq, "read": after})
        return Outcome(change, UNDONE, after)
    if not differing_views(change.original, now, list(change.original)):
        journal.append({"t": "undone", "seq": change.seq, "read": now, "how": ALREADY})
        return Outcome(change, ALREADY, now)
    journal.append({"t": "conflict", "seq": change.seq, "read": now})
    return Outcome(change, CONFLICT, now)


class Changes:
    """The changes of one live session, through its journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._snapshots: dict[str, State] = {}
        self._seq = 0
        self.open: dict[int, Change] = {}  # made and not undone, oldest first

    def original(self, knob: Knob, subject: Subject) -> State:
        """The subject's state before this session first touched it (read once, journaled)."""
        key = f"{knob.id}@{subject.key}"
        if key not in self._snapshots:
            state = knob.access.read(subject)
            self.journal.append({"t": "snapshot", "knob": knob.id, "subject": subject.to_json(), "state": state})
            self._snapshots[key] = state
        return self._snapshots[key]

    def apply(self, knob: Knob, subject: Subject, value: str) -> Change:
        """Set `knob` to `value` on `subject`: intent journaled, actions run, every set view verified."""
        original = self.original(knob, subject)
        self._seq += 1
        change = Change(self._seq, knob.id, subject, value, original,
                        knob.access.expected(subject, value, original),
                        tuple(knob.access.apply(subject, value, original)),
                        tuple(knob.access.undo(knob.undo, subject, original)),
                        declaration_of(knob))
        self.journal.append(change.intent())
        self.open[change.seq] = change
        crash_point("after-intent")
        for action in change.apply:
            actions.run(action)
        read = knob.access.read(subject)
        wrong = differing_views(change.expected, read, list(change.expected))
        if wrong:
            raise ActionFailed(f"{knob.id} on {subject.name} reads {_shown_state(read, wrong)} after setting {value}",
                               "The kernel or tool did not take the value; the change is being undone")
        self.journal.append({"t": "applied", "seq": change.seq, "read": read})
        crash_point("after-apply")
        return change

    def undo(self, change: Change) -> Outcome:
        outcome = undo_change(self.journal, change, knob_of(self.journal, change))
        self.open.pop(change.seq, None)
        return outcome

    def undo_all(self, knob_id: str | None = None) -> list[Outcome]:
        """Undo every open change (of one knob, with `knob_id`), newest first; a failure of one does not stop
        the others, and what failed stays open (listed as still applied when the journal is closed, for
        `tune --rollback`)."""
        outcomes = []
        for seq in sorted(self.open, reverse=True):
            change = self.open[seq]
            if knob_id is not None and change.knob != knob_id:
                continue
            try:
                outcomes.append(self.undo(change))
            except ActionFailed as error:  # stays open: the journal's record says it is still applied
                outcomes.append(Outcome(change, FAILED, said=error.what))
        return outcomes


@dataclass(frozen=True)
class Rollback:
    session: str
    outcomes: tuple[Outcome, ...]
    cleanup: tuple[str, ...] = ()  # what was done about the dead session's scratch file, or how to do it by hand

    @property
    def incomplete(self) -> bool:
        """Something was left as it is (changed by someone else, or its undo failed): exit 3."""
        return any(o.result in (CONFLICT, FAILED) for o in self.outcomes)

    def describe(self, why: str = "") -> str:
        """What was undone (or that nothing was), `why` in brackets after it, then the scratch file."""
        said = "; ".join(o.describe() for o in self.outcomes) or "nothing to undo"
        return f"tune session {self.session[:12]}: " + "; ".join([said + (f" ({why})" if why else ""), *self.cleanup])


def rollback(journal: Journal, *, kept: bool, how: str) -> Rollback:
    """Undo a session's open changes newest first: those it stranded (an unclosed journal), and with `kept`
    those it left applied on purpose too. Closes the journal's record with what is still applied."""
    state = replay(journal.path)
    chosen = set(state.stranded) | (set(state.left_applied) if kept else set())
    outcomes = []
    for seq in sorted(chosen, reverse=True):
        change = state.changes[seq]
        try:
            outcomes.append(undo_change(journal, change, knob_of(journal, change)))
        except (ActionFailed, KnobFileError) as error:
            outcomes.append(Outcome(change, FAILED, said=error.what))
    still = sorted({o.change.seq for o in outcomes if o.result == FAILED} | (set(state.left_applied) - chosen))
    cleanup = _dead_session_scratch(state)  # before `closed`: a rollback killed in between removes it again
    journal.append({"t": "closed", "how": how, "left_applied": still})
    return Rollback(state.session, tuple(outcomes), cleanup)


def _dead_session_scratch(state: Replay) -> tuple[str, ...]:
    """Stop the fio processes a session that died (its journal unclosed) left with its scratch file open, and
    remove that file: the one its header says the session created (`scratch`, written only for a file
    stackbench made), and nothing else. A session that closed its journal removed its own first, and a file
    at that path since is someone else's. The store's clean-up of dead runs does the same, but only when a
    later command opens that store, and `tune --rollback` opens none."""
    scratch, fio_path, uid = (state.header.get(key) for key in ("scratch", "fio_path", "uid"))
    if state.closed is not None or not isinstance(scratch, str) or not os.path.isabs(scratch):
        return ()
    record = {"scratch": scratch, **({"uid": uid} if isinstance(uid, int) else {})}
    cleanup = abandoned.clean(record, fio_path if isinstance(fio_path, str) else None)
    return (*cleanup.done, *cleanup.failed, *[f"to finish by hand: {command}" for command in cleanup.by_hand])


def recover(on_note: Callable[[str], None]) -> bool:
    """Restore what dead sessions stranded (their process was killed before it could), as every stackbench
    command does when it starts; a session still running is left alone. True when something was left as it
    is (a conflict or a failed undo)."""
    incomplete = False
    for path in journals():
        try:
            state = replay(path)
            if state.closed is not None or not state.header:
                continue
            journal = Journal.take_over(path)
            if journal is None:
                continue  # its process holds the lock: it is running
            try:
                done = rollback(journal, kept=False, how="recovered after the session's process died")
            finally:
                journal.close()
        except StackbenchError as error:  # one damaged journal: named, and the others still recovered
            incomplete = True
            on_note(error.one_line())
            continue
        incomplete = incomplete or done.incomplete
        on_note(done.describe("the session's process died before it could restore them"))
    return incomplete
