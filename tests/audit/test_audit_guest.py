"""The audit on a real OpenZFS pool: boot the lab guest (OpenZFS 2.1 and 2.3 under qemu TCG), let it build a
pool with deliberate problems and run the project's probe (the current src/stackbench), then audit the facts
it saved with the real CLI and check every deliberate problem is found with the right evidence.

The pool (lab/guest-init.sh): data mirror of two 512e disks with ashift 9, a single non-rotational 512/512
special disk, an NVMe log, a by-id cache disk, tank/images (atime=on, relatime=off, compression=off, image
files), a sparse 4K zvol with sync=disabled under a dataset with atime=on, a swap zvol and an LVM disk.
One boot per series per session (about 1.5 min each; a build from scratch about 6 min each, cached in
/var/tmp/stackbench-lab).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli
from lab_guest import GuestRun

pytestmark = [pytest.mark.zfsguest, pytest.mark.slow]

ZVOL = "tank/vm-100-disk-0"
IMAGES = "tank/images"


@pytest.fixture(scope="session")
def audit(guest: GuestRun) -> dict:
    done = run_cli("audit", "--from", str(guest.facts), "--json")
    assert done.returncode == 3, f"audit should exit 3 (findings): exit {done.returncode}\n{done.stderr[-2000:]}"
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def registry() -> set[str]:
    done = run_cli("audit", "--list-rules", "--json")
    assert done.returncode == 0, done.stderr
    return {rule["id"] for rule in json.loads(done.stdout)["rules"]}


def found(audit: dict, rule: str) -> list[dict]:
    return [f for f in audit["findings"] if f["rule"] == rule]


def disk_detail(findings: list[dict], disk: str) -> list[dict]:
    """The per-disk entries for `disk` in VM findings' `disks` (audit --json)."""
    return [detail for finding in findings for detail in finding["disks"] if detail["disk"] == disk]


def about(finding: dict, *names: str) -> bool:
    """The finding names one of these devices (or a partition of one: vdd1, nvme0n1p1, ...-part1) or vdevs
    as a whole word in its subject or evidence."""
    text = f"{finding['subject']} {finding['evidence']}"
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?:p?\d+|-part\d+)?(?![\w-])", text) for name in names)


def show(findings: list[dict]) -> str:
    return "\n".join(f"  {f['rule']} {f['subject']}: {f['evidence']}" for f in findings) or "  (none)"


def test_guest_runs_the_series(guest: GuestRun, audit: dict) -> None:
    version = (guest.facts / "zfs-version.txt").read_text()
    assert re.search(rf"^zfs-{re.escape(guest.series)}\.\d+", version, re.M), version
    assert re.search(rf"^zfs-kmod-{re.escape(guest.series)}\.\d+", version, re.M), version
    assert guest.series in (audit["zfs_version"] or ""), audit["zfs_version"]


def test_probe_saved_the_pool_files(guest: GuestRun) -> None:
    captures = json.loads((guest.facts / "probe.json").read_text())["captures"]
    for name in ("zpool-get-Hp-all.txt", "zpool-list-Hpv.txt", "zpool-status.txt", "zfs-get-Hp-all.txt",
                 "zdb-C.txt", "arcstats.txt", "zfs-module-parameters.txt", "sys-block-queue.txt", "lsblk.json",
                 "dev-disk-links.txt", "nvme-id-ns.txt", "swaps.txt", "mounts.txt", "cpuinfo.txt", "meminfo.txt"):
        assert captures[name]["exit"] == 0 and (guest.facts / name).stat().st_size > 0, (name, captures[name])
    # JSON output and vdev properties exist from 2.3 and 2.2: the probe saves them there and skips them on 2.1
    for name in ("zpool-status-j.txt", "zpool-get-vdevs.txt"):
        assert (guest.facts / name).exists() == (guest.series != "2.1"), (name, captures[name])


def test_capture_is_the_pool_we_built(guest: GuestRun) -> None:
    """Lab sanity: the guest made what the other tests assume (so a failure below is the audit's)."""
    zdb = (guest.raw / "zdb-C.txt").read_text()
    tops = re.findall(r"^ {12}children\[\d+\]:\n {16}type: '(\w+)'(?:\n {16}.*)*?\n {16}ashift: (\d+)", zdb, re.M)
    assert ("mirror", "9") in tops, zdb  # the mirror of 4096-byte-sector disks really has ashift 9
    arcstats = (guest.facts / "arcstats.txt").read_text()
    assert int(re.search(r"^hits\s+\d+\s+(\d+)", arcstats, re.M)[1]) > 0
    assert "/dev/zd" in (guest.facts / "swaps.txt").read_text()
    flags = set(re.search(r"^flags\s*:(.*)$", (guest.facts / "cpuinfo.txt").read_text(), re.M)[1].split())
    assert "hypervisor" in flags
    assert ("aes" in flags) == (guest.series == "2.1"), "2.1 boots with -cpu max (aes), 2.3 with qemu64 (no aes)"


def test_ashift_low_on_the_data_mirror(guest: GuestRun, audit: dict) -> None:
    layout = guest.layout()
    findings = found(audit, "ZP-ASHIFT-LOW")
    data = [f for f in findings if about(f, "mirror-0", *layout["data"])]
    assert len(data) == 1, f"one ZP-ASHIFT-LOW on the data mirror expected, got:\n{show(findings)}"
    assert re.search(r"ashift\D{0,4}9\b", data[0]["evidence"]), data[0]
    assert "4096" in data[0]["evidence"], data[0]
    wrong = [f for f in findings if about(f, *layout["special"], *layout["log"], *layout["cache"])]
    assert not wrong, f"512-byte-sector vdevs are not ZP-ASHIFT-LOW:\n{show(wrong)}"


def test_special_single(guest: GuestRun, audit: dict) -> None:
    findings = found(audit, "ZP-SPECIAL-SINGLE")
    assert len(findings) == 1 and about(findings[0], *guest.layout()["special"]), show(findings)
    assert findings[0]["severity"] == "crit"


def test_atime_on_the_image_dataset_not_on_zvols(audit: dict) -> None:
    subjects = {f["subject"] for f in found(audit, "DS-ATIME")}
    assert IMAGES in subjects, subjects
    assert not {ZVOL, "tank/swap"} & subjects, f"zvols have no atime: {subjects}"


def test_sync_disabled_on_the_zvol(audit: dict) -> None:
    subjects = {f["subject"] for f in found(audit, "DS-SYNC-DISABLED")}
    assert ZVOL in subjects, subjects
    assert not {IMAGES, "tank/swap", "tank"} & subjects, subjects


def test_compression_off_on_the_image_dataset(audit: dict) -> None:
    findings = [f for f in found(audit, "DS-COMPRESS-OFF") if f["subject"] == IMAGES]
    assert len(findings) == 1 and "compression=off" in findings[0]["evidence"], show(found(audit, "DS-COMPRESS-OFF"))


def test_log_single(guest: GuestRun, audit: dict) -> None:
    findings = found(audit, "ZP-LOG-SINGLE")
    assert len(findings) == 1 and about(findings[0], *guest.layout()["log"]), show(findings)


# Further deliberate problems: each rule must find its problem in the real pool.
MORE = {
    "ZP-ASHIFT-FLASH512": lambda f, lay: about(f, *lay["special"]),
    "L2ARC-WRITE-MAX": lambda f, lay: about(f, *lay["cache"]) or "l2arc_write_max" in f["evidence"],
    "HOST-NVME-LBA": lambda f, lay: about(f, *lay["log"]),
    "DS-IMG-RECORDSIZE": lambda f, lay: f["subject"] == IMAGES,
    "DS-VBS-GUEST": lambda f, lay: f["subject"] == ZVOL,
    "GUEST-LVM": lambda f, lay: about(f, *lay["lvm"], "dm-0"),
    "DS-QCOW2-ON-ZFS": lambda f, lay: "vm-102-disk-0.qcow2" in f["subject"] + f["evidence"],
    "HOST-SWAP-ZVOL": lambda f, lay: re.search(r"\bzd\d+\b|tank/swap", f["subject"] + f["evidence"]) is not None,
}


@pytest.mark.parametrize("rule", sorted(MORE))
def test_more_deliberate_problems(rule: str, guest: GuestRun, audit: dict, registry: set[str]) -> None:
    assert rule in registry
    findings = found(audit, rule)
    assert any(MORE[rule](f, guest.layout()) for f in findings), show(findings)


def test_guest_cpu_without_aes_only_on_2_3(guest: GuestRun, audit: dict, registry: set[str]) -> None:
    """2.3 boots with -cpu qemu64 (no aes), 2.1 with -cpu max (aes): the guest's own view of a KVM-CPU-NOAES VM."""
    assert "GUEST-CPU-NOAES" in registry
    findings = found(audit, "GUEST-CPU-NOAES")
    assert bool(findings) == (guest.series == "2.3"), show(findings)


def test_vm_configs_are_tied_to_the_real_zvol(guest: GuestRun) -> None:
    """A Proxmox VM whose scsi0 is local-zfs:vm-100-disk-0, with storage.cfg mapping local-zfs onto the guest's
    pool: the VM-disk rules must read the real zvol's properties (sparse: refreservation 0; sync=disabled)."""
    data = Path(__file__).parent.parent / "data" / "pve"
    done = run_cli("audit", "--from", str(guest.facts), "--vm-config", str(data / "100-bad.conf"),
                   "--storage-cfg", str(data / "storage.cfg"), "--json")
    assert done.returncode == 3, done.stderr[-2000:]
    report = json.loads(done.stdout)
    discard = disk_detail(found(report, "KVM-DISCARD"), "scsi0")  # one finding per VM: scsi0 is one of its disks
    assert discard and f"{ZVOL} refreservation=0" in discard[0]["evidence"], show(found(report, "KVM-DISCARD"))
    assert disk_detail(found(report, "KVM-CACHE"), "scsi0")
