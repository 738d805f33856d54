"""`stackbench stack` and `layers --auto` on the real stacks of the OpenZFS lab guests (2.1 and 2.3, a full
Debian kernel under qemu): ext4 on LUKS2 on LVM, ext4 on md raid1, ext4 on an LV, a ZFS dataset and a zvol
of a pool with a mirror, a special, a log and a cache vdev. The guest captured `python3 -m stackbench.stack`
for each (the current src/stackbench) and made and removed layers --auto's scratch volumes for real
(lab/guest-init.sh, step "stack"). Every tree expected here is written from how guest-init.sh builds the
stack, with the kernel names it recorded in layout.txt; never from the program's output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lab_guest import GuestRun
from stackbench.stack.layer import Layer, Stack

pytestmark = [pytest.mark.zfsguest, pytest.mark.slow]
MiB = 1024**2
Node = tuple[str, str, dict[str, Any], list["Node"]]  # kind, name, settings expected, children


def captured(guest: GuestRun, name: str) -> Stack:
    return Stack.from_json(json.loads((guest.out / "stack" / f"{name}.json").read_text()))


def md_made(guest: GuestRun) -> bool:
    """Whether the guest had mdadm (tests/lab_guest.py fetches Debian's package on this machine, as the
    images do not hold it) and so made the md array and captured its stack."""
    return (guest.out / "stack" / "md.json").exists()


def shape(layer: Layer, expected: Node) -> Node:
    """`layer` cut to what `expected` names: its settings, and as many children."""
    kind, name, settings, children = expected
    return (layer.kind, layer.name, {key: layer.settings.get(key) for key in settings},
            [shape(child, want) for child, want in zip(layer.children, children)]
            + [(c.kind, c.name, {}, []) for c in layer.children[len(children):]])


def disk(name: str, transport: str, serial: str | None, **settings: Any) -> Node:
    return ("disk", f"/dev/{name}", {"transport": transport, "serial": serial, **settings}, [])


def ext4(point: str, source: str, below: Node) -> Node:
    return ("directory", point, {}, [("filesystem", point, {"fs_type": "ext4", "source": source}, [below])])


def lv(dm: str, name: str, size: int, below: Node) -> Node:
    return ("lvm", f"/dev/{dm}", {"vg": "guestvg", "lv": name, "segtype": "linear", "provisioning": "thick",
                                  "size_bytes": size}, [below])


def role(guest: GuestRun, name: str) -> list[str]:
    return guest.layout()[name]


def pool(guest: GuestRun) -> Node:
    """tank as guest-init.sh builds it: a mirror of the two 512e data disks and a special disk, both
    ashift 9 (zpool create/attach/add -o ashift=9), an NVMe log and a cache added by its by-id name."""
    d1, d2 = role(guest, "data")
    source = "zdb -C" if guest.series == "2.1" else "zpool get ashift all-vdevs"
    e512 = {"logical_sector_size": 512, "physical_sector_size": 4096}

    def part(kernel: str, below: Node) -> Node:
        return ("partition", f"/dev/{kernel}", {}, [below])

    special, log, cache = role(guest, "special")[0], role(guest, "log")[0], role(guest, "cache")[0]
    cache_path = f"/dev/disk/by-id/{role(guest, 'cache')[1]}-part1"
    return ("zfs-pool", "tank", {"ashift_hint": "9"}, [
        ("zfs-vdev", "mirror-0", {"type": "mirror", "class": "normal", "ashift": 9, "ashift_from": source}, [
            part(f"{d1}1", disk(d1, "virtio", "zdata1", **e512)), part(f"{d2}1", disk(d2, "virtio", "zdata2", **e512))]),
        ("zfs-vdev", f"/dev/{special}1", {"type": "disk", "class": "special", "ashift": 9}, [
            part(f"{special}1", disk(special, "scsi", "zspecial", rotational=False))]),
        ("zfs-vdev", f"/dev/{log}p1", {"type": "disk", "class": "logs"}, [
            part(f"{log}p1", disk(log, "nvme", "znvme", rotational=False))]),
        ("zfs-vdev", cache_path, {"type": "disk", "class": "cache"}, [
            ("partition", f"/dev/{cache}1", {"zfs_path": cache_path}, [disk(cache, "scsi", "zcache", rotational=False)])]),
    ])


def test_ext4_on_luks2_on_lvm(guest: GuestRun) -> None:
    """lvcreate -L 64M -n secret guestvg (the VG's second LV: dm-1), luksFormat --type luks2 --cipher
    aes-xts-plain64 --key-size 512 --sector-size 4096, opened as `secret` (dm-2), ext4 on it."""
    lvm = role(guest, "lvm")[0]
    crypt = ("dm-crypt", "/dev/dm-2", {"type": "LUKS2", "cipher": "aes-xts-plain64", "key_bits": 512, "sector_size": 4096,
                                       "dm_name": "secret", "logical_sector_size": 4096},
             [lv("dm-1", "secret", 64 * MiB, disk(lvm, "virtio", "zlvm"))])
    expected = ext4("/mnt/secret", "/dev/mapper/secret", crypt)
    stack = captured(guest, "secret")
    assert shape(stack.root, expected) == expected
    assert stack.virtualization not in (None, "none")
    assert stack.data_path()[-1].notes and "on the host" in stack.data_path()[-1].notes[0]


def test_ext4_on_md_raid1(guest: GuestRun) -> None:
    """mdadm --create /dev/md0 --level=1 --raid-devices=2 --metadata=1.2 of the disks zmd1 and zmd2."""
    if not md_made(guest):
        pytest.skip("no md array in the guest: this machine could not fetch mdadm (`apt-get download mdadm`)")
    md1, md2 = role(guest, "md")
    array = ("md", "/dev/md0", {"level": "raid1", "raid_disks": 2, "metadata": "1.2",
                                "members": {md1: "in_sync", md2: "in_sync"}},
             [disk(md1, "virtio", "zmd1"), disk(md2, "virtio", "zmd2")])
    expected = ext4("/mnt/md", "/dev/md0", array)
    layers = captured(guest, "md")
    assert shape(layers.root, expected) == expected
    assert layers.data_path()[2].devices == ["md0"]


def test_ext4_on_an_lv(guest: GuestRun) -> None:
    expected = ext4("/mnt/lvdata", "/dev/mapper/guestvg-data", lv("dm-0", "data", 128 * MiB,
                                                                    disk(role(guest, "lvm")[0], "virtio", "zlvm")))
    assert shape(captured(guest, "lvm").root, expected) == expected


def test_a_dataset_over_its_pool_and_every_vdev_class(guest: GuestRun) -> None:
    """tank/images: recordsize=128K, compression=off, atime=on, relatime=off (zfs create -o ...)."""
    expected = ("directory", "/tank/images", {}, [
        ("zfs-dataset", "tank/images", {"recordsize": 128 * 1024, "compression": "off", "atime": "on", "relatime": "off"},
         [pool(guest)])])
    stack = captured(guest, "dataset")
    assert shape(stack.root, expected) == expected
    dataset, tank = stack.root.children[0], stack.root.children[0].children[0]
    assert (dataset.zfs, tank.zfs, tank.children[1].zfs) == (
        {"pool": "tank", "dataset": "tank/images"}, {"pool": "tank"},
        {"pool": "tank", "vdev": f"/dev/{role(guest, 'special')[0]}1"})


def test_the_counter_names_of_a_dataset_are_its_pool_its_vdevs_and_their_disks(guest: GuestRun) -> None:
    """What the per-second sampler reads for tank/images: every row `zpool iostat -v tank` prints under the
    pool (the mirror, each leaf, the special, log and cache vdevs) and each partition and disk under them."""
    (d1, d2), special, log = role(guest, "data"), role(guest, "special")[0], role(guest, "log")[0]
    cache_kernel, cache_given = role(guest, "cache")
    cache = f"/dev/disk/by-id/{cache_given}-part1"
    names = captured(guest, "dataset").counter_names()
    assert (names.pools, names.datasets) == (("tank",), (("tank", "tank/images"),))
    assert names.vdevs == tuple(("tank", vdev) for vdev in (
        "mirror-0", f"/dev/{d1}1", f"/dev/{d2}1", f"/dev/{special}1", f"/dev/{log}p1", cache))
    assert names.diskstats == (f"{d1}1", d1, f"{d2}1", d2, f"{special}1", special, f"{log}p1", log,
                               f"{cache_kernel}1", cache_kernel)


def test_the_counter_names_of_md_raid1_are_the_array_and_both_disks(guest: GuestRun) -> None:
    if not md_made(guest):
        pytest.skip("no md array in the guest: this machine could not fetch mdadm (`apt-get download mdadm`)")
    assert captured(guest, "md").counter_names().diskstats == ("md0", *role(guest, "md"))


def test_a_zvol_by_its_device_path(guest: GuestRun) -> None:
    """zfs create -s -V 512M -o volblocksize=4K -o sync=disabled tank/vm-100-disk-0, named by its link."""
    expected = ("zvol", "tank/vm-100-disk-0", {"volblocksize": 4096, "volsize": 512 * MiB, "sync": "disabled"},
                [pool(guest)])
    stack = captured(guest, "zvol")
    assert shape(stack.root, expected) == expected
    assert stack.root.devices == [role(guest, "zvol")[0]]  # its /proc/diskstats row: the zd device


def auto(guest: GuestRun) -> dict[str, Any]:
    return json.loads((guest.out / "stack" / "auto.json").read_text())


def test_layers_auto_proposes_a_safe_run_at_every_layer(guest: GuestRun) -> None:
    """With free extents in guestvg (256 MiB less 128 + 64), a thick LV gets a scratch LV; root may create
    datasets and zvols; every device that holds data is only read."""
    proposals = auto(guest)["proposals"]
    hows = {name: [(step["kind"], step["how"]) for step in steps] for name, steps in proposals.items()}
    expected = {
        "secret": [("filesystem", "scratch-file"), ("dm-crypt", "read-device"), ("lvm", "scratch-lv"),
                   ("disk", "read-device")],
        "md": [("filesystem", "scratch-file"), ("md", "read-device"), ("disk", "read-device")],
        "lvm": [("filesystem", "scratch-file"), ("lvm", "scratch-lv"), ("disk", "read-device")],
        "dataset": [("zfs-dataset", "scratch-file"), ("zfs-pool", "scratch-dataset"), ("partition", "read-device"),
                    ("disk", "read-device")],
        "zvol": [("zvol", "scratch-zvol"), ("zfs-pool", "scratch-dataset"), ("partition", "read-device"),
                 ("disk", "read-device")],
    }
    if not md_made(guest):
        del expected["md"]
    assert hows == expected
    reads = [step for steps in proposals.values() for step in steps if step["how"] == "read-device"]
    assert all(cell.startswith("rw=randread/") and cell.endswith("/direct=1") for step in reads for cell in step["cells"])
    zvol = proposals["zvol"][0]["creates"]
    assert zvol["pool"] == "tank" and {"volblocksize": "4096", "sync": "disabled"}.items() <= zvol["properties"].items()


def test_scratch_volumes_are_made_journaled_and_removed(guest: GuestRun) -> None:
    volumes = auto(guest)["volumes"]
    for kind, entry in volumes.items():
        assert (entry["exists"], entry["journaled"], entry["problem"], entry["exists_after"], entry["journal_after"]) \
            == (True, [entry["name"]], None, False, []), kind
    assert volumes["zfs-dataset"]["mounted"] and volumes["zvol"]["device"] and volumes["lvm"]["device"]
    token = volumes["zvol"]["name"].rsplit("-", 1)[1]
    assert volumes["zvol"]["properties"] == ["4K", "always", token]


def test_a_killed_process_scratch_zvol_is_removed_by_the_next_one(guest: GuestRun) -> None:
    killed = auto(guest)["kill9"]
    assert (killed["before"], killed["journal"], killed["after"], killed["journal_after"]) == (
        True, ["tank/stackbench-scratch-killed9"], False, [])
    assert killed["reaped"] and killed["reaped"][0].startswith("removed the scratch zvol tank/stackbench-scratch-killed9")


def test_a_volume_without_the_mark_is_never_destroyed(guest: GuestRun) -> None:
    stranger = auto(guest)["not_ours"]
    assert stranger["exists_after"] and "left alone" in stranger["problem"]
