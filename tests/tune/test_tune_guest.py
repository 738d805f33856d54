"""tune's ZFS knobs, ZFS module parameters and vm.dirty on real OpenZFS (2.1 and 2.3) in the lab guests, where
changing host-wide and pool-wide settings harms nobody: every candidate round-tripped through the journal with
`zfs get all` (value and source of every property a user can set), every module parameter and every vm.dirty_* view compared
before and after; the naive undos caught; a process killed after two changes restored by the next one; and the
session's throwaway child dataset (measure/tune_child.py, step "tune child"), driven by the session's own
functions: the guest has no SQLAlchemy, so `stackbench tune` itself cannot run there (tests/tune/test_tune_child.py
runs a whole session host-side, with a fake zfs). The guest ran this (lab/guest-init.sh, steps "tune" and "tune
child") with the current src/stackbench; the guest's speed is never a result here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lab_guest import GuestRun
from stackbench.tune.knob import Scope
from stackbench.tune.knobs import REGISTRY

pytestmark = [pytest.mark.zfsguest, pytest.mark.slow]
GUEST_KNOBS = [k.id for k in REGISTRY if k.scope in (Scope.DATASET, Scope.POOL_MODULE, Scope.HOST_SYSCTL)]


def roundtrip(guest: GuestRun) -> dict[str, Any]:
    path = guest.out / "tune" / "roundtrip.json"
    assert path.exists() and path.read_text().strip(), (guest.out / "tune" / "roundtrip.stderr").read_text()
    return json.loads(path.read_text())


@pytest.mark.parametrize("knob", GUEST_KNOBS)
def test_every_candidate_comes_back_to_every_original_view(guest: GuestRun, knob: str) -> None:
    found = roundtrip(guest)["knobs"][knob]
    assert found["tried"], found
    assert found["same_after"], found
    refused = {value: why for value, why in found["failed"].items() if "Invalid argument" not in why}
    assert refused == {}, found  # only values the kernel refuses may fail, and they change nothing


def test_the_naive_undos_are_caught(guest: GuestRun) -> None:
    """`zfs set atime=on` restores the value but makes an inherited property local; `vm.dirty_*` written back
    view by view meets the kernel's refusal of dirty_bytes=0 (docs/tune.md, "Undos that do not undo")."""
    naive = roundtrip(guest)["naive"]
    assert "source=local, not the original source=inherited from tank" in naive["zfs.atime"]["caught"]
    assert naive["vm.dirty"]["caught"], naive
    assert naive["zfs.atime"]["restored_by_hand"] and naive["vm.dirty"]["restored_by_hand"]


def test_a_killed_session_is_restored_property_for_property(guest: GuestRun) -> None:
    killed = roundtrip(guest)["kill9"]
    assert (killed["ready"], killed["changed"], killed["same_after"]) == ("applied", True, True), killed
    assert killed["journal"]["t"] == "closed" and len(killed["notes"]) == 1
    assert "zfs.compression on tank/tunetest set back" in killed["notes"][0]


def child_run(guest: GuestRun) -> dict[str, Any]:
    path = guest.out / "tune" / "child.json"
    assert path.exists() and path.read_text().strip(), (guest.out / "tune" / "child.stderr").read_text()
    return json.loads(path.read_text())


def test_a_dataset_knob_is_measured_on_a_child_and_reaches_the_dataset_only_when_kept(guest: GuestRun) -> None:
    """The session's child (measure/tune_child.py): made and marked with the session's id, the knob switched
    on it between rounds of real fio writes in its mountpoint while every property of the parent (value and
    source) stays as it was; at the end the child destroyed, then the kept value applied to the parent."""
    found = child_run(guest)
    plan, session = found["plan"], found["session"]
    assert plan["use"] and "experiments run on the child dataset tank/childtest/.stackbench-tune-<session>" \
        in plan["said"], plan
    assert "measured on tank/childtest itself: --no-child" in plan["no_child"], plan
    made = session["made"]
    assert made["name"] == "tank/childtest/.stackbench-tune-5f0c5f0c5f0c", made
    assert made["mountpoint"] == "/tank/childtest/.stackbench-tune-5f0c5f0c5f0c"
    assert made["mark"] == f"{'5f0c' * 8}\tlocal", made
    assert session["plan_subjects"] == [made["name"]]
    assert [(r["arm"], r["child"].split("\t")[0], r["parent_same"]) for r in session["rounds"]] == [
        ("b", "lz4", True), ("a", "off", True), ("b", "lz4", True)], session["rounds"]
    assert session["adopted"] == "lz4\tlocal" and session["carried"] == ["tank/childtest"], session
    assert session["child_gone"] and session["mountpoint_gone"], session
    record = session["record"]
    assert record["applied_to_parent"] == ["zfs.compression=lz4"] and record["destroyed_at"], record
    assert record["created_at"] < record["destroyed_at"] < record["applied_to_parent_at"], record
    assert [said.split(" set back")[0] for said in record["removal"]] == [
        f"zfs.compression on {made['name']}", f"tune.child-dataset on {made['name']}"], record
    assert session["parent_back"], session


def test_a_kill_9_mid_session_leaves_the_dataset_as_it_was_and_the_recovery_destroys_the_child(guest: GuestRun) -> None:
    """Killed while fio writes in the child with a knob set on it: the next process stops that fio, undoes the
    knob, destroys the child (fio would have held it busy), and the parent never changed."""
    killed = child_run(guest)["kill9"]
    assert killed["during"] == {"child_there": True, "child_compression": "lz4\tlocal", "parent_same": True}, killed
    assert killed["child_gone"] and killed["fio_gone"] and killed["parent_same"], killed
    assert killed["journal"]["t"] == "closed" and len(killed["notes"]) == 1, killed
    assert "zfs.compression on tank/childtest/.stackbench-tune-deaddeaddead set back" in killed["notes"][0]
    assert "tune.child-dataset on tank/childtest/.stackbench-tune-deaddeaddead set back to exists=no" \
        in killed["notes"][0]


@pytest.mark.parametrize("case", ["unmarked", "another session's"])
def test_a_child_tune_did_not_make_is_never_destroyed(guest: GuestRun, case: str) -> None:
    """A session killed after journaling its child but before making it; a dataset of that very name made since
    by someone else (no mark, or another session's) is left by the recovery, named."""
    foreign = child_run(guest)["foreign"][case]
    assert foreign["died"] == -9 and not foreign["made_by_tune"], foreign
    assert foreign["still_there"], foreign
    assert len(foreign["notes"]) == 1 and "left alone" in foreign["notes"][0], foreign
