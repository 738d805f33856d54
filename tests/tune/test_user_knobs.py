"""User knobs in a TOML file (`tune --knobs`): the parser's one-line errors (each naming the file, the knob and
the key), a fuzz of it (never a traceback), the argv it builds (a value is one argument, never shell), and the
journal carrying the declaration so that an undo needs no file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import cli_here
from stackbench.base.errors import StackbenchError
from stackbench.measure.tune_journal import Change, Journal, replay
from stackbench.tune import actions
from stackbench.tune.knob import Cost, Safety, Scope, Subject, Undo
from stackbench.tune.user_knobs import KnobFileError, from_journal, parse

VALID = """
[[knob]]
id = "mydb.io_threads"
title = "I/O threads of mydb"
read = ["mydbctl", "get", "io_threads"]
apply = ["mydbctl", "set", "--threads={value}"]
undo = "set-original"
values = [4, 8, 16]
safety = "safe"
cost = "instant"
"""
SUBJECT = Subject("user", "commands")


def test_a_valid_knob_is_a_knob_record_with_its_commands() -> None:
    [knob] = parse(VALID, "k.toml")
    assert (knob.id, knob.scope, knob.safety, knob.cost, knob.undo) == (
        "mydb.io_threads", Scope.USER, Safety.SAFE, Cost.INSTANT, Undo.SET_ORIGINAL)
    assert knob.values.choices == ("4", "8", "16")
    assert [a.argv for a in knob.access.apply(SUBJECT, "8", {"value": "4"})] == [
        ("mydbctl", "set", "--threads=8")]
    assert [a.argv for a in knob.access.undo(knob.undo, SUBJECT, {"value": "4"})] == [
        ("mydbctl", "set", "--threads=4")]


def test_an_undo_argv_gets_the_original_and_number_verify_writes_numbers_one_way() -> None:
    text = VALID.replace('undo = "set-original"', 'undo = ["mydbctl", "reset", "{original}"]\nverify = "number"')
    [knob] = parse(text.replace("[4, 8, 16]", "[4.0, 8, 16.50]"), "k.toml")
    assert knob.undo is Undo.CUSTOM and knob.values.choices == ("4", "8", "16.5")
    assert [a.argv for a in knob.access.undo(knob.undo, SUBJECT, {"value": "4"})] == [("mydbctl", "reset", "4")]
    assert knob.access.parse_output(SUBJECT, "8.0\n") == {"value": "8"}


def _with(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new)


@pytest.mark.parametrize("text, said", [
    ("[[knob]\nid = 1", "k.toml is not valid TOML: Expected ']]' at the end of an array declaration (at line 1"),
    ('title = "x"', "k.toml: unknown top-level key 'title'"),
    ("[knob]\nid = 'a.b'", "k.toml declares no knob as a [[knob]] table"),
    (_with('safety = "safe"\n', ""), "k.toml: knob mydb.io_threads, key 'safety': is missing. Add it: safety ="),
    (_with('cost = "instant"', 'cost = "instant"\ncolour = "red"'), "key 'colour': is not a key of a knob"),
    (_with('cost = "instant"', "cost = 3"), "key 'cost': is an integer, not one of instant, new-writes"),
    (_with('safety = "safe"', 'safety = "risky"'), "key 'safety': is \"risky\", not one of safe, semantic"),
    (_with('undo = "set-original"', 'undo = "mydbctl set io_threads 4"'),
     "key 'undo': is a shell string (\"mydbctl set io_threads 4\"): tune runs argv lists, never a shell string. "
     'Write it as "set-original" or an argv list: undo = ["mydbctl", "set", "io_threads", "4"]'),
    (_with('read = ["mydbctl", "get", "io_threads"]', 'read = "mydbctl get io_threads | tr -d x"'),
     "key 'read': is a shell string"),
    (_with('apply = ["mydbctl", "set", "--threads={value}"]', 'apply = ["mydbctl", "set", "8"]'),
     "key 'apply': does not use {value}"),
    (_with("{value}", "{valeu}"), "key 'apply': word 3 uses the placeholder {valeu}, which apply does not have"),
    (_with('"get", "io_threads"', '"get", "{value}"'), "key 'read': word 3 uses the placeholder {value}"),
    (_with('"get", "io_threads"', '"get", 3'), "key 'read': word 3 is an integer, not a string"),
    (_with('"get", "io_threads"', '"get", "io\\nthreads"'), "key 'read': word 3 holds a newline, NUL"),
    (_with("[4, 8, 16]", '[4, "8\\n16"]'), "key 'values': value 2 holds a newline, NUL or other control character"),
    (_with("[4, 8, 16]", '[4, "8\\u0000"]'), "key 'values': value 2 holds a newline, NUL or other control character"),
    (_with("[4, 8, 16]", "[4, 4]"), "key 'values': value 2 (\"4\") is listed twice"),
    (_with("[4, 8, 16]", "[]"), "key 'values': is a list, not a list of values"),
    (_with("[4, 8, 16]", "[4, {a = 1}]"), "key 'values': value 2 is a table"),
    (_with("[4, 8, 16]", "[4, nan]"), "key 'values': value 2 is nan, not a finite number"),
    (_with('"mydb.io_threads"', '"zfs.sync_fast"'), "knob zfs.sync_fast, key 'id': zfs.sync_fast is in the namespace"),
    (_with('"mydb.io_threads"', '"blockdev.read_ahead_kb"'), "key 'id': blockdev.read_ahead_kb is in the namespace"),
    (_with('"mydb.io_threads"', '"io_threads"'), "knob #1, key 'id': \"io_threads\" is not a namespaced id"),
    (_with('"mydb.io_threads"', '"my db.x; rm"'), "knob #1, key 'id': \"my db.x; rm\" is not a namespaced id"),
    (VALID + VALID, "k.toml: knob mydb.io_threads, key 'id': is declared twice in the file"),
])
def test_every_problem_is_one_line_naming_the_file_the_knob_and_the_key(text: str, said: str) -> None:
    with pytest.raises(KnobFileError) as caught:
        parse(text, "k.toml")
    line = caught.value.one_line()
    assert said in line and "\n" not in line and caught.value.exit_code == 2


FRAGMENTS = [*VALID.splitlines(), "[[knob]]", "[knob]", "undo = ['x', '{original}']", 'verify = "number"',
             'safety = "forbidden"', "values = [true, 1.5, 'a b']", "affects = ['read']", 'doc = """x\ny"""',
             "id = 'a.b.c.d.e'", "read = []", "x = [[1], {a = 2}]", "= 1", '"\\u0000" = 1', "values = [1979-05-27]"]
SCALARS = st.one_of(st.text(max_size=12), st.integers(), st.floats(), st.booleans())
PLAUSIBLE = {
    "id": ["mydb.x", "mydb.y", "zfs.z", "a b.c", "x"], "read": [["cat", "f"], "cat f", [], [""], ["{value}"], [1]],
    "apply": [["set", "{value}"], ["set", "{original}"], ["set"], "set {value}", ["a\nb", "{value}"]],
    "undo": ["set-original", ["reset", "{original}"], ["r", "{value}"], "reset", []],
    "values": [[1, 2], ["a", "b"], [1.5, "x"], [], [True], ["1\n2"], ["\u0000"], [" 1"], [1, 1], [[1]]],
    "safety": ["safe", "forbidden", "tradeoff", "x", 1], "cost": ["instant", "reboot", None],
    "verify": ["equal", "number", "x"], "persistence": ["volatile", "x"], "affects": [["read"], ["x"], "read"],
    "title": ["t", "a\nb", 1], "doc": ["d\ne", "\u0007"], "colour": ["red"],
}


def _toml(value: object) -> str:
    """A value written as TOML (inline tables and arrays: a [[knob]] array is `knob = [{...}]`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value).replace("nan", "nan").replace("inf", "inf")
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return '""'  # None: TOML has no null


KNOB_TABLES = st.dictionaries(st.sampled_from(sorted(PLAUSIBLE)), st.none(), max_size=12).flatmap(
    lambda keys: st.fixed_dictionaries({key: st.one_of(st.sampled_from(PLAUSIBLE[key]), SCALARS) for key in keys}))
DOCUMENTS = st.one_of(
    st.lists(KNOB_TABLES, max_size=3).map(lambda tables: {"knob": tables}),
    KNOB_TABLES.map(lambda table: {"knob": table}),
    st.dictionaries(st.sampled_from(["knob", "title", "x"]), st.one_of(SCALARS, st.lists(SCALARS)), max_size=2),
).map(lambda document: "\n".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in document.items()))
RAW = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=30)), max_size=25).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(DOCUMENTS, RAW))
def test_the_parser_never_raises_anything_but_its_one_line_error(text: str) -> None:
    try:
        knobs = parse(text, "fuzz.toml")
    except KnobFileError as error:
        assert "\n" not in error.one_line() and error.one_line().startswith("fuzz.toml")
        return
    for knob in knobs:  # a valid knob: its commands are argv lists of one-line words
        for action in knob.access.apply(SUBJECT, knob.values.choices[0], {"value": "0"}):
            assert action.argv and all("\n" not in word and "\0" not in word for word in action.argv)


def _recorder(tmp_path: Path) -> tuple[Path, Path]:
    script = tmp_path / "record.py"
    script.write_text("import json, sys\nopen(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))\n")
    return script, tmp_path / "argv.json"


def test_a_value_is_one_argument_and_never_read_by_a_shell(tmp_path: Path) -> None:
    """A value with shell syntax reaches the program as one argument, as written: nothing was expanded."""
    script, seen = _recorder(tmp_path)
    value = "$(touch pwned) a;b `id` *"
    text = f"""[[knob]]
id = "t.x"
read = ["cat", "{tmp_path / 'v'}"]
apply = [{json.dumps(sys.executable)}, {json.dumps(str(script))}, {json.dumps(str(seen))}, "--x={{value}}", "{{value}}"]
undo = "set-original"
values = [{json.dumps(value)}]
safety = "safe"
cost = "instant"
"""
    [knob] = parse(text, "k.toml")
    for action in knob.access.apply(SUBJECT, value, {"value": "0"}):
        actions.run(action)
    assert json.loads(seen.read_text()) == [f"--x={value}", value]
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_the_journal_carries_the_declaration_and_the_knob_is_rebuilt_from_it(tmp_path: Path) -> None:
    [knob] = parse(VALID, str(tmp_path / "k.toml"))
    journal = Journal.create("s1", {"target": "x"}, tmp_path)
    change = Change(1, knob.id, SUBJECT, "8", {"value": "4"}, {"value": "8"},
                    tuple(knob.access.apply(SUBJECT, "8", {})), tuple(knob.access.undo(knob.undo, SUBJECT, {"value": "4"})),
                    knob.access.declaration)
    journal.append(change.intent())
    journal.close()
    [back] = replay(journal.path).changes.values()
    assert back == change
    rebuilt = from_journal(back.declared, str(journal.path))
    assert rebuilt.access.read_argv == knob.access.read_argv and rebuilt.values == knob.values


def test_a_damaged_declaration_in_a_journal_is_one_line_too() -> None:
    with pytest.raises(StackbenchError) as caught:
        from_journal({"id": "mydb.x", "read": "rm -rf /"}, "/j.jsonl")
    assert caught.value.one_line().startswith("the journal /j.jsonl: knob mydb.x, key 'apply': is missing")


@pytest.fixture
def knob_file(tmp_path: Path) -> Path:
    path = tmp_path / "knobs.toml"
    path.write_text(_with('safety = "safe"', 'safety = "safe"\ndoc = "How many threads mydb reads with."')
                    + VALID.replace("mydb.io_threads", "mydb.fsync").replace('"safe"', '"forbidden"'))
    return path


def test_list_and_explain_include_the_files_knobs(knob_file: Path) -> None:
    listed = cli_here("tune", "--list-knobs", "--knobs", str(knob_file), "--json")
    assert listed.returncode == 0, listed.stderr
    mine = {k["id"]: k for k in json.loads(listed.stdout)["knobs"] if k["id"].startswith("mydb.")}
    assert mine["mydb.io_threads"]["declared"]["apply"] == ["mydbctl", "set", "--threads={value}"]
    assert mine["mydb.fsync"]["safety"] == "forbidden"
    explained = cli_here("tune", "--explain-knob", "mydb.io_threads", "--knobs", str(knob_file))
    assert explained.returncode == 0, explained.stderr
    assert "How many threads mydb reads with." in explained.stdout
    assert "apply: mydbctl set '--threads={value}'" in explained.stdout


def test_a_user_knob_needs_its_file_and_a_forbidden_one_is_refused(knob_file: Path, tmp_path: Path) -> None:
    without = cli_here("tune", "-t", str(tmp_path), "--knob", "mydb.io_threads=8")
    assert without.returncode == 2 and "a knob of your own is declared in a file given with --knobs" in without.stderr
    refused = cli_here("tune", "-t", str(tmp_path), "--knobs", str(knob_file), "--knob", "mydb.fsync=8",
                       "--allow", "semantic")
    assert refused.returncode == 2
    assert f"mydb.fsync is declared forbidden in {knob_file}: tune never tries it" in " ".join(refused.stderr.split())
    bad = tmp_path / "bad.toml"
    bad.write_text(_with("[4, 8, 16]", '["4\\n5"]'))
    said = cli_here("tune", "--list-knobs", "--knobs", str(bad))
    assert said.returncode == 2 and said.stderr.count("\n") == 1
    assert f"{bad}: knob mydb.io_threads, key 'values': value 1 holds a newline" in said.stderr.replace("\n", "")


PLAN = ["--rw", "read", "--bs", "4k", "--qd", "1", "--buffered", "--size", "8M", "--runtime", "1", "--ramp", "0",
        "--calibrate-rounds", "0", "--rounds", "2"]


@pytest.fixture
def level_knob(tmp_path: Path) -> tuple[Path, Path]:
    """A user knob over a real program: a Python script that stores a number in a file this test owns."""
    script, level = tmp_path / "level.py", tmp_path / "level"
    script.write_text("import pathlib, sys\nstore = pathlib.Path(sys.argv[1])\n"
                      "if sys.argv[2] == 'get':\n    print(store.read_text().strip())\n"
                      "else:\n    store.write_text(sys.argv[3] + '\\n')\n")
    level.write_text("1\n")
    words = [sys.executable, str(script), str(level)]
    knobs = tmp_path / "knobs.toml"
    knobs.write_text(f"""[[knob]]
id = "test.level"
read = {json.dumps([*words, "get"])}
apply = {json.dumps([*words, "set", "{value}"])}
undo = "set-original"
values = [1, 2, 3]
verify = "number"
safety = "safe"
cost = "instant"
""")
    return knobs, level


def _records(state: Path) -> list[dict]:
    [path] = list((state / "stackbench" / "tune").glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_a_session_measures_a_user_knob_and_its_rollback_restores_it(level_knob, tmpfs_mount, tmp_path) -> None:
    """Real fio rounds on tmpfs, the knob's real program switched between A and B by the journal."""
    from conftest import run_cli

    knobs, level = level_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    done = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level=2", "--apply", "--json",
                   "--db", str(tmp_path / "s.db"), *PLAN, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    [knob] = result["knobs"]
    assert (knob["knob"], knob["from"], knob["to"], knob["rounds"]) == ("test.level", "1", "2", 2)
    records = _records(tmp_path / "state")
    intents = [r for r in records if r["t"] == "intent"]
    assert intents and all(r["declared"]["id"] == "test.level" for r in intents)
    assert len([r for r in records if r["t"] == "undone"]) >= 2  # the reversibility check's undo and round 1's
    back = run_cli("tune", "--rollback", result["session"][:8], env=env)
    assert back.returncode == 0, back.stderr
    assert level.read_text() == "1\n" and list(target.iterdir()) == []


@pytest.mark.parametrize("point", ["after-intent:1", "after-apply:1", "after-apply:2"])
@pytest.mark.slow
def test_kill_9_is_undone_by_the_next_command_from_the_journal_without_the_file(level_knob, tmpfs_mount, tmp_path,
                                                                               point) -> None:
    """STACKBENCH_TUNE_CRASH_AT kills the session with SIGKILL before its apply ran, in the reversibility
    check, and in round 1's switch to B; the TOML file is then removed: the journal alone undoes the change."""
    from conftest import run_cli

    knobs, level = level_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    killed = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level=3", "--apply",
                     "--db", str(tmp_path / "s.db"), *PLAN, env={**env, "STACKBENCH_TUNE_CRASH_AT": point})
    assert killed.returncode == -9, killed.stderr
    assert level.read_text() == ("1\n" if point == "after-intent:1" else "3\n")
    knobs.unlink()
    after = run_cli("tune", "--status", env=env)
    assert after.returncode == 0, after.stderr
    said = " ".join(after.stderr.split())
    assert ("test.level on commands already held its original value (value=1)" if point == "after-intent:1"
            else "test.level on commands set back to value=1") in said, said
    assert level.read_text() == "1\n"
    assert _records(tmp_path / "state")[-1]["t"] == "closed"
    again = run_cli("tune", "--status", env=env)
    assert "test.level" not in again.stderr and level.read_text() == "1\n"


def test_an_undo_whose_program_is_gone_stays_applied_and_rollback_finishes_it(level_knob, tmpfs_mount,
                                                                               tmp_path) -> None:
    """The recovery after kill -9 cannot read the value (the knob's script was moved away): it names the
    command that would restore it and keeps the change open; `--rollback` undoes it once the script is back."""
    from conftest import run_cli

    knobs, level = level_knob
    target, env = tmpfs_mount("64M"), {"XDG_STATE_HOME": str(tmp_path / "state")}
    killed = run_cli("tune", "-t", str(target), "--knobs", str(knobs), "--knob", "test.level=3", "--apply",
                     "--db", str(tmp_path / "s.db"), *PLAN, env={**env, "STACKBENCH_TUNE_CRASH_AT": "after-apply:1"})
    assert killed.returncode == -9 and level.read_text() == "3\n"
    script = tmp_path / "level.py"
    script.rename(tmp_path / "away.py")
    after = run_cli("tune", "--status", "--json", env=env)
    said = " ".join(after.stderr.split())
    assert "test.level on commands could not be undone" in said and f"{script} {level} set 1" in said, said
    [session] = json.loads(after.stdout)["sessions"]
    assert session["left_applied"] == "test.level=3 on commands" and level.read_text() == "3\n"
    (tmp_path / "away.py").rename(script)
    back = run_cli("tune", "--rollback", session["session"], env=env)
    assert back.returncode == 0, back.stderr
    assert "set back to value=1" in back.stdout and level.read_text() == "1\n"


def test_a_user_knob_cannot_try_what_tune_never_tries(tmp_path: Path) -> None:
    """The same table forbids a built-in knob's value and a user knob's apply that sets it (even behind sh -c)."""
    from stackbench.tune.knobs.forbidden import forbidden_value

    text = (_with('apply = ["mydbctl", "set", "--threads={value}"]',
                  'apply = ["sh", "-c", "zfs set sync={value} tank/db"]')
            .replace("[4, 8, 16]", '["standard", "disabled"]'))
    [knob] = parse(text, "k.toml")
    assert [forbidden_value(knob, v).setting for v in ("standard", "disabled")] == ["zfs:sync"] * 2  # type: ignore
    [vm] = parse(_with('"set", "--threads={value}"', '"set", "100", "--scsi0", "local:vm-100-disk-0,cache={value}"')
                 .replace('"mydbctl", "set"', '"qm", "set"'), "k.toml")
    assert forbidden_value(vm, "none") is None and forbidden_value(vm, "unsafe") is not None
    (tmp_path / "k.toml").write_text(text.replace('["mydbctl", "get", "io_threads"]', '["echo", "standard"]'))
    refused = cli_here("tune", "-t", str(tmp_path), "--knobs", str(tmp_path / "k.toml"),
                       "--knob", "mydb.io_threads=disabled", "--allow", "tradeoff")
    assert refused.returncode == 2
    assert "tune never sets mydb.io_threads to disabled: sync=disabled acknowledges" in " ".join(refused.stderr.split())


def test_a_journals_knob_is_rebuilt_even_in_a_namespace_a_later_version_took(tmp_path: Path) -> None:
    """Recovery after an upgrade: the journal's knob is used as declared, never looked up by its id."""
    [knob] = parse(VALID, "k.toml")
    rebuilt = from_journal({**knob.access.declaration, "id": "zfs.io_threads"}, "/j.jsonl")
    assert rebuilt.id == "zfs.io_threads" and rebuilt.access.apply_argv == knob.access.apply_argv


def test_a_number_knob_takes_its_value_written_another_way() -> None:
    from stackbench.measure.tune_plan import parse_knob_option

    [knob] = parse(_with('cost = "instant"', 'cost = "instant"\nverify = "number"'), "k.toml")
    assert parse_knob_option("mydb.io_threads=8.0", {knob.id: knob}) == (knob, "8")
