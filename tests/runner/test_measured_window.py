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
