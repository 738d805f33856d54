"""Every rule over a corpus of VM configurations written for the tests from the documented formats: 86
Proxmox qemu-server configs (tests/data/pve/corpus, each with its storage.cfg) and 47 libvirt domains
(tests/data/libvirt/corpus), audited with a small host capture each (host/: mounts, datasets, /dev links).
Each file says in its first line what it covers; `expected.tsv` beside them lists the findings each file must
give, rule and severity, and the audit must give exactly those: no crash, no unreadable file, nothing more,
nothing less. The coverage tests check the corpus still spells every bus, controller, storage type, cache
mode, aio mode, CPU type and option form the documentation lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stackbench.audit.facts import load_facts
from stackbench.audit.report import run_rules
from stackbench.audit.rule import Finding
from stackbench.audit.rules import REGISTRY
from stackbench.audit.storage import parse_storage_cfg

DATA = Path(__file__).parent.parent / "data"
PVE = DATA / "pve" / "corpus"
LIBVIRT = DATA / "libvirt" / "corpus"


def expected_table(corpus: Path) -> dict[str, frozenset[str]]:
    """file -> the findings it must give, as RULE:severity (`-`: none)."""
    table = {}
    for line in (corpus / "expected.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, findings = line.split("\t")
        assert name not in table, f"{name} twice in expected.tsv"
        table[name] = frozenset() if findings == "-" else frozenset(findings.split(","))
    return table


def audit(corpus: Path, name: str) -> list[Finding]:
    facts = load_facts(corpus / "host", [corpus / name], corpus / "storage.cfg" if corpus == PVE else None)
    report = run_rules(facts, REGISTRY)
    assert report.problems == [], report.problems
    assert [vm.name for vm in facts.vms] == [f"corpus/{name}"]
    return report.findings


def difference(expected: frozenset[str], findings: list[Finding]) -> str | None:
    """What the audit gave that the table does not say, and the reverse; None when they agree."""
    got = {f"{f.rule_id}:{f.severity}" for f in findings}
    missing, extra = sorted(expected - got), sorted(got - expected)
    if not missing and not extra:
        return None
    return f"missing {missing}, not expected {extra}: " + "; ".join(f"{f.rule_id} {f.evidence}" for f in findings)


CASES = [(PVE, name) for name in expected_table(PVE)] + [(LIBVIRT, name) for name in expected_table(LIBVIRT)]


@pytest.mark.parametrize("corpus", [PVE, LIBVIRT], ids=["proxmox", "libvirt"])
def test_every_file_has_a_row_and_every_row_a_file(corpus: Path) -> None:
    suffix = ".conf" if corpus == PVE else ".xml"
    assert sorted(p.name for p in corpus.glob(f"*{suffix}")) == sorted(expected_table(corpus))
    assert len(expected_table(corpus)) >= (60 if corpus == PVE else 40)


@pytest.mark.parametrize("corpus, name", CASES, ids=[name for _, name in CASES])
def test_each_file_gives_exactly_the_findings_of_its_row(corpus: Path, name: str) -> None:
    findings = audit(corpus, name)
    assert difference(expected_table(corpus)[name], findings) is None, difference(expected_table(corpus)[name], findings)
    first = (corpus / name).read_text().splitlines()[0]
    assert first.startswith(("#", "<!--")) and len(first) > 20, f"{name}: the first line must say what it covers"
    keys = [(f.rule_id, f.vm) for f in findings if f.vm]
    assert len(keys) == len(set(keys)), f"{name}: a rule reported one VM twice: {keys}"


def test_a_wrong_expectation_is_reported() -> None:
    """The table comparison can fail: a finding left out of a row, or one added, is named."""
    findings = audit(PVE, "182-many-problems.conf")
    right = expected_table(PVE)["182-many-problems.conf"]
    assert difference(right, findings) is None
    assert "missing ['KVM-NUMA:info']" in difference(right | {"KVM-NUMA:info"}, findings)
    assert "not expected ['KVM-BUS:warn']" in difference(right - {"KVM-BUS:warn"}, findings)
    assert "not expected ['KVM-CACHE:warn']" in difference(right - {"KVM-CACHE:warn"} | {"KVM-CACHE:crit"}, findings)


# --- grouping on the corpus --------------------------------------------------------------------------------

def test_thirty_one_disks_on_the_default_controller_are_one_finding_with_one_command() -> None:
    (bus,) = audit(PVE, "103-scsi-0-to-30-lsi-default.conf")
    assert len(bus.disks) == 31 and bus.fix == "qm set 103 --scsihw virtio-scsi-single"
    assert bus.subject == "corpus/103-scsi-0-to-30-lsi-default.conf scsi0, scsi1, scsi2 and 28 more"


def test_one_vm_on_three_storages_gets_one_cache_finding_with_each_disks_verdict() -> None:
    (cache,) = audit(PVE, "183-mixed-storages-one-vm.conf")
    assert [(d.disk, d.severity) for d in cache.disks] == [("scsi0", "warn"), ("scsi2", "crit")]  # librbd: nothing
    assert cache.fix == ("qm set 183 --scsi0 local-zfs:vm-183-disk-0,cache=none,discard=on,iothread=1,size=32G "
                         "--scsi2 btrfs-data:183/vm-183-disk-0.raw,cache=writeback,discard=on,iothread=1,size=32G")
    (mixed,) = audit(LIBVIRT, "mixed-disks-one-vm.xml")
    assert [(d.disk, d.severity) for d in mixed.disks] == [("vda", "warn"), ("vdc", "crit")]
    assert mixed.fix == ("virsh edit mixed-disks-one-vm: <driver ... cache='none'/> on vda; "
                         "virsh edit mixed-disks-one-vm: <driver ... cache='writeback'/> on vdc")


def test_unknown_storage_is_said_in_the_evidence() -> None:
    (missing,) = audit(PVE, "144-storage-not-in-storage-cfg.conf")
    assert "storage nowhere is not in storage.cfg" in missing.evidence and "pvesm status" in missing.fix
    (odd_type,) = audit(PVE, "146-storage-type-unknown-to-the-audit.conf")
    assert "type drbd, which this audit does not know" in odd_type.evidence
    (pool,) = audit(LIBVIRT, "pool-volume-writeback.xml")
    assert "libvirt storage pool" in pool.evidence


# --- what the corpus covers -------------------------------------------------------------------------------

def _live(text: str) -> str:
    return text.split("\n[", 1)[0]


PVE_TEXTS = {p.name: p.read_text() for p in sorted(PVE.glob("*.conf"))}
PVE_LIVE = "\n".join(_live(text) for text in PVE_TEXTS.values())


def _values(option: str) -> set[str]:
    return set(re.findall(rf"[,:]\s?{option}=([\w.-]+)", PVE_LIVE))


def test_the_proxmox_corpus_spells_every_documented_key_and_option() -> None:
    keys = set(re.findall(r"^(\w+):", PVE_LIVE, re.M))
    assert {f"ide{i}" for i in range(4)} | {f"sata{i}" for i in range(6)} | {f"scsi{i}" for i in range(31)} \
        | {f"virtio{i}" for i in range(16)} | {"efidisk0", "tpmstate0", "unused0", "cdrom"} <= keys
    assert set(re.findall(r"^scsihw: (\S+)", PVE_LIVE, re.M)) == {
        "lsi", "lsi53c810", "megasas", "pvscsi", "virtio-scsi-pci", "virtio-scsi-single"}
    assert any("scsi0:" in t and "scsihw:" not in t for t in PVE_TEXTS.values())  # the lsi default
    assert _values("cache") == {"none", "writethrough", "writeback", "directsync", "unsafe"}
    assert _values("aio") == {"native", "threads", "io_uring"}
    assert {"1", "on"} <= _values("iothread") and _values("discard") == {"on", "ignore"} and "1" in _values("ssd")
    cpus = set(re.findall(r"^cpu: (\S+)", PVE_LIVE, re.M))
    assert {"kvm64", "host", "x86-64-v2-AES", "x86-64-v2", "x86-64-v3", "qemu64", "max", "kvm64,flags=+aes",
            "host,flags=-aes", "cputype=qemu64,flags=+pcid;+aes", "custom-pve-cluster"} <= cpus
    assert any(not re.search(r"^cpu:", t, re.M) for t in PVE_TEXTS.values())  # the kvm64 default
    for spelling in ("media=cdrom", "ide0: cdrom,", ": none,media=cdrom", "file=local-zfs:", "memory: current=",
                     "base-100-disk-0/"):
        assert spelling in PVE_LIVE, spelling
    sections = set(re.findall(r"^\[([^\]]+)\]", "\n".join(PVE_TEXTS.values()), re.M))
    assert {"PENDING", "special:cloudinit"} <= sections and sections - {"PENDING", "special:cloudinit"}  # a snapshot
    assert sum(t.count("\n#") + t.startswith("#") for t in PVE_TEXTS.values()) > len(PVE_TEXTS)  # descriptions


def test_the_proxmox_corpus_puts_disks_on_every_storage_type() -> None:
    storages = parse_storage_cfg((PVE / "storage.cfg").read_text())
    used = {storages[m].type if m in storages else "not in storage.cfg"
            for m in re.findall(r"^(?:ide|sata|scsi|virtio)\d+: (?:file=)?([\w.-]+):", PVE_LIVE, re.M)}
    image_types = {s.type for s in storages.values()} - {"pbs", "cephfs"}  # backups and ISOs only
    assert used == image_types | {"not in storage.cfg"}
    assert {"zfspool", "dir", "btrfs", "lvm", "lvmthin", "rbd", "nfs", "cifs", "iscsi", "iscsidirect", "zfs",
            "glusterfs"} <= used
    assert any(storage.flag("krbd") for storage in storages.values() if storage.type == "rbd")
    assert "/dev/disk/by-id/" in PVE_LIVE and "/dev/zvol/" in PVE_LIVE  # absolute paths


def test_the_libvirt_corpus_covers_every_bus_source_cache_io_and_cpu_mode() -> None:
    text = "\n".join(p.read_text() for p in LIBVIRT.glob("*.xml"))
    assert set(re.findall(r"bus='(\w+)'", text)) >= {"virtio", "sata", "ide", "scsi", "usb"}
    assert set(re.findall(r"model='([\w-]+)'", text)) >= {"lsilogic", "lsisas1068", "lsisas1078", "vmpvscsi", "virtio-scsi"}
    assert set(re.findall(r"cache='(\w+)'", text)) == {"none", "writethrough", "writeback", "directsync", "unsafe"}
    assert re.search(r"<driver name='qemu' type='\w+'( discard='unmap')?( iothread='1')?/>", text)  # no cache=
    assert set(re.findall(r"io='(\w+)'", text)) == {"native", "threads", "io_uring"}
    assert set(re.findall(r"<disk type='(\w+)'", text)) == {"file", "block", "network", "volume"}
    assert set(re.findall(r"protocol='(\w+)'", text)) == {"rbd", "iscsi", "nbd", "gluster"}
    assert set(re.findall(r"device='(\w+)'", text)) == {"disk", "lun", "cdrom", "floppy"}
    assert set(re.findall(r"<cpu mode='([\w-]+)'", text)) == {"host-passthrough", "host-model", "maximum", "custom"}
    assert any("<cpu" not in p.read_text() for p in LIBVIRT.glob("*.xml"))  # QEMU's qemu64
