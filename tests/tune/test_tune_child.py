"""The journal replay of a session's child dataset (measure/tune_child.py), host-side: its creation is a
journaled change whose undo destroys only the child this session marked, a rollback after a real kill -9
destroys it, and the scratch file a session names after its header (in its child) is known to the replay.

A fake `zfs` (a script on PATH keeping its datasets in a JSON file) stands in for OpenZFS, which this
machine does not have: it answers the three commands the child's access runs (`zfs list -H -o
name,stackbench:session -t filesystem -d 1`, `zfs create -o stackbench:session=ID`, `zfs destroy`) and
`zfs get mountpoint,mounted`, and logs every call. tests/tune/test_tune_guest.py runs the same on real
OpenZFS 2.1 and 2.3 in the lab guests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.measure.tune_changes import Changes, recover
from stackbench.measure.tune_child import SessionChild, choose_child, child_name
from stackbench.measure.tune_journal import Journal, journal_dir, read_records, record_scratch, replay
from stackbench.measure.tune_plan import PlannedKnob
from stackbench.tune.knob import Subject
from stackbench.tune.knobs import BY_ID
from stackbench.tune.subjects import TargetInfo

SRC = str(Path(__file__).resolve().parents[2] / "src")
PARENT = "tank/vm"

FAKE_ZFS = r'''#!{python}
import json, os, shutil, sys
state_path = os.environ["FAKE_ZFS_STATE"]
state = json.load(open(state_path))
with open(state_path + ".log", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
datasets, props, mounts = state["datasets"], state.setdefault("props", {}), state.setdefault("mounts", {})
DEFAULTS = {"compression": "off", "atime": "on", "recordsize": "131072"}


def mountpoint(name):
    if name in mounts:
        return mounts[name]
    parent, _, last = name.rpartition("/")
    return mountpoint(parent) + "/" + last if parent else "/" + name


def get(name, prop):
    holder = name
    while holder:
        if prop in props.get(holder, {}):
            return props[holder][prop], "local" if holder == name else "inherited from " + holder
        holder = holder.rpartition("/")[0]
    return DEFAULTS[prop], "default"


if args[:2] == ["list", "-H"]:
    parent = args[-1]
    for name, mark in sorted(datasets.items()):
        if name == parent or (name.startswith(parent + "/") and "/" not in name[len(parent) + 1:]):
            print(name + "\t" + (mark or "-"))
elif args[0] == "create":
    name, mark = args[-1], None
    if "-o" in args:
        mark = args[args.index("-o") + 1].split("=", 1)[1]
    if name in datasets:
        sys.exit("cannot create '%s': dataset already exists" % name)
    datasets[name] = mark
    if name.rpartition("/")[0] in mounts:
        os.mkdir(mountpoint(name))
elif args[0] == "destroy":
    if args[-1] not in datasets:
        sys.exit("cannot open '%s': dataset does not exist" % args[-1])
    del datasets[args[-1]]
    props.pop(args[-1], None)
    shutil.rmtree(mountpoint(args[-1]), ignore_errors=True)
elif args[0] == "get" and args[-2] == "mountpoint,mounted":
    print(state.get("mountpoint", mountpoint(args[-1])))
    print(state.get("mounted", "yes"))
elif args[0] == "get":
    print("\t".join(get(args[-1], args[-2])))
elif args[0] == "set":
    prop, value = args[1].split("=", 1)
    props.setdefault(args[2], {})[prop] = value
elif args[0] == "inherit":
    props.get(args[2], {}).pop(args[1], None)
else:
    sys.exit("fake zfs: not a command it knows: " + " ".join(args))
json.dump(state, open(state_path, "w"))
'''


@pytest.fixture
def zfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake zfs's state file, holding the parent dataset; PATH finds the fake first."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "zfs"
    script.write_text(FAKE_ZFS.replace("{python}", sys.executable))
    script.chmod(0o755)
    state = tmp_path / "zfs.json"
    state.write_text(json.dumps({"datasets": {PARENT: None}}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ZFS_STATE", str(state))
    return state


def datasets(state: Path) -> dict[str, str | None]:
    return json.loads(state.read_text())["datasets"]


def calls(state: Path) -> list[str]:
    log = Path(f"{state}.log")
    return log.read_text().splitlines() if log.exists() else []


MAKER = """
import sys, time
from stackbench.measure.tune_changes import Changes
from stackbench.measure.tune_child import SessionChild
from stackbench.measure.tune_journal import Journal
session, parent = sys.argv[1:3]
changes = Changes(Journal.create(session, {"target": "/" + parent}))
SessionChild(changes, parent, session).create()
print("made", flush=True)
time.sleep(600)
"""


def made_then_killed(session: str, crash_at: str | None = None) -> None:
    """A process that makes the session's child and is killed with SIGKILL: by the test once it says so, or
    by itself at an injected crash point (tune_changes.crash_point)."""
    env = {**os.environ, "PYTHONPATH": SRC, **({"STACKBENCH_TUNE_CRASH_AT": crash_at} if crash_at else {})}
    process = subprocess.Popen([sys.executable, "-c", MAKER, session, PARENT], stdout=subprocess.PIPE, text=True,
                               env=env)
    try:
        if crash_at is None:
            assert process.stdout is not None and process.stdout.readline().strip() == "made"
            process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        process.kill()


def test_a_killed_sessions_child_is_destroyed_by_the_next_command(zfs: Path, state: Path) -> None:
    """The child's intent is in the journal before `zfs create` ran, with its mark; after a real kill -9 the
    recovery every command makes destroys it, and closes the journal."""
    session = "a1" * 16
    made_then_killed(session)
    name = child_name(PARENT, session)
    assert datasets(zfs) == {PARENT: None, name: session}
    notes: list[str] = []
    assert recover(notes.append) is False
    assert datasets(zfs) == {PARENT: None}
    assert f"destroy {name}" in calls(zfs)
    assert len(notes) == 1 and f"tune.child-dataset on {name} set back to exists=no, mark=-" in notes[0], notes
    assert replay(journal_dir() / f"{session}.jsonl").closed is not None


def test_a_child_journaled_but_not_made_is_already_original(zfs: Path, state: Path) -> None:
    """Killed between the intent and `zfs create`: the rollback finds no child and runs nothing."""
    session = "b2" * 16
    made_then_killed(session, crash_at="after-intent:1")
    notes: list[str] = []
    assert recover(notes.append) is False
    assert not [call for call in calls(zfs) if call.startswith(("create", "destroy"))]
    assert "already held its original value (exists=no, mark=-)" in notes[0], notes


@pytest.mark.parametrize("mark", [None, "c3" * 16], ids=["unmarked", "another session's mark"])
def test_a_child_the_session_did_not_make_is_never_destroyed(zfs: Path, state: Path, mark: str | None) -> None:
    """The session died after journaling its child and before making it; someone made a dataset of that very
    name since, without the session's mark: the rollback leaves it, says so with the command it would have
    run, and reports the rollback incomplete (exit 3)."""
    session = "d4" * 16
    made_then_killed(session, crash_at="after-intent:1")
    name = child_name(PARENT, session)
    state_data = json.loads(zfs.read_text())
    state_data["datasets"][name] = mark
    zfs.write_text(json.dumps(state_data))
    notes: list[str] = []
    assert recover(notes.append) is True
    assert datasets(zfs)[name] == mark
    assert not [call for call in calls(zfs) if call.startswith("destroy")]
    assert f"tune.child-dataset on {name} left alone" in notes[0] and f"zfs destroy {name}" in notes[0], notes


def test_the_child_is_made_marked_and_removed_after_its_knob_changes(zfs: Path, state: Path) -> None:
    """SessionChild.create: journaled (intent, then `applied`), made in one command with its mark;
    `remove` destroys it and journals the undo."""
    session = "e5" * 16
    changes = Changes(Journal.create(session, {"target": "/tank/vm"}))
    child = SessionChild(changes, PARENT, session)
    assert child.create() == f"/{child.name}"
    assert f"create -o stackbench:session={session} {child.name}" in calls(zfs)
    kinds = [r["t"] for r in changes.journal.records()]
    assert kinds[-3:] == ["snapshot", "intent", "applied"], kinds
    outcomes = child.remove()
    assert [o.result for o in outcomes] == ["undone"] and datasets(zfs) == {PARENT: None}
    assert child.to_json()["destroyed_at"] is not None
    changes.journal.close()


def test_a_scratch_file_named_after_the_header_is_known_to_the_replay(state: Path, tmp_path: Path) -> None:
    """A session with a child names its scratch file once the child is made, in a record after the header:
    the replay puts it in the header, where a rollback of the dead session finds the file and removes it."""
    scratch = tmp_path / "stackbench-x.scratch"
    scratch.write_bytes(b"x")
    journal = Journal.create("f6" * 16, {"target": str(tmp_path), "scratch": None, "fio_path": "/usr/bin/fio"})
    record_scratch(journal, str(scratch), "/usr/bin/fio")
    journal.close()
    assert replay(journal.path).header["scratch"] == str(scratch)
    notes: list[str] = []
    recover(notes.append)
    assert not scratch.exists() and f"removed its scratch file {scratch}" in notes[0], notes


def _dataset_plan() -> PlannedKnob:
    knob = BY_ID["zfs.compression"]
    return PlannedKnob(knob, (Subject("dataset", PARENT),), ({"value": "off", "source": "default"},), "lz4",
                       (f"zfs set compression=lz4 {PARENT}",), (f"zfs inherit compression {PARENT}",))


def test_the_plan_names_the_child_or_says_why_there_is_none(zfs: Path, tmp_path: Path) -> None:
    """Where a session's dataset knobs are measured, as the dry run says it (the design's example line)."""
    info = TargetInfo(path=str(tmp_path), fs_type="zfs", dataset=PARENT, pool="tank")
    plan = [_dataset_plan()]
    said = choose_child(info, plan, tmp_path, False).describe()
    assert said == (f"experiments run on the child dataset {PARENT}/.stackbench-tune-<session> (created, removed "
                    f"at the end); {PARENT} itself is changed only after the kept set is confirmed")
    assert choose_child(info, plan, tmp_path, True).describe() == \
        f"the dataset knobs are measured on {PARENT} itself: --no-child asks so"
    assert choose_child(info, [], tmp_path, False).describe() == ""
    state_data = json.loads(zfs.read_text())
    zfs.write_text(json.dumps({**state_data, "mountpoint": "legacy", "mounted": "no"}))
    assert "not mounted at a directory (mountpoint legacy, mounted no)" in \
        choose_child(info, plan, tmp_path, False).describe()


def test_the_report_says_which_dataset_was_changed_when() -> None:
    """The session's summary names the child, when it was made and destroyed, and when the parent got the kept
    values (or that it was not changed)."""
    from stackbench.report.tune import summary_table

    child = {"dataset": f"{PARENT}/.stackbench-tune-0123456789ab", "parent": PARENT,
             "created_at": "2026-11-28T13:00:00+00:00", "destroyed_at": "2026-11-28T13:20:00+00:00",
             "applied_to_parent_at": "2026-11-28T13:20:01+00:00", "applied_to_parent": ["zfs.compression=lz4"],
             "left_alone": [], "removal": []}
    session = {"session": "0123456789ab" * 2, "target": f"{PARENT} (ZFS)", "knobs": [], "now_set": [],
               "where": "experiments run on the child dataset ...", "child": child}
    notes = summary_table(session).notes
    assert f"the child dataset {child['dataset']}: created 2026-11-28T13:00:00+00:00, destroyed " \
           "2026-11-28T13:20:00+00:00" in notes
    assert f"{PARENT} changed 2026-11-28T13:20:01+00:00, after the confirmation: zfs.compression=lz4" in notes
    assert "experiments run on the child dataset ..." in notes
    unchanged = summary_table({**session, "child": {**child, "applied_to_parent": []}}).notes
    assert f"{PARENT} was not changed" in unchanged


@pytest.mark.slow
def test_a_session_measures_a_dataset_knob_on_its_child_and_leaves_the_dataset_alone(
        zfs: Path, state: Path, ext4_loop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole session (execute_tune, a real store, real fio) of `--knob zfs.compression=lz4` on a target it
    takes for the ZFS dataset tank/vm: the fake zfs above, and the target's facts saying ZFS, since the file
    system is ext4 here. The child is journaled first, the scratch file is written in the child's directory,
    every property change until the child is destroyed names the child (the parent is changed only after,
    when the knob was kept and confirmed), and at the end the child and its directory are gone."""
    import stackbench.tune.subjects as subjects_module
    from stackbench.measure.preparation import RunRequest
    from stackbench.measure.tune_session import TuneRequest, execute_tune
    from stackbench.model.plan import build_plan
    from stackbench.store import Store

    target = ext4_loop / "vm"
    target.mkdir()
    zfs.write_text(json.dumps({"datasets": {PARENT: None}, "mounts": {PARENT: str(target)}}))
    real = subjects_module.collect_target_facts
    monkeypatch.setattr(subjects_module, "collect_target_facts", lambda path: {
        **real(path), "fs_type": "zfs", "zfs_dataset": PARENT, "mount_point": str(target), "mount_source": PARENT})
    plan = build_plan(rw=["write"], bs=["4k"], qd=[1], size="8M", runtime=1, ramp=0, runs=1, until_stable=False)
    request = TuneRequest(RunRequest(target=target, plan=plan), ((BY_ID["zfs.compression"], "lz4"),), rounds=2,
                          looks=(2,), calibration_rounds=0)
    result = execute_tune(Store(str(tmp_path / "s.db")), request)
    name = child_name(PARENT, result.session)
    log = calls(zfs)
    destroyed = log.index(f"destroy {name}")
    assert log.index(f"create -o stackbench:session={result.session} {name}") < destroyed
    while_measuring = [call for call in log[:destroyed] if call.startswith(("set ", "inherit "))]
    assert f"set compression=lz4 {name}" in while_measuring
    assert all(call.endswith(f" {name}") for call in while_measuring), while_measuring
    after = [call for call in log[destroyed:] if call.startswith(("set ", "inherit "))]
    assert after == ([f"set compression=lz4 {PARENT}"] if result.kept else []), (after, result.to_json())
    assert datasets(zfs) == {PARENT: None} and list(target.iterdir()) == []
    records = read_records(journal_dir() / f"{result.session}.jsonl")
    intents = [r for r in records if r["t"] == "intent"]
    assert intents[0]["knob"] == "tune.child-dataset" and intents[0]["subject"]["name"] == name
    scratch = next(r["scratch"] for r in records if r["t"] == "scratch")
    assert scratch == f"{target}/{name.rsplit('/', 1)[1]}/stackbench-{result.session}.scratch"
    report = result.to_json()
    assert report["child"]["dataset"] == name and report["child"]["destroyed_at"], report["child"]
    assert report["where"].startswith(f"experiments run on the child dataset {name} ")
    assert [k["subjects"] for k in report["knobs"]] == [[name]]
