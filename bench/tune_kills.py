"""G5 of bench/tune_truth.py: after a tune session is killed with SIGKILL, is everything as it was?

Every kill, at a random instant or at an injected crash point, is judged by the same four checks
(`after_kill`), each read independently of what stackbench says it did:

- every view of every subject the session's journal snapshotted reads as that snapshot, and the loop
  device's queue (read-ahead, scheduler, nr_requests) as the script read it before the session started
  (a session killed before its journal existed has no snapshot to compare with; the queue still has one);
- no scratch file: the scratch directory is empty, and no run's job directory is left in the sessions'
  own TMPDIR;
- no stray process: none (fio above all) with its working directory, an argument or an open file in the
  scratch directory or in that TMPDIR;
- the session's journal closed (its last record `closed`).

The injected kills use `STACKBENCH_TUNE_CRASH_AT=POINT:N` (src/stackbench/measure/tune_changes.py) on a
race of four read-ahead candidates from a planted 0 without calibration: applies and undos 1-4 are the
candidates' reversibility checks (each a different value), the later ones the race's switches between
arms. Kill k goes to point k mod 3 (after-intent, after-apply, mid-undo) and to the Nth pass, N = 1 + 3k
mod 8 (1, 4, 7, 2, 5, 8, 3, 6), so five kills hit candidates 128 and 512 before their apply, 8192 after
its apply, the race's first switch and one of its undos. A mid-undo kill interrupts the session's own
undo; then `tune --rollback` is itself killed at its first undo (mid-undo:1), and a second rollback must
finish it. After a race's kill (random or injected): `tune --rollback SESSION`, then `stackbench runs` on
the sessions' store, whose clean-up of dead runs is what removes their job directories. After a one-knob
session's kill only `stackbench runs`: the next command, whatever it is, must restore what the session
stranded (every command does that first); a session that had ended before its kill came, its change kept,
is rolled back first.

The dry run: `tune` without `--apply` must exit 0, leave every view of the queue as it was, write no file
in the journals' directory and leave the scratch directory empty.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

POINTS = ("after-intent", "after-apply", "mid-undo")
QUEUE_VIEWS = ("read_ahead_kb", "scheduler", "nr_requests")  # what the sessions change on the loop device
ONE = "blockdev.read_ahead_kb=128"
RACE = "blockdev.read_ahead_kb=128,512,2048,8192"
PLANTED = ["--rw", "read", "--bs", "4k", "--qd", "1", "--buffered"]
SESSION_TIMEOUT_S = 900.0


def queue_state(device: str) -> dict[str, str]:
    """Every view of the loop device's queue that a session changes, as the kernel shows it."""
    queue = Path(f"/sys/block/{Path(device).name}/queue")
    return {view: (queue / view).read_text().strip() for view in QUEUE_VIEWS}


def injected_point(index: int) -> str:
    """The crash point of injected kill `index` (from 0): the points in turn, the passes spread over 1-8."""
    return f"{POINTS[index % len(POINTS)]}:{1 + (3 * index) % 8}"


@dataclass(frozen=True)
class KillBench:
    """The script's loop device, scratch directory, state and sessions' options, shared by every kill."""

    bench: Path  # the sessions' scratch directory (-t) on the loop device's ext4
    device: str
    state: Path  # XDG_STATE_HOME: the journals, and the sessions' store
    tmp: Path  # the sessions' TMPDIR: their runs' job directories
    common: list[str]

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "XDG_STATE_HOME": str(self.state), "TMPDIR": str(self.tmp)}

    @property
    def journals(self) -> Path:
        return self.state / "stackbench" / "tune"

    def cli(self, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
        """One stackbench command, its output through files: a pipe would be held open by a stray fio of a
        killed session, and reading it to its end would wait for that fio to finish (and hide it)."""
        env = {**self.env, **({"STACKBENCH_TUNE_CRASH_AT": crash_at} if crash_at else {})}
        argv = [sys.executable, "-m", "stackbench", *args]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            done = subprocess.run(argv, stdout=out, stderr=err, env=env, timeout=SESSION_TIMEOUT_S)
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(argv, done.returncode, out.read().decode(errors="replace"),
                                               err.read().decode(errors="replace"))

    def tune(self, knob: str, *extra: str) -> list[str]:
        return ["tune", "-t", str(self.bench), "--knob", knob, "--apply", "--force", *extra, *PLANTED, *self.common]

    def plant(self) -> dict[str, str]:
        """Read-ahead 0 (what the sessions fix), and every view of the queue as it is then."""
        Path(f"/sys/block/{Path(self.device).name}/queue/read_ahead_kb").write_text("0")
        return queue_state(self.device)

    def new_journal(self, before: set[Path]) -> Path | None:
        return next(iter(set(self.journals.glob("*.jsonl")) - before), None)

    def settle(self, journal: Path | None, rollback: bool = True) -> list[str]:
        """After a kill: `tune --rollback` of the session (with `rollback`), then `stackbench runs`, a command
        that opens the sessions' store (whose clean-up of dead runs removes their job directories, and which
        restores what a dead session stranded as every command does first); what exited non-zero."""
        from stackbench.measure.tune_journal import read_records

        commands = [["runs", "--db", str(self.state / "truth.db")]]
        if rollback and journal is not None:
            commands.insert(0, ["tune", "--rollback", read_records(journal)[0]["id"]])
        done = [self.cli(*command) for command in commands]
        return [f"`stackbench {command[0]}{' --rollback' if command[0] == 'tune' else ''}` exited {d.returncode}: "
                f"{d.stderr.strip()[-200:]}" for command, d in zip(commands, done) if d.returncode != 0]

    def queue_and_scratch(self, queue_before: dict[str, str]) -> list[str]:
        """The queue's views that differ from `queue_before`, and what is left in the scratch directory."""
        queue_now = queue_state(self.device)
        wrong = [f"{view} reads {queue_now[view]}, was {queue_before[view]}" for view in QUEUE_VIEWS
                 if queue_now[view] != queue_before[view]]
        if any(self.bench.iterdir()):
            wrong.append(f"left in the scratch directory: {sorted(p.name for p in self.bench.iterdir())}")
        return wrong

    def after_kill(self, journal: Path | None, queue_before: dict[str, str]) -> list[str]:
        """The four checks of the module's docstring: what is not as it was (empty when everything is)."""
        from stackbench.measure.tune_journal import read_records
        from stackbench.tune.knob import Subject
        from stackbench.tune.knobs import BY_ID

        wrong = []
        records = read_records(journal) if journal is not None else []
        for record in (r for r in records if r["t"] == "snapshot"):
            now = dict(BY_ID[record["knob"]].access.read(Subject.from_json(record["subject"])))
            if now != record["state"]:
                wrong.append(f"{record['knob']} on {record['subject']['name']}: {now} instead of {record['state']}")
        wrong += self.queue_and_scratch(queue_before)
        if records and records[-1]["t"] != "closed":
            wrong.append("the journal is not closed")
        if any(self.tmp.iterdir()):
            wrong.append(f"left in the sessions' TMPDIR: {sorted(p.name for p in self.tmp.iterdir())}")
        strays = stray_processes([self.bench, self.tmp])
        if strays:
            wrong.append(f"stray processes: {', '.join(strays)}")
        return wrong

    def random_kill(self, within: float) -> tuple[list[str], str]:
        """A one-knob session (calibration, reversibility check, rounds, confirmation) killed at a random
        instant 1 to `within` s after its start: what is wrong after it, and when the kill came."""
        return self._killed_at_random(self.tune(ONE), 1.0, within, race=False)

    def race_kill(self, within: float) -> tuple[list[str], str]:
        """A race of four killed at a random instant up to `within` s after the race's first switch (a fifth
        apply, after the four candidates' reversibility checks)."""
        return self._killed_at_random(self.tune(RACE, "--calibrate-rounds", "0"), 0.0, within, race=True)

    def _killed_at_random(self, argv: list[str], earliest: float, within: float,
                          race: bool) -> tuple[list[str], str]:
        from stackbench.measure.tune_journal import read_records

        queue_before = self.plant()
        journals_before = set(self.journals.glob("*.jsonl"))
        process = subprocess.Popen([sys.executable, "-m", "stackbench", *argv], env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started, journal = time.monotonic(), None
        give_up = started + 120
        while race and process.poll() is None and time.monotonic() < give_up:
            journal = self.new_journal(journals_before)
            if journal is not None and sum(r["t"] == "intent" for r in read_records(journal)) > 4:
                break
            time.sleep(0.05)
        switched = time.monotonic()
        time.sleep(random.uniform(earliest, within))
        ran = process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait()
        when = (f"{time.monotonic() - switched:.1f} s after the race's first switch" if race
                else f"{time.monotonic() - started:.1f} s after the start")
        journal = self.new_journal(journals_before)
        # a race is rolled back by its id; a one-knob session is restored by the next command, whatever it is
        # (rolled back too only when it had ended, keeping its change, before the kill came)
        wrong = self.settle(journal, rollback=race or not ran)
        if journal is None:
            when += ", before its journal was written"
        if not ran:
            when += ", the session had ended before the kill"
        return wrong + self.after_kill(journal, queue_before), when

    def injected_kill(self, point: str) -> tuple[list[str], str]:
        """A race killed by STACKBENCH_TUNE_CRASH_AT=`point`; for mid-undo, the first rollback is killed at its
        own first undo and a second one finishes. What is wrong after it, and how it went."""
        queue_before = self.plant()
        journals_before = set(self.journals.glob("*.jsonl"))
        killed = self.cli(*self.tune(RACE, "--calibrate-rounds", "0"), crash_at=point)
        journal = self.new_journal(journals_before)
        wrong = [] if killed.returncode == -signal.SIGKILL else [
            f"the session was not killed at {point} (exit {killed.returncode}): the count is past its passes"]
        how = f"{point}"
        if point.startswith("mid-undo") and journal is not None:
            from stackbench.measure.tune_journal import read_records

            first = self.cli("tune", "--rollback", read_records(journal)[0]["id"], crash_at="mid-undo:1")
            how += (", then a rollback killed at its first undo" if first.returncode == -signal.SIGKILL
                    else f", then a rollback that was NOT killed at its first undo (exit {first.returncode})")
            if first.returncode != -signal.SIGKILL:
                wrong.append("the first rollback passed no undo: the session's kill left nothing applied")
            how += " and a second"
        return wrong + self.settle(journal) + self.after_kill(journal, queue_before), how

    def dry_run(self) -> list[str]:
        """`tune` without `--apply`: what it changed or wrote (empty when nothing)."""
        queue_before = self.plant()
        ours = self.state / "stackbench"  # the journals' directory and what --persist writes beside them
        files_before = {ours, *ours.rglob("*")} if ours.exists() else set()
        done = self.cli("tune", "-t", str(self.bench), "--knob", ONE, *PLANTED, *self.common)
        wrong = [] if done.returncode == 0 else [f"exited {done.returncode}: {done.stderr.strip()[-200:]}"]
        wrong += self.queue_and_scratch(queue_before)
        written = ({ours, *ours.rglob("*")} if ours.exists() else set()) - files_before
        if written:
            wrong.append(f"wrote {sorted(str(path) for path in written)}")
        return wrong


def stray_processes(places: list[Path]) -> list[str]:
    """Processes with their working directory, an argument or an open file under `places` (the sessions'
    scratch directory and TMPDIR: nothing of this script's runs outlives them but a stray), as `NAME PID`.
    They are killed, by pid, once named, so that one stray does not fail the kills after it."""
    from stackbench.base import processes

    roots = [str(place) for place in places]

    def under(path: str | None) -> bool:
        path = (path or "").removesuffix(" (deleted)")
        return any(path == root or path.startswith(root + "/") for root in roots)

    found = [pid for pid in processes.pids() if pid != os.getpid()
             and (under(processes.cwd(pid)) or any(map(under, processes.arguments(pid)))
                  or any(map(under, processes.open_files(pid))))]
    named = [f"{processes.command_name(pid)} {pid}" for pid in found]
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return named
