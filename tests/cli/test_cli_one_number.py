"""One IOPS per cell: what the progress line, the table, `--json`, CSV, the goals and `show --per-run` say
about a cell measured in several separate fio runs is one number, the geometric mean of its runs (real fio,
real store, the real entry point in process)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from conftest import cli_here
from stored_runs import store_run
from stackbench.store import open_store
from stackbench.base.units import format_iops, format_mb_per_s
from synthetic import cell, run

FAST = ["--bs", "4k", "--qd", "1", "--rw", "randread", "--runs", "3", "--runtime", "1", "--ramp", "0",
        "--size", "16M", "--buffered"]


@pytest.mark.slow
def test_the_progress_line_the_table_json_csv_and_goals_give_one_iops(tmp_path: Path, scratch_dir: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert cli_here("goal", "add", "rnd read 4K >= 1 IOPS", "--db", db).returncode == 0
    done = cli_here("run", "-t", str(scratch_dir), *FAST, "--label", "one", "--db", db)
    assert done.returncode == 0, done.stderr
    data = json.loads(cli_here("show", "one", "--json", "--db", db).stdout)
    (found,) = data["cells"]
    per_run = found["runs"]["iops_per_run"]
    assert len(per_run) == 3
    geometric = math.exp(sum(math.log(v) for v in per_run) / 3)
    assert found["iops"] == pytest.approx(geometric, rel=1e-12) == found["runs"]["iops"]
    assert found["measurement"]["fio_pooled_iops"] > 0  # fio's pooled figure, under its own name
    replicates = found["measurement"]["replicates"]
    assert found["bw_bytes"] == pytest.approx(math.exp(sum(math.log(r["bw_bytes"]) for r in replicates) / 3))
    assert found["clat_p50_us"] * 1000 == pytest.approx(
        math.exp(sum(math.log(r["clat_p50_ns"]) for r in replicates) / 3))
    # the third "done" line is the cell after its third run: the same number the table starts with
    lines = [line for line in done.stderr.splitlines() if line.strip().startswith("done ")]
    assert len(lines) == 3 and f" {format_iops(geometric)} IOPS" in lines[-1]
    row = next(line for line in done.stdout.splitlines() if "4K QD1 rnd read" in line)  # then the goals table's
    spread = f"(runs {format_iops(min(per_run))} to {format_iops(max(per_run))})"  # on a busy machine
    assert format_iops(geometric) in row or spread in " ".join(done.stdout.split())
    assert f" {format_mb_per_s(found['bw_bytes'])} " in row
    csv = cli_here("show", "one", "--format", "csv", "--db", db).stdout.splitlines()
    assert csv[1].split(",")[1] == f"{geometric:.1f}"
    assert data["goals"][0]["value"] == pytest.approx(geometric)


def test_show_per_run_lists_each_cell_s_runs_and_their_geometric_mean(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = open_store(db)
    store_run(store, run([cell(qd=1, runs=[1000.0, 4000.0])], label="two", run_id="9" * 32))
    store.dispose()
    table = cli_here("show", "two", "--per-run", "--db", db)
    assert table.returncode == 0, table.stderr
    rows = [line for line in table.stdout.splitlines() if "4K QD1 rnd write" in line]
    assert len(rows) == 3 and "1,000" in rows[0] and "4,000" in rows[1]
    assert re.search(r"\ball\b.*2,000 \(too noisy to tell\)", rows[2])
    csv = cli_here("show", "two", "--per-run", "--format", "csv", "--db", db).stdout.splitlines()
    assert csv[0].startswith("Pattern,run,round,order,IOPS,MB/s")
    assert [line.split(",")[1:5:3] for line in csv[1:]] == [["1", "1000.0"], ["2", "4000.0"], ["all", "2000.0"]]
    assert json.loads(cli_here("show", "two", "--per-run", "--json", "--db", db).stdout)["cells"][0]["runs"][
        "iops_per_run"] == [1000.0, 4000.0]
