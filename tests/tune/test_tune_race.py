"""Races over several candidates of one knob (`tune --knob ID=V1,V2,...`), for real: read-ahead of a loop
device's queue under an ext4 file system the test makes, and a user knob over a program that changes nothing
fio can see (the null race). The dry run shows every candidate; a race drops, picks a winner, and the winner
alone is proven against the original afresh; a race killed in the middle is undone from the journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_here, run_cli
from tune import test_tune_session, test_user_knobs
from stackbench.model.plan import RUN_OVERHEAD_S
from tune.test_tune_session import PLAN, QUICK, device_of, journal_records, read_ahead_file

bench = test_tune_session.bench  # the fixture: an ext4 loop device whose read-ahead is planted at 0
null_knob = test_user_knobs.level_knob  # the fixture: a user knob storing 1, 2 or 3 in a file nothing reads

RACE = "blockdev.read_ahead_kb=128,512,2048"


def test_the_dry_run_shows_every_candidate_of_a_race_and_changes_nothing(bench: Path, state: Path) -> None:
    done = cli_here("tune", "-t", str(bench), "--knob", RACE, "--json", *QUICK)
    assert done.returncode == 0, done.stderr
    [knob] = json.loads(done.stdout)["knobs"]
    device = device_of(bench.parent)
    assert knob["to"] == "race: 128, 512, 2048" and [c["to"] for c in knob["race"]] == ["128", "512", "2048"]
    assert knob["race"][1]["apply"] == [f"echo 512 > /sys/block/{device}/queue/read_ahead_kb"]
    assert all(c["undo"] == [f"echo 0 > /sys/block/{device}/queue/read_ahead_kb"] for c in knob["race"])
    assert read_ahead_file(bench.parent).read_text().strip() == "0" and not state.exists()
    table = cli_here("tune", "-t", str(bench), "--knob", "blockdev.read_ahead_kb", *QUICK)  # no value: all raced
    assert "race: 128, 512, 2048, 8192" in table.stdout, table.stdout


def test_the_dry_run_shows_what_a_race_keeps_back_for_its_proof(bench: Path, state: Path) -> None:
    """One cell of 1 s with no ramp: a round is two fio runs of it, the proof's first look 4 of them; a single
    candidate has no proof of its own to keep time for."""
    args = ["tune", "-t", str(bench), "--max-time", "10m", *QUICK]
    plan = json.loads(cli_here(*args, "--knob", RACE, "--json").stdout)
    assert plan["proof_reserve_s"] == pytest.approx(4 * 2 * (1 + RUN_OVERHEAD_S))
    text = " ".join(cli_here(*args, "--knob", RACE).stdout.split())
    assert "each race keeps 12 s of the knobs' time back for its winner's proof (its first look: 4 rounds" in text
    single = json.loads(cli_here(*args, "--knob", "blockdev.read_ahead_kb=128", "--json").stdout)
    assert single["proof_reserve_s"] is None and not state.exists()


@pytest.mark.slow
def test_a_race_out_of_time_leaves_its_winner_the_rounds_of_the_proof_s_first_look(bench: Path, state: Path) -> None:
    """--looks 4,100 and --max-time 60s: the race never decides before its time runs out. It stops with the
    proof's first look (4 rounds at the calibration's round time) kept back; before that reserve the race ran
    to the knobs' deadline and its winner's proof was cut off after 2 rounds, too few to decide."""
    done = cli_here("tune", "-t", str(bench), "--knob", RACE, "--apply", "--json", "--rounds", "100", "--looks",
                    "4,100", "--max-time", "60s", "--no-confirm", "--force", "--calibrate-rounds", "2",
                    "--db", str(bench.parent.parent / "s.db"), *PLAN)
    assert done.returncode == 0, done.stderr
    [knob] = json.loads(done.stdout)["knobs"]
    race = knob["race"]
    assert race["stop"].startswith("out of time (--max-time)") and race["proof_reserve_s"] > 0, race["stop"]
    assert race["winner"] is not None and knob["rounds"] >= 4, (knob["rounds"], knob["stop"])
    cli_here("tune", "--rollback", json.loads(done.stdout)["session"])
    assert read_ahead_file(bench.parent).read_text().strip() == "0"


@pytest.mark.parametrize("knob, said", [
    ("blockdev.read_ahead_kb=128,128", "a value is empty or named twice"),
    ("blockdev.read_ahead_kb=128,7", "'7' is not a value blockdev.read_ahead_kb tries"),
])
def test_a_race_with_a_bad_candidate_is_refused_before_anything_changes(bench, state, knob, said) -> None:
    done = cli_here("tune", "-t", str(bench), "--knob", knob, "--apply", *QUICK)
    assert done.returncode == 2 and said in " ".join(done.stderr.split()), done.stderr
    assert read_ahead_file(bench.parent).read_text().strip() == "0" and not state.exists()


@pytest.mark.slow
def test_a_race_picks_a_winner_that_is_then_proven_against_the_original_with_fresh_rounds(bench, state) -> None:
    """A planted read-ahead of 0 under a 4K buffered sequential read: 128, 512 and 2048 all beat it by far;
    the race measures the original and every candidate in rotated rounds, and its winner's keep comes from
    the proof's own runs, never from the race's."""
    db = str(bench.parent.parent / "s.db")
    done = cli_here("tune", "-t", str(bench), "--knob", RACE, "--apply", "--json", "--db", db, "--rounds", "4",
                    "--no-confirm", *QUICK)
    assert done.returncode == 0, done.stderr
    [knob] = json.loads(done.stdout)["knobs"]
    race = knob["race"]
    assert race["candidates"] == ["128", "512", "2048"] and race["original"] == "0" and race["rounds"] == 4
    assert [sorted(order) for order in race["orders"]] == [["0", "128", "2048", "512"]] * 4  # every arm each round
    assert race["orders"][1] == race["orders"][0][::-1] and race["orders"][2] != race["orders"][0]  # rotated
    assert race["winner"] in race["candidates"] and all(r > 1.05 for r in race["ratios"].values())
    assert knob["to"] == race["winner"] and (knob["decision"], knob["compare"]["verdict"]) == ("kept", "keep")
    proof = {knob["compare"]["base"]["run_id"], knob["compare"]["other"]["run_id"]}
    for run_id in proof:  # the proof's runs are its own: two arms of a fresh paired session
        shown = json.loads(cli_here("show", run_id, "--json", "--db", db).stdout)
        assert "race" not in shown["facts"] and shown["facts"]["ab"]["rounds"] == knob["rounds"]
    assert read_ahead_file(bench.parent).read_text().strip() == race["winner"]
    records = journal_records(state)
    intents = [r for r in records if r["t"] == "intent"]
    assert {r["value"] for r in intents} == {"128", "512", "2048"}
    assert len([r for r in records if r["t"] == "undone"]) == len(intents) - 1  # all but the kept one
    back = cli_here("tune", "--rollback", json.loads(done.stdout)["session"][:8])
    assert back.returncode == 0 and read_ahead_file(bench.parent).read_text().strip() == "0"
    assert list(bench.iterdir()) == []


NULL_PLAN = ["--rw", "read", "--bs", "4k", "--qd", "1", "--buffered", "--size", "8M", "--runtime", "1", "--ramp", "0",
             "--calibrate-rounds", "0", "--rounds", "4"]


@pytest.mark.slow
def test_a_race_of_null_candidates_and_its_proof_keep_nothing(null_knob, tmpfs_mount, tmp_path) -> None:
    """The user knob's own `values` raced (no value named: 2 and 3 against 1). The winner of a race of
    equals is whichever looked best by chance; its proof against the original, from fresh rounds, must not
    keep it (bench/tune_truth.py's null sessions count this at scale)."""
    knobs, level = null_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    done = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level", "--apply", "--json",
                   "--db", str(tmp_path / "s.db"), *NULL_PLAN, env=env)
    assert done.returncode == 0, done.stderr
    [knob] = json.loads(done.stdout)["knobs"]
    assert knob["race"]["candidates"] == ["2", "3"]  # a drop of an equal arm is allowed (alpha), a keep not
    assert knob["decision"] != "kept" and level.read_text() == "1\n"


@pytest.mark.slow
def test_a_race_whose_arms_are_all_the_same_stops_and_keeps_the_original(null_knob, tmpfs_mount, tmp_path) -> None:
    """Null candidates and a --min-effect of 50 %: at the look every pair's interval lies within +-50 %, so no
    candidate can be proven better; the race stops there and no proof is run (before, the chance winner of
    a race of equals was proven against the original all the same). The arms are made the same in fact, not
    only in expectation: fio is capped at 2,000 IOPS (--rate-iops), which a buffered read from tmpfs reaches
    even on a loaded machine; uncapped, 6 rounds of 1 s under CI load spread past +-50 % at Holm's level
    (seen twice: "2 candidates left at the last look"), which is the race's right answer for noisy arms,
    not the case this test is about."""
    knobs, level = null_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    done = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level", "--apply", "--json",
                   "--db", str(tmp_path / "s.db"), "--min-effect", "50", *NULL_PLAN[:-2], "--rate-iops", "2000",
                   "--rounds", "6", "--looks", "6", env=env)
    assert done.returncode == 0, done.stderr
    [knob] = json.loads(done.stdout)["knobs"]
    race = knob["race"]
    assert race["stop"].startswith("all remaining candidates within ±50 % of each other"), race["stop"]
    assert race["winner"] is None and race["looks"][-1]["all_same"] and race["rounds"] == 6
    assert knob["decision"] == "undone" and "compare" not in knob and knob["why"] == race["stop"]
    assert level.read_text() == "1\n"


@pytest.mark.parametrize("point", ["after-apply:4", "after-apply:6"])
@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_race_is_rolled_back_to_the_snapshot(null_knob, tmpfs_mount, tmp_path,
                                                                       point) -> None:
    """Two candidates: the reversibility checks make applies 1-2, the race's switches the next ones; the
    injected SIGKILL strands a candidate applied mid-race; `--rollback SESSION` restores the original (the
    snapshot of the knob's every view) and closes the journal; the next command that opens the session's store
removes the killed runs' scratch file (abandoned.py), as after any kill."""
    knobs, level = null_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    killed = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level=2,3", "--apply",
                     "--db", str(tmp_path / "s.db"), *NULL_PLAN, env={**env, "STACKBENCH_TUNE_CRASH_AT": point})
    assert killed.returncode == -9, killed.stderr
    assert level.read_text() != "1\n"  # a candidate is left applied by the kill
    [journal] = list((tmp_path / "state" / "stackbench" / "tune").glob("*.jsonl"))
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len([r for r in records if r["t"] == "intent"]) > 2  # past the reversibility checks: in the race
    back = run_cli("tune", "--rollback", records[0]["id"], env=env)
    assert back.returncode == 0, back.stderr
    assert level.read_text() == "1\n"
    assert json.loads(journal.read_text().splitlines()[-1])["t"] == "closed"
    run_cli("runs", "--db", str(tmp_path / "s.db"), env=env)  # the store's next command settles its killed runs
    assert list(target.iterdir()) == []


def test_the_report_shows_each_candidate_of_a_race_its_fate_and_the_winner_s_proof() -> None:
    from stackbench.report.tune import race_tables, summary_table

    race = {"original": "0", "candidates": ["128", "512", "8192"], "rounds": 6, "alpha_looks": [0.0049, 0.0451],
            "not_raced": [{"value": "8192", "why": "the reversibility check failed: x"}],
            "dropped": [{"value": "128", "round": 4, "behind": "512", "ratio": 0.8, "why": "worse than 512 at alpha"}],
            "ratios": {"128": 2.0, "512": 2.5}, "winner": "512", "stop": "one candidate left at round 4"}
    knob = {"knob": "blockdev.read_ahead_kb", "subjects": ["loop0"], "from": "0", "to": "512", "rounds": 4,
            "decision": "kept", "why": "significantly better", "stop": "", "race": race}
    [table] = race_tables({"knobs": [knob]})
    assert table.rows == [["128", "+100.0%", "dropped at round 4", "worse than 512 at alpha"],
                          ["512", "+150.0%", "winner", "proven against the original afresh: significantly better"],
                          ["8192", "-", "not raced", "the reversibility check failed: x"]]
    assert "the verdict is the proof's, from fresh rounds" in table.notes[1]
    assert "alpha 0.0049, 0.0451 at its looks (O'Brien-Fleming), Holm over each look's pairs" in table.notes[0]
    before = {k: v for k, v in race.items() if k != "alpha_looks"} | {"alpha_per_look": 0.0125}  # stored before
    [old] = race_tables({"knobs": [{**knob, "race": before}]})
    assert "alpha 0.0125 per look, split over its pairs" in old.notes[0]
    summary = summary_table({"session": "s" * 32, "target": "t", "knobs": [knob], "now_set": []})
    assert summary.rows[0][2] == "0 -> 512 (won a race of 3)"
    assert race_tables({"knobs": [{**knob, "race": [{"to": "128"}]}]}) == ()  # a dry run's plan: no race run yet
