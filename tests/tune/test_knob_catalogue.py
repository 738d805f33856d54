"""The knob catalogue's records: every knob declares what tune needs to read, change and undo it, its examples
give the exact commands (written once, in the knob's module), and no candidate is ever a forbidden value."""

from __future__ import annotations

import pytest

from stackbench.model.unsafe_settings import forbidden_for_tune
from stackbench.tune.knob import Safety, Subject
from stackbench.tune.knobs import MODULES, REGISTRY
from stackbench.tune.knobs.forbidden import FORBIDDEN_IDS, forbidden_value

EXAMPLES = [(knob, example) for knob in REGISTRY for example in knob.examples]


@pytest.mark.parametrize("knob,example", EXAMPLES, ids=[f"{k.id}-{i}" for i, (k, _) in enumerate(EXAMPLES)])
def test_each_example_gives_the_commands_written_in_it(knob, example) -> None:
    applied = [a.shown() for a in knob.access.apply(example.subject, example.value, example.original)]
    undone = [a.shown() for a in knob.access.undo(knob.undo, example.subject, example.original)]
    assert (applied, undone) == (list(example.apply), list(example.undo))
    for text, state in example.parse:
        assert knob.access.parse_output(example.subject, text) == dict(state)


def test_every_knob_is_complete_and_registered_once() -> None:
    assert len({k.id for k in REGISTRY}) == len(REGISTRY) == len(MODULES)
    for knob in REGISTRY:
        assert knob.examples, f"{knob.id} has no example"
        assert knob.undo in knob.access.undo_strategies, f"{knob.id}: its access cannot undo by {knob.undo.value}"
        assert knob.values.choices and knob.source.startswith("https://") and knob.doc.strip()
        assert knob.safety is not Safety.FORBIDDEN and knob.id not in FORBIDDEN_IDS


def test_no_candidate_of_any_knob_is_forbidden() -> None:
    for knob in REGISTRY:
        for value in knob.values.choices:
            assert forbidden_value(knob, value) is None, (knob.id, value)


def test_a_forbidden_value_is_found_through_the_unsafe_settings_table() -> None:
    """The check the catalogue test relies on does fire: kvm.disk with cache=unsafe is refused by the same table
    (a check that could never fire would prove nothing above)."""
    kvm = next(k for k in REGISTRY if k.id == "kvm.disk")
    assert forbidden_value(kvm, "cache=unsafe,aio=threads,iothread=1") is not None
    assert forbidden_for_tune("zfs:sync", "standard") is not None  # zfs.sync: any value


def test_the_obvious_atime_undo_is_not_the_declared_one() -> None:
    """`remount,relatime` after `noatime` exits 0 and changes nothing (docs/tune.md, "Undos that do not undo"): the knob remounts with
    `atime,relatime`, and the naive strategy is still there for the reversibility test to catch."""
    from stackbench.tune.knob import Undo

    atime = next(k for k in REGISTRY if k.id == "mount.atime")
    mount = Subject("mount", "/m", {"source": "/dev/x", "fs_type": "ext4"})
    original = {"atime": "relatime", "diratime": "diratime"}
    assert [a.shown() for a in atime.access.undo(atime.undo, mount, original)] == [
        "mount -o remount,atime,relatime /dev/x /m"]
    assert [a.shown() for a in atime.access.undo(Undo.SET_ORIGINAL, mount, original)] == [
        "mount -o remount,relatime /dev/x /m"]


def test_derived_candidates_come_from_the_subjects_state() -> None:
    """zfs_dirty_data_max tries multiples of the value read (the grid's `x0.5, x2, x4` only describes them);
    the plan once tried the descriptions themselves."""
    from stackbench.tune.knobs import BY_ID

    knob = BY_ID["zfs.module.zfs_dirty_data_max"]
    module = Subject("zfs-module", "zfs")
    assert knob.values.candidates(module, {"zfs_dirty_data_max": "1000"}) == ("500", "2000", "4000")
    assert BY_ID["blockdev.read_ahead_kb"].values.candidates(module, {}) == ("128", "512", "2048", "8192")
