"""In a VM, what is under a virtual disk is on the host: `stack --host-facts DIR` hangs what the host's
captured facts say under the guest's disk. The host here is the real OpenZFS 2.1.11 capture in
tests/data/zfs/openzfs-2.1.11-debian12 with the hand-written Proxmox config and storage.cfg of
tests/data/pve (whose README maps local-zfs onto that capture's pool); the guest disk is the layer a VM's
sysfs gives (a SCSI disk with a serial), since no guest of that host runs here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.audit.facts import load_facts
from stackbench.stack.layer import Layer, Stack
from stackbench.stack.vm import VIRTUAL_TRANSPORTS, attach_host

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def host_facts(tmp_path: Path) -> Path:
    facts = tmp_path / "host"
    shutil.copytree(DATA / "zfs" / "openzfs-2.1.11-debian12", facts)
    (facts / "pve").mkdir()
    shutil.copy(DATA / "pve" / "storage.cfg", facts / "pve" / "storage.cfg")
    (facts / "qemu-server").mkdir()
    config = (DATA / "pve" / "100-bad.conf").read_text().replace(
        "scsi0: local-zfs:vm-100-disk-0,cache=writeback,size=32G",
        "scsi0: local-zfs:vm-100-disk-0,cache=writeback,serial=GUESTDATA,size=32G")
    (facts / "qemu-server" / "100.conf").write_text(config)
    return facts


def test_a_disk_matched_by_serial_gets_its_zvol_on_the_host(host_facts: Path) -> None:
    disk = Layer("disk", "/dev/sdb", {"transport": "scsi", "serial": "GUESTDATA"}, devices=["sdb"])
    attach_host(disk, load_facts(host_facts), None)
    [backing] = disk.children
    assert backing.kind == "host-backing"
    assert {key: backing.settings.get(key) for key in ("kind", "vm", "vm_disk", "cache", "matched_by",
                                                        "volblocksize", "compression", "sync")} == {
        "kind": "zvol", "vm": "100", "vm_disk": "scsi0", "cache": "writeback", "matched_by": "serial GUESTDATA",
        "volblocksize": "8192", "compression": "off", "sync": "disabled"}
    assert backing.zfs == {"pool": "tank", "dataset": "tank/vm-100-disk-0"}


def test_a_disk_that_matches_nothing_gets_a_note_not_a_guess(host_facts: Path) -> None:
    disk = Layer("disk", "/dev/sdc", {"transport": "scsi", "serial": "OTHER"})
    attach_host(disk, load_facts(host_facts), "100")
    assert disk.children == [] and disk.notes == ["host backing unknown: no disk of qemu-server/100.conf has serial OTHER"]
    attach_host(disk, load_facts(host_facts), "999")
    assert disk.notes[-1] == "host backing unknown: the host facts hold no VM 999 (they hold: 100)"


def test_libvirt_names_the_disk_by_its_target(tmp_path: Path) -> None:
    (tmp_path / "libvirt").mkdir()
    shutil.copy(DATA / "libvirt" / "zvol-defaults.xml", tmp_path / "libvirt" / "zvol-defaults.xml")
    disk = Layer("disk", "/dev/vda", {"transport": "virtio"})
    attach_host(disk, load_facts(tmp_path), None)
    assert disk.children[0].settings["kind"] == "zvol"
    assert disk.children[0].settings["matched_by"].startswith("libvirt's target name vda")


def test_the_cli_hangs_the_host_view_under_every_virtual_disk(host_facts: Path) -> None:
    """This machine's own disks against the host facts above: each virtual disk under / gets the host's
    layer or says why not (none of them is the VM 100 of those facts, so each says why not)."""
    done = cli_here("stack", "/", "--host-facts", str(host_facts), "--vm", "100", "--json")
    assert done.returncode == 0, done.stderr
    disks = [layer for _, layer in Stack.from_json(json.loads(done.stdout)).root.walk()
             if layer.kind == "disk" and layer.settings.get("transport") in VIRTUAL_TRANSPORTS]
    if not disks:
        pytest.skip("/ is on no virtual disk here")
    for disk in disks:
        serial = disk.settings.get("serial")
        why = (f"no disk of qemu-server/100.conf has serial {serial}" if serial
               else f"{disk.name} has no serial and qemu-server/100.conf names no disk {disk.name[5:]}")
        assert disk.notes == [f"host backing unknown: {why}"] and disk.children == []


def test_host_facts_without_a_vm_config_are_refused(tmp_path: Path) -> None:
    done = cli_here("stack", "/", "--host-facts", str(tmp_path))
    assert done.returncode == 1 and "holds no VM config" in done.stderr
    alone = cli_here("stack", "/", "--vm", "100")
    assert alone.returncode == 1 and "--host-facts" in alone.stderr
