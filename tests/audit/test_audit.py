"""Audit rules on facts captured from a real OpenZFS 2.1.11 pool (tests/data/zfs, made by lab/), a real zfs-fuse
0.7.0 pool (its log vdev and image file), Proxmox VM configs and storage.cfg (tests/data/pve) and libvirt
domains (tests/data/libvirt). Every rule has a failing and a passing set of facts: where the real capture does
not show a problem, the failing set is the capture with one property changed, and the reverse."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Callable

import pytest

from stackbench.audit.aes_ni import parse_aes_ni
from stackbench.audit.facts import Facts, Vdev, load_facts
from stackbench.audit.host_outputs import BlockDevice, parse_nvme_id_ns
from stackbench.audit.storage import locate_volume, parse_storage_cfg
from stackbench.audit.vm import parse_libvirt_xml, parse_qm_conf
from stackbench.audit.rules import BY_ID, REGISTRY

DATA = Path(__file__).parent.parent / "data"
CAPTURE = DATA / "zfs" / "openzfs-2.1.11-debian12"
BAD_VM, GOOD_VM = DATA / "pve" / "100-bad.conf", DATA / "pve" / "101-good.conf"
QCOW2_VM, STORAGE_CFG = DATA / "pve" / "102.conf", DATA / "pve" / "storage.cfg"
LEGACY = DATA / "zfs" / "zfs-fuse-0.7.0-debian12"
LIBVIRT = DATA / "libvirt"
MIB, GIB = 1024**2, 1024**3


def real(vm: Path | None = None) -> Facts:
    return load_facts(CAPTURE, [vm] if vm else [])


def changed(edit: Callable[[Facts], None], vm: Path | None = None) -> Facts:
    facts = copy.deepcopy(real(vm))
    edit(facts)
    return facts


def pve(vm: Path, edit: Callable[[Facts], None] | None = None) -> Facts:
    """The capture with one Proxmox VM config and tests/data/pve/storage.cfg (local-zfs is the pool tank)."""
    facts = load_facts(CAPTURE, [vm], STORAGE_CFG)
    if edit:
        edit(facts)
    return facts


def legacy(edit: Callable[[Facts], None] | None = None) -> Facts:
    """The real zfs-fuse 0.7.0 capture: a mirror with a file log vdev, legacy/images holding disk.raw."""
    facts = load_facts(LEGACY)
    if edit:
        edit(facts)
    return facts


def domain(name: str, edit: Callable[[Facts], None] | None = None) -> Facts:
    """The capture with one libvirt domain from tests/data/libvirt."""
    facts = load_facts(CAPTURE, [LIBVIRT / name])
    if edit:
        edit(facts)
    return facts


def _vm_text(old: str, new: str) -> Callable[[Facts], None]:
    """Replace text in the first VM's file (a user-authored config) and parse it again."""
    def edit(facts: Facts) -> None:
        vm = facts.vms[0]
        path = DATA / vm.name
        text = path.read_text()
        assert old in text, (old, path)
        text = text.replace(old, new)
        facts.vms[0] = parse_libvirt_xml(text, vm.name) if vm.kind == "libvirt" else parse_qm_conf(text, vm.name)
    return edit


def _set(dataset: str, prop: str, value: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.datasets[dataset][prop] = (value, "local")
    return edit


def _mirror_ashift(value: int) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.vdevs["tank"][0].ashift = value
    return edit


def _no_special(facts: Facts) -> None:
    facts.vdevs["tank"] = [v for v in facts.vdevs["tank"] if v.vdev_class != "special"]


def _capacity(value: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.pools["tank"]["capacity"] = value
    return edit


def _add_log(leaf: str, rotational: str | None = None) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.vdevs["tank"].append(Vdev(name=leaf, type="disk", vdev_class="logs", leaves=[leaf]))
        if rotational is not None:
            facts.block_queue[leaf] = {"rotational": rotational, "physical_block_size": "512"}
    return edit


def _add_cache(leaf: str, rotational: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.vdevs["tank"].append(Vdev(name=leaf, type="disk", vdev_class="cache", leaves=[leaf]))
        facts.block_queue[leaf] = {"rotational": rotational, "physical_block_size": "512"}
    return edit


def _log_space(size: int) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        _add_log("vdf", "0")(facts)
        facts.class_space[("tank", "logs")] = (size, 0)
    return edit


def _raidz(facts: Facts) -> None:
    facts.vdevs["tank"][0].name, facts.vdevs["tank"][0].type = "raidz1-0", "raidz1"
    facts.vdevs["tank"][0].leaves = ["vdb", "vdc", "vdd"]


def _queue(disk: str, attribute: str, value: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.block_queue[disk][attribute] = value
    return edit


# `nvme id-ns -H` of QEMU's NVMe namespace (logical_block_size=512), as the lab guest captured it with nvme-cli
# (lab/run-guest.sh, OpenZFS 2.1 guest): eight formats, 512 in use, 4096 without metadata is format 4.
NVME_FORMATS = [(0, 512), (8, 512), (16, 512), (64, 512), (0, 4096), (8, 4096), (16, 4096), (64, 4096)]


def _nvme(in_use: int, lsblk: bool = False) -> Callable[[Facts], None]:
    """An NVMe namespace beside the capture's disks, with LBA format `in_use` marked (in use)."""
    def edit(facts: Facts) -> None:
        text = "## /dev/nvme0n1\n" + "".join(
            f"LBA Format  {i} : Metadata Size: {meta:<3} bytes - Data Size: {size} bytes - Relative Performance: 0 Best "
            f"{'(in use)' if i == in_use else ''}\n" for i, (meta, size) in enumerate(NVME_FORMATS))
        facts.nvme_formats = parse_nvme_id_ns(text)
        if lsblk:
            facts.block_devices["nvme0n1"] = BlockDevice("nvme0n1", "disk", logical_sector=512, physical_sector=512,
                                                         rotational=False)
    return edit


def _numa(nodes: int) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.numa_nodes = nodes
    return edit


def _cpu_without_aes(facts: Facts) -> None:
    """The capture's /proc/cpuinfo (a QEMU guest) with the aes flag taken out, read again."""
    text = (CAPTURE / "cpuinfo.txt").read_text()
    assert " aes " in text
    facts.aes_ni = parse_aes_ni(text.replace(" aes ", " "))


def _lvm(facts: Facts) -> None:
    facts.block_devices["dm-0"] = BlockDevice("dm-0", "lvm", parent="vda", mountpoints=["/srv"])


def _swaps(*devices: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.swaps = list(devices)
    return edit


def _weaker_special(facts: Facts) -> None:
    facts.vdevs["tank"][0].type = "raidz2"
    facts.vdevs["tank"][0].leaves = ["vdb", "vdc", "vdf", "vdg"]
    facts.vdevs["tank"][1] = Vdev(name="mirror-1", type="mirror", vdev_class="special", leaves=["vde", "vdh"])


def _vm_disk_option(key: str, option: str | None, drop: str | None = None) -> Callable[[Facts], None]:
    """Edit the first VM's config text (a user-authored file) and parse it again."""
    def edit(facts: Facts) -> None:
        vm = facts.vms[0]
        path = DATA / vm.name  # e.g. pve/100-bad.conf
        lines = []
        for line in path.read_text().splitlines():
            if line.startswith(f"{key}:"):
                parts = [p for p in line.split(",") if not (drop and p.startswith(drop + "="))]
                line = ",".join(parts + ([option] if option else []))
            lines.append(line)
        facts.vms[0] = parse_qm_conf("\n".join(lines), vm.name)
    return edit


# rule id -> (facts that must produce a finding, facts that must not), made from the real captures with one fact
# changed: a second check of the rules written before they carried their own examples. A new rule's examples
# are its FAILING and PASSING, written once in its module (tests/audit/test_audit_rules_examples.py runs them).
CASES: dict[str, tuple[Callable[[], Facts], Callable[[], Facts]]] = {
    "ZP-SPECIAL-SINGLE": (real, lambda: changed(_no_special)),
    "ZP-ASHIFT-LOW": (lambda: changed(_mirror_ashift(9)), real),
    "ZP-CAPACITY": (lambda: changed(_capacity("95")), real),
    "DS-SYNC-DISABLED": (real, lambda: changed(_set("tank/vm-100-disk-0", "sync", "standard"))),
    "DS-ATIME": (real, lambda: changed(lambda f: [_set(d, "relatime", "on")(f) for d in ("tank", "tank/images")])),
    "DS-COMPRESS-OFF": (real, lambda: changed(lambda f: [_set(d, "compression", "lz4")(f)
                                                         for d in ("tank/images", "tank/vm-100-disk-0")])),
    "DS-VBS-TINY": (lambda: changed(_set("tank/vm-100-disk-0", "volblocksize", "2048")), real),
    "DS-VBS-GUEST": (lambda: changed(_set("tank/vm-100-disk-0", "volblocksize", "131072")), real),
    "DS-SSB-SIZE": (lambda: changed(_set("tank/images", "special_small_blocks", "131072")), real),
    "KVM-CACHE": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "KVM-CPU-NOAES": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "KVM-BUS": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "ZP-SPECIAL-WEAKER": (lambda: changed(_weaker_special), real),
    "ZP-SPECIAL-FULL": (lambda: changed(lambda f: f.class_space.update({("tank", "special"): (1000, 800)})), real),
    "ZP-LOG-SINGLE": (lambda: changed(_add_log("vdf", "0")), real),
    "ZP-LOG-SLOW": (lambda: changed(_add_log("vdf", "1")), lambda: changed(_add_log("vdf", "0"))),
    "DS-SYNC-ALWAYS-HDD": (lambda: changed(_set("tank/images", "sync", "always")),
                           lambda: changed(lambda f: [_set("tank/images", "sync", "always")(f), _add_log("vdf", "0")(f)])),
    "ARC-MAX-LE-MIN": (lambda: changed(lambda f: f.module_parameters.update({"zfs_arc_max": str(f.arcstats["c_min"] - 1)})),
                       real),
    "ARC-OVERCOMMIT": (lambda: real(BAD_VM), lambda: changed(lambda f: f.meminfo.update({"MemTotal": 64 * 1024**3}), BAD_VM)),
    "HOST-INIT-ON-ALLOC": (lambda: changed(lambda f: setattr(f, "cmdline", f.cmdline + " init_on_alloc=1")), real),
    "KVM-AIO-NATIVE": (lambda: changed(_vm_disk_option("scsi0", "aio=native"), BAD_VM),
                       lambda: changed(_vm_disk_option("scsi0", "aio=native"), GOOD_VM)),
    "KVM-IOTHREAD-MISSING": (lambda: changed(_vm_disk_option("scsi0", None, drop="iothread"), GOOD_VM), lambda: real(GOOD_VM)),
    "KVM-IOTHREAD-IGNORED": (lambda: changed(_vm_disk_option("scsi0", "iothread=1"), BAD_VM), lambda: real(GOOD_VM)),
    "ZP-ASHIFT-FLASH512": (lambda: changed(_queue("vde", "rotational", "0")), real),
    "HOST-NVME-LBA": (lambda: changed(_nvme(in_use=0)), lambda: changed(_nvme(in_use=4))),
    "ZP-LOG-UNUSED": (lambda: legacy(lambda f: [_set(d, "logbias", "throughput")(f) for d in ("legacy", "legacy/images")]),
                      legacy),
    "ZP-LOG-OVERSIZE": (lambda: changed(_log_space(8 * GIB)), lambda: changed(_log_space(1063256064))),
    "DS-VBS-RAIDZ": (lambda: changed(_raidz), real),
    "DS-QCOW2-ON-ZFS": (lambda: pve(QCOW2_VM), lambda: pve(QCOW2_VM, _vm_text(".qcow2", ".raw"))),
    "DS-IMG-RECORDSIZE": (legacy, lambda: legacy(_set("legacy/images", "recordsize", "65536"))),
    "ARC-SMALL": (real, lambda: changed(lambda f: f.arcstats.update({"c_max": 4 * GIB}))),
    "L2ARC-HDR": (lambda: changed(lambda f: [_add_cache("vdf", "0")(f), f.arcstats.update({"l2_hdr_size": f.arcstats["size"] // 5})]),
                  lambda: changed(_add_cache("vdf", "0"))),
    "L2ARC-WRITE-MAX": (lambda: changed(_add_cache("vdf", "0")),
                        lambda: changed(lambda f: [_add_cache("vdf", "0")(f),
                                                   f.module_parameters.update({"l2arc_write_max": str(64 * MIB)})])),
    "KVM-DISCARD": (lambda: pve(BAD_VM), lambda: pve(GOOD_VM)),
    "KVM-NUMA": (lambda: pve(BAD_VM, _numa(2)),
                 lambda: pve(BAD_VM, lambda f: [_numa(2)(f), _vm_text("cores: 4\n", "cores: 4\nnuma: 1\n")(f)])),
    "GUEST-LVM": (lambda: changed(_lvm), real),
    "HOST-SWAP-ZVOL": (lambda: changed(_swaps("/dev/zd0")), lambda: changed(_swaps("/dev/vdd"))),
    "GUEST-CPU-NOAES": (lambda: changed(_cpu_without_aes), real),
}

# Rules whose findings claim a performance effect: each must carry the stackbench commands that measure it.
MEASURED = {"ZP-ASHIFT-FLASH512", "HOST-NVME-LBA", "DS-VBS-RAIDZ", "DS-QCOW2-ON-ZFS", "DS-IMG-RECORDSIZE", "ARC-SMALL",
            "L2ARC-HDR", "L2ARC-WRITE-MAX", "GUEST-LVM", "GUEST-CPU-NOAES", "HOST-INIT-ON-ALLOC", "KVM-CACHE",
            "KVM-BUS", "KVM-IOTHREAD-MISSING", "KVM-CPU-NOAES", "DS-COMPRESS-OFF", "DS-ATIME", "ZP-ASHIFT-LOW"}


def test_every_rule_has_docs_and_a_source_and_every_case_a_rule() -> None:
    assert set(CASES) <= {r.id for r in REGISTRY}
    for rule in REGISTRY:
        assert rule.doc.strip().startswith(rule.id), rule.id
        assert rule.source.startswith("https://"), rule.id
        assert rule.fix and rule.rationale


@pytest.mark.parametrize("rule", [r for r in REGISTRY if r.id in CASES], ids=lambda r: r.id)
def test_rule_fires_on_the_failing_facts_and_not_on_the_passing_ones(rule) -> None:
    failing, passing = CASES[rule.id]
    findings = list(rule.check(failing()))
    assert findings and all(f.rule_id == rule.id and f.evidence and f.fix for f in findings)
    assert all(f.severity == rule.severity for f in findings) or rule.id in ("KVM-CACHE", "DS-SSB-SIZE")
    if rule.id in MEASURED:
        assert all(f.prove and "stackbench " in f.prove for f in findings), rule.id
    assert list(rule.check(passing())) == []


def test_disputed_rules_say_so_and_ask_for_a_measurement() -> None:
    assert {r.id for r in REGISTRY if r.status == "disputed"} == {"DS-QCOW2-ON-ZFS"}
    assert {r.status for r in REGISTRY} <= {"stable", "disputed"}
    (finding,) = BY_ID["DS-QCOW2-ON-ZFS"].check(pve(QCOW2_VM))
    assert "measure first" in finding.fix and "stackbench compare" in finding.prove
    assert finding.severity == "warn" and "section 3" in BY_ID["DS-QCOW2-ON-ZFS"].doc


def test_the_capture_is_parsed_as_the_pool_was_built() -> None:
    facts = real()
    assert facts.zfs_version.startswith("zfs-kmod-2.1.11") and facts.version == (2, 1, 11)  # the module runs the pool
    (mirror, special) = facts.vdevs["tank"]
    assert (mirror.type, mirror.vdev_class, mirror.leaves, mirror.ashift) == ("mirror", "normal", ["vdb", "vdc"], 12)
    assert (special.type, special.vdev_class, special.leaves, special.ashift) == ("disk", "special", ["vde"], 9)
    assert facts.pools["tank"]["ashift"] == "9"  # the property is only a hint: the mirror got 12
    assert facts.block_queue["vdb"]["physical_block_size"] == "4096"
    assert facts.arcstats["c_max"] > 0 and facts.meminfo["MemTotal"] > 0
    assert facts.zvols() == ["tank/vm-100-disk-0"]


# --- libvirt domains -----------------------------------------------------------------------------------

# rule id -> (domain facts that must produce a finding, domain facts that must not)
LIBVIRT_CASES: dict[str, tuple[Callable[[], Facts], Callable[[], Facts]]] = {
    "KVM-CACHE": (lambda: domain("zvol-defaults.xml"), lambda: domain("zvol-tuned.xml")),
    "KVM-BUS": (lambda: domain("nixos-windows-sata.xml"), lambda: domain("zvol-tuned.xml")),
    "KVM-CPU-NOAES": (lambda: domain("zvol-defaults.xml"), lambda: domain("zvol-tuned.xml")),
    "KVM-IOTHREAD-MISSING": (lambda: domain("zvol-defaults.xml"), lambda: domain("zvol-tuned.xml")),
    "KVM-DISCARD": (lambda: domain("zvol-defaults.xml", _set("tank/vm-100-disk-0", "refreservation", "0")),
                    lambda: domain("zvol-tuned.xml", _set("tank/vm-100-disk-0", "refreservation", "0"))),
    "KVM-AIO-NATIVE": (lambda: domain("zvol-tuned.xml", _vm_text("cache='none' ", "")), lambda: domain("zvol-tuned.xml")),
    "KVM-NUMA": (lambda: domain("zvol-defaults.xml", _numa(2)), lambda: domain("zvol-tuned.xml", _numa(2))),
    "DS-QCOW2-ON-ZFS": (lambda: domain("qcow2-file.xml"),
                        lambda: domain("qcow2-file.xml", _vm_text("qcow2", "raw"))),
    "DS-IMG-RECORDSIZE": (lambda: domain("qcow2-file.xml"),
                          lambda: domain("qcow2-file.xml", _set("tank/images", "recordsize", "65536"))),
}


@pytest.mark.parametrize("rule_id", sorted(LIBVIRT_CASES))
def test_rules_on_libvirt_domains(rule_id: str) -> None:
    failing, passing = LIBVIRT_CASES[rule_id]
    facts = failing()
    assert [vm.kind for vm in facts.vms] == ["libvirt"] and facts.problems == []
    findings = list(BY_ID[rule_id].check(facts))
    assert findings and all(f.evidence and f.fix for f in findings)
    if rule_id.startswith("KVM-"):  # the fix is written for libvirt, not Proxmox
        assert all("virsh edit" in f.fix and "qm set" not in f.fix for f in findings), findings
    assert list(BY_ID[rule_id].check(passing())) == []


def test_the_real_nixos_disk_is_read_as_a_zvol_on_sata() -> None:
    facts = domain("nixos-windows-sata.xml")
    ((vm, disk, location),) = list(facts.vm_disks())
    assert (disk.bus, disk.cache, disk.aio, disk.discard) == ("sata", "none", "native", True)
    assert location.zvol and location.dataset == "zroot/libvirt/windows"
    (finding,) = BY_ID["KVM-BUS"].check(facts)
    assert "sda on sata" in finding.evidence and "/dev/zvol/zroot/libvirt/windows" in finding.evidence


# --- rule details ------------------------------------------------------------------------------------------

def test_kvm_discard_trusts_the_live_refreservation_over_storage_cfg() -> None:
    """storage.cfg says local-zfs is sparse, but the captured zvol behind scsi0 is thick (refreservation set)."""
    thick = {f.subject for f in BY_ID["KVM-DISCARD"].check(pve(BAD_VM))}
    assert thick == {"pve/100-bad.conf sata1"}  # vm-100-disk-1 is not in the facts: storage.cfg decides
    sparse_zvol = pve(BAD_VM, _set("tank/vm-100-disk-0", "refreservation", "0"))
    (both,) = BY_ID["KVM-DISCARD"].check(sparse_zvol)  # one finding for the VM, each disk's detail kept
    assert both.subject == "pve/100-bad.conf scsi0, sata1" and [d.disk for d in both.disks] == ["scsi0", "sata1"]
    scsi0 = both.disks[0]
    assert "zvol tank/vm-100-disk-0 refreservation=0" in scsi0.evidence
    assert "qm set 100 --scsi0 local-zfs:vm-100-disk-0,cache=writeback,size=32G,discard=on" in scsi0.fix  # keeps options
    assert both.fix.startswith("qm set 100 --scsi0 local-zfs:vm-100-disk-0,cache=writeback,size=32G,discard=on "
                               "--sata1 local-zfs:vm-100-disk-1,size=500G,discard=on; then fstrim")  # one command
    assumed = list(BY_ID["KVM-DISCARD"].check(real(BAD_VM)))  # no storage.cfg: the install default is assumed, and said
    assert assumed and all("assumed" in f.evidence for f in assumed)


@pytest.mark.parametrize("cmdline, config, dmesg, source", [
    ("", "y", None, "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y"),
    ("", None, "mem auto-init: stack:all(zero), heap alloc:on, heap free:off", "dmesg"),
    ("init_on_alloc=1", None, None, "init_on_alloc=1 in /proc/cmdline"),
    ("init_on_alloc=0 init_on_alloc=on", "y", None, "init_on_alloc=on in /proc/cmdline"),
    ("init_on_alloc=0", "y", "mem auto-init: stack:off, heap alloc:on, heap free:off", None),
    ("init_on_alloc=1 init_on_alloc=0", "y", None, None),
    ("", "y", "mem auto-init: stack:off, heap alloc:off, heap free:off", None),  # the kernel's own report wins
    ("", None, None, None),
])
def test_init_on_alloc_from_the_command_line_the_kernel_log_or_the_build_default(cmdline, config, dmesg, source) -> None:
    def edit(facts: Facts) -> None:
        facts.cmdline = f"{facts.cmdline} {cmdline}".strip()
        facts.kernel_config = {"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": config} if config else {}
        facts.mem_auto_init = dmesg
    findings = list(BY_ID["HOST-INIT-ON-ALLOC"].check(changed(edit)))
    if source is None:
        assert findings == []
    else:
        (finding,) = findings
        assert source in finding.evidence and "init_on_alloc=0" in finding.fix


def test_special_small_blocks_covers_zvols_from_2_4_only() -> None:
    def on(version, ssb):
        def edit(facts: Facts) -> None:
            facts.version = version
            _set("tank/vm-100-disk-0", "special_small_blocks", ssb)(facts)
        return list(BY_ID["DS-SSB-SIZE"].check(changed(edit)))
    assert on((2, 3, 0), "8192") == []  # zvols ignore it before 2.4
    (finding,) = on((2, 4, 0), "8192")
    assert finding.subject == "tank/vm-100-disk-0" and "volblocksize=8192" in finding.evidence
    assert "compressed" in finding.evidence and finding.severity == "warn"
    assert on((2, 4, 0), "4096") == []
    no_special = changed(lambda f: [_no_special(f), _set("tank/images", "special_small_blocks", "4096")(f)])
    assert [f.severity for f in BY_ID["DS-SSB-SIZE"].check(no_special)] == ["info"]


@pytest.mark.parametrize("version, value, fires", [
    ((2, 1, 11), 8 * MIB, True), ((2, 2, 6), 8 * MIB, True), ((2, 2, 7), 8 * MIB, False), ((2, 2, 7), 32 * MIB, True),
    ((2, 3, 0), 32 * MIB, True), ((2, 3, 0), 8 * MIB, False), (None, 8 * MIB, False),
])
def test_l2arc_write_max_is_compared_with_the_running_release_default(version, value, fires) -> None:
    def edit(facts: Facts) -> None:
        _add_cache("vdf", "0")(facts)
        facts.version = version
        facts.module_parameters["l2arc_write_max"] = str(value)
    findings = list(BY_ID["L2ARC-WRITE-MAX"].check(changed(edit)))
    assert bool(findings) == fires
    if fires:
        assert f"({value // MIB} MiB)" in findings[0].evidence
    spinning = changed(lambda f: [_add_cache("vdf", "1")(f)])
    assert list(BY_ID["L2ARC-WRITE-MAX"].check(spinning)) == []


def test_swap_on_a_zvol_is_found_through_links_and_stacked_devices() -> None:
    def swaps(device: str, edit: Callable[[Facts], None] | None = None) -> list:
        def both(facts: Facts) -> None:
            _swaps(device)(facts)
            if edit:
                edit(facts)
        return list(BY_ID["HOST-SWAP-ZVOL"].check(changed(both)))

    (direct,) = swaps("/dev/zvol/tank/swap")
    assert "zvol tank/swap" in direct.evidence and direct.severity == "info"
    (named,) = swaps("/dev/zd0", lambda f: f.links.update({"/dev/zvol/tank/vm-100-disk-0": "/dev/zd0"}))
    assert "zvol tank/vm-100-disk-0" in named.evidence
    (crypt,) = swaps("/dev/dm-1", lambda f: f.block_devices.update(
        {"dm-1": BlockDevice("dm-1", "crypt", parent="zd0"), "zd0": f.block_devices["zd0"]}))
    assert "(on /dev/zd0)" in crypt.evidence
    assert swaps("/dev/dm-1", lambda f: f.block_devices.update({"dm-1": BlockDevice("dm-1", "crypt", parent="vdd")})) == []


def test_guest_lvm_needs_a_vm() -> None:
    host = changed(lambda f: [_lvm(f), f.cpu_flags.discard("hypervisor")])
    assert not host.is_vm and list(BY_ID["GUEST-LVM"].check(host)) == []
    (finding,) = BY_ID["GUEST-LVM"].check(changed(_lvm))
    assert "dm-0 on vda (/srv)" in finding.evidence and "hypervisor" in finding.evidence
    assert "stackbench compare guest-lvm guest-plain" in finding.prove


def test_a_container_is_not_a_vm() -> None:
    facts = changed(lambda f: [_lvm(f), f.cpu_flags.discard("hypervisor"), setattr(f, "virt", "lxc")])
    assert not facts.is_vm
    assert list(BY_ID["GUEST-LVM"].check(facts)) == []


def test_nvme_lba_names_the_source_and_the_pool_it_would_destroy() -> None:
    (marked,) = BY_ID["HOST-NVME-LBA"].check(changed(_nvme(in_use=0)))
    assert "LBA format 0 (in use): 512 bytes (nvme id-ns -H)" in marked.evidence and "--lbaf=4" in marked.fix
    assert list(BY_ID["HOST-NVME-LBA"].check(changed(_nvme(in_use=5)))) == []  # 4096 with metadata is 4096 too
    (lsblk,) = BY_ID["HOST-NVME-LBA"].check(changed(_nvme(in_use=-1, lsblk=True)))
    assert "lsblk LOG-SEC" in lsblk.evidence
    assert list(BY_ID["HOST-NVME-LBA"].check(changed(_nvme(in_use=-1)))) == []  # nothing says which is in use

    def in_pool(facts: Facts) -> None:
        _nvme(in_use=0, lsblk=True)(facts)
        facts.block_devices["nvme0n1p1"] = BlockDevice("nvme0n1p1", "part", parent="nvme0n1")
        facts.vdevs["tank"].append(Vdev(name="nvme0n1p1", type="disk", vdev_class="logs", leaves=["nvme0n1p1"]))
    (pooled,) = BY_ID["HOST-NVME-LBA"].check(changed(in_pool))
    assert "holds pool tank" in pooled.evidence and "rebuilt from a backup" in pooled.fix


def test_log_unused_needs_every_dataset_to_bypass_the_log() -> None:
    def log_and(*edits: Callable[[Facts], None]) -> list:
        return list(BY_ID["ZP-LOG-UNUSED"].check(changed(lambda f: [_add_log("vdf", "0")(f)] + [e(f) for e in edits])))
    # tank/vm-100-disk-0 is sync=disabled in the capture; tank and tank/images still use the log
    assert log_and(_set("tank", "sync", "disabled")) == []
    (finding,) = log_and(_set("tank", "sync", "disabled"), _set("tank/images", "logbias", "throughput"))
    assert "tank/images logbias=throughput (local)" in finding.evidence and "zpool remove tank vdf" in finding.fix


def test_vbs_raidz_shows_the_space_the_zvol_reserves() -> None:
    (finding,) = BY_ID["DS-VBS-RAIDZ"].check(changed(_raidz))
    assert "volblocksize=8192 (default, the default of OpenZFS 2.1.11)" in finding.evidence
    assert "raidz1-0 ashift=12 (zdb -C)" in finding.evidence
    assert "(1.04x)" in finding.evidence  # 278921216 reserved for a 256 MiB volume, as captured
    wider = changed(lambda f: [_raidz(f), _set("tank/vm-100-disk-0", "volblocksize", "16384")(f)])
    assert list(BY_ID["DS-VBS-RAIDZ"].check(wider)) == []


def test_images_are_found_from_vm_configs_and_from_the_probe_once() -> None:
    facts = pve(QCOW2_VM, lambda f: setattr(f, "image_files", {"/tank/images/images/102/vm-102-disk-0.qcow2": 1 << 30,
                                                                "/tank/images/old.qcow2": 1 << 30}))
    findings = list(BY_ID["DS-QCOW2-ON-ZFS"].check(facts))
    assert [f.subject for f in findings] == ["pve/102.conf scsi0", "/tank/images/old.qcow2"]
    assert "qm disk move 102 scsi0" in findings[0].fix and "image-files.txt" in findings[1].evidence
    (recordsize,) = BY_ID["DS-IMG-RECORDSIZE"].check(facts)
    assert recordsize.subject == "tank/images" and recordsize.evidence.count("qcow2 /tank/images/") == 2


def test_arc_small_says_when_ram_does_not_allow_raising_it() -> None:
    (tight,) = BY_ID["ARC-SMALL"].check(real(BAD_VM))  # 8 GiB VM on a 2.8 GiB guest
    assert "RAM does not allow it" in tight.evidence and "the OpenZFS 2.1.11 default cap" in tight.evidence
    (roomy,) = BY_ID["ARC-SMALL"].check(changed(lambda f: f.meminfo.update({"MemTotal": 64 * GIB})))
    assert "RAM allows it" in roomy.evidence


def test_linked_clones_live_where_proxmox_puts_them() -> None:
    storages = parse_storage_cfg(STORAGE_CFG.read_text())
    zvol = locate_volume("local-zfs:base-100-disk-0/vm-101-disk-0", storages)
    assert zvol is not None and zvol.dataset == "tank/vm-101-disk-0"
    image = locate_volume("tank-images:100/base-100-disk-0.qcow2/101/vm-101-disk-0.qcow2", storages)
    assert image is not None and image.path == "/tank/images/images/101/vm-101-disk-0.qcow2"



@pytest.mark.parametrize("mode", ["host-passthrough", "host-model", "custom"])
def test_a_libvirt_cpu_that_disables_aes_hides_it(mode: str) -> None:
    model = "<model>Skylake-Client</model>" if mode == "custom" else ""
    facts = domain("zvol-tuned.xml", _vm_text("<cpu mode='host-passthrough'/>",
                                              f"<cpu mode='{mode}'>{model}<feature policy='disable' name='aes'/></cpu>"))
    assert not facts.vms[0].aes_visible
    assert list(BY_ID["KVM-CPU-NOAES"].check(facts))

def test_the_rules_table_in_the_docs_lists_every_rule_with_its_severity_and_status() -> None:
    rows = {}
    for line in (Path(__file__).parent.parent.parent / "docs" / "audit.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4 and cells[0] in BY_ID:
            rows[cells[0]] = cells
    assert set(rows) == set(BY_ID)
    for rule in REGISTRY:
        _, severity, status, checks = rows[rule.id]
        assert rule.severity in severity.split("/") and status.split()[0] == rule.status and checks, rule.id


def test_a_finding_takes_its_id_and_severity_from_its_rule() -> None:
    rule = BY_ID["KVM-CACHE"]
    finding = rule.finding("vm scsi0", "cache=writeback", "cache=none")
    assert (finding.rule_id, finding.severity) == ("KVM-CACHE", "warn")
    assert rule.finding("vm scsi0", "cache=unsafe", "cache=none", severity="crit").severity == "crit"
    with pytest.raises(ValueError, match="not declared"):
        rule.finding("vm scsi0", "cache=writeback", "cache=none", severity="err")
    with pytest.raises(ValueError, match="not declared"):
        BY_ID["ZP-CAPACITY"].finding("tank", "capacity=95%", "free space", severity="crit")
    assert {r.id: r.other_severities for r in REGISTRY if r.other_severities} == {
        "KVM-CACHE": {"crit", "info"}, "DS-SSB-SIZE": {"info"}}


# --- storage-aware cache advice and one finding per VM -----------------------------------------------------

CACHE_STORAGES = """\
zfspool: local-zfs
\tpool rpool/data
dir: tank-images
\tpath /tank/images
dir: ext4-images
\tpath /srv/images
btrfs: data
\tpath /mnt/data/pve
btrfs: data-nocow
\tpath /mnt/data/nocow
\tnocow 1
lvmthin: local-lvm
\tvgname pve
\tthinpool data
rbd: ceph
\tpool vms
rbd: ceph-krbd
\tpool vms
\tkrbd 1
nfs: nas
\tpath /mnt/pve/nas
\tserver 10.0.0.2
\texport /export
iscsidirect: san
\tportal 10.0.0.3
\ttarget iqn.2003-01.org.example:lun
"""
CACHE_MOUNTS = "tank/images /tank/images zfs rw 0 0\n/dev/sdb1 /srv ext4 rw 0 0\n/dev/sdc1 /mnt/data btrfs rw 0 0\n"


def _cache_facts(volume: str, cache: str | None) -> Facts:
    from stackbench.audit.host_outputs import parse_mounts
    option = f",cache={cache}" if cache else ""
    return Facts(storages=parse_storage_cfg(CACHE_STORAGES), mounts=parse_mounts(CACHE_MOUNTS),
                 vms=[parse_qm_conf(f"scsihw: virtio-scsi-single\nscsi0: {volume}{option},iothread=1\n",
                                    "qemu-server/100.conf")])


@pytest.mark.parametrize("volume, cache, severity, said", [
    # a zvol: the page cache on top of the ARC
    ("local-zfs:vm-100-disk-0", "writeback", "warn", "caches the zvol twice"),
    ("local-zfs:vm-100-disk-0", "writethrough", "warn", "caches the zvol twice"),
    ("local-zfs:vm-100-disk-0", None, None, None),
    ("local-zfs:vm-100-disk-0", "directsync", None, None),
    ("local-zfs:vm-100-disk-0", "unsafe", "crit", "flushes are ignored"),
    # files on ZFS: cached in the ARC only
    ("tank-images:100/vm-100-disk-0.raw", "writeback", None, None),
    ("ext4-images:100/vm-100-disk-0.qcow2", "writeback", None, None),
    # btrfs honours O_DIRECT; qemu-server leaves writeback there when cache is absent
    ("data:100/vm-100-disk-0.raw", "none", "crit", "checksum errors"),
    ("data:100/vm-100-disk-0.raw", "directsync", "crit", "checksum errors"),
    ("data:100/vm-100-disk-0.raw", None, None, None),
    ("data-nocow:100/vm-100-disk-0.raw", "none", None, None),
    # Ceph: librbd's own cache honours flushes; krbd is a block device without an ARC
    ("ceph:vm-100-disk-0", "writeback", None, None),
    ("ceph:vm-100-disk-0", "writethrough", None, None),
    ("ceph:vm-100-disk-0", "unsafe", "crit", "flushes are ignored"),
    ("ceph-krbd:vm-100-disk-0", "writeback", None, None),
    ("local-lvm:vm-100-disk-0", "writeback", None, None),
    ("nas:100/vm-100-disk-0.qcow2", "writeback", None, None),
    ("san:0.0.1.scsi-3600", "writeback", None, None),
    # a storage storage.cfg does not have: said, info
    ("elsewhere:vm-100-disk-0", "writeback", "info", "storage elsewhere is not in storage.cfg"),
    ("elsewhere:vm-100-disk-0", None, None, None),
])
def test_kvm_cache_advice_depends_on_the_storage(volume: str, cache: str | None, severity: str | None,
                                                 said: str | None) -> None:
    findings = list(BY_ID["KVM-CACHE"].check(_cache_facts(volume, cache)))
    if severity is None:
        assert findings == []
    else:
        (finding,) = findings
        assert finding.severity == severity and said in finding.evidence, finding.evidence
        assert finding.fix.startswith("qm set 100 --scsi0 ") or severity == "info"


def test_the_btrfs_fix_is_writeback_and_the_librbd_fix_for_unsafe_is_writeback_too() -> None:
    (btrfs,) = BY_ID["KVM-CACHE"].check(_cache_facts("data:100/vm-100-disk-0.raw", "none"))
    assert btrfs.fix == "qm set 100 --scsi0 data:100/vm-100-disk-0.raw,cache=writeback,iothread=1"
    (ceph,) = BY_ID["KVM-CACHE"].check(_cache_facts("ceph:vm-100-disk-0", "unsafe"))
    assert "cache=writeback" in ceph.fix
    (zvol,) = BY_ID["KVM-CACHE"].check(_cache_facts("local-zfs:vm-100-disk-0", "unsafe"))
    assert "cache=none" in zvol.fix


@pytest.mark.parametrize("volume, fires", [
    ("local-zfs:vm-100-disk-0", True), ("data:100/vm-100-disk-0.raw", True), ("ceph:vm-100-disk-0", False),
    ("san:0.0.1.scsi-3600", False), ("ceph-krbd:vm-100-disk-0", True), ("elsewhere:vm-100-disk-0", True),
])
def test_aio_native_without_o_direct_only_where_qemu_opens_a_file_or_device(volume: str, fires: bool) -> None:
    """librbd and libiscsi ignore aio=native; btrfs without cache= runs writeback, so aio=native fails there."""
    cache = None if volume.startswith("data:") else "writeback"
    facts = _cache_facts(volume, cache)
    facts.vms = [parse_qm_conf(f"scsi0: {volume},aio=native{',cache=' + cache if cache else ''}\n", "qemu-server/100.conf")]
    findings = list(BY_ID["KVM-AIO-NATIVE"].check(facts))
    assert bool(findings) == fires
    if volume.startswith("elsewhere:"):
        assert "assumed opened as a file or block device" in findings[0].evidence
    if volume.startswith("data:"):
        assert "aio=io_uring" in findings[0].fix and "cache=none" not in findings[0].fix


def test_fourteen_disks_on_the_default_controller_are_one_finding_with_one_command() -> None:
    disks = "".join(f"scsi{n}: local-zfs:vm-100-disk-{n},size=8G\n" for n in range(14))
    facts = Facts(vms=[parse_qm_conf("memory: 4096\n" + disks, "qemu-server/100.conf")])
    (finding,) = BY_ID["KVM-BUS"].check(facts)
    assert finding.subject == "qemu-server/100.conf scsi0, scsi1, scsi2 and 11 more"
    assert finding.fix == "qm set 100 --scsihw virtio-scsi-single" and finding.vm == "qemu-server/100.conf"
    assert [d.disk for d in finding.disks] == [f"scsi{n}" for n in range(14)]
    assert all(d.fix == "qm set 100 --scsihw virtio-scsi-single" and "controller lsi (no scsihw" in d.evidence
               for d in finding.disks)
    caches = Facts(storages=parse_storage_cfg(CACHE_STORAGES),
                   vms=[parse_qm_conf("scsihw: virtio-scsi-single\n" + disks.replace(",size", ",cache=writeback,size"),
                                      "qemu-server/100.conf")])
    (cache,) = BY_ID["KVM-CACHE"].check(caches)
    assert cache.fix.count("qm set 100") == 1 and cache.fix.count(",cache=none,size=8G") == 14
    assert " --scsi13 local-zfs:vm-100-disk-13,cache=none,size=8G" in cache.fix


def test_a_vm_finding_is_as_severe_as_its_worst_disk_and_json_keeps_every_disk() -> None:
    from stackbench.audit.report import AuditReport
    facts = Facts(storages=parse_storage_cfg(CACHE_STORAGES), vms=[parse_qm_conf(
        "scsihw: virtio-scsi-single\nscsi0: local-zfs:vm-100-disk-0,cache=writeback\n"
        "scsi1: local-zfs:vm-100-disk-1,cache=unsafe\n", "qemu-server/100.conf")])
    (finding,) = BY_ID["KVM-CACHE"].check(facts)
    assert finding.severity == "crit" and [d.severity for d in finding.disks] == ["warn", "crit"]
    data = AuditReport([finding]).to_json(facts)
    assert data["counts"] == {"crit": 1, "err": 0, "warn": 0, "info": 0}  # grouped findings are counted
    (shown,) = data["findings"]
    assert shown["vm"] == "qemu-server/100.conf"
    assert [sorted(d) for d in shown["disks"]] == [["disk", "evidence", "fix", "severity"]] * 2
    assert shown["disks"][1] == {"disk": "scsi1", "severity": "crit", "evidence": finding.disks[1].evidence,
                                 "fix": "qm set 100 --scsi1 local-zfs:vm-100-disk-1,cache=none"}


def test_the_terminal_block_lists_a_vms_disks_and_cuts_the_list() -> None:
    from rich.console import Console

    from stackbench.report.audit import render_findings
    disks = "".join(f"sata{n}: local-zfs:vm-100-disk-{n},size=8G\n" for n in range(6)) + \
        "".join(f"ide{n}: local-zfs:vm-100-disk-{n + 6},size=8G\n" for n in range(3))
    (finding,) = BY_ID["KVM-BUS"].check(Facts(vms=[parse_qm_conf(disks, "qemu-server/100.conf")]))
    console = Console(width=200, record=True)
    console.print(render_findings([finding], BY_ID, "1 findings"))
    text = console.export_text()
    assert text.count("KVM-BUS") == 1 and "sata0 on sata: local-zfs:vm-100-disk-0" in text
    assert "... and 3 more disks (--json lists each with its own fix)" in text and "ide2 on ide" not in text
