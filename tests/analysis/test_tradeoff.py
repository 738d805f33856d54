"""Settings that trade safety for speed: the declared table (unsafe_settings.py), finding them in realistic
commands and facts (and not in look-alikes), and the marking of a comparison's verdict (analysis/tradeoff.py)."""

from __future__ import annotations

import pytest

from stackbench.analysis.compare import compare_runs
from stackbench.analysis.tradeoff import safety_tradeoff
from stackbench.model.unsafe_settings import (
    ALLOWED, FORBIDDEN_FOR_TUNE, UNSAFE_SETTINGS, entries_for, forbidden_for_tune, settings_in_command,
    settings_in_facts,
)
from synthetic import cell, run

P = "/sys/module/zfs/parameters"

# (command, the unsafe entry it must match): commands as people write them in `ab --a/--b`
TRUE_POSITIVES = [
    ("zfs set sync=disabled tank/vm", "zfs-sync-disabled"),
    ("sudo zfs set sync=disabled rpool/data/vm-100-disk-0", "zfs-sync-disabled"),
    ("zfs set compression=lz4 sync=disabled tank/vm", "zfs-sync-disabled"),
    ("ssh root@pve1 'zfs set sync=disabled tank/vm'", "zfs-sync-disabled"),
    ("ssh -p 2222 -i ~/.ssh/id root@pve1 zfs set sync=disabled tank/vm", "zfs-sync-disabled"),
    ("zfs create -o sync=disabled -V 32G tank/vm-101-disk-0", "zfs-sync-disabled"),
    ("zpool create -o ashift=12 -O sync=disabled tank mirror sda sdb", "zfs-sync-disabled"),
    ("mount -o remount,nobarrier /mnt/data", "mount-nobarrier"),
    ("mount -o remount,barrier=0 /mnt/data", "mount-nobarrier"),
    ("mount -oremount,noatime,nobarrier /srv", "mount-nobarrier"),
    ("mount --options=remount,barrier=0 /srv", "mount-nobarrier"),
    ("sh -c 'sync && mount -o remount,barrier=0 /mnt'", "mount-nobarrier"),
    ("tune2fs -o nobarrier /dev/sdb1", "mount-nobarrier"),
    (f"echo 1 > {P}/zfs_nocacheflush", "zfs-nocacheflush"),
    (f"echo 1 | sudo tee {P}/zfs_nocacheflush >/dev/null", "zfs-nocacheflush"),
    (f"printf 1 >{P}/zfs_nocacheflush", "zfs-nocacheflush"),
    ("echo 'options zfs zfs_nocacheflush=1' >> /etc/modprobe.d/zfs.conf", "zfs-nocacheflush"),
    ("modprobe -r zfs; modprobe zfs zfs_nocacheflush=1", "zfs-nocacheflush"),
    ("sysctl vfs.zfs.nocacheflush=1", "zfs-nocacheflush"),
    (f"echo 30 > {P}/zfs_txg_timeout", "zfs-txg-timeout-raised"),
    ("sysctl -w vfs.zfs.txg.timeout=60", "zfs-txg-timeout-raised"),
    ("qm set 100 --scsi0 local-zfs:vm-100-disk-0,cache=unsafe,iothread=1", "vm-cache-unsafe"),
    ("qm set 101 -virtio0 tank:vm-101-disk-0,discard=on,cache=unsafe", "vm-cache-unsafe"),
    ("virsh attach-disk vm1 /dev/zvol/tank/vm1 vdb --cache unsafe --persistent", "vm-cache-unsafe"),
    ("virt-xml vm1 --edit --disk cache=unsafe", "vm-cache-unsafe"),
    ("qemu-system-x86_64 -drive file=/var/lib/vm.img,if=virtio,cache.no-flush=on", "vm-cache-unsafe"),
    ("zfs set checksum=off tank/scratch", "zfs-checksum-off"),
    ("mount -o remount,data=writeback /home", "ext4-data-writeback"),
    ("tune2fs -O ^has_journal /dev/sdc1", "ext4-no-journal"),
    ("FOO=1 timeout 60 sudo -u root env A=B zfs set sync=disabled tank/vm", "zfs-sync-disabled"),
]

# Look-alikes: the words appear, nothing unsafe is set
LOOK_ALIKES = [
    "zfs set sync=standard tank/vm",
    "zfs set sync=always tank/vm",
    "zfs get sync tank/vm",
    "zfs inherit sync tank/vm",
    "echo barrier=0",
    "echo zfs set sync=disabled tank/vm",
    "echo 'sync=disabled' > /tmp/what-i-tried.txt",
    "logger 'testing nobarrier'",
    "mount /dev/sdb1 /mnt/nobarrier",
    "mount -o remount,barrier=1 /mnt/nobarrier",
    "mkdir -p /srv/sync=disabled && touch /srv/sync=disabled/x",
    "cat /sys/module/zfs/parameters/zfs_nocacheflush",
    f"echo 0 > {P}/zfs_nocacheflush",
    f"echo 5 > {P}/zfs_txg_timeout",
    f"echo 3 > {P}/zfs_txg_timeout",
    "qm set 100 --scsi0 local-zfs:vm-100-disk-0,cache=none",
    "qm set 100 --description 'was cache=unsafe, now fixed'",
    "zfs set checksum=sha256 tank/vm",
    "grep nobarrier /proc/mounts",
    "true",
    "# zfs set sync=disabled tank/vm",
    "zfs set sync=disabled 'tank/vm",  # an unclosed quote: read plainly, still found (below), never an error
]


def _unsafe(command: str) -> list[str]:
    """The table entries (that mark verdicts) a command puts the system in."""
    found = []
    for value in settings_in_command(command):
        found += [e.id for e in entries_for(value.setting) if e.marks_verdicts and e.silent_is_safe
                  and e.is_unsafe(value.value)]
    return found


@pytest.mark.parametrize(("command", "entry"), TRUE_POSITIVES)
def test_unsafe_settings_are_found_in_realistic_commands(command: str, entry: str) -> None:
    assert entry in _unsafe(command)


@pytest.mark.parametrize("command", LOOK_ALIKES[:-1])
def test_look_alikes_match_nothing(command: str) -> None:
    assert _unsafe(command) == []


def test_an_unclosed_quote_is_read_plainly() -> None:
    assert _unsafe(LOOK_ALIKES[-1]) == ["zfs-sync-disabled"]


def test_the_table_is_declared_once_and_holds_tunes_forbidden_list() -> None:
    ids = [e.id for e in UNSAFE_SETTINGS]
    assert len(ids) == len(set(ids))
    for entry in UNSAFE_SETTINGS:
        assert entry.risk and "\n" not in entry.risk and entry.safer and entry.matches
    # tune-design.md 3.2: any sync value, cache=unsafe, barrier=0/nobarrier, zfs_nocacheflush, checksum=off,
    # dedup, copies, volblocksize, ashift and layout changes are never tried
    assert forbidden_for_tune("zfs:sync", "standard") and forbidden_for_tune("zfs:sync", "always")
    assert forbidden_for_tune("vm-disk:cache", "unsafe") and forbidden_for_tune("vm-disk:cache", "none") is None
    assert forbidden_for_tune("mount:barrier", "off") and forbidden_for_tune("zfs-param:zfs_nocacheflush", "0")
    assert forbidden_for_tune("zfs:checksum", "off") and forbidden_for_tune("zfs:dedup", "on")
    assert forbidden_for_tune("zfs:copies", "2") and forbidden_for_tune("zfs:volblocksize", "16k")
    assert forbidden_for_tune("zpool:ashift", "12") and forbidden_for_tune("zpool:layout", "add")
    assert forbidden_for_tune("zfs:compression", "lz4") is None and forbidden_for_tune("mount:sync", "async") is None
    assert all(e.tune != ALLOWED for e in FORBIDDEN_FOR_TUNE)
    assert {e.audit_rule for e in UNSAFE_SETTINGS} >= {"DS-SYNC-DISABLED", "KVM-CACHE"}


def test_tune_can_find_what_a_command_would_do_that_it_must_not() -> None:
    found = [(v.setting, v.value) for v in settings_in_command("zpool add tank special mirror sdc sdd")]
    assert found == [("zpool:layout", "add")] and forbidden_for_tune(*found[0])
    assert ("zfs:volblocksize", "8k") in [(v.setting, v.value) for v in settings_in_command("zfs create -V 8G -b 8k t/z")]


def test_facts_give_mount_options_with_their_defaults_and_zfs_properties() -> None:
    found = {v.setting: v.value for v in settings_in_facts(
        {"target": {"fs_type": "ext4", "mount_options": "rw,relatime,nobarrier"}, "zfs": {"sync": "disabled"}})}
    assert found == {"mount:barrier": "off", "mount:data": "ordered", "mount:sync": "async", "zfs:sync": "disabled"}
    default = {v.setting: v.value for v in settings_in_facts({"target": {"fs_type": "xfs", "mount_options": "rw"}})}
    assert default == {"mount:barrier": "on", "mount:sync": "async"}
    assert settings_in_facts({"target": {"fs_type": "zfs", "mount_source": "tank/nobarrier"}}) == []


def _arm(arm: str, command: str, facts: dict | None = None, **cell_options) -> object:
    ab = {"session": "s1", "arm": arm, "command": command, "rounds": 2, "orders": ["AB", "BA"]}
    return run([cell(runs=[1000.0, 1010.0], rounds=[0, 1], **cell_options)],
               facts={"fio_version": "fio-3.33", "ab": ab, **(facts or {})}, run_id=("0" if arm == "A" else "1") * 32)


def test_b_with_an_unsafe_setting_against_a_safe_or_silent_a_is_less_safe() -> None:
    explicit = safety_tradeoff(_arm("A", "mount -o remount,barrier=1 /mnt"), _arm("B", "mount -o remount,barrier=0 /mnt"))
    assert explicit.less_safe == "B" and [d.entry.id for d in explicit.differences] == ["mount-nobarrier"]
    assert explicit.marking("keep").startswith("B is faster because it is less safe: without write barriers")
    assert "B: mount -o remount,barrier=0 /mnt; A: mount -o remount,barrier=1 /mnt" in explicit.marking("keep")
    silent = safety_tradeoff(_arm("A", "true"), _arm("B", "zfs set sync=disabled tank/vm"))
    assert silent.less_safe == "B" and silent.differences[0].entry.audit_rule == "DS-SYNC-DISABLED"
    safer = safety_tradeoff(_arm("A", "zfs set sync=disabled tank/vm"), _arm("B", "zfs set sync=standard tank/vm"))
    assert safer.less_safe == "A" and safer.marking("revert").startswith("B is slower because it is safer")
    both = safety_tradeoff(_arm("A", "zfs set sync=disabled t"), _arm("B", "zfs set sync=standard t; zfs set checksum=off t"))
    assert both.less_safe == "both" and "less safe in one way and safer in another" in both.marking("keep")


def test_settings_whose_default_is_not_safe_need_both_sides_to_say() -> None:
    """sync=standard is less safe than sync=always, but an arm that says nothing may be at either."""
    assert safety_tradeoff(_arm("A", "true"), _arm("B", "zfs set sync=standard t")).less_safe is None
    told = safety_tradeoff(_arm("A", "zfs set sync=always t"), _arm("B", "zfs set sync=standard t"))
    assert told.less_safe == "B" and told.differences[0].entry.id == "zfs-sync-not-always"
    mounts = safety_tradeoff(_arm("A", "mount -o remount,sync /m"), _arm("B", "mount -o remount,async /m"))
    assert mounts.less_safe == "B" and mounts.differences[0].entry.id == "mount-async"


def test_the_same_unsafe_setting_on_both_sides_marks_nothing() -> None:
    assert not safety_tradeoff(_arm("A", "zfs set sync=disabled a"), _arm("B", "zfs set sync=disabled b")).differences


def test_one_sessions_arms_ignore_the_facts_probed_before_either_command() -> None:
    """The facts of an ab session are the state before it: B's remount,sync is not safer than the facts' async
    of A, since A then runs with what B set."""
    facts = {"target": {"fs_type": "ext4", "mount_options": "rw,relatime"}}
    a, b = _arm("A", "true", facts), _arm("B", "mount -o remount,sync /m", facts)
    assert safety_tradeoff(a, b, one_session=True).less_safe is None
    assert safety_tradeoff(a, b).less_safe == "A"  # two separate runs: each one's facts are its state


def test_separate_runs_compare_their_facts_and_their_workloads() -> None:
    safe = run([cell(runs=[1000.0, 1010.0, 990.0])], facts={
        "fio_version": "fio-3.33", "target": {"fs_type": "ext4", "mount_options": "rw,relatime"}})
    unsafe = run([cell(runs=[3000.0, 3010.0, 2990.0])], run_id="1" * 32, facts={
        "fio_version": "fio-3.33", "target": {"fs_type": "ext4", "mount_options": "rw,relatime,nobarrier"}})
    result = compare_runs(safe, unsafe)
    assert result.verdict == "keep" and result.safety.less_safe == "B"
    data = result.to_json()
    assert data["safety"]["less_safe"] == "B" and data["safety"]["differences"][0]["id"] == "mount-nobarrier"
    assert data["safety"]["marking"].startswith("B is faster because it is less safe")
    assert [w["code"] for w in data["warnings"]] == ["LESS_SAFE"]
    synced = run([cell(runs=[300.0, 310.0, 290.0], sync=True)], run_id="2" * 32)
    plain = run([cell(runs=[3000.0, 3010.0, 2990.0])], run_id="3" * 32)
    workloads = compare_runs(synced, plain, force=True)
    assert workloads.safety.differences[0].entry.id == "fio-not-sync"
    assert workloads.safety.marking(workloads.verdict).startswith("B is faster because it is less safe: writes without O_SYNC")


def test_a_comparison_without_a_difference_in_safety_is_not_marked() -> None:
    result = compare_runs(run([cell(runs=[1000.0, 1010.0])]), run([cell(runs=[2000.0, 2010.0])], run_id="1" * 32))
    assert not result.safety.differences and result.safety.marking(result.verdict) == ""
    assert result.to_json()["safety"] == {"less_safe": None, "marking": None, "differences": []}
    assert result.warnings == ()
