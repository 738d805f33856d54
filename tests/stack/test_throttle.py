"""Which cgroup throttles hold this process's requests to a device (stack/throttle.py), read from a cgroup
tree written here: this host has cgroup v1 only, so v2's io.max and a group's ancestors are laid out in
tmp_path as the kernel lays them out. The real v1 throttle on a real loop device is
tests/stack/test_throttled_layer.py's."""

from __future__ import annotations

from pathlib import Path

from stackbench.stack.throttle import device_throttle, own_groups


def _tree(tmp_path: Path, proc: str) -> tuple[Path, Path]:
    (tmp_path / "proc").write_text(proc)
    root = tmp_path / "cgroup"
    root.mkdir()
    return tmp_path / "proc", root


def test_a_v1_throttle_on_the_process_s_group_or_an_ancestor_holds_its_requests(tmp_path: Path) -> None:
    proc, root = _tree(tmp_path, "12:memory:/x\n7:blkio:/bench/child\n0::/\n")
    child = root / "blkio" / "bench" / "child"
    child.mkdir(parents=True)
    (child / "blkio.throttle.write_iops_device").write_text("7:0 200\n7:1 50\n")
    (child / "blkio.throttle.read_iops_device").write_text("7:0 0\n")  # 0: the rule was removed
    (root / "blkio" / "bench" / "blkio.throttle.read_bps_device").write_text("7:0 10485760\n")
    assert [(v, g) for v, g, _ in own_groups(proc, root)] == [(1, "/bench/child"), (1, "/bench"), (1, "/"), (2, "/")]
    assert device_throttle("7:0", proc, root) == "write 200 IOPS (cgroup /bench/child); read 10.4858 MB/s (cgroup /bench)"
    assert device_throttle("7:1", proc, root) == "write 50 IOPS (cgroup /bench/child)"
    assert device_throttle("253:0", proc, root) is None


def test_a_v2_io_max_limit_holds_the_process_s_requests(tmp_path: Path) -> None:
    proc, root = _tree(tmp_path, "0::/user.slice/bench.scope\n")
    (root / "cgroup.controllers").write_text("io memory\n")
    group = root / "user.slice" / "bench.scope"
    group.mkdir(parents=True)
    (group / "io.max").write_text("259:0 rbps=max wbps=2000000 riops=max wiops=max\n7:3 rbps=max wbps=max riops=300 wiops=max\n")
    assert device_throttle("259:0", proc, root) == "write 2 MB/s (cgroup /user.slice/bench.scope)"
    assert device_throttle("7:3", proc, root) == "read 300 IOPS (cgroup /user.slice/bench.scope)"
    assert device_throttle("8:0", proc, root) is None


def test_no_cgroup_file_and_no_throttle_file_is_no_throttle(tmp_path: Path) -> None:
    assert device_throttle("7:0", tmp_path / "absent", tmp_path) is None
    proc, root = _tree(tmp_path, "7:blkio:/\n")
    assert device_throttle("7:0", proc, root) is None
