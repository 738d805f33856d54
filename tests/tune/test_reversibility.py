"""Every block-device and mount knob of the catalogue, every candidate, round-tripped on a real loop device
with ext4 and with xfs: apply, verify, undo, and every view read back equal to the original (the check a
session makes before measuring). Each test makes its own device; no host-wide setting is touched."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from mounts import detach, unmount
from stackbench.tune.knob import Scope, Safety
from stackbench.tune.knobs import REGISTRY

LOCAL = [knob for knob in REGISTRY if knob.scope in (Scope.BLOCK_DEVICE, Scope.MOUNT)]
EVERY_CLASS = frozenset({Safety.SEMANTIC, Safety.TRADEOFF})


@pytest.fixture(params=["ext4", "xfs"])
def mounted(request: pytest.FixtureRequest, tmp_path: Path, state_home: Path) -> Iterator[Path]:
    if subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() != "0":
        pytest.skip("needs root for loop devices and mounts")
    backing = tmp_path / "disk.img"
    with open(backing, "wb") as handle:
        handle.truncate(320 * 1024**2)  # xfs wants 300 MiB
    point = tmp_path / "mnt"
    point.mkdir()
    with contextlib.ExitStack() as undo:  # each undo before its step, waited for while busy (tests/mounts.py)
        undo.callback(detach, backing)
        device = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                                check=True).stdout.strip()
        undo.callback(unmount, point)
        subprocess.run([f"mkfs.{request.param}", "-q", *(["-F"] if request.param == "ext4" else ["-f"]), device],
                       check=True, capture_output=True)
        subprocess.run(["mount", device, str(point)], check=True)
        yield point


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.mark.parametrize("knob", LOCAL, ids=[knob.id for knob in LOCAL])
def test_every_candidate_round_trips_to_every_original_view(knob, mounted: Path) -> None:
    from stackbench.base.errors import UsageError
    from stackbench.measure.tune_changes import Changes
    from stackbench.measure.tune_journal import Journal
    from stackbench.measure.tune_session import reversibility_failure
    from stackbench.measure.tune_plan import plan_knob
    from stackbench.tune.subjects import target_info

    info = target_info(mounted)
    if isinstance(knob.subjects(info), str):
        pytest.skip(f"{knob.id} does not apply here: {knob.subjects(info)}")
    changes = Changes(Journal.create("rt", {"target": str(mounted)}))
    tried = []
    for value in knob.values.choices:
        try:
            plan = plan_knob(knob, value, info, EVERY_CLASS)
        except UsageError:  # the value now, or one this device does not offer
            continue
        before = [knob.access.read(subject) for subject in plan.subjects]
        failure = reversibility_failure(changes, plan)
        assert [knob.access.read(subject) for subject in plan.subjects] == before
        # A value the kernel refuses (nr_requests above a loop device's queue depth) is dropped, nothing changed.
        assert failure is None or "Invalid argument" in failure, failure
        tried += [value] if failure is None else []
    assert tried, f"no candidate of {knob.id} round-tripped"


def test_the_scheduler_knob_restores_the_queue_size_the_kernel_resets_and_a_naive_undo_is_caught(mounted) -> None:
    """Writing a queue's scheduler resets its nr_requests (a user's 64 is lost): the knob reads both views and
    writes both back; an undo that writes the scheduler alone is caught by the check."""
    import dataclasses

    from stackbench.measure.tune_changes import Changes
    from stackbench.measure.tune_journal import Journal
    from stackbench.measure.tune_session import reversibility_failure
    from stackbench.measure.tune_plan import plan_knob
    from stackbench.tune.knob import Undo
    from stackbench.tune.knobs import BY_ID
    from stackbench.tune.subjects import target_info

    knob = BY_ID["blockdev.scheduler"]
    info = target_info(mounted)
    plan = plan_knob(knob, "mq-deadline", info, frozenset())
    queue = Path(f"/sys/block/{plan.subjects[0].name}/queue")
    (queue / "scheduler").write_text("none")
    (queue / "nr_requests").write_text("64")
    plan = plan_knob(knob, "mq-deadline", info, frozenset())
    changes = Changes(Journal.create("sched", {}))
    assert reversibility_failure(changes, plan) is None
    assert (queue / "nr_requests").read_text().strip() == "64"
    naive_access = dataclasses.replace(knob.access, undo_strategies=frozenset({Undo.WRITE_PRIMARY_VIEW}),
                                       primary=lambda original: ["scheduler"])
    naive = dataclasses.replace(plan, knob=dataclasses.replace(knob, access=naive_access, undo=Undo.WRITE_PRIMARY_VIEW))
    said = reversibility_failure(Changes(Journal.create("naive", {})), naive)
    assert said and "nr_requests=" in said and "not the original nr_requests=64" in said
