"""Reading saved facts: real captures (OpenZFS 2.1.11 in the lab guest, zfs-fuse 0.7.0 on this host), VM configs,
version handling, and bad input (garbage, cut files, unknown formats) that must become a recorded problem,
never an exception or a half-read fact."""

from __future__ import annotations

import dataclasses
import inspect
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import cli_here
from stackbench.audit import host_outputs, zfs_outputs
from stackbench.audit.errors import FactsFormatError
from stackbench.audit.facts import FACT_FILES, ZDB_CONFIG, Facts, load_facts
from stackbench.audit.probe import CAPTURES
from stackbench.audit.subject import MACHINE_ID_FILE
from stackbench.audit.report import run_rules
from stackbench.audit.rules import REGISTRY
from stackbench.audit.versions import (default_arc_max, default_compression, default_l2arc_write_max,
                                       default_volblocksize, parse_zfs_version)
from stackbench.audit.storage import locate_volume, parse_storage_cfg
from stackbench.audit.vm import parse_libvirt_xml, parse_qm_conf

DATA = Path(__file__).parent.parent / "data"
CAPTURE = DATA / "zfs" / "openzfs-2.1.11-debian12"
LEGACY = DATA / "zfs" / "zfs-fuse-0.7.0-debian12"
PROBE_21 = DATA / "zfs" / "openzfs-2.1.11-probe"
PROBE_23 = DATA / "zfs" / "openzfs-2.3.2-probe"
GIB = 1024**3


def copy_capture(tmp_path: Path, source: Path = CAPTURE) -> Path:
    target = tmp_path / "facts"
    shutil.copytree(source, target)
    return target


# --- real captures -------------------------------------------------------------------------------------

def test_status_with_device_paths_reads_the_same_tree_and_matches_zdb_by_device(tmp_path: Path) -> None:
    """`zpool status -P` names leaves /dev/vdb1 (partitions ZFS made); zdb's children are matched by device."""
    facts_dir = copy_capture(tmp_path)
    (facts_dir / "zpool-status.txt").write_text((CAPTURE / "zpool-status-P.txt").read_text())
    facts = load_facts(facts_dir)
    mirror, special = facts.vdevs["tank"]
    assert mirror.leaves == ["/dev/vdb1", "/dev/vdc1"] and special.leaves == ["/dev/vde1"]
    assert (mirror.ashift, special.ashift) == (12, 9) and mirror.ashift_source == "zdb -C"
    assert facts.disk_of("/dev/vdb1") == "vdb" and facts.physical_sector("/dev/vdb1") == 4096
    assert facts.physical_sector("/dev/vde1") == 512
    assert facts.problems == []


def test_the_legacy_zfs_fuse_capture_is_read_in_its_own_formats() -> None:
    facts = load_facts(LEGACY)
    assert facts.version is None and facts.problems == []
    assert facts.pools["legacy"]["capacity"] == "1" and facts.pools["legacy"]["version"] == "23"
    mirror, log = facts.vdevs["legacy"]
    assert (mirror.type, mirror.leaves, mirror.ashift) == ("mirror", ["/tmp/zf/a", "/tmp/zf/b"], 12)
    assert (log.type, log.vdev_class, log.ashift) == ("file", "logs", 12)
    assert facts.dataset_of_path("/legacy/images/disk.raw") == "legacy/images"
    assert facts.dataset_prop("legacy/images", "relatime") is None


def test_zpool_list_sums_class_rows_without_counting_leaves_twice() -> None:
    sizes, space = zfs_outputs.parse_zpool_list((CAPTURE / "zpool-list-Hpv.txt").read_text())
    assert sizes == {"tank": 2013265920}
    assert space == {("tank", "special"): (1063256064, 256512)}


def test_lsblk_values_as_numbers_or_as_strings_read_alike() -> None:
    """util-linux before 2.33 printed every value as a string; the real capture is re-encoded that way."""
    text = (CAPTURE / "lsblk-J-O.txt").read_text()
    native = host_outputs.parse_lsblk(text)
    document = json.loads(text)

    def stringify(entries):
        for entry in entries:
            for key, value in list(entry.items()):
                if isinstance(value, bool):
                    entry[key] = "1" if value else "0"
                elif isinstance(value, int):
                    entry[key] = str(value)
            stringify(entry.get("children", []))
    stringify(document["blockdevices"])
    old = host_outputs.parse_lsblk(json.dumps(document))
    assert native == old
    assert native["vdb"].physical_sector == 4096 and native["vdb"].rotational is True


# --- the loader's table --------------------------------------------------------------------------------

def test_the_table_passes_the_file_name_exactly_to_the_parsers_that_take_it() -> None:
    for row in (*FACT_FILES, ZDB_CONFIG):
        assert row.takes_file_name == ("file" in inspect.signature(row.parser).parameters), row.file


def test_the_table_fills_only_facts_fields_and_each_fallback_follows_its_first_choice() -> None:
    fields = {f.name for f in dataclasses.fields(Facts)}
    for index, row in enumerate(FACT_FILES):
        assert set(row.fields) <= fields, row.file
        if row.fallback:
            assert FACT_FILES[index - 1].fields == row.fields, row.file


def test_every_file_the_probe_saves_is_read_except_the_ones_kept_only_as_evidence() -> None:
    read = {row.file for row in (*FACT_FILES, ZDB_CONFIG)} | {MACHINE_ID_FILE}  # the subject of stored audits
    assert {c.file for c in CAPTURES} - read == {"modprobe-zfs.txt", "uname.txt"}
    assert read - {c.file for c in CAPTURES} == {"lsblk-J-O.txt"}  # what probes before lsblk.json saved


def test_a_fallback_is_read_only_when_the_first_choice_says_nothing(tmp_path: Path) -> None:
    """zpool-status-j.txt (2.3+) wins over zpool-status.txt; an empty JSON pool list falls back to the text."""
    facts_dir = copy_capture(tmp_path, PROBE_23)
    assert (facts_dir / "zpool-status-j.txt").is_file()
    (facts_dir / "zpool-status.txt").write_text("garbage that would be a problem if it were read\n")
    facts = load_facts(facts_dir)
    assert facts.problems == [] and [v.vdev_class for v in facts.vdevs["tank"]] == ["normal", "special", "logs", "cache"]
    (facts_dir / "zpool-status-j.txt").write_text('{"output_version": {"command": "zpool status"}, "pools": {}}')
    facts = load_facts(facts_dir)
    assert facts.vdevs == {} and any(p.startswith("zpool-status.txt") for p in facts.problems), facts.problems


def test_an_empty_image_list_is_a_fact_and_an_empty_swap_list_is_unknown(tmp_path: Path) -> None:
    facts_dir = copy_capture(tmp_path)
    (facts_dir / "image-files.txt").write_text("")
    (facts_dir / "swaps.txt").write_text("")
    facts = load_facts(facts_dir)
    assert facts.image_files == {} and facts.swaps is None
    assert load_facts(CAPTURE).image_files is None


# --- versions ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ((CAPTURE / "zfs-version.txt").read_text(), (2, 1, 11)),
    ((CAPTURE / "zfs-module-version.txt").read_text(), (2, 1, 11)),
    ("zfs-2.3.9-0+deb13u1\nzfs-kmod-2.2.7-1\n", (2, 2, 7)),  # module not yet reloaded after an upgrade
    ("0.7.13-1\n", (0, 7, 13)),
    ("unrecognized command 'version'\n", None),
])
def test_the_running_module_version_is_read(text: str, expected) -> None:
    assert parse_zfs_version(text) == expected


def test_defaults_follow_the_release() -> None:
    assert (default_volblocksize((2, 1, 11)), default_volblocksize((2, 2, 0))) == (8192, 16384)
    assert (default_compression((0, 7, 13)), default_compression((2, 3, 0))) == ("off", "on")
    assert default_l2arc_write_max((2, 2, 6)) == 8 * 1024**2
    assert default_l2arc_write_max((2, 2, 7)) == default_l2arc_write_max((2, 3, 0)) == 32 * 1024**2
    assert default_arc_max((2, 1, 11), 32 * GIB) == 16 * GIB
    assert default_arc_max((2, 3, 0), 32 * GIB) == 31 * GIB and default_arc_max((2, 3, 0), 2 * GIB) == GIB + 256 * 1024**2
    assert default_volblocksize(None) is None


# --- VM configs ----------------------------------------------------------------------------------------

def test_proxmox_config_reads_only_the_live_section() -> None:
    text = ("#Web server\n#second line\ncpu: x86-64-v2-AES\nmemory: current=4096\nnuma: 0\n"
            "scsi0: nfs:120/vm-120-disk-0.qcow2,iothread=1,size=4G\nscsihw: virtio-scsi-single\n"
            "ide2: none,media=cdrom\n\n[PENDING]\ncpu: kvm64\n\n[snap1]\ncpu: host\nvirtio0: local:1/x.raw\n")
    vm = parse_qm_conf(text, "qemu-server/120.conf")
    assert (vm.vmid, vm.cpu_model, vm.aes_visible, vm.memory_bytes, vm.numa) == ("120", "x86-64-v2-AES", True, 4096 * 1024**2, False)
    (disk,) = vm.disks
    assert (disk.key, disk.bus, disk.controller, disk.iothread, disk.cache, disk.cache_set, disk.image_format) == (
        "scsi0", "scsi", "virtio-scsi-single", True, "none", False, "qcow2")


@pytest.mark.parametrize("cpu, aes", [(None, False), ("kvm64", False), ("cputype=kvm64,flags=+aes;+pcid", True),
                                      ("x86-64-v2", False), ("x86-64-v2-AES", True), ("host", True), ("qemu64,flags=-aes", False),
                                      ("host,flags=-aes", False), ("max", True), ("x86-64-v3", True)])
def test_proxmox_cpu_types_and_aes(cpu: str | None, aes: bool) -> None:
    vm = parse_qm_conf(f"cpu: {cpu}\n" if cpu else "memory: 1024\n", "qemu-server/1.conf")
    assert vm.aes_visible is aes


def test_libvirt_domain_reads_disks_cpu_and_memory() -> None:
    xml = """<domain type='kvm'><name>win</name><memory unit='GiB'>8</memory><iothreads>1</iothreads>
      <devices>
        <disk type='block' device='disk'>
          <driver name='qemu' type='raw' cache='none' io='native' discard='unmap'/>
          <source dev='/dev/zvol/zroot/libvirt/windows' index='2'/><target dev='sda' bus='sata'/>
        </disk>
        <disk type='file' device='cdrom'><source file='/iso/x.iso'/><target dev='sdb' bus='sata'/></disk>
        <disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
          <source file='/var/lib/libvirt/images/a.qcow2'/><target dev='sdc' bus='scsi'/>
          <address type='drive' controller='0' bus='0' target='0' unit='0'/></disk>
        <controller type='scsi' index='0' model='virtio-scsi'><driver iothread='1'/></controller>
      </devices></domain>"""
    vm = parse_libvirt_xml(xml, "libvirt/win.xml")
    assert (vm.vmid, vm.memory_bytes, vm.cpu_model, vm.aes_visible) == ("win", 8 * GIB, "qemu64", False)
    sata, scsi = vm.disks
    assert (sata.bus, sata.cache, sata.aio, sata.discard, sata.image_format) == ("sata", "none", "native", True, "raw")
    assert (scsi.controller, scsi.iothread, scsi.cache, scsi.cache_set, scsi.image_format) == (
        "virtio-scsi", True, "writeback", False, "qcow2")
    assert locate_volume(sata.volume, None).dataset == "zroot/libvirt/windows"
    passthrough = parse_libvirt_xml("<domain><name>a</name><cpu mode='host-passthrough'/></domain>", "libvirt/a.xml")
    assert passthrough.aes_visible


def test_storage_cfg_maps_volumes_to_datasets_and_directories() -> None:
    storages = parse_storage_cfg("dir: local\n\tpath /var/lib/vz\n\tcontent iso,backup\n\n"
                                 "zfspool: tank-vm\n\tpool tank/vm\n\tsparse\n\tcontent images\n")
    zvol = locate_volume("tank-vm:vm-100-disk-0", storages)
    assert (zvol.dataset, zvol.zvol, zvol.sparse_storage, zvol.assumed) == ("tank/vm/vm-100-disk-0", True, True, False)
    image = locate_volume("local:100/vm-100-disk-0.qcow2", storages)
    assert image.path == "/var/lib/vz/images/100/vm-100-disk-0.qcow2" and not image.zvol
    unknown = locate_volume("nowhere:vm-1-disk-0", storages)
    assert (unknown.kind, unknown.where, unknown.dataset) == ("unknown", "storage nowhere is not in storage.cfg", None)
    assert locate_volume("local-zfs:vm-100-disk-0", None).dataset == "rpool/data/vm-100-disk-0"  # PVE install default
    assert locate_volume("local-zfs:vm-100-disk-0", None).assumed


STORAGE_CFG_EVERY_TYPE = """\
dir: local
\tpath /var/lib/vz
zfspool: local-zfs
\tpool rpool/data
\tsparse 1
btrfs: data
\tpath /mnt/data/pve
btrfs: nocow
\tpath /mnt/data/nocow
\tnocow 1
lvm: vg
\tvgname vg0
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
cifs: smb
\tpath /mnt/pve/smb
iscsi: san
\tportal 10.0.0.3
\ttarget iqn.2003-01.org.example:lun
iscsidirect: san-direct
\tportal 10.0.0.3
\ttarget iqn.2003-01.org.example:lun
zfs: zfs-over-iscsi
\tpool tank
\tportal 10.0.0.4
\tsparse 1
glusterfs: gluster
\tserver 10.0.0.5
\tvolume vms
pbs: backup
\tserver 10.0.0.6
"""


@pytest.mark.parametrize("volume, kind, where", [
    ("local-zfs:vm-100-disk-0", "zvol", "storage local-zfs (zfspool, pool rpool/data)"),
    ("local:100/vm-100-disk-0.qcow2", "file", "storage local (dir, path /var/lib/vz)"),
    ("data:100/vm-100-disk-0.raw", "btrfs-file", "storage data (btrfs, path /mnt/data/pve)"),
    ("nocow:100/vm-100-disk-0.raw", "btrfs-file", "storage nocow (btrfs, path /mnt/data/nocow, nocow)"),
    ("vg:vm-100-disk-0", "block", "storage vg (lvm, volume group vg0)"),
    ("local-lvm:vm-100-disk-0", "block", "storage local-lvm (lvmthin, thin pool pve/data)"),
    ("ceph:vm-100-disk-0", "librbd", "storage ceph (rbd, librbd)"),
    ("ceph-krbd:vm-100-disk-0", "block", "storage ceph-krbd (rbd, krbd 1: the kernel's /dev/rbd device)"),
    ("nas:100/vm-100-disk-0.qcow2", "netfs-file", "storage nas (nfs, path /mnt/pve/nas)"),
    ("smb:100/vm-100-disk-0.raw", "netfs-file", "storage smb (cifs, path /mnt/pve/smb)"),
    ("san:0.0.1.scsi-36001405", "block", "storage san (iscsi, the kernel's iSCSI initiator, a /dev/disk/by-id device)"),
    ("san-direct:0.0.1.scsi-36001405", "network", "storage san-direct (iscsidirect, QEMU's libiscsi)"),
    ("zfs-over-iscsi:vm-100-disk-0", "network", "storage zfs-over-iscsi (zfs, ZFS over iSCSI, QEMU's libiscsi; the "
                                                "ARC is the target's)"),
    ("gluster:100/vm-100-disk-0.qcow2", "network", "storage gluster (glusterfs, QEMU's libgfapi)"),
    ("backup:backup/vm/100/2024-01-01T00:00:00Z", "unknown", "storage backup has type pbs, which this audit does "
                                                             "not know"),
    ("nowhere:vm-100-disk-0", "unknown", "storage nowhere is not in storage.cfg"),
    ("/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-1", "block", "host block device /dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-1"),
    ("/dev/zvol/tank/vm-1", "zvol", "zvol tank/vm-1"),
])
def test_every_storage_type_resolves_to_its_kind_and_says_how(volume: str, kind: str, where: str) -> None:
    location = locate_volume(volume, parse_storage_cfg(STORAGE_CFG_EVERY_TYPE))
    assert (location.kind, location.where) == (kind, where)


def test_without_storage_cfg_only_a_fresh_installs_storages_are_assumed_and_said() -> None:
    assumed = locate_volume("local-zfs:vm-100-disk-0", None)
    assert assumed.kind == "zvol" and assumed.assumed and "storage.cfg not in the facts" in assumed.where
    other = locate_volume("ceph:vm-100-disk-0", None)
    assert other.kind == "unknown" and "not a storage a fresh Proxmox install has" in other.where


def _located(volume: str, *, mounts: str = "", links: str = "", kind: str = "proxmox"):
    """Where one disk (a Proxmox volume, or a libvirt <disk>) lives, given the host's mounts and /dev links."""
    facts = Facts(storages=parse_storage_cfg(STORAGE_CFG_EVERY_TYPE), mounts=host_outputs.parse_mounts(mounts),
                  links=host_outputs.parse_links(links) if links else {})
    if kind == "proxmox":
        vm = parse_qm_conf(f"scsi0: {volume}\n", "qemu-server/100.conf")
    else:
        vm = parse_libvirt_xml(f"<domain><name>d</name><devices>{volume}</devices></domain>", "libvirt/d.xml")
    facts.vms = [vm]
    ((_, _, location),) = facts.vm_disks()
    return location


def test_the_file_system_under_an_image_comes_from_mounts_and_a_deeper_mount_hides_zfs() -> None:
    root_on_zfs = "rpool/ROOT/pve-1 / zfs rw 0 0\nrpool/vz /var/lib/vz zfs rw 0 0\n/dev/sdb1 /mnt/data btrfs rw 0 0\n"
    on_zfs = _located("local:100/vm-100-disk-0.qcow2", mounts=root_on_zfs)
    assert (on_zfs.kind, on_zfs.dataset) == ("zfs-file", "rpool/vz") and "ZFS file system rpool/vz (mounts.txt)" in on_zfs.where
    ext4 = _located("local:100/vm-100-disk-0.qcow2", mounts=root_on_zfs + "/dev/sdc1 /var/lib/vz ext4 rw 0 0\n")
    assert (ext4.kind, ext4.dataset) == ("file", None) and ext4.where.endswith("on ext4 /var/lib/vz (mounts.txt)")
    nfs = _located("nas:100/vm-100-disk-0.qcow2", mounts=root_on_zfs)  # an NFS storage is never a local dataset
    assert (nfs.kind, nfs.dataset) == ("netfs-file", None)
    unknown = _located("local:100/vm-100-disk-0.qcow2")
    assert (unknown.kind, unknown.dataset) == ("file", None) and "a file system the facts do not name" in unknown.where


def test_a_dev_path_is_a_device_and_a_zd_device_is_the_zvol_its_links_name() -> None:
    passthrough = _located("/dev/disk/by-id/ata-X", mounts="rpool/ROOT/pve-1 / zfs rw 0 0\n")
    assert (passthrough.kind, passthrough.dataset) == ("block", None)  # not the root dataset
    links = "/dev/zvol/tank/web\t/dev/zd16\n"
    zd = _located("<disk type='block' device='disk'><source dev='/dev/zd16'/><target dev='vda' bus='virtio'/></disk>",
                  links=links, kind="libvirt")
    assert (zd.kind, zd.dataset) == ("zvol", "tank/web")
    rbd = _located("<disk type='network' device='disk'><source protocol='rbd' name='vms/web'/>"
                   "<target dev='vda' bus='virtio'/></disk>", kind="libvirt")
    assert (rbd.kind, rbd.where) == ("librbd", "network disk rbd vms/web (QEMU's librbd)")
    pool = _located("<disk type='volume' device='disk'><source pool='default' volume='web.qcow2'/>"
                    "<target dev='vda' bus='virtio'/></disk>", kind="libvirt")
    assert pool.kind == "unknown" and "libvirt storage pool" in pool.where


@pytest.mark.parametrize("parse, text", [
    (parse_qm_conf, "cores 4\n"),
    (parse_libvirt_xml, "<domain><name>x</name>"),
    (parse_libvirt_xml, "<network/>"),
    (parse_storage_cfg, "\tpath /var/lib/vz\n"),
])
def test_broken_vm_configs_name_the_file_and_line(parse, text: str) -> None:
    with pytest.raises(FactsFormatError) as error:
        parse(text, "some/file")
    assert str(error.value).startswith("some/file")


# --- bad input -----------------------------------------------------------------------------------------

PARSED_FILES = ["zpool-get-Hp-all.txt", "zfs-get-Hp-all.txt", "zpool-status.txt", "zpool-list-Hpv.txt",
                "arcstats.txt", "sys-block-queue.txt", "lsblk-J-O.txt"]


@pytest.mark.parametrize("name", PARSED_FILES)
def test_garbage_in_a_fact_file_is_a_recorded_problem_and_the_fact_stays_unknown(tmp_path: Path, name: str) -> None:
    facts_dir = copy_capture(tmp_path)
    (facts_dir / name).write_text("\x00\x01 this is not what the command prints\nsecond line\n")
    facts = load_facts(facts_dir)
    assert any(problem.startswith(name) for problem in facts.problems), facts.problems
    report = run_rules(facts, REGISTRY)
    assert not [p for p in report.problems if p.startswith("rule ")]


def test_a_cut_json_file_is_a_problem_not_a_partial_tree(tmp_path: Path) -> None:
    facts_dir = copy_capture(tmp_path)
    text = (CAPTURE / "lsblk-J-O.txt").read_text()
    (facts_dir / "lsblk-J-O.txt").write_text(text[: len(text) // 2])
    facts = load_facts(facts_dir)
    assert facts.block_devices == {} and any("lsblk-J-O.txt" in p and "not lsblk JSON" in p for p in facts.problems)


def test_an_unknown_zpool_status_layout_names_the_line(tmp_path: Path) -> None:
    """A status whose vdev rows are indented in a way no release prints (odd depth) is not guessed at."""
    facts_dir = copy_capture(tmp_path)
    text = (CAPTURE / "zpool-status.txt").read_text().replace("\t    vdc", "\t   vdc")
    (facts_dir / "zpool-status.txt").write_text(text)
    facts = load_facts(facts_dir)
    assert facts.vdevs == {}
    assert any(p.startswith("zpool-status.txt line 9: unexpected indentation") for p in facts.problems), facts.problems


def test_audit_with_only_unreadable_facts_fails_with_one_line_per_problem(tmp_path: Path) -> None:
    facts_dir = tmp_path / "facts"
    facts_dir.mkdir()
    (facts_dir / "zpool-status.txt").write_text("  pool: tank\nconfig:\n\tNAME STATE\n\tother ONLINE\n")
    result = cli_here("audit", "--from", str(facts_dir))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("Warning: zpool-status.txt line 4: expected the pool's own row 'tank'")
    assert lines[-1].startswith("Error: no findings, but 1 fact file could not be read")
    as_json = cli_here("audit", "--from", str(facts_dir), "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["problems"]


def _real_lines() -> list[str]:
    lines: list[str] = []
    for name in ("zpool-status.txt", "zpool-get-Hp-all.txt", "zfs-get-Hp-all.txt", "zpool-list-Hpv.txt", "zdb-C.txt",
                 "arcstats.txt", "sys-block-queue.txt"):
        lines += (CAPTURE / name).read_text().splitlines()[:60]
    return lines


REAL_LINES = _real_lines()
PARSERS = [zfs_outputs.parse_zpool_get, zfs_outputs.parse_zfs_get, zfs_outputs.parse_zpool_status,
           zfs_outputs.parse_zpool_status_json, zfs_outputs.parse_zdb_config, zfs_outputs.parse_zpool_list,
           zfs_outputs.parse_kstat, zfs_outputs.parse_vdev_properties, host_outputs.parse_lsblk,
           host_outputs.parse_block_queue, host_outputs.parse_links, host_outputs.parse_nvme_id_ns]
noisy_text = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=40)), max_size=40).map("\n".join),
    st.lists(st.sampled_from(REAL_LINES), max_size=60).map(lambda ls: "\n".join(ls)).map(
        lambda t: t.replace("\t", "  ", 3)),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
                 lambda children: st.one_of(st.lists(children, max_size=4),
                                            st.dictionaries(st.sampled_from(["pools", "vdevs", "name", "blockdevices",
                                                                             "children", "kname", "logs", "special"]),
                                                            children, max_size=4)),
                 max_leaves=20).map(json.dumps),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parser=st.sampled_from(PARSERS), text=noisy_text)
def test_parsers_raise_only_their_own_format_error(parser, text: str) -> None:
    try:
        parser(text)
    except FactsFormatError:
        pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=st.sampled_from(PARSED_FILES + ["zdb-C.txt", "meminfo.txt", "cpuinfo.txt", "zfs-module-parameters.txt"]),
       text=noisy_text)
def test_any_file_content_leaves_the_audit_running_and_every_rule_sound(tmp_path_factory, name: str, text: str) -> None:
    facts_dir = copy_capture(tmp_path_factory.mktemp("fuzz"))
    (facts_dir / name).write_text(text)
    facts = load_facts(facts_dir, [DATA / "pve" / "100-bad.conf"])
    report = run_rules(facts, REGISTRY)
    assert not [p for p in report.problems if p.startswith("rule ")], report.problems


# --- the probe's own captures of real pools (lab/ guests) -------------------------------------------------

def _tree(vdevs) -> list[tuple[str, str, list[str]]]:
    return [(v.vdev_class, v.type, v.leaves) for v in vdevs]


@pytest.mark.parametrize("capture", [PROBE_21, PROBE_23], ids=["2.1.11", "2.3.2"])
def test_probe_captures_read_without_problems(capture: Path) -> None:
    facts = load_facts(capture)
    assert facts.problems == []
    classes = [v.vdev_class for v in facts.vdevs["tank"]]
    assert classes == ["normal", "special", "logs", "cache"]
    mirror = facts.vdevs["tank"][0]
    assert (mirror.type, mirror.ashift, mirror.ashift_source) == ("mirror", 9, "zdb -C")
    assert [facts.physical_sector(leaf) for leaf in mirror.leaves] == [4096, 4096]


def test_zpool_status_json_in_every_spelling_gives_the_text_tree() -> None:
    """2.3.2's `zpool status -j` nested, with --json-int, with -p, and --json-flat-vdevs: one tree, as the text says
    (single-disk vdevs are named by path under -P, by disk otherwise; the leaves are the same)."""
    text = _tree(zfs_outputs.parse_zpool_status((PROBE_23 / "zpool-status.txt").read_text())["tank"])
    for name in ("zpool-status-j.txt", "raw/zpool-status-j.txt", "raw/zpool-status-jp.txt",
                 "raw/zpool-status-j-flat-int.txt"):
        assert _tree(zfs_outputs.parse_zpool_status_json((PROBE_23 / name).read_text())["tank"]) == text, name


def test_without_zdb_the_ashift_comes_from_vdev_properties(tmp_path: Path) -> None:
    """2.2+ `zpool get all-vdevs` names rows mirror-0 and sda where status -P says /dev/sda1."""
    facts_dir = copy_capture(tmp_path, PROBE_23)
    (facts_dir / "zdb-C.txt").unlink()
    facts = load_facts(facts_dir)
    ashifts = [(v.vdev_class, v.ashift, v.ashift_source) for v in facts.vdevs["tank"] if v.vdev_class != "cache"]
    assert ashifts == [("normal", 9, "zpool get ashift all-vdevs"), ("special", 9, "zpool get ashift all-vdevs"),
                       ("logs", 9, "zpool get ashift all-vdevs")]


def test_the_2_1_text_status_and_zdb_agree_with_the_2_3_json_on_the_same_layout() -> None:
    old, new = load_facts(PROBE_21), load_facts(PROBE_23)
    assert [(v.vdev_class, v.type, v.ashift) for v in old.vdevs["tank"]] == \
        [(v.vdev_class, v.type, v.ashift) for v in new.vdevs["tank"]]


def test_a_vm_config_given_by_its_bare_name_is_named_after_its_directory(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "pve1").mkdir()
    (tmp_path / "pve1" / "100.conf").write_text("memory: 1024\n")
    monkeypatch.chdir(tmp_path / "pve1")
    (vm,) = load_facts(tmp_path, [Path("100.conf")]).vms
    assert (vm.name, vm.vmid) == ("pve1/100.conf", "100")  # not "/100.conf"
