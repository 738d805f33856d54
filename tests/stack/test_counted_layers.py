"""`Stack.counted_layers`: where each sampled block device sits in a saved stack, for the layer table
(analysis/layer_activity.py). Built from `Layer`s as the discovery writes them (a pool's leaf vdev over its
partition over its disk, a device named twice), not discovered: the shapes here need a ZFS pool."""

from __future__ import annotations

from stackbench.stack.layer import Layer, Stack, counted_layers_of


def _leg(disk: str) -> Layer:
    """A pool's leaf vdev on the first partition of `disk`, as `zpool status -P` names it."""
    whole = Layer("disk", f"/dev/{disk}", devices=[disk])
    part = Layer("partition", f"/dev/{disk}1", devices=[f"{disk}1"], children=[whole])
    return Layer("zfs-vdev", f"/dev/{disk}1", devices=[f"{disk}1"], zfs={"pool": "tank", "vdev": f"/dev/{disk}1"},
                 children=[part])


def test_each_device_once_top_down_with_its_depth_and_whether_it_is_at_the_bottom() -> None:
    mirror = Layer("zfs-vdev", "mirror-0", zfs={"pool": "tank", "vdev": "mirror-0"}, children=[_leg("sda"), _leg("sdb")])
    pool = Layer("zfs-pool", "tank", zfs={"pool": "tank"}, children=[mirror])
    stack = Stack("/tank/images", Layer("zfs-dataset", "tank/images", zfs={"pool": "tank"}, children=[pool]))
    seen = [(c.device, c.kind, c.depth, c.bottom) for c in stack.counted_layers()]
    # a vdev and its partition are one diskstats row: counted once, where it is met first
    assert seen == [("sda1", "zfs-vdev", 0, False), ("sda", "disk", 1, True),
                    ("sdb1", "zfs-vdev", 0, False), ("sdb", "disk", 1, True)]
    assert [c.device for c in counted_layers_of(stack.to_json())] == ["sda1", "sda", "sdb1", "sdb"]
    assert counted_layers_of({"version": None, "error": "OSError: ..."}) is None
    assert counted_layers_of(None) is None
