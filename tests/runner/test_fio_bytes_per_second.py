"""fio's bytes in the seconds a layer was counted: from fio's per-second logs, not at its mean rate.

The layer table sets each device's bytes over the sampler's seconds inside fio's window against fio's own
bytes in those seconds (measure/telemetry.fio_timeline, analysis/conditions._disk). A run whose rate is
uneven (the lab guests' md run: 67, 99 and 199 MB in its three seconds) moved far from a third of its
bytes in each: prorated at the mean rate, a device that passes fio's I/O through one for one read 1.14x of
fio's bytes here. The inputs are synthetic and exact: the sampler's seconds end on whole epoch seconds,
fio's window runs from 100.3 to 103.3 after a ramp at 50 MB/s, and the device moves what fio moves the
moment fio moves it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackbench.analysis.conditions import _fio_within
from stackbench.analysis.layer_activity import PRORATED, cell_layers
from stackbench.measure.telemetry import fio_timeline, run_summary
from stackbench.model.fio_result import DirectionResult, FioResult, Sample
from stackbench.model.plan import Workload
from stackbench.model.results import Cell

MB = 1_000_000
START, RAMP_RATE = 100.3, 50 * MB
SECONDS = (67 * MB, 99 * MB, 199 * MB)  # fio's bytes in each second of its window


def fio_run(io_bytes: float, runtime_s: float) -> FioResult:
    write = DirectionResult(job_name="cell", direction="write", rw="write", bs=1 << 20, iodepth=4, numjobs=1,
                            iops=io_bytes / (1 << 20) / runtime_s, bw_bytes=io_bytes / runtime_s,
                            io_bytes=int(io_bytes), total_ios=int(io_bytes) >> 20, runtime_ms=1000 * runtime_s,
                            usr_cpu=None, sys_cpu=None, clat=None)
    return FioResult(fio_version="fio-3.33", timestamp=None, directions=(write,), job_errors=(), raw_text="")


def logged(per_second: tuple[float, ...] = SECONDS) -> dict[str, list[Sample]]:
    """fio's write log as engine/fio_logs.read_logs gives it: one sample a second, its bandwidth."""
    return {"write": [Sample(t_s=float(i), iops=moved / (1 << 20), bw_bytes=moved)
                      for i, moved in enumerate(per_second, 1)]}


def moved_between(begin: float, end: float) -> float:
    """What the device moved from `begin` to `end`: fio's ramp, then each of its seconds at its own rate."""
    spans = [(START - 1.0, START, RAMP_RATE)] + [(START + i, START + i + 1, moved) for i, moved in enumerate(SECONDS)]
    return sum(moved * max(0.0, min(stop, end) - max(start, begin)) for start, stop, moved in spans)


def conditions() -> dict:
    second = 512.0
    samples = [{"t": float(t), "dt": 1.0, "disks": {"vdz": {
        "writes": 100, "write_sectors": moved_between(t - 1.0, t) / second, "busy_ms": 500, "in_flight": 4}}}
        for t in range(100, 105)]
    return {"devices": ["vdz"], "samples": samples}


def amplification(summary: dict) -> tuple[float, tuple[str, ...]]:
    workload = Workload(rw="write", bs=1 << 20, iodepth=4, runtime=3, ramp_time=1, direct=True)
    [write] = fio_run(sum(SECONDS), 3.0).directions
    cell = Cell(id="c", seq=0, workload=workload, result=write,
                measurement={"replicates": [{"index": 0, "round": 0, "iops": write.iops, "conditions": summary}]})
    found = cell_layers(cell, None)
    assert found is not None
    return found.layers[0].amplification["write"], found.not_recorded


def test_a_layer_that_passes_fio_s_bytes_through_reads_1x_of_them_however_uneven_fio_s_rate() -> None:
    """The device's seconds inside the window are 101-103 and, fio idle after its end, 103-104 for its
    0.3 s inside: 318.1 MB, fio's 20.1 of its first second, 99 and 199. At fio's mean rate those 2.3 s of
    its 3 held 279.8 MB, and the device read 1.14x."""
    parsed = fio_run(sum(SECONDS), 3.0)
    summary = run_summary(conditions(), parsed, START + 3.0, devices=["vdz"], pools=[], cpus=None,
                          samples=logged(), measured_from=START)
    inside = summary["disks"]["vdz"]["inside"]
    assert inside["write_bytes"] == pytest.approx(318.1 * MB, abs=1)
    assert inside["fio_bytes"] == {"write": pytest.approx(318.1 * MB, abs=1)}
    assert amplification(summary) == (1.0, ())
    assert summary["foreign"]["bytes"] == 0  # the ramp's 15 MB in the window's first second are not foreign

    prorated = run_summary(conditions(), parsed, START + 3.0, devices=["vdz"], pools=[], cpus=None)
    assert "fio_bytes" not in prorated["disks"]["vdz"]["inside"]
    ratio, named = amplification(prorated)
    assert ratio == pytest.approx(318.1 / (365 * 2.3 / 3), abs=0.001) and ratio > 1.05 and PRORATED in named


def test_fio_s_last_part_second_which_its_logs_leave_out_holds_the_rest_of_its_bytes() -> None:
    """A runtime of 3.4 s logs three full seconds: the 0.4 s after them moved what fio's total has beyond
    the logged 365 MB. Logs that hold more than fio's total, or end with its runtime, are scaled to it."""
    [pieces] = fio_timeline(fio_run(405 * MB, 3.4), logged(), START).values()
    assert [value for piece in pieces for value in piece] == pytest.approx([
        START, START + 1, 67 * MB, START + 1, START + 2, 99 * MB, START + 2, START + 3, 199 * MB,
        START + 3, START + 3.4, 40 * MB])
    scaled = fio_timeline(fio_run(182.5 * MB, 3.0), logged(), START)
    assert [moved for _, _, moved in scaled["write"]] == pytest.approx([33.5 * MB, 49.5 * MB, 99.5 * MB])


def test_logs_that_cannot_place_fio_s_bytes_leave_the_mean_rate_and_say_so() -> None:
    """No epoch times (an older fio log, `measured_from` None), no log at all (a run shorter than a
    second), or a direction with bytes and no logged second: no timeline."""
    parsed = fio_run(sum(SECONDS), 3.0)
    assert fio_timeline(parsed, logged(), None) is None
    assert fio_timeline(parsed, {}, START) is None
    assert fio_timeline(parsed, {"read": logged()["write"]}, START) is None
    assert fio_timeline(parsed, logged((0.0, 0.0, 0.0)), START) is None


def _every_pair(timeline: dict[str, list[tuple[float, float, float]]],
                spans: list[tuple[float, float]]) -> dict[str, float]:
    """The sum over every pair of a second of fio's and a counted second: what `_fio_within` must equal."""
    return {direction: sum(moved * max(0.0, min(end, stop) - max(start, begin)) / (end - start)
                           for start, end, moved in pieces if end > start for begin, stop in spans)
            for direction, pieces in timeline.items()}


_length = st.sampled_from([1.0, 0.999, 1.002, 0.4, 2.5])
_gap = st.sampled_from([0.0, 0.0, 0.001, -0.003])


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.tuples(_length, _gap, st.floats(0, 1e9)), max_size=30),
       spans=st.lists(st.tuples(_length, _gap), max_size=30), offset=st.floats(-2.0, 2.0), shuffled=st.booleans())
def test_fio_s_bytes_in_the_counted_seconds_are_the_sum_over_every_pair(
        pieces: list[tuple[float, float, float]], spans: list[tuple[float, float]], offset: float,
        shuffled: bool) -> None:
    """Only the counted seconds that can meet a second of fio's are looked at, and the sum is the every-pair
    sum exactly (jittered, overlapping and unordered seconds included)."""
    timeline, t = {"write": [], "read": []}, 1e9
    for length, gap, moved in pieces:
        timeline["write"].append((t, t + length, moved))
        t += length + gap
    counted, t = [], 1e9 + offset
    for length, gap in spans:
        counted.append((t, t + length))
        t += length + gap
    if shuffled:
        counted.reverse()
    assert _fio_within(timeline, counted) == _every_pair(timeline, counted)
