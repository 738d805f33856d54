"""tune's ZFS knobs, ZFS module parameters and vm.dirty on real OpenZFS (2.1 and 2.3) in the lab guests, where
changing host-wide and pool-wide settings harms nobody: every candidate round-tripped through the journal with
`zfs get all` (value and source of every property a user can set), every module parameter and every vm.dirty_* view compared
before and after; the naive undos caught; a process killed after two changes restored by the next one. The
guest ran this (lab/guest-init.sh, step "tune") with the current src/stackbench; the guest's speed is never a
result here."""

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
