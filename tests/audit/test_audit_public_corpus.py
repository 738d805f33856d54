"""Every rule over libvirt domains nobody here wrote: 171 files of libvirt's and virt-manager's own test
suites (tests/data/libvirt/public, SOURCES says where each comes from), audited on a root-on-ZFS host.

`expected.tsv` was written by reading each file against docs/audit.md, not from stackbench's output; the audit
must give exactly its findings. The tests below it name the defects these files exposed: disks that are no
host file located under `/`, non-x86 guests told their CPU hides AES-NI, iothread forms and implicit SCSI
controllers not read, shareable and USB disks not judged, qcow2 on an LVM volume called thin."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from stackbench.audit.facts import Facts, load_facts
from stackbench.audit.report import run_rules
from stackbench.audit.rule import Finding
from stackbench.audit.rules import REGISTRY

PUBLIC = Path(__file__).parent.parent / "data" / "libvirt" / "public"


def _table(name: str) -> list[list[str]]:
    return [line.split("\t") for line in (PUBLIC / name).read_text().splitlines()
            if line.strip() and not line.startswith("#")]


EXPECTED = {row[0]: frozenset() if row[1] == "-" else frozenset(row[1].split(",")) for row in _table("expected.tsv")}
SOURCES = {row[0]: row[1:] for row in _table("SOURCES")}


def audited(name: str) -> tuple[Facts, list[Finding]]:
    facts = load_facts(PUBLIC / "host", [PUBLIC / name])
    report = run_rules(facts, REGISTRY)
    assert report.problems == [] and len(facts.vms) == 1, report.problems
    return facts, report.findings


def rules_of(findings: list[Finding]) -> set[str]:
    return {f"{f.rule_id}:{f.severity}" for f in findings}


def test_every_file_has_its_row_and_its_source() -> None:
    files = sorted(str(p.relative_to(PUBLIC)) for p in PUBLIC.rglob("*.xml") if "host" not in p.parts)
    assert files == sorted(EXPECTED) == sorted(SOURCES) and len(files) >= 150
    for name, (project, repository, path, commit, licence, sha256) in SOURCES.items():
        assert project and repository and path.endswith(Path(name).name) and re.fullmatch(r"[0-9a-f]{40}", commit)
        assert licence in ("LGPL-2.1-or-later", "GPL-2.0-or-later"), name
        assert hashlib.sha256((PUBLIC / name).read_bytes()).hexdigest() == sha256, f"{name} was edited"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_public_domain_gives_exactly_the_findings_of_its_row(name: str) -> None:
    _, findings = audited(name)
    got = rules_of(findings)
    assert got == EXPECTED[name], (f"missing {sorted(EXPECTED[name] - got)}, not expected {sorted(got - EXPECTED[name])}: "
                                   + "; ".join(f"{f.rule_id} {f.evidence}" for f in findings))
    keys = [(f.rule_id, f.vm) for f in findings if f.vm]
    assert len(keys) == len(set(keys)), f"a rule reported one VM twice: {keys}"


def test_a_wrong_row_fails() -> None:
    """The comparison can fail: the table is not a mirror of whatever the audit says."""
    _, findings = audited("libvirt/qemuxmlconfdata/disk-network-nfs.xml")
    assert rules_of(findings) == EXPECTED["libvirt/qemuxmlconfdata/disk-network-nfs.xml"]
    assert rules_of(findings) != EXPECTED["libvirt/qemuxmlconfdata/disk-network-nfs.xml"] | {"DS-IMG-RECORDSIZE:info"}


# --- the defects, each on the files that showed it ----------------------------------------------------------

NOT_HOST_FILES = {
    "libvirt/qemuxmlconfdata/disk-network-nfs.xml": ("vda", "network", "libnfs"),  # <source protocol='nfs' name='/foo/bar/baz'>
    "libvirt/qemuxml2argvdata/qemuxml2argv-disk-drive-network-nbd.xml": ("vda", "network", "NBD"),  # no name at all
    "libvirt/qemuxml2argvdata/qemuxml2argv-disk-drive-network-nbd-unix.xml": ("vda", "network", "NBD"),
    "libvirt/qemuxmlconfdata/disk-nvme.xml": ("vda", "pci", "NVMe"),
    "libvirt/qemuxmlconfdata/disk-vhostuser-numa.xml": ("vda", "vhost", "vhostuser /tmp/vhost1.sock"),
    "virt-manager/cli/compare/virt-install-many-devices.xml": ("vdt", "directory", "vvfat"),  # <source dir='/'>
}


@pytest.mark.parametrize("name", sorted(NOT_HOST_FILES))
def test_a_disk_that_is_no_host_file_is_located_by_its_source_type(name: str) -> None:
    """On a root-on-ZFS host, an NFS export QEMU opens itself, an NBD socket, a PCI NVMe device, a vhost-user
    socket or a vvfat directory was located as a file under / and drew DS-IMG-RECORDSIZE or DS-QCOW2-ON-ZFS."""
    facts, findings = audited(name)
    key, kind, said = NOT_HOST_FILES[name]
    (vm,) = facts.vms
    location = facts.locate(vm, next(disk for disk in vm.disks if disk.key == key))
    assert location.kind == kind and said in location.where and location.dataset is None
    assert not any(key in f.evidence for f in findings if f.rule_id in ("DS-IMG-RECORDSIZE", "DS-QCOW2-ON-ZFS"))


@pytest.mark.parametrize("name", [
    "libvirt/qemuxml2argvdata/qemuxml2argv-disk-floppy-pseries.xml",  # ppc64 pseries, no <cpu>
    "libvirt/qemuxml2argvdata/qemuxml2argv-disk-virtio-ccw.xml",  # s390x, no <cpu>
    "libvirt/qemuxml2argvdata/qemuxml2argv-arm-vexpressa9-basic.xml",  # armv7l, no <cpu>
    "virt-manager/cli/compare/virt-install-loongarch64-headless.xml",  # loongarch64, no <cpu>
])
def test_a_guest_that_is_not_x86_is_not_told_its_cpu_hides_aes_ni(name: str) -> None:
    facts, findings = audited(name)
    assert facts.vms[0].arch not in ("x86_64", "i686") and "KVM-CPU-NOAES" not in {f.rule_id for f in findings}


def test_an_x86_guest_without_cpu_still_is() -> None:
    _, findings = audited("libvirt/qemuxml2argvdata/qemuxml2argv-disk-virtio.xml")
    (cpu,) = [f for f in findings if f.rule_id == "KVM-CPU-NOAES"]
    assert "qemu64" in cpu.evidence


@pytest.mark.parametrize("name, keys", [
    ("libvirt/qemuxmlconfdata/iothreads-disk.xml", ("vdb", "vdc", "vdd")),  # attribute, mapping with queues, mapping
    ("libvirt/qemuxmlconfdata/iothreads-virtio-scsi-mapping.xml", ("sdc",)),  # the controller's <iothreads> mapping
    ("libvirt/qemuxml2argvdata/qemuxml2argv-iothreads-virtio-scsi-pci.xml", ("vdb", "sdc")),  # controller attribute
    ("libvirt/qemuxml2argvdata/qemuxml2argv-iothreads-virtio-scsi-ccw.xml", ("hda", "sdb")),
])
def test_every_iothread_form_libvirt_accepts_is_an_iothread(name: str, keys: tuple[str, ...]) -> None:
    facts, findings = audited(name)
    disks = {disk.key: disk for disk in facts.vms[0].disks}
    assert all(disks[key].iothread for key in keys)
    assert "KVM-IOTHREAD-MISSING" not in {f.rule_id for f in findings}


@pytest.mark.parametrize("name, key, model", [
    ("libvirt/qemuxml2argvdata/qemuxml2argv-disk-scsi-device-auto.xml", "sda", "lsilogic"),  # no controller, x86
    ("libvirt/qemuxml2argvdata/qemuxml2argv-pseries-vio.xml", "sda", "ibmvscsi"),  # <controller type='scsi'/>
    ("libvirt/qemuxml2argvdata/qemuxml2argv-pseries-disk.xml", "hda", "ibmvscsi"),
])
def test_a_scsi_disk_without_a_declared_model_gets_the_controller_libvirt_adds(name: str, key: str, model: str) -> None:
    """libvirt's normalised XML (disk-scsi-device-auto.x86_64-latest.xml, in this corpus) shows the lsilogic
    controller it adds on x86; pseries gets spapr-vscsi. Both are emulated: KVM-BUS names the disk."""
    facts, findings = audited(name)
    disk = next(disk for disk in facts.vms[0].disks if disk.key == key)
    assert disk.controller == model and not disk.controller_set and "libvirt's default" in (disk.controller_default or "")
    (bus,) = [f for f in findings if f.rule_id == "KVM-BUS"]
    assert any(detail.disk == key for detail in bus.disks)


@pytest.mark.parametrize("name, key", [
    ("libvirt/qemuxml2argvdata/qemuxml2argv-disk-drive-shared.xml", "hda"),
    ("virt-manager/cli/compare/virt-install-storage-creation.xml", "vdi"),
])
def test_a_shareable_disk_left_caching_on_the_host_is_reported(name: str, key: str) -> None:
    _, findings = audited(name)
    (cache,) = [f for f in findings if f.rule_id == "KVM-CACHE"]
    (detail,) = [d for d in cache.disks if d.disk == key]
    assert "shareable" in detail.evidence and "cache='none'" in detail.fix


def test_a_usb_data_disk_is_on_an_emulated_bus() -> None:
    _, findings = audited("libvirt/qemuxml2argvdata/qemuxml2argv-disk-usb-device.xml")
    (bus,) = [f for f in findings if f.rule_id == "KVM-BUS"]
    assert any(detail.disk == "sda" and "on usb" in detail.evidence for detail in bus.disks)


def test_qcow2_on_an_lvm_volume_is_not_thin_but_a_qcow2_file_is() -> None:
    _, on_lvm = audited("libvirt/qemuxml2argvdata/qemuxml2argv-blkdeviotune.xml")  # qcow2 on /dev/HostVG/QEMUGuest1
    assert "KVM-DISCARD" not in {f.rule_id for f in on_lvm}
    _, file = audited("libvirt/qemuxml2argvdata/qemuxml2argv-q35-virt-manager-basic.xml")
    (discard,) = [f for f in file if f.rule_id == "KVM-DISCARD"]
    assert "qcow2 image file" in discard.evidence


# --- what the corpus covers ----------------------------------------------------------------------------------

# libvirt writes attributes in single quotes, virt-manager in double quotes
TEXT = "\n".join(p.read_text() for p in PUBLIC.rglob("*.xml")).replace('"', "'")


def test_the_public_corpus_covers_every_source_type_bus_controller_mode_and_architecture() -> None:
    assert set(re.findall(r"<disk type='(\w+)'", TEXT)) >= {"file", "block", "dir", "network", "volume", "nvme",
                                                              "vhostuser"}
    assert set(re.findall(r"protocol='(\w+)'", TEXT)) >= {"rbd", "iscsi", "nbd", "gluster", "nfs", "http", "sheepdog"}
    assert set(re.findall(r"bus='(\w+)'", TEXT)) >= {"virtio", "ide", "sata", "scsi", "usb", "sd", "fdc"}
    assert set(re.findall(r"<controller type='scsi'[^>]* model='([\w-]+)'", TEXT)) >= {
        "lsilogic", "lsisas1068", "lsisas1078", "ibmvscsi", "virtio-scsi"}
    assert re.search(r"<controller type='scsi' index='\d'/>", TEXT)  # a controller without a model
    assert set(re.findall(r"cache='(\w+)'", TEXT)) >= {"none", "writeback", "writethrough", "directsync", "unsafe"}
    assert set(re.findall(r" io='(\w+)'", TEXT)) >= {"native", "threads"}
    assert set(re.findall(r"discard='(\w+)'", TEXT)) >= {"unmap", "ignore"}
    assert re.search(r"<driver [^>]*iothread='\d'", TEXT) and re.search(r"<driver[^>]*>\s*<iothreads>", TEXT)
    assert re.search(r"<controller type='scsi'[^>]*>\s*<driver [^>]*iothread=", TEXT)
    assert re.search(r"<controller type='scsi'[^>]*>\s*<driver[^>]*>\s*<iothreads>", TEXT)
    assert "<shareable/>" in TEXT and "<readonly/>" in TEXT
    assert set(re.findall(r"arch='(\w+)'", TEXT)) >= {"x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le",
                                                      "s390x", "riscv64", "loongarch64"}
