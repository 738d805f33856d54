"""One number per cell: a cell's IOPS, bandwidth and latencies are its runs' geometric means, never fio's
pooled figure, which one fast run decides alone (on synthetic fio results with known answers)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from stackbench.analysis.across_runs import across_runs, geometric_mean, pooled_figures
from stackbench.analysis.between_runs import estimate
from stackbench.engine.merge import merge_segments
from stackbench.model.fio_result import DirectionResult, FioResult, Latency


def _run(iops: float, p50_us: float) -> FioResult:
    """One fio run of a 4K QD1 cell, 2 s: its I/Os, bytes and latencies follow from its IOPS."""
    ios = int(iops * 2)
    result = DirectionResult(
        job_name="j", direction="write", rw="randwrite", bs=4096, iodepth=1, numjobs=1, iops=iops,
        bw_bytes=iops * 4096, io_bytes=ios * 4096, total_ios=ios, runtime_ms=2000, usr_cpu=1.0, sys_cpu=2.0,
        clat=Latency(mean_ns=p50_us * 1100, stddev_ns=10.0, min_ns=p50_us * 500, max_ns=p50_us * 9000,
                     p50_ns=p50_us * 1000, p99_ns=p50_us * 3000, p999_ns=p50_us * 6000, samples=ios),
    )
    return _fio(result)


def _fio(result: DirectionResult) -> FioResult:
    return FioResult(fio_version="fio-3.33", timestamp=None, directions=(result,), job_errors=(), raw_text="")


def test_the_cell_s_figures_are_the_geometric_means_of_its_runs() -> None:
    runs = [_run(9120, 100.0), _run(15327, 60.0), _run(1_000_000, 1.0)]
    pooled = merge_segments(runs, "write")
    cell = across_runs([r.directions[0] for r in runs], pooled)
    expected = estimate([9120, 15327, 1_000_000]).centre
    assert cell.iops == pytest.approx(expected)
    assert pooled.iops == pytest.approx((9120 + 15327 + 1_000_000) / 3, rel=1e-3)  # fio's: 6.6x more
    assert cell.bw_bytes == pytest.approx(expected * 4096)
    assert cell.clat.p50_ns == pytest.approx(geometric_mean([100e3, 60e3, 1e3]))
    assert cell.clat.p99_ns == pytest.approx(3 * cell.clat.p50_ns)
    assert cell.clat.p999_ns == pytest.approx(6 * cell.clat.p50_ns)
    assert cell.clat.max_ns == 100.0 * 9000 and cell.clat.min_ns == 1.0 * 500  # the extremes of any run
    assert (cell.total_ios, cell.io_bytes, cell.runtime_ms) == (pooled.total_ios, pooled.io_bytes, 6000)
    assert pooled_figures(pooled) == {"fio_pooled_iops": pooled.iops, "fio_pooled_bw_bytes": pooled.bw_bytes}


def test_a_cell_of_one_run_is_that_run() -> None:
    (one,) = [_run(5000, 20.0)]
    assert across_runs([one.directions[0]], one.directions[0]) == one.directions[0]


def test_a_latency_some_run_lacks_stays_the_pooled_one() -> None:
    runs = [_run(1000, 10.0).directions[0], _run(2000, 5.0).directions[0]]
    without = replace(runs[1], clat=None)
    pooled = merge_segments([_fio(r) for r in (runs[0], without)], "write")
    cell = across_runs([runs[0], without], pooled)
    assert cell.iops == pytest.approx(math.sqrt(1000 * 2000)) and cell.clat == pooled.clat
