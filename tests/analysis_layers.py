"""Synthetic conditions summaries and stacks for the layer tables' tests (tests/analysis/test_layer_activity.py,
tests/report/test_layer_table.py and test_compare_layer_table.py, tests/web/test_compare_layers.py):
summaries in the shape analysis/conditions.summarize writes, with figures chosen so the tables' answers can
be computed by hand."""

from __future__ import annotations

from dataclasses import replace

from stackbench.stack.layer import Layer, Stack

MB = 1_000_000


def disk(reads: int = 0, writes: int = 0, read_bytes: int = 0, write_bytes: int = 0, *, util: float = 50.0,
         io_ms: float | None = None, in_flight: dict | None = None, seconds: float = 10.0) -> dict:
    """One device's entry of a summary as analysis/conditions.summarize writes it, every second of the
    window wholly inside it (`inside` counts what the top-level keys count)."""
    inside = {"seconds": seconds, "reads": reads, "writes": writes, "read_bytes": read_bytes,
              "write_bytes": write_bytes, "busy_ms": util * 10 * seconds, "queue_ms": 5000.0,
              "io_ms": io_ms if io_ms is not None else (reads + writes) * 0.5}
    entry = {"reads": reads, "writes": writes, "bytes": read_bytes + write_bytes, "util": util, "inside": inside}
    return entry | ({"in_flight": in_flight} if in_flight else {})


def summary(disks: dict, *, fio_write: int = 0, fio_read: int = 0, seconds: float = 10.0,
            timed: bool = True) -> dict:
    """A run's summary over a window of `seconds` in which fio moved these bytes at a steady rate: with
    `timed`, each device's `inside` has fio's bytes in its seconds as a run with fio's per-second logs keeps
    them (analysis/conditions._disk), else none, as a summary from before they were kept."""
    fio = {direction: moved for direction, moved in (("read", fio_read), ("write", fio_write)) if moved}
    if timed:
        disks = {name: {**entry, "inside": {**entry["inside"], "fio_bytes": {
            direction: round(moved * entry["inside"]["seconds"] / seconds) for direction, moved in fio.items()}}}
                 for name, entry in disks.items()}
    return {"seconds": seconds, "disks": disks, "fio_bytes": fio}


def with_conditions(measured, summaries: list[dict]):  # noqa: ANN001, ANN202 - a synthetic cell
    replicates = [{"index": i, "iops": 1000.0, "conditions": s} for i, s in enumerate(summaries)]
    return replace(measured, measurement={"replicates": replicates})


def mirror() -> Stack:
    """ext4 on md0, a raid1 of sda and sdb."""
    legs = [Layer("disk", f"/dev/{name}", devices=[name]) for name in ("sda", "sdb")]
    md = Layer("md", "/dev/md0", devices=["md0"], children=legs)
    return Stack("/srv", Layer("filesystem", "/srv", settings={"fs_type": "ext4"}, children=[md]))


def loop_chain() -> Stack:
    """ext4 on loop3, whose backing file is on ext4 on vda."""
    vda = Layer("disk", "/dev/vda", devices=["vda"])
    lower = Layer("filesystem", "/", settings={"fs_type": "ext4"}, children=[vda])
    backing = Layer("file", "/var/tmp/img", children=[lower])
    loop = Layer("loop", "/dev/loop3", devices=["loop3"], children=[backing])
    return Stack("/mnt", Layer("filesystem", "/mnt", settings={"fs_type": "ext4"}, children=[loop]))


def two_loops(throttled: str | None = None) -> Stack:
    """ext4 on loop1 over a file on ext4 on loop0 over a file on ext4 on vda (tests/loop_chain.py's chain);
    the device named `throttled` with a cgroup throttle as the discovery records one."""
    def block(kind: str, name: str, children: list[Layer]) -> Layer:
        settings = {"cgroup_throttle": "write 200 IOPS (cgroup /bench)"} if name == throttled else {}
        return Layer(kind, f"/dev/{name}", settings=settings, devices=[name], children=children)

    def on_file(name: str, under: Layer) -> Layer:
        return Layer("file", name, children=[Layer("filesystem", name, settings={"fs_type": "ext4"}, children=[under])])

    loop0 = block("loop", "loop0", [on_file("/var/tmp/outer.img", block("disk", "vda", []))])
    loop1 = block("loop", "loop1", [on_file("/lower/inner.img", loop0)])
    return Stack("/upper", Layer("filesystem", "/upper", settings={"fs_type": "ext4"}, children=[loop1]))


def odd_mirror_run(label: str, run_id: str, leg_bytes: int, odd: str = "[bold]x"):  # noqa: ANN201 - a Run
    """A run of one sampled write cell and one unsampled read cell on ext4 on md0 over sda, sdb and a disk
    whose name (`odd`) would be markup if interpreted: the compare layer table's tests (tests/report,
    tests/web), with each leg's bytes chosen by `leg_bytes` against fio's 10 MB."""
    from synthetic import cell, run

    stack = mirror()
    stack.root.children[0].children.append(Layer("disk", f"/dev/{odd}", devices=[odd]))
    legs = {name: disk(writes=2560, write_bytes=leg_bytes) for name in ("sda", "sdb", odd)}
    counted = summary({"md0": disk(writes=2560, write_bytes=10 * MB), **legs}, fio_write=10 * MB)
    return run([with_conditions(cell(runs=[1000.0]), [counted]), cell(rw="randread", runs=[900.0])],
               label=label, run_id=run_id, facts={"fio_version": "fio-3.33", "stack": stack.to_json()})


def mirror_run():  # noqa: ANN201 - a Run
    """A run labelled `mirror` of ext4 on md0 over sda, sdb and sdc (tests/report/charts/test_chart_stack.py,
    tests/report/test_layer_export.py): in the write cell sdb is 96 % busy (the busiest) and sdc has no
    counts; the read cell has every disk, an ARC and each leg half of fio's bytes; a third cell has no layer
    activity at all."""
    from synthetic import cell, run

    stack = mirror()
    stack.root.children[0].children.append(Layer("disk", "/dev/sdc", devices=["sdc"]))
    write = summary({"md0": disk(writes=2560, write_bytes=10 * MB), "sda": disk(writes=2560, write_bytes=10 * MB),
                     "sdb": disk(writes=2560, write_bytes=10 * MB, util=96.0)}, fio_write=10 * MB)
    read = summary({"md0": disk(reads=25600, read_bytes=100 * MB), "sda": disk(reads=12800, read_bytes=50 * MB),
                    "sdb": disk(reads=12800, read_bytes=50 * MB), "sdc": disk(reads=10, read_bytes=40960)},
                   fio_read=100 * MB)
    read["arc"] = {"hits": 3, "misses": 1}
    cells = [with_conditions(cell(rw="randwrite", runs=[1000.0]), [write]),
             with_conditions(cell(rw="randread", runs=[3000.0]), [read]), cell(rw="write", bs=1024**2, runs=[300.0])]
    return run(cells, label="mirror", run_id="5555eeee" * 4,
               facts={"fio_version": "fio-3.33", "stack": stack.to_json()})
