"""`stackbench tune` end to end on a real loop device with ext4: the dry run, the refusals, a planted bad
read-ahead found and kept, Ctrl-C and kill -9 in the middle of the rounds restoring the original value, and
the reversibility check catching an undo that does not restore (real kernel settings of a device each test
creates; never a host-wide one); a session stored when it ends and printed again by `show`."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_here, run_cli
from stackbench.analysis.alpha_spending import look_alphas
from stackbench.base import processes
from stackbench.model.plan import RUN_OVERHEAD_S

PLAN = ["--rw", "read", "--bs", "4k", "--qd", "1", "--buffered", "--size", "16M", "--runtime", "1", "--ramp", "0"]
QUICK = [*PLAN, "--calibrate-rounds", "0"]  # calibration has tests of its own; this shared machine is too noisy


def device_of(mount_point: Path) -> str:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[4] == str(mount_point):
            return line.split(" - ")[1].split()[1].removeprefix("/dev/")
    raise AssertionError(f"{mount_point} is not mounted")


def read_ahead_file(mount_point: Path) -> Path:
    return Path(f"/sys/block/{device_of(mount_point)}/queue/read_ahead_kb")


@pytest.fixture
def bench(ext4_loop: Path) -> Path:
    directory = ext4_loop / "bench"
    directory.mkdir()
    read_ahead_file(ext4_loop).write_text("0")
    return directory


def journal_records(state: Path) -> list[dict]:
    [path] = list(state.glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_dry_run_shows_the_commands_and_changes_nothing(bench: Path, state: Path) -> None:
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--json", *QUICK)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    device = device_of(bench.parent)
    assert plan["dry_run"] and plan["knobs"][0]["apply"] == [f"echo 128 > /sys/block/{device}/queue/read_ahead_kb"]
    assert plan["knobs"][0]["undo"] == [f"echo 0 > /sys/block/{device}/queue/read_ahead_kb"]
    assert read_ahead_file(bench.parent).read_text().strip() == "0" and not state.exists()


@pytest.mark.parametrize("knob,said,code", [
    ("mount.atime=noatime", "mount.atime is a semantic knob", 2),
    ("mount.commit=60", "mount.commit is a tradeoff knob", 2),
    ("zfs.sync=disabled", "tune never tries zfs.sync", 2),
    ("blockdev.read_ahead_kb=3", "'3' is not a value blockdev.read_ahead_kb tries", 2),
    ("zfs.compression=lz4", "zfs.compression does not apply to", 2),
])
def test_a_knob_that_may_not_be_tried_is_refused_before_anything_changes(bench, state, knob, said, code) -> None:
    before = (bench.parent / "x").exists(), read_ahead_file(bench.parent).read_text()
    done = cli_here("tune", "-t", str(bench), "--knob", knob, "--apply", "--db", str(bench.parent.parent / "s.db"), *QUICK)
    assert done.returncode == code and said in " ".join(done.stderr.split()) and done.stderr.count("\n") == 1
    assert not state.exists() and ((bench.parent / "x").exists(), read_ahead_file(bench.parent).read_text()) == before


def test_the_reversibility_check_catches_an_undo_that_does_not_restore(ext4_loop: Path, state: Path) -> None:
    """The obvious undo of noatime, `mount -o remount,relatime MOUNTPOINT`, exits 0 and leaves noatime
    (docs/tune.md, "Undos that do not undo"): a knob declared with that undo fails the check before anything is measured; the
    catalogue's mount.atime passes it. The naive knob is a declaration made here; the mounts are real."""
    from stackbench.measure.tune_changes import Changes
    from stackbench.measure.tune_journal import Journal
    from stackbench.measure.tune_session import check_reversible, reversibility_failure
    from stackbench.measure.tune_plan import plan_knob
    from stackbench.tune.access.mount import ATIME
    from stackbench.tune.actions import ActionFailed
    from stackbench.tune.knob import Safety, argv
    from stackbench.tune.knobs import BY_ID
    from stackbench.tune.subjects import target_info

    class NaiveUndo:
        def __getattr__(self, name: str):  # noqa: ANN204 - everything as mount.atime declares it
            return getattr(ATIME, name)

        def undo(self, strategy, subject, original):  # noqa: ANN001, ANN201
            return [argv("mount", "-o", f"remount,{original['atime']}", subject.name)]

    subprocess.run(["mount", "-o", "remount,atime,relatime", str(ext4_loop)], check=True)
    info = target_info(ext4_loop)
    good = plan_knob(BY_ID["mount.atime"], "noatime", info, frozenset({Safety.SEMANTIC}))
    changes = Changes(Journal.create("r1", {"target": str(ext4_loop)}))
    kept = plan_knob(BY_ID["blockdev.read_ahead_kb"], "8192", info, frozenset())
    changes.apply(kept.knob, kept.subjects[0], "8192")  # a knob kept before: the failure below leaves it alone
    assert reversibility_failure(changes, good) is None
    naive = dataclasses.replace(good, knob=dataclasses.replace(BY_ID["mount.atime"], access=NaiveUndo()))
    try:
        with pytest.raises(ActionFailed, match="atime=noatime, not the original atime=relatime"):
            check_reversible(changes, naive)
        said = reversibility_failure(changes, naive)
        assert said and said.startswith("the reversibility check failed: undoing mount.atime")
        assert read_ahead_file(ext4_loop).read_text().strip() == "8192"
    finally:
        subprocess.run(["mount", "-o", "remount,atime,relatime", str(ext4_loop)], check=True)


@pytest.mark.slow
def test_a_planted_read_ahead_of_0_is_found_kept_and_rolled_back_on_demand(bench: Path, state: Path) -> None:
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json",
                    "--db", str(bench.parent.parent / "s.db"), *QUICK)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    knob = result["knobs"][0]
    assert (knob["decision"], knob["compare"]["verdict"]) == ("kept", "keep")
    assert knob["stop"].startswith("decided at look") and knob["orders"] == ["AB", "BA"] * (knob["rounds"] // 2)
    looks = (4, 6, 8, 12)  # the default; each look tested at its O'Brien-Fleming share of alpha
    assert knob["stop"].endswith(f"at alpha {look_alphas(looks, 0.05)[looks.index(knob['rounds'])]:.4g}")
    low, high = knob["compare"]["geomean_ratio_ci"]
    assert low > 1.05
    assert read_ahead_file(bench.parent).read_text().strip() == "128"
    device = device_of(bench.parent)
    assert result["persist"] == [f'/etc/udev/rules.d/60-stackbench-tune.rules: ACTION=="add|change", '
                                 f'KERNEL=="{device}", ATTR{{queue/read_ahead_kb}}="128"']
    confirmation = result["confirmation"]
    assert (confirmation["decision"], confirmation["compare"]["verdict"]) == ("kept", "keep"), confirmation
    assert confirmation["compare"]["geomean_ratio_ci"][0] > 1.05 and confirmation["rounds"] % 2 == 0
    records = journal_records(state)
    kept = max(r["seq"] for r in records if r["t"] == "intent")
    assert records[-1] == {"v": 1, "t": "closed", "how": "completed", "left_applied": [kept]}
    assert [r["seq"] for r in records if r["t"] == "undone"] == list(range(1, kept))
    back = cli_here("tune", "--rollback", result["session"][:8])
    assert back.returncode == 0 and read_ahead_file(bench.parent).read_text().strip() == "0"
    assert list(bench.iterdir()) == []  # the scratch file is gone


def _started_session(bench: Path, env: dict[str, str], *, relative: bool = False) -> subprocess.Popen:
    """The session measures `bench`, named as `bench`'s name from its parent directory with `relative`."""
    return subprocess.Popen([sys.executable, "-m", "stackbench", "tune", "-t", bench.name if relative else str(bench),
                             "--knob", "blockdev.read_ahead_kb=128", "--apply", "--rounds", "20", "--db",
                             str(bench.parent.parent / "s.db"), *QUICK], env={**os.environ, **env},
                            cwd=bench.parent if relative else None, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait_until_measuring_b(state: Path, process: subprocess.Popen) -> None:
    """Until the second switch to B is applied: the reversibility check is behind, rounds are running."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        paths = list(state.glob("*.jsonl"))
        if paths and sum(1 for r in journal_records(state) if r["t"] == "applied") >= 2:
            return
        time.sleep(0.05)
    raise AssertionError("the session never reached its rounds")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interruption_in_the_rounds_restores_the_original_and_exits_130(bench, state, sig) -> None:
    process = _started_session(bench, {"XDG_STATE_HOME": str(state.parent.parent)})
    try:
        _wait_until_measuring_b(state, process)
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "set back to read_ahead_kb=0" in " ".join(stderr.split())
    assert read_ahead_file(bench.parent).read_text().strip() == "0"
    assert journal_records(state)[-1]["how"] == "interrupted" and journal_records(state)[-1]["left_applied"] == []
    db = str(bench.parent.parent / "s.db")  # stored as interrupted, with what it had: the knob was not decided
    [stored] = json.loads(cli_here("runs", "--kind", "tune", "--json", "--db", db).stdout)["tunes"]
    assert (stored["status"], stored["knobs"]) == ("interrupted", 0)
    shown = json.loads(cli_here("show", stored["tune_id"], "--json", "--db", db).stdout)
    assert shown["status"] == "interrupted" and "set back to read_ahead_kb=0" in shown["error"]
    assert "the session was interrupted: " in " ".join(cli_here("show", stored["tune_id"], "--db", db).stdout.split())


@pytest.mark.slow
def test_kill_9_in_the_rounds_is_restored_by_the_next_command(bench, state) -> None:
    env = {"XDG_STATE_HOME": str(state.parent.parent)}
    process = _started_session(bench, env)
    try:
        _wait_until_measuring_b(state, process)
        while read_ahead_file(bench.parent).read_text().strip() != "128":
            time.sleep(0.01)  # B applied: the kill strands it
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert read_ahead_file(bench.parent).read_text().strip() == "128"
    after = run_cli("tune", "--status", env=env)
    assert "set back to read_ahead_kb=0" in " ".join(after.stderr.split()), after.stderr
    assert read_ahead_file(bench.parent).read_text().strip() == "0"
    assert journal_records(state)[-1]["t"] == "closed"


@pytest.mark.slow
def test_kill_9_then_a_rollback_elsewhere_leaves_no_scratch_file_and_no_fio(bench, state) -> None:
    """The session's journal names its scratch file, by its absolute path though the target was typed relative,
    and the fio that writes it, so `tune --rollback` run from another directory, which opens no store (where
    the dead run's record of them is), stops that fio and removes the file: before, they stayed until a
    command opened that store."""
    env = {"XDG_STATE_HOME": str(state.parent.parent)}
    process = _started_session(bench, env, relative=True)
    try:
        _wait_until_measuring_b(state, process)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        process.kill()
    [scratch] = list(bench.iterdir())
    assert journal_records(state)[0]["scratch"] == str(scratch)
    [journal] = list(state.glob("*.jsonl"))
    back = run_cli("tune", "--rollback", journal.stem, env=env)
    assert back.returncode == 0, back.stderr
    assert list(bench.iterdir()) == [] and read_ahead_file(bench.parent).read_text().strip() == "0"
    assert [pid for pid in processes.pids() if str(scratch) in processes.open_files(pid)] == []
    assert journal_records(state)[-1]["t"] == "closed"


def test_a_kept_change_of_a_class_that_needed_allow_says_what_it_gives_up() -> None:
    """decide(): a proven gain of a tradeoff knob is kept (its class was allowed) and the reason says LESS SAFE;
    one that compare marks less safe is undone unless tradeoffs were allowed. The comparison is a stand-in
    holding only what decide() reads (verdict, rows, safety): a real one of a tradeoff knob needs minutes of fio
    and a host-wide or remount setting."""
    from types import SimpleNamespace

    from stackbench.measure.tune_session import KEPT, UNDONE_DECISION, decide
    from stackbench.tune.knob import Safety
    from stackbench.tune.knobs import BY_ID

    gain = SimpleNamespace(verdict="keep", reason="significantly better", rows=(),
                           safety=SimpleNamespace(less_safe=None))
    decision, why = decide(gain, BY_ID["mount.commit"], frozenset({Safety.TRADEOFF}))  # type: ignore[arg-type]
    assert decision == KEPT and "LESS SAFE: a tradeoff change" in why
    assert decide(gain, BY_ID["blockdev.read_ahead_kb"], frozenset())[1] == "significantly better"  # type: ignore[arg-type]
    unsafe = SimpleNamespace(**{**vars(gain), "safety": SimpleNamespace(less_safe="B")})
    assert decide(unsafe, BY_ID["blockdev.read_ahead_kb"], frozenset())[0] == UNDONE_DECISION  # type: ignore[arg-type]


def test_looks_are_even_rounds_up_to_the_most_rounds(bench: Path, state: Path) -> None:
    from stackbench.base.errors import UsageError
    from stackbench.measure.tune_plan import looks_for

    assert looks_for(12) == (4, 6, 8, 12) and looks_for(6) == (4, 6) and looks_for(20) == (4, 6, 8, 12, 20)
    with pytest.raises(UsageError, match="every look must be an even round"):
        looks_for(12, (3, 5, 8, 12))
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--looks", "3,5", *QUICK)
    assert done.returncode == 2 and "even round" in done.stderr


def test_a_journal_on_the_file_system_under_test_is_refused(bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(bench.parent / "state"))
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply",
                    "--db", str(bench.parent.parent / "s.db"), *QUICK)
    assert done.returncode == 1 and "on the file system under test" in done.stderr and done.stderr.count("\n") == 1
    assert read_ahead_file(bench.parent).read_text().strip() == "0" and not (bench.parent / "state").exists()


@pytest.mark.slow
def test_max_time_ends_the_session_with_the_settings_as_they_were(bench: Path, state: Path) -> None:
    """A budget too short for the first knob: it is reported as not measured, nothing stays changed."""
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json",
                    "--max-time", "1ms", "--db", str(bench.parent.parent / "s.db"), *QUICK)
    assert done.returncode == 0, done.stderr
    knob = json.loads(done.stdout)["knobs"][0]
    assert (knob["decision"], knob["why"]) == ("not measured", "--max-time was reached before it started")
    assert read_ahead_file(bench.parent).read_text().strip() == "0"
    assert journal_records(state)[-1]["left_applied"] == []


@pytest.mark.slow
def test_max_time_stops_a_knob_after_an_even_round_and_decides_on_what_it_has(bench: Path, state: Path) -> None:
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json",
                    "--rounds", "100", "--looks", "100", "--max-time", "8s", "--db", str(bench.parent.parent / "s.db"),
                    *QUICK)
    assert done.returncode == 0, done.stderr
    knob = json.loads(done.stdout)["knobs"][0]
    assert knob["stop"].startswith("out of time (--max-time) after round") and knob["stop"].endswith(str(knob["rounds"]))
    assert knob["rounds"] % 2 == 0 and 2 <= knob["rounds"] < 20 and knob["compare"] is not None
    if knob["decision"] == "kept":  # no time left to confirm it: undone
        assert json.loads(done.stdout)["confirmation"]["why"].startswith("--max-time left no time to confirm")
        assert read_ahead_file(bench.parent).read_text().strip() == "0"
    cli_here("tune", "--rollback", json.loads(done.stdout)["session"])


@pytest.mark.slow
def test_calibration_says_the_noise_and_refuses_an_effect_it_cannot_prove(bench: Path, state: Path) -> None:
    """A/A rounds before any change: with --min-effect 0.1 % a session stops with the advice and changes
    nothing when the calibration says more than 3 x 0.1 % is what 12 rounds could prove (almost always: page
    cache reads of a quiet machine once came under it, and went on, as the rule says); with --force it goes
    on and reports the noise."""
    db = str(bench.parent.parent / "s.db")
    refused = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json",
                       "--calibrate-rounds", "2", "--min-effect", "0.1", "--db", db, *PLAN)
    if refused.returncode == 0:  # measured, not assumed: the noise allowed it, so the rule let the session go on
        went_on = json.loads(refused.stdout)
        assert went_on["calibration"]["provable"] <= 3 * 0.001
        cli_here("tune", "--rollback", went_on["session"])
    else:
        error = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
        assert refused.returncode == 1 and len(error) == 1 and "too noisy now to prove a change of 0.1%" in error[0]
        assert "add --force" in error[0] and "undid" not in error[0]  # nothing had changed: no word about undoing
        assert [r["t"] for r in journal_records(state)] == ["session", "closed"]
    assert read_ahead_file(bench.parent).read_text().strip() == "0"
    forced = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json", "--force",
                      "--calibrate-rounds", "2", "--min-effect", "0.1", "--db", db, *PLAN)
    assert forced.returncode == 0, forced.stderr
    calibration = json.loads(forced.stdout)["calibration"]
    assert calibration["rounds"] == 2 and calibration["noise"] > 0 and calibration["provable"] > 0
    cli_here("tune", "--rollback", json.loads(forced.stdout)["session"])


def test_the_plan_tries_derived_candidates_not_their_description(bench: Path) -> None:
    """A knob whose candidates come from the state read (zfs_dirty_data_max's multiples) was planned with the
    words that describe them ('x2'). Here a read-ahead knob declared the same way, on a real device."""
    from stackbench.measure.tune_plan import plan_knob
    from stackbench.tune.knob import Values
    from stackbench.tune.knobs import BY_ID
    from stackbench.tune.subjects import target_info

    read_ahead_file(bench.parent).write_text("64")
    doubling = dataclasses.replace(BY_ID["blockdev.read_ahead_kb"], values=Values(
        ("x2",), derive=lambda subject, original: (str(2 * int(original["read_ahead_kb"])),)))
    planned = plan_knob(doubling, None, target_info(bench), frozenset())
    assert planned.value == "128" and planned.apply == (f"echo 128 > {read_ahead_file(bench.parent)}",)


KNOB = ["--knob", "blockdev.read_ahead_kb=128"]


@pytest.mark.slow
def test_show_prints_a_stored_session_as_it_was_printed_and_runs_lists_it(bench: Path, state: Path) -> None:
    """A session is stored when it ends, in its --db store; `show ID` prints the same summary and comparison
    tables (compare's made again from the arms' stored runs) and the same JSON; `runs` lists it with its kind,
    `rm` removes it; a dry run is never stored."""
    db = str(bench.parent.parent / "s.db")
    dry = cli_here("tune", "-t", str(bench), *KNOB, "--db", db, *QUICK)
    assert dry.returncode == 0, dry.stderr
    # the cheapest real session: two rounds per knob (and per confirmation), one second of fio per arm
    session = cli_here("tune", "-t", str(bench), *KNOB, "--apply", "--rounds", "2", "--db", db, *QUICK)
    assert session.returncode == 0, session.stderr
    title = session.stdout.splitlines()[0]
    assert title.startswith("stackbench tune "), session.stdout
    session_id = title.split()[2]
    shown = cli_here("show", session_id, "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == session.stdout  # the summary, then compare's table of the knob's (and confirmation's) runs
    assert shown.stdout.count("Verdict:") >= 1
    data = json.loads(cli_here("show", session_id, "--json", "--db", db).stdout)
    assert data["session"].startswith(session_id) and data["status"] == "completed" and data["error"] is None
    knob = data["knobs"][0]
    assert knob["knob"] == "blockdev.read_ahead_kb" and knob["rounds"] == 2 and knob["compare"] is not None
    cli_here("tune", "--rollback", data["session"])
    # a second session, in JSON: what `show --json` prints is the document the session printed
    quick = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=512", "--apply", "--json",
                     "--max-time", "1ms", "--label", "ra512", "--db", db, *QUICK)
    assert quick.returncode == 0, quick.stderr
    printed = json.loads(quick.stdout)
    assert json.loads(cli_here("show", "ra512", "--json", "--db", db).stdout) == printed
    listed = json.loads(cli_here("runs", "--kind", "tune", "--json", "--db", db).stdout)
    assert [(t["tune_id"], t["status"], t["label"], t["knobs"]) for t in listed["tunes"]] == [
        (printed["session"], "completed", "ra512", 1), (data["session"], "completed", None, 1)]  # the dry run: none
    assert listed["runs"] == []
    everything = list(csv.reader(io.StringIO(cli_here("runs", "--format", "csv", "--db", db).stdout)))
    kinds = {row[0]: row[-1] for row in everything[1:]}  # among the arms' runs, with their Kind
    assert kinds[data["session"]] == "tune" and list(kinds.values()).count("run") >= 2
    removed = cli_here("rm", printed["session"][:8], "--yes", "--json", "--db", db)
    assert json.loads(removed.stdout) == {"deleted": [printed["session"]]}
    assert cli_here("show", printed["session"], "--db", db).returncode == 1
    assert cli_here("show", session_id, "--db", db).stdout == session.stdout  # the other one and its runs stay


def test_show_leaves_out_a_comparison_whose_runs_were_removed_and_says_so(tmp_path: Path) -> None:
    """A stored session whose arms' runs are gone (removed with `rm`): its summary is printed, the missing
    comparison is named on stderr, and the session is removed by its label."""
    from datetime import datetime, timezone

    from stackbench.model.results import new_id
    from stackbench.store import Store
    from store.test_tune_sessions_store import session_document

    db = str(tmp_path / "s.db")
    session_id = new_id()
    store = Store(db)
    store.add_tune_session(session_id=session_id, label="gone", status="failed", created_at=datetime.now(timezone.utc),
                           finished_at=None, document={**session_document(session_id), "status": "failed",
                                                       "error": "fio failed; nothing had been changed"})
    store.dispose()
    shown = cli_here("show", "gone", "--db", db)
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert said.startswith(f"stackbench tune {session_id[:12]} on /mnt/bench (ext4 on loop2)")
    assert "the session failed: fio failed; nothing had been changed" in said and "Verdict:" not in said
    assert " ".join(shown.stderr.split()) == ("Warning: the runs of blockdev.read_ahead_kb are no longer stored: "
                                              "its comparison table is left out")
    assert json.loads(cli_here("rm", "gone", "--yes", "--json", "--db", db).stdout) == {"deleted": [session_id]}


def test_the_dry_run_shows_the_reserve(bench: Path, state: Path) -> None:
    """One cell of 1 s with no ramp: a round is two fio runs of it, the first look 4 of them."""
    args = ["tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--max-time", "10m", *QUICK]
    done = cli_here(*args, "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["max_time_s"] == 600 and plan["confirmation_reserve_s"] == pytest.approx(4 * 2 * (1 + RUN_OVERHEAD_S))
    text = cli_here(*args)
    assert text.returncode == 0, text.stderr
    assert "12 s of it kept for the confirmation (its first look: 4 rounds" in " ".join(text.stdout.split())
    without = json.loads(cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--json",
                                  *QUICK).stdout)
    assert without["confirmation_reserve_s"] is None and not state.exists()


@pytest.mark.slow
def test_a_knob_that_cannot_decide_leaves_time_to_confirm_what_it_kept(bench: Path, state: Path) -> None:
    """--looks 100: the knob is read only when time runs out, on the rounds it has; before the reserve it
    used the whole budget and the kept set was undone unconfirmed."""
    done = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb=128", "--apply", "--json",
                    "--rounds", "100", "--looks", "100", "--max-time", "60s",
                    "--db", str(bench.parent.parent / "s.db"), *QUICK)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    knob = result["knobs"][0]
    assert knob["stop"].startswith("out of time (--max-time)") and knob["decision"] == "kept", (knob["why"], knob["stop"], knob["rounds"])
    confirmation = result["confirmation"]
    assert confirmation["rounds"] >= 2 and confirmation["compare"] is not None, confirmation
    assert not confirmation["why"].startswith("--max-time left no time")
    cli_here("tune", "--rollback", result["session"])
    assert read_ahead_file(bench.parent).read_text().strip() == "0"
