"""A synclat sweep across its separate runs, on synthetic runs (chosen per-run IOPS, not measurements): the
time per write with its interval, the noise warning whose --runs does narrow it, and sweeps stored by
earlier versions (one run per size, or per-second samples only) shown as they were."""

from __future__ import annotations

import re

import pytest

from stackbench.analysis.synclat import NOISE_LIMIT, sweep_noise, sweep_sizes
from stackbench.report.synclat import synclat_rows, synclat_table
from stackbench.model.warning import WarningCode
from synthetic import cell, run, spread


def _sweep(per_size: dict[int, list[float]]):  # noqa: ANN202 - a synthetic run
    return run([cell(rw="randwrite", bs=bs, qd=1, sync=True, runs=values) for bs, values in per_size.items()])


def test_the_time_per_write_is_the_geometric_mean_of_the_runs_with_its_interval() -> None:
    sweep = _sweep({4096: [1000.0, 1250.0, 800.0], 8192: [500.0, 505.0, 495.0]})
    rows = synclat_rows(sweep)
    assert rows[0]["usec_per_io"] == pytest.approx(1e6 / (1000.0 * 1250.0 * 800.0) ** (1 / 3))
    low, high = rows[0]["usec_per_io_ci"]
    assert low < rows[0]["usec_per_io"] < high and rows[0]["runs"] == 3
    assert rows[1]["usec_per_io_ci"][1] / rows[1]["usec_per_io"] < 1.05  # steady runs: a narrow interval
    assert rows[0]["mb_per_s"] == pytest.approx(1e6 / rows[0]["usec_per_io"] * 4096 / 1e6)


def test_a_noisy_sweep_earns_one_warning_whose_runs_narrow_it() -> None:
    """Sizes whose runs differ by 15 % (sd of logs): the warning names them and a --runs N; N runs of that
    spread give intervals within ±10 %, fewer do not."""
    noisy = _sweep({4096: spread(1000, 0.15, 3), 8192: spread(600, 0.15, 3), 16384: spread(400, 0.01, 3)})
    warning = sweep_noise(sweep_sizes(noisy), command="stackbench synclat /mnt/x")
    assert warning.code == WarningCode.SYNC_NOISE and warning.subject == "4K, 8K"
    needed = int(re.search(r"with --runs (\d+)", warning.fix).group(1))
    assert "run `stackbench synclat /mnt/x` with --runs" in warning.fix
    enough = sweep_sizes(_sweep({4096: spread(1000, 0.15, needed)}))
    assert enough[0].usec_per_io.half_width_rel <= NOISE_LIMIT and sweep_noise(enough) is None
    fewer = sweep_sizes(_sweep({4096: spread(1000, 0.15, needed - 1)}))
    assert fewer[0].noisy
    steady = _sweep({4096: spread(1000, 0.01, 3)})
    assert sweep_noise(sweep_sizes(steady)) is None


def test_sweeps_of_earlier_versions_show_their_one_value_per_size() -> None:
    """One run per size (replicates of one entry) or per-second samples only (before separate runs): the
    time per write is fio's own, 1e6 / IOPS, and MB/s fio's bandwidth, as they were shown; no interval."""
    one_run = cell(rw="randwrite", bs=4096, qd=1, sync=True, runs=[2000.0])
    samples_only = cell(rw="randwrite", bs=8192, qd=1, sync=True, samples=[900.0, 1100.0] * 10)
    sweep = run([one_run, samples_only])
    rows = synclat_rows(sweep)
    for row, made in zip(rows, (one_run, samples_only)):
        assert row["usec_per_io"] == pytest.approx(1e6 / made.result.iops)
        assert row["mb_per_s"] == pytest.approx(made.result.bw_bytes / 1e6)
        assert row["usec_per_io_ci"] is None and row["runs"] == 1
    table = synclat_table(sweep.id, rows)
    assert [r[2] for r in table.rows] == ["± ?", "± ?"]
    assert "one fio run per size" in table.notes[0]
