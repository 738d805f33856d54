"""synclat, slog and the text/terse/diskinfo imports end to end (real fio, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_here, run_cli
from plain_csv import not_plain, tables

DATA = Path(__file__).parent.parent / "data"
MiB = 1024**2


@pytest.mark.slow
def test_synclat_sweeps_sizes_in_separate_runs_and_stores_a_run(tmp_path: Path, scratch_dir: Path) -> None:
    """3 sizes x 2 runs: every size has its runs' interval; each run of the sweep was one fio process (its
    job file holds every size, stonewalled) and each size's stored output holds only its own job."""
    from stackbench.engine.fio_json import parse_fio_json
    from stackbench.store import open_store

    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = cli_here("synclat", str(scratch_dir), "--sizes", "4k..16k", "--runtime", "0.3", "--runs", "2",
                      "--size", "32M", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [row["size_bytes"] for row in data["synclat"]] == [4096, 8192, 16384]
    for row, cell in zip(data["synclat"], data["cells"]):
        low, high = row["usec_per_io_ci"]
        assert row["runs"] == 2 and low <= row["usec_per_io"] <= high
        per_run = cell["runs"]["iops_per_run"]
        assert row["usec_per_io"] == pytest.approx(1e6 / (per_run[0] * per_run[1]) ** 0.5)  # geometric mean
        assert cell["pattern"].endswith("rnd write dsync") and cell["direct"] is True
        assert row["clat_p50_us"] <= row["clat_p99_us"]
    assert "TOO_FEW_RUNS" not in [w["code"] for w in data["warnings"]]
    assert list(scratch_dir.iterdir()) == []
    store = open_store(db)
    outputs = store.fio_outputs(data["run_id"])
    assert len(outputs) == 6  # one per size and run
    assert len({o["started_at"] for o in outputs}) == 2  # two fio processes: one per run of the sweep
    for output in outputs:
        assert output["job_file"].count("stonewall=1") == 3
        (direction,) = parse_fio_json(output["raw_text"]).directions  # its own job only
        assert output["job_file"].count(f"[{direction.job_name}]") == 1
    shown = cli_here("runs", "--db", db, "--json")
    assert json.loads(shown.stdout)["runs"][0]["plan"] == "synclat"
    table = cli_here("synclat", str(scratch_dir), "--sizes", "4k", "--runtime", "0.3", "--size", "32M", "--db", db)
    assert "usec/IO" in table.stdout and "4K" in table.stdout and "± 95% CI" in table.stdout
    # For a spreadsheet: the size in bytes, times in microseconds, plain numbers with the unit in the header.
    as_csv = cli_here("synclat", str(scratch_dir), "--sizes", "4k,1m", "--runtime", "0.3", "--runs", "2",
                      "--size", "32M", "--db", db, "--format", "csv")
    assert as_csv.returncode == 0, as_csv.stderr
    assert not_plain(as_csv.stdout, set()) == []
    (header, *rows), = tables(as_csv.stdout)
    assert header == ["size bytes", "usec per IO", "usec per IO CI low", "usec per IO CI high", "runs", "MB/s",
                      "p50 clat us", "p99 clat us", "p99.9 clat us", "writes"]
    assert [row[0] for row in rows] == ["4096", "1048576"]
    for row in rows:
        assert float(row[2]) <= float(row[1]) <= float(row[3]) and row[4] == "2"
        assert float(row[6]) <= float(row[7]) and int(row[9]) > 0


def test_synclat_one_run_says_so_with_its_own_option(tmp_path: Path, tmpfs_mount) -> None:
    """One run of the sweep: no interval (CSV empty, table `± ?`) and one SYNC_NOISE warning naming
    synclat's --runs, instead of a TOO_FEW_RUNS per size (stored, in --json, not printed)."""
    target = tmpfs_mount("64M")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = cli_here("synclat", str(target), "--sizes", "4k,8k", "--runtime", "0.2", "--runs", "1", "--size", "16M",
                      "--db", db)
    assert result.returncode == 0, result.stderr
    assert "± ?" in result.stdout
    # DISTURBED says what the machine was doing (tests/runner/test_conditions.py holds it), not what this
    # plan is: on a busy machine it comes too, and is not this test's subject
    printed = [line for line in result.stderr.splitlines() if line.startswith("Warning:")
               and "the machine was busy with something else" not in line]
    assert printed == ["Warning: the target is tmpfs: every result measures RAM, not a storage device",
                       f"Warning: 4K, 8K: measured in one fio run: no interval, so nothing says how far the time per "
                       f"write would move in the next run; run `stackbench synclat {target}` with --runs 3 or more"]


def test_synclat_min_time_is_the_old_name_of_runtime(tmp_path: Path, scratch_dir: Path) -> None:
    both = cli_here("synclat", str(scratch_dir), "--runtime", "1", "--min-time", "1", "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert both.returncode == 2 and "--min-time is the old name of --runtime" in both.stderr


def test_synclat_default_sizes_start_at_the_logical_sector_size(tmp_path: Path, scratch_dir: Path) -> None:
    result = cli_here("synclat", str(scratch_dir), "--runtime", "1", "--size", "1M",
                     "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 2  # 8 MiB writes do not fit a 1 MiB file: refused before writing
    assert "exceeds --size" in result.stderr


@pytest.mark.parametrize("sizes, message", [("8m..4k", "runs backwards"), ("4q", "cannot read"), ("1000", "multiples of the")])
def test_synclat_bad_sizes_are_one_line_errors(tmp_path: Path, scratch_dir: Path, sizes: str, message: str) -> None:
    result = cli_here("synclat", str(scratch_dir), "--sizes", sizes, "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 2 and message in result.stderr
    assert list(scratch_dir.iterdir()) == []




@pytest.mark.slow
def test_synclat_on_a_blank_device_needs_destroy_data(tmp_path: Path, blank_loop: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    args = ["synclat", str(blank_loop), "--sizes", "4k,8k", "--runtime", "0.5", "--size", "16M", "--db", db, "--json"]
    refused = cli_here(*args)
    assert refused.returncode == 1 and "--destroy-data" in refused.stderr
    made = cli_here(*args, "--destroy-data")
    assert made.returncode == 0, made.stderr
    assert len(json.loads(made.stdout)["synclat"]) == 2


@pytest.mark.slow
def test_slog_ranks_candidates_and_includes_imported_runs(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    imported = cli_here("import", str(DATA / "diskinfo" / "hdd-512-start.txt"), "--label", "hdd", "--db", db)
    assert imported.returncode == 0, imported.stderr
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    result = run_cli("slog", str(candidate), "--run", "hdd", "--size", "64M", "--db", db, "--json", timeout=120)
    assert result.returncode == 0, result.stderr
    ranked = json.loads(result.stdout)["candidates"]
    assert [c["candidate"] for c in ranked][-1] == "hdd"  # 11 ms per write: last
    assert ranked[-1]["verdict"].startswith("unfit: HDD class")
    measured = ranked[0]
    assert measured["qd1"]["iops"] > 0 and measured["qd16"]["iops"] > 0
    assert measured["qd1"]["best_1s_iops"] >= measured["qd1"]["iops"] * 0.5
    assert list(candidate.iterdir()) == []
    assert "power-loss protection" in json.loads(result.stdout)["note"]


@pytest.mark.slow
def test_slog_interleaves_its_candidates_round_by_round_and_never_ranks_tmpfs_best(
        tmp_path: Path, scratch_dir: Path, tmpfs_mount) -> None:
    """The same directory twice (an A/A pair) and a tmpfs, 2 short runs each: every round measures each
    candidate once, forward then backward, each candidate's round one fio process; tmpfs is ranked last
    as not a device and never named best; the two disk candidates are tested paired by round."""
    from stackbench.store import open_store

    ram = tmpfs_mount("64M")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = cli_here("slog", str(scratch_dir), str(scratch_dir), str(ram), "--runtime", "0.5", "--ramp", "0",
                      "--runs", "2", "--size", "16M", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    names = [c["candidate"] for c in data["candidates"]]
    assert sorted(names) == sorted([str(scratch_dir), f"{scratch_dir} #2", str(ram)]) and names[-1] == str(ram)
    assert data["candidates"][-1]["verdict"] == "not a device: tmpfs is RAM and loses every write on power loss"
    (ranking,) = data["rankings"]
    assert ranking["best"] != str(ram)
    (pair,) = ranking["comparisons"]
    assert {pair["candidate"], pair["next"]} == {str(scratch_dir), f"{scratch_dir} #2"} and pair["test"] == "paired-log"
    assert all(c["runs"] == 2 for c in data["candidates"])
    store = open_store(db)
    runs = [store.get_run(c["run_id"]) for c in sorted(data["candidates"], key=lambda c: names.index(c["candidate"]))]
    sessions = {r.facts["slog"]["session"] for r in runs}
    assert len(sessions) == 1
    by_name = {r.facts["slog"]["candidate"]: r for r in runs}
    order = [by_name[name] for name in runs[0].facts["slog"]["candidates"]]
    assert runs[0].facts["slog"]["orders"] == [[0, 1, 2], [2, 1, 0]]

    def started(run, round_index: int) -> set[str]:  # noqa: ANN001
        return {r["started_at"] for c in run.cells for r in c.measurement["replicates"] if r["round"] == round_index}

    for round_index, sequence in enumerate(([0, 1, 2], [2, 1, 0])):
        times = [started(order[i], round_index) for i in sequence]
        assert all(len(t) == 1 for t in times)  # both depths of a candidate's round: one fio process
        assert [t.pop() for t in times] == sorted(min(started(order[i], round_index)) for i in sequence)
    for run in runs:
        assert all(w.runtime == 0.5 and w.ramp_time == 0 for w in (c.workload for c in run.cells))
    assert list(scratch_dir.iterdir()) == [] and list(ram.iterdir()) == []


@pytest.mark.slow
def test_slog_ranks_a_throttled_loop_device_second_and_proves_it(tmp_path: Path) -> None:
    """Two blank loop devices over files; the second throttled with cgroup v1's blkio controller (a child
    cgroup of this test's own, stackbench and its fio in it) to 20 block requests a second, about 10 O_SYNC
    writes: far slower than the first whatever the machine's load. The first is ranked first and proven
    better. At 20 requests a second the throttle's slice (100 ms on a loop device's rotational queue) allows
    two requests, one O_SYNC write, so nearly every write waits; at half a device's rate most writes would
    pass at full speed and the median slog ranks would not move (bench/slog_truth.py). Everything made is
    removed."""
    import os
    import subprocess
    import sys

    blkio = Path("/sys/fs/cgroup/blkio")
    if os.geteuid() != 0 or not (blkio / "blkio.throttle.write_iops_device").exists():
        pytest.skip("needs root and cgroup v1's blkio controller")
    devices, group = [], blkio / f"stackbench-test-{os.getpid()}"
    try:
        for name in ("fast", "slow"):
            backing = tmp_path / f"{name}.img"
            with open(backing, "wb") as handle:
                handle.truncate(64 * MiB)
            devices.append(subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True,
                                          text=True, check=True).stdout.strip())
        fast, slow = devices
        group.mkdir()
        number = (Path("/sys/block") / Path(slow).name / "dev").read_text().strip()
        (group / "blkio.throttle.write_iops_device").write_text(f"{number} 20\n")
        done = subprocess.run(
            [sys.executable, "-m", "stackbench", "slog", fast, slow, "--destroy-data", "--runtime", "1", "--ramp", "0",
             "--runs", "3", "--size", "16M", "--db", f"sqlite:///{tmp_path / 'r.db'}", "--json"],
            capture_output=True, text=True, timeout=300,
            preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())),
        )
        assert done.returncode == 0, done.stderr
        (ranking,) = json.loads(done.stdout)["rankings"]
        (pair,) = ranking["comparisons"]
        assert ranking["best"] == fast and (pair["candidate"], pair["next"]) == (fast, slow)
        assert pair["better"] and pair["test"] == "paired-log" and pair["latency_ratio"] < 0.5
    finally:
        if group.exists():
            group.rmdir()
        for device in devices:
            subprocess.run(["losetup", "-d", device], capture_output=True)


def test_slog_without_candidates_is_an_error(tmp_path: Path) -> None:
    result = cli_here("slog", "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1 and "no SLOG candidates" in result.stderr


@pytest.mark.parametrize("name, patterns", [
    ("fio/text/normal-two-jobs.txt", ["4K QD1 rnd read", "64K QD1 seq write"]),
    # terse says neither random nor sequential, nor iodepth, nor numjobs: the jobs were a 4K random read
    # and a 64K sequential write, which is all the row may claim
    ("fio/text/terse-two-jobs.txt", ["4K QD? T? read (rnd/seq?)", "64K QD? T? write (rnd/seq?)"]),
    ("fio/text/normal-randwrite-fdatasync.txt", ["4K QD1 rnd write sync"]),
    ("diskinfo/optane-4k-start.txt", [f"{k} QD1 rnd write dsync" for k in
                                      ("4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M")]),
])
def test_import_detects_text_terse_and_diskinfo(tmp_path: Path, name: str, patterns: list[str]) -> None:
    result = cli_here("import", str(DATA / name), "--db", f"sqlite:///{tmp_path / 'r.db'}", "--json")
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)["runs"]
    assert [c["pattern"] for c in run["cells"]] == patterns


def test_import_of_unknown_text_names_the_first_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("my benchmark notes\nnothing here\n")
    result = cli_here("import", str(bad), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1
    assert "unknown format (first line 'my benchmark notes')" in result.stderr


def test_import_of_truncated_diskinfo_names_the_line(tmp_path: Path) -> None:
    result = cli_here("import", str(DATA / "diskinfo" / "truncated.txt"), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1 and "line 18" in result.stderr
