"""The layer table (analysis/layer_activity.py) on synthetic conditions summaries whose answers are
computed by hand: amplification at each layer and at the bottom of the stack, the busiest layer,
and runs whose summaries predate the table's figures."""

from __future__ import annotations

from analysis_layers import MB, disk, loop_chain, mirror, summary, two_loops, with_conditions
from stackbench.analysis.layer_activity import PRORATED, cell_layers
from synthetic import cell


def test_a_mirror_writes_each_leg_once_and_the_disks_together_twice() -> None:
    stack = mirror()
    runs = [summary({"md0": disk(writes=2560, write_bytes=10 * MB, util=60.0),
                      "sda": disk(writes=2560, write_bytes=10 * MB, util=40.0),
                      "sdb": disk(writes=2560, write_bytes=10 * MB, util=42.0)}, fio_write=10 * MB)] * 2
    found = cell_layers(with_conditions(cell(rw="randwrite", runs=[1000.0, 1000.0]), runs), stack.counted_layers())
    assert [(layer.device, layer.kind, layer.depth, layer.bottom) for layer in found.layers] == [
        ("md0", "md", 0, False), ("sda", "disk", 1, True), ("sdb", "disk", 1, True)]
    assert [layer.amplification for layer in found.layers] == [{"write": 1.0}] * 3
    assert found.bottom_amplification == {"write": 2.0}
    md0 = found.layers[0]
    # two runs of 10 s: 5,120 writes of 20 MB in 20 s
    assert (md0.iops, md0.mb_per_s, md0.avg_request_bytes, md0.await_ms) == (256.0, 1.0, 3906, 0.5)
    assert md0.util_pct == 60.0 and md0.queue_depth == 0.5 and found.busiest is None


def test_ext4_on_a_loop_device_writes_what_fio_wrote_once() -> None:
    stack = loop_chain()
    counted = summary({"loop3": disk(writes=1000, write_bytes=4_096_000), "vda": disk(writes=800, write_bytes=4_300_000)},
                       fio_write=4_096_000)
    found = cell_layers(with_conditions(cell(rw="randwrite", runs=[100.0]), [counted]), stack.counted_layers())
    assert [layer.device for layer in found.layers] == ["loop3", "vda"]
    assert found.layers[0].amplification == {"write": 1.0}
    assert found.layers[1].amplification == {"write": 1.05}  # the lower ext4's journal and the backing file's metadata
    assert found.bottom_amplification == {"write": 1.05}


def test_a_layer_counted_over_part_of_the_window_is_compared_with_fio_s_bytes_over_that_part() -> None:
    """The seconds wholly inside fio's window (8 of its 10): the device's bytes in them against fio's
    bytes prorated to them, not against all of fio's."""
    counted = summary({"loop3": disk(writes=800, write_bytes=3_276_800, util=80.0, seconds=8.0)}, fio_write=4_096_000)
    found = cell_layers(with_conditions(cell(runs=[100.0]), [counted]), loop_chain().counted_layers())
    [loop] = found.layers
    assert loop.amplification == {"write": 1.0} and (loop.seconds, loop.iops, loop.util_pct) == (8.0, 100.0, 80.0)


def test_fio_s_bytes_in_the_layer_s_seconds_come_from_its_logs_where_the_run_kept_them() -> None:
    """fio moved 3 MB of its 4.096 MB in the 8 counted seconds of its 10 (its logs say so, and the summary
    keeps it: `inside.fio_bytes`): the layer's 3 MB is 1.00x. A run whose summary lacks them (measured before
    they were kept, or a job of a fio process that ran several) prorates fio's bytes at its mean rate, 3.28
    MB, and the table names that."""
    timed = summary({"loop3": disk(writes=800, write_bytes=3_000_000, seconds=8.0)}, fio_write=4_096_000)
    timed["disks"]["loop3"]["inside"]["fio_bytes"] = {"write": 3_000_000}
    found = cell_layers(with_conditions(cell(runs=[100.0]), [timed]), loop_chain().counted_layers())
    assert found.layers[0].amplification == {"write": 1.0} and PRORATED not in found.not_recorded
    prorated = summary({"loop3": disk(writes=800, write_bytes=3_000_000, seconds=8.0)}, fio_write=4_096_000,
                       timed=False)
    found = cell_layers(with_conditions(cell(runs=[100.0]), [prorated]), loop_chain().counted_layers())
    assert found.layers[0].amplification == {"write": round(3_000_000 / 3_276_800, 3)}
    assert PRORATED in found.not_recorded
    both = cell_layers(with_conditions(cell(runs=[100.0, 100.0]), [timed, prorated]), loop_chain().counted_layers())
    assert both.layers[0].amplification == {"write": round(6_000_000 / 6_276_800, 3)} and PRORATED in both.not_recorded


def test_the_deepest_saturated_layer_is_named_busiest() -> None:
    """Every layer above a saturated disk waits on it and shows busy too: the lowest saturated one is named."""
    stack = loop_chain()
    both = summary({"loop3": disk(writes=100, write_bytes=409_600, util=99.0),
                     "vda": disk(writes=100, write_bytes=409_600, util=95.0)}, fio_write=409_600)
    found = cell_layers(with_conditions(cell(runs=[10.0]), [both]), stack.counted_layers())
    assert (found.busiest, found.busiest_reason) == ("vda", "utilisation 95 %")
    top = {**both, "disks": {**both["disks"], "vda": disk(writes=100, write_bytes=409_600, util=30.0)}}
    assert cell_layers(with_conditions(cell(runs=[10.0]), [top]), stack.counted_layers()).busiest == "loop3"
    quiet = {**both, "disks": {name: disk(writes=100, write_bytes=409_600, util=89.0) for name in both["disks"]}}
    assert cell_layers(with_conditions(cell(runs=[10.0]), [quiet]), stack.counted_layers()).busiest is None


def _two_loops(utils: dict[str, float], throttled: str | None = None):  # noqa: ANN202 - a CellLayers
    """One run of 4K writes through loop1, loop0 and vda, each with the utilisation given; with `throttled`,
    that device has a cgroup throttle in the saved stack."""
    counted = summary({name: disk(writes=2000, write_bytes=8_192_000, util=util) for name, util in utils.items()},
                      fio_write=8_192_000)
    return cell_layers(with_conditions(cell(runs=[200.0]), [counted]), two_loops(throttled).counted_layers())


def test_a_saturated_disk_under_an_idle_layer_is_not_where_the_layers_above_spend_their_time() -> None:
    """loop1 busy all the time while loop0 under it is nearly idle: loop1's time is not spent in loop0, so
    not in the disk under loop0 either, however busy the disk is with other processes' I/O (the shared
    root disk). The layer where it is spent is loop1 (or between it and loop0); the disk is not named."""
    found = _two_loops({"loop1": 100.0, "loop0": 4.0, "vda": 95.0})
    assert [layer.saturated for layer in found.layers] == [True, False, True]
    assert (found.busiest, found.busiest_reason) == ("loop1", "utilisation 100 %")
    # each saturated layer under a saturated one inherits: the lowest of the chain is named
    assert _two_loops({"loop1": 100.0, "loop0": 99.0, "vda": 95.0}).busiest == "vda"
    assert _two_loops({"loop1": 100.0, "loop0": 99.0, "vda": 30.0}).busiest == "loop0"
    assert _two_loops({"loop1": 60.0, "loop0": 4.0, "vda": 95.0}).busiest == "vda"  # the only saturated layer


def test_a_throttled_layer_under_a_saturated_one_is_named_though_its_counters_show_it_idle() -> None:
    """A cgroup throttle holds the requests before the throttled device counts them (docs/stack.md, "A
    throttled layer"): the layer above is saturated, the throttled one idle, and the throttle is the cause."""
    found = _two_loops({"loop1": 100.0, "loop0": 4.0, "vda": 95.0}, throttled="loop0")
    assert found.busiest == "loop0" and not found.layers[1].saturated
    assert found.busiest_reason == ("a cgroup throttle, write 200 IOPS (cgroup /bench), held the requests of loop1 "
                                    "above it (utilisation 100 %) before its own counters saw them")
    assert found.layers[1].to_json()["throttle"] == "write 200 IOPS (cgroup /bench)"
    assert _two_loops({"loop1": 100.0, "loop0": 100.0, "vda": 30.0}, throttled="vda").busiest == "vda"
    # a throttle under no saturated layer held back nothing the counters show: nothing is named
    assert _two_loops({"loop1": 50.0, "loop0": 4.0, "vda": 30.0}, throttled="loop0").busiest is None
    # a saturated throttled layer is named as the lowest saturated one, its throttle said
    both = _two_loops({"loop1": 100.0, "loop0": 100.0, "vda": 30.0}, throttled="loop0")
    assert (both.busiest, both.busiest_reason) == ("loop0", "utilisation 100 %; a cgroup throttle on it: write 200 "
                                                             "IOPS (cgroup /bench)")


def test_a_growing_queue_is_saturation_below_90_percent() -> None:
    stack = loop_chain()
    growing = {"mean": 6.0, "rise": 9.0}
    counted = summary({"loop3": disk(writes=100, write_bytes=409_600, util=50.0),
                        "vda": disk(writes=100, write_bytes=409_600, util=70.0, in_flight=growing)},
                       fio_write=409_600)
    found = cell_layers(with_conditions(cell(runs=[10.0]), [counted]), stack.counted_layers())
    assert (found.busiest, found.busiest_reason) == ("vda", "its queue grew")
    steady = {**counted["disks"]["vda"], "in_flight": {"mean": 6.0, "rise": 1.0}}
    found = cell_layers(with_conditions(cell(runs=[10.0]), [{**counted, "disks": {**counted["disks"], "vda": steady}}]),
                        stack.counted_layers())
    assert found.busiest is None and found.layers[1].queue_growing is False


def test_summaries_from_before_the_table_show_what_they_have_and_name_the_rest() -> None:
    """A run measured before the summary kept per-direction bytes, request times and fio's bytes, and
    without a saved stack: IOPS, MB/s, size and utilisation from what it kept, the rest None and named."""
    old = {"seconds": 10.0, "disks": {"sda1": {"reads": 1000, "writes": 0, "bytes": 4_096_000, "util": 97.0},
                                      "sda": {"reads": 1000, "writes": 0, "bytes": 4_096_000, "util": 97.0}}}
    found = cell_layers(with_conditions(cell(rw="randread", runs=[100.0]), [old]), None)
    sda1, sda = found.layers
    assert (sda1.iops, sda1.mb_per_s, sda1.avg_request_bytes, sda1.util_pct) == (100.0, 0.41, 4096, 97.0)
    assert sda1.await_ms is None and sda1.read_bytes is None and sda1.amplification == {"read": None, "write": None}
    assert (sda1.kind, sda1.depth, sda.depth, sda.bottom) == ("device", 0, 1, None)
    assert found.bottom_amplification == {} and found.busiest == "sda"
    assert found.not_recorded == ("amplification", "await", "bytes per direction", "queue depth", "queue trend")
    assert cell_layers(cell(runs=[100.0]), None) is None  # no conditions at all
