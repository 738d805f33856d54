"""Where fio's measured window lies in time, for the layer telemetry: from fio's per-second logs (when it
began measuring, plus its runtime), not from when it wrote its report (`timestamp_ms`), which comes after its
teardown. A real fio on ext4 on a real loop device, its report held back by a second (`exec_postrun=sleep 1`
stands in for a slow teardown: a slow machine's, the lab guests'), under the real sampler: the loop device
counts fio's bytes one for one over the window. Placed back from the report, the window's whole seconds held
the idle second and the device read about half of fio's bytes (on this idle VM the report comes 43-57 ms
after the I/O). And the second that holds the window's end counts whole for its part inside: prorated, runs
of 2 s read vda 0.93-0.96x of fio's bytes (analysis/conditions._kept).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackbench.analysis.layer_activity import cell_layers
from stackbench.engine.fio import job_file, run_fio
from stackbench.engine.fio_json import parse_fio_json
from stackbench.measure.telemetry import end_of, run_summary
from stackbench.model.plan import Workload
from stackbench.model.results import Cell
from stackbench.probe.conditions import ConditionSampler

MiB = 1024**2


def _loop_of(mount_point: Path) -> str:
    """The kernel name of the block device mounted at `mount_point` (loopN)."""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        source, point = line.split()[:2]
        if point == str(mount_point):
            return os.path.basename(source)
    raise AssertionError(f"{mount_point} is not mounted")


@pytest.mark.slow
def test_the_window_ends_when_fio_stopped_measuring_not_when_it_reported(ext4_loop: Path) -> None:
    device = _loop_of(ext4_loop)
    workload = Workload(rw="randwrite", bs=65536, iodepth=4, size=16 * MiB, runtime=3, ramp_time=1, direct=True)
    job = job_file(workload, str(ext4_loop / "scratch")) + "exec_postrun=sleep 1\n"
    with ConditionSampler([device]) as sampler:
        invocation = run_fio("fio", job)
    parsed = parse_fio_json(invocation.stdout)
    reported = parsed.document["timestamp_ms"] / 1000
    end = end_of(parsed, invocation.measured_from)
    assert end is not None and 0.9 <= reported - end <= 1.5  # the held-back second is not in the window
    summary = run_summary(sampler.result(), parsed, end, devices=[device], pools=[], cpus=None,
                          samples=invocation.samples, measured_from=invocation.measured_from)
    write = parsed.directions[0]
    cell = Cell(id="c", seq=0, workload=workload, result=write,
                measurement={"replicates": [{"index": 0, "round": 0, "iops": write.iops, "conditions": summary}]})
    found = cell_layers(cell, None)
    assert found is not None and found.layers[0].device == device
    assert found.layers[0].amplification["write"] == pytest.approx(1.0, rel=0.05), found.to_json()
    assert summary["foreign"]["share"] < 0.05


def test_a_log_with_times_from_the_job_s_start_says_nothing_of_when_fio_began(tmp_path: Path) -> None:
    """An older stackbench's logs (no log_unix_epoch) read as before, with no start."""
    from stackbench.engine.fio_logs import read_logs

    (tmp_path / "cell_iops.1.log").write_text("1000, 50, 1, 0, 0\n2001, 60, 1, 0, 0\n")
    samples, start = read_logs(tmp_path, "cell")
    assert [(s.t_s, s.iops) for s in samples["write"]] == [(1.0, 50), (2.0, 60)] and start is None
    (tmp_path / "cell_iops.1.log").write_text("1795822408741, 50, 1, 0, 0\n1795822409742, 60, 1, 0, 0\n")
    (tmp_path / "cell_iops.2.log").write_text("1795822408744, 5, 1, 0, 0\n1795822409745, 6, 1, 0, 0\n")
    samples, start = read_logs(tmp_path, "cell")
    assert [(s.t_s, s.iops) for s in samples["write"]] == [(1.0, 55), (2.0, 66)] and start == 1795822407.741


def test_the_second_that_holds_the_window_s_end_counts_whole_for_its_part_inside() -> None:
    """A 2.4 s window from 100.2 to 102.6 over seconds ending at 101, 102 and 103: the device moves 10 MB
    a second while fio runs (its ramp before the window too) and nothing after fio's end. One second is
    wholly inside, less than half the window; prorated, the first and last seconds read 0.9x of fio's 24 MB
    (the last one's idle 0.4 s spread over its 0.6 s inside). After fio's end it moved nothing, so the last
    second counts whole for its 0.6 s: 16 MB in 1.6 s of the window, fio's 24 MB prorated to them."""
    from stackbench.analysis.conditions import fio_window, summarize

    second = 10e6 / 512
    samples = [{"t": 100.0 + i, "dt": 1.0, "disks": {"vdz": {"write_sectors": sectors, "writes": 100, "busy_ms": 500}}}
               for i, sectors in ((1, second), (2, second), (3, 0.6 * second))]
    window = fio_window(102.6, 2.4)
    summary = summarize({"devices": ["vdz"], "samples": samples}, window, fio_bytes=24e6, foreign_on="vdz",
                        fio_moved={"write": 24e6}, idle_after=True)
    assert summary["disks"]["vdz"]["inside"]["seconds"] == 1.6
    assert summary["disks"]["vdz"]["inside"]["write_bytes"] == 16_000_000
    assert summary["foreign"]["bytes"] == 0
    before = summarize({"devices": ["vdz"], "samples": samples}, window, fio_bytes=24e6, foreign_on="vdz",
                       fio_moved={"write": 24e6})  # a sweep's job: the next job may follow at once
    assert before["disks"]["vdz"]["inside"]["seconds"] == 2.4
    assert before["disks"]["vdz"]["inside"]["write_bytes"] == pytest.approx(0.9 * 24e6)


@pytest.mark.slow
def test_the_sampler_reads_the_devices_as_fio_s_ramp_ends(ext4_loop: Path) -> None:
    """Told fio's ramp (`watch`), the real sampler reads the loop device within 0.1 s after the moment
    fio's per-second logs say it began measuring, and the run's summary counts the device from that
    reading to fio's end: its first counted second no longer starts at a once-a-second reading up to a
    second into the window (docs/stack.md, "What each layer did during each cell"). What that does to the
    bytes is the next test's: here, on a loaded machine, fio's own rate is the machine's doing (at 100 %
    CPU pressure the loop device read 0.94x of fio's bytes so, and 0.91x in the test of the window's end).
    The sampler's last reading comes once fio has ended, or not at all within 50 ms of the one before."""
    from stackbench.analysis.conditions import counting_start

    device = _loop_of(ext4_loop)
    workload = Workload(rw="randwrite", bs=65536, iodepth=4, size=16 * MiB, runtime=2, ramp_time=2, direct=True)
    with ConditionSampler([device]) as sampler:
        invocation = run_fio("fio", job_file(workload, str(ext4_loop / "scratch")),
                             on_started=lambda pid, _: sampler.watch(pid, workload.ramp_time))
    parsed = parse_fio_json(invocation.stdout)
    start = invocation.measured_from
    assert start is not None
    edges = [edge["t"] for edge in sampler.result().get("edges", ()) if edge["t"] >= start]
    assert edges and min(edges) - start <= 0.1, (start, sampler.result().get("edges"))
    summary = run_summary(sampler.result(), parsed, end_of(parsed, start), devices=[device], pools=[], cpus=None,
                          samples=invocation.samples, measured_from=start)
    result = sampler.result()
    first = counting_start(result["samples"], result["edges"], start)  # the reading nearest the start
    assert abs(first - start) <= 0.1, (start, result["edges"])
    inside = summary["disks"][device]["inside"]
    assert inside["seconds"] == pytest.approx(end_of(parsed, start) - first, abs=0.06), (first, summary)
    if first > start:  # counted from a reading after fio's start: less fio's bytes before it
        assert inside["fio_bytes"]["write"] < parsed.directions[0].io_bytes, summary
    else:  # from one at most 25 ms before it: all of fio's bytes
        assert inside["fio_bytes"]["write"] == pytest.approx(parsed.directions[0].io_bytes, rel=0.001), summary


def test_the_devices_are_counted_from_the_sampler_s_reading_as_fio_s_window_began() -> None:
    """fio's window from 100.0 to 103.0; its first second uneven, as on the lab guests' emulated CPU: 5 MB
    in its first 0.3 s, 1 MB in the other 0.7 s; 5 MB in each of the next two. The device passes fio's
    I/O through one for one (5 MB/s of ramp before). Read once a second from 99.6 on, the first counted
    second starts at 100.6 and fio's bytes before it are its first logged second's 6 MB spread evenly: the
    device read 0.85x of them. With the sampler's reading of the devices at 100.02 (an edge), the devices
    are counted from there, and only those 20 ms of fio's first second are spread: 0.99x."""
    from stackbench.analysis.conditions import fio_window, summarize

    def fio_by(t: float) -> float:
        """fio's bytes from 100.0 to t."""
        first = 5e6 * min(max(t - 100.0, 0.0), 0.3) / 0.3 + 1e6 * min(max(t - 100.3, 0.0), 0.7) / 0.7
        return first + 5e6 * min(max(t - 101.0, 0.0), 2.0)

    def device_by(t: float) -> float:
        return 5e6 * min(t - 99.0, 1.0) + fio_by(t)

    readings = [99.6, 100.6, 101.6, 102.6, 103.2]
    samples = [{"t": t, "dt": round(t - before, 3), "disks": {"vdz": {
        "write_sectors": (device_by(t) - device_by(before)) / 512, "writes": 10.0, "busy_ms": 500.0}}}
        for before, t in zip(readings, readings[1:])]
    edge = {"t": 100.02, "from": 99.6, "disks": {"vdz": {
        "write_sectors": (device_by(100.02) - device_by(99.6)) / 512, "writes": 1.0, "busy_ms": 10.0}}}
    timeline = {"write": [(100.0, 101.0, 6e6), (101.0, 102.0, 5e6), (102.0, 103.0, 5e6)]}

    def ratio(conditions: dict) -> float:
        summary = summarize(conditions, fio_window(103.0, 3.0), fio_bytes=16e6, fio_moved={"write": 16e6},
                            idle_after=True, timeline=timeline)
        inside = summary["disks"]["vdz"]["inside"]
        return inside["write_bytes"] / inside["fio_bytes"]["write"]

    assert ratio({"devices": ["vdz"], "samples": samples}) == pytest.approx(0.853, abs=0.005)  # a stored run's
    assert ratio({"devices": ["vdz"], "samples": samples, "edges": [edge]}) == pytest.approx(1.0, rel=0.02)


def test_a_reading_just_before_the_window_counts_when_the_first_edge_after_it_came_late() -> None:
    """The same fio as above, as a lab guest saw it (OpenZFS 2.3, third boot, the zvol): the sampler's thread
    was inside a slow once-a-second reading as the window began, so its edges came at 99.985 and only then
    at 100.418. Counted from the first edge at or after the start, fio's first second's 6 MB are spread
    evenly over those 418 ms while fio wrote 5.6 MB in them: here the device read 0.80x of fio's bytes
    (the boot's zvol 1.092x, its fio slow in that part-second rather than fast). The reading 15 ms before
    the start counts as at it (analysis/conditions.counting_start):
    15 ms of the ramp's I/O, within 1 %."""
    from stackbench.analysis.conditions import fio_window, summarize

    def fio_by(t: float) -> float:
        first = 5e6 * min(max(t - 100.0, 0.0), 0.3) / 0.3 + 1e6 * min(max(t - 100.3, 0.0), 0.7) / 0.7
        return first + 5e6 * min(max(t - 101.0, 0.0), 2.0)

    def device_by(t: float) -> float:
        return 5e6 * min(t - 99.0, 1.0) + fio_by(t)

    def disks(since: float, t: float) -> dict:
        return {"vdz": {"write_sectors": (device_by(t) - device_by(since)) / 512, "writes": 1.0, "busy_ms": 10.0}}

    readings = [99.6, 100.6, 101.6, 102.6, 103.2]
    samples = [{"t": t, "dt": round(t - before, 3), "disks": disks(before, t)} for before, t in zip(readings, readings[1:])]
    edges = [{"t": t, "from": 99.6, "disks": disks(99.6, t)} for t in (99.985, 100.418)]
    timeline = {"write": [(100.0, 101.0, 6e6), (101.0, 102.0, 5e6), (102.0, 103.0, 5e6)]}
    summary = summarize({"devices": ["vdz"], "samples": samples, "edges": edges}, fio_window(103.0, 3.0),
                        fio_bytes=16e6, fio_moved={"write": 16e6}, idle_after=True, timeline=timeline)
    inside = summary["disks"]["vdz"]["inside"]
    assert inside["write_bytes"] / inside["fio_bytes"]["write"] == pytest.approx(1.0, abs=0.01), inside


def test_fio_s_job_start_is_its_first_forked_process_s_not_fio_s_own(tmp_path: Path) -> None:
    """The job's clock starts after it forks: fio's own process (the leader) started before, laying out the
    file, so its start is not the job's; with several jobs the first one's (fio's logs place the window from
    the earliest job's start too)."""
    import time

    from stackbench.probe.conditions import TICKS_PER_SECOND, job_started

    for pid, started in ((100, 1000), (101, 1500), (102, 1450)):
        (tmp_path / str(pid)).mkdir()
        fields = ["S", "1", *["0"] * 17, str(started), "0"]  # starttime is field 22: the 20th after the name
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (fio) {' '.join(fields)}\n")
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    assert job_started([100, 101, 102], 100, root=str(tmp_path)) == pytest.approx(boot + 1450 / TICKS_PER_SECOND,
                                                                                  abs=0.01)
    assert job_started([100], 100, root=str(tmp_path)) is None  # fio has not forked its job yet
