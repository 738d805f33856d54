"""`stackbench run`, `runs`, `show` end to end: the real CLI in a subprocess, real fio, real files."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_here, run_cli
from stackbench.store import Store

FAST = ["--runtime", "1", "--size", "16M"]


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.mark.slow
def test_quick_run_stores_cells_prints_json_and_removes_the_scratch_file(tmp_path: Path, scratch_dir: Path) -> None:
    result = cli_here("run", "--target", str(scratch_dir), "--preset", "quick", *FAST, "--db", _db(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert re.fullmatch(r"[0-9a-f]{32}", data["run_id"])
    assert data["status"] == "complete"
    assert [c["pattern"] for c in data["cells"]] == [
        "4K QD1 rnd read",
        "4K QD1 rnd write",
        "4K QD16 rnd write",
        "1M QD4 seq read",
        "1M QD4 seq write",
    ]
    for cell in data["cells"]:
        assert cell["iops"] > 0 and cell["bw_bytes"] > 0
        assert 0 < cell["clat_p50_us"] <= cell["clat_p99_us"] <= cell["clat_p999_us"]
        assert {"bs", "iodepth", "rw", "clat_mean_us", "usr_cpu_pct", "sys_cpu_pct"} <= cell.keys()
    assert data["facts"]["fio_version"].startswith("fio-")
    assert data["facts"]["system"]["kernel"] == os.uname().release
    assert list(scratch_dir.iterdir()) == []


@pytest.mark.slow
def test_table_output_names_rows_like_the_practitioners(tmp_path: Path, scratch_dir: Path) -> None:
    result = cli_here(
        "run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "4", "--rw", "randwrite", *FAST,
        "--db", _db(tmp_path), "--label", "base",
    )
    assert result.returncode == 0, result.stderr
    assert "4K QD4 rnd write" in result.stdout
    assert "MB/s" in result.stdout and "10^6 bytes/s" in result.stdout
    assert re.search(r"\d+(\.\d+)? (µs|ms|ns)", result.stdout)


@pytest.mark.slow
def test_runs_and_show_read_back_what_run_stored(tmp_path: Path, scratch_dir: Path) -> None:
    db = _db(tmp_path)
    made = cli_here("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", *FAST,
                   "--db", db, "--label", "again", "--json")
    assert made.returncode == 0, made.stderr
    run = json.loads(made.stdout)
    listed = json.loads(cli_here("runs", "--db", db, "--json").stdout)
    assert [r["run_id"] for r in listed["runs"]] == [run["run_id"]]
    assert listed["runs"][0]["cells"] == 1
    for ref in (run["run_id"], run["run_id"][:6], "again"):
        shown = cli_here("show", ref, "--db", db, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["cells"] == run["cells"]
    table = cli_here("runs", "--db", db)
    assert run["run_id"][:12] in table.stdout and "again" in table.stdout


@pytest.mark.slow
def test_database_comes_from_the_environment_variable(tmp_path: Path, scratch_dir: Path) -> None:
    db_file = tmp_path / "env.db"
    made = run_cli("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", *FAST,
                   env={"STACKBENCH_DB": str(db_file)})
    assert made.returncode == 0, made.stderr
    assert sqlite3.connect(db_file).execute("select count(*) from cells").fetchone()[0] == 1


@pytest.mark.slow
def test_default_database_lives_under_the_xdg_data_dir(tmp_path: Path, scratch_dir: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "STACKBENCH_DB": ""}
    made = run_cli("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", *FAST, env=env)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "xdg" / "stackbench" / "results.db").is_file()


def test_missing_fio_is_one_line_error_and_stores_nothing(tmp_path: Path, scratch_dir: Path) -> None:
    result = run_cli("run", "-t", str(scratch_dir), *FAST, "--db", _db(tmp_path),
                     env={"STACKBENCH_FIO": "/nonexistent/fio"})
    assert result.returncode == 1
    assert result.stderr.strip().startswith("Error: fio was not found")
    assert "apt-get install fio" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(scratch_dir.iterdir()) == []
    assert "Traceback" not in result.stderr


def test_fio_failure_marks_the_run_failed_and_names_fios_complaint(tmp_path: Path, tmpfs_mount) -> None:
    """A real fio failure: ENOSPC. The target is an existing sparse 1 GiB file on a 40 MiB tmpfs, handed
    over with --destroy-data; the free-space check counts the file's size as reusable, fio runs out of space."""
    db = _db(tmp_path)
    mount = tmpfs_mount("40M")
    target = mount / "given.img"
    with open(target, "wb") as handle:
        handle.truncate(1024**3)
    result = cli_here("run", "-t", str(target), "--destroy-data", "--bs", "1m", "--rw", "write", "--qd", "1",
                     "--size", "100M", "--runtime", "2", "--runs", "1", "--buffered", "--db", db)
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: fio failed on cell 1") and "No space left on device" in last, last
    assert "Traceback" not in result.stderr
    runs = json.loads(cli_here("runs", "--db", db, "--json").stdout)["runs"]
    assert runs[0]["status"] == "failed" and runs[0]["cells"] == 0


def test_an_existing_file_is_refused_without_destroy_data(tmp_path: Path) -> None:
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"user data" * 1000)
    before = precious.read_bytes()
    result = cli_here("run", "-t", str(precious), *FAST, "--db", _db(tmp_path))
    assert result.returncode != 0
    assert "--destroy-data" in result.stderr
    assert precious.read_bytes() == before


@pytest.mark.parametrize("args, message", [
    (["--bs", "4q"], "cannot read '4q' as a size"),
    (["--qd", "0"], "--qd needs whole numbers"),
    (["--rw", "sideways"], "unknown --rw value"),
    (["--preset", "nope"], "unknown preset"),
    (["--runtime", "-3"], "runtime"),
    (["--size", "32k", "--bs", "64k"], "larger than the test size"),
    (["--size", "9" * 400], "too large a size for --size"),  # past a float: once an internal error (exit 70)
])
def test_bad_options_are_one_line_errors(tmp_path: Path, scratch_dir: Path, args: list[str], message: str) -> None:
    result = cli_here("run", "-t", str(scratch_dir), *args, "--db", _db(tmp_path))
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert list(scratch_dir.iterdir()) == []


def test_every_numeric_dimension_of_the_cells_is_in_numeric_order() -> None:
    """`--bs 4k --rw randread` took the quick preset's depths as they come (1, 16, 4): QD1, QD16, QD4."""
    from stackbench.model.plan import build_plan

    def order(plan):  # noqa: ANN001, ANN202
        return [(w.bs, w.iodepth) for w in plan.workloads]

    assert order(build_plan(bs=["4k"], rw=["randread"])) == [(4096, 1), (4096, 4), (4096, 16)]
    assert order(build_plan(bs=["1m", "4k", "64k"], qd=["16", "1"], rw=["write"])) == [
        (4096, 1), (4096, 16), (65536, 1), (65536, 16), (1048576, 1), (1048576, 16)]


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path, scratch_dir: Path) -> None:
    result = cli_here("run", "-t", str(scratch_dir), "--preset", "blog", "--dry-run", "--db", _db(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "48 cells" in result.stdout
    assert "rw=randread" in result.stdout
    assert list(scratch_dir.iterdir()) == []
    assert not (tmp_path / "results.db").exists()


@pytest.mark.slow
def test_cache_warning_is_printed_and_stored_for_small_buffered_read_tests(tmp_path: Path, scratch_dir: Path) -> None:
    db = _db(tmp_path)
    made = cli_here("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", *FAST,
                   "--buffered", "--db", db, "--json")
    assert made.returncode == 0, made.stderr
    data = json.loads(made.stdout)
    assert any(w["code"] == "PAGE_CACHE" and "cache" in w["text"].lower() for w in data["warnings"])
    assert "Warning:" in made.stderr
    write_only = cli_here("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randwrite", *FAST,
                         "--buffered", "--db", db, "--json")
    # By code: a HIGH_SPREAD warning on a busy machine says "a cache filling", which the old test on the word
    # "cache" mistook for the page-cache warning.
    assert not any(w["code"] == "PAGE_CACHE" or "cache-dominated" in w["text"]
                   for w in json.loads(write_only.stdout)["warnings"])


@pytest.mark.slow  # over 5 s of real fio / a real interrupt: CI runs it, the quick subset does not
def test_quick_reads_use_o_direct_where_the_file_system_honours_it(tmp_path: Path, scratch_dir: Path) -> None:
    """scratch_dir is on a disk-backed file system that honours O_DIRECT: device numbers, no cache warning."""
    made = cli_here("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", *FAST,
                   "--db", _db(tmp_path), "--json")
    assert made.returncode == 0, made.stderr
    data = json.loads(made.stdout)
    assert data["cells"][0]["direct"] is True and data["facts"]["plan"]["direct_auto"] is True
    # No page-cache warning (a stability warning may mention "a cache filling" on a busy machine).
    assert not any(w["code"] in ("PAGE_CACHE", "DIRECT_IO_UNAVAILABLE") or "cache-dominated" in w["text"]
                   or "page cache" in w["text"] for w in data["warnings"]), data["warnings"]


def _wait_for_cells(db_file: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db_file.exists():
            try:
                n = sqlite3.connect(db_file).execute("select count(*) from cells").fetchone()[0]
                if n >= count:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    raise AssertionError(f"no {count} cells stored within {timeout} s")


@pytest.mark.slow  # 4-6 s even with 1 s fio runs (start-up, a whole first cell, the cleanup): CI runs it
@pytest.mark.parametrize("sig, word", [
    (signal.SIGINT, "Ctrl-C"),
    (signal.SIGTERM, "SIGTERM"),
    (signal.SIGHUP, "SIGHUP"),
])
def test_interrupt_keeps_finished_cells_marks_run_incomplete_and_removes_scratch(
    tmp_path: Path, scratch_dir: Path, sig: int, word: str
) -> None:
    db_file = tmp_path / "results.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "-t", str(scratch_dir), "--preset", "quick",
         "--runtime", "1", "--size", "16M", "--db", f"sqlite:///{db_file}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        _wait_for_cells(db_file, 1)
        time.sleep(0.5)  # inside cell 2
        assert list(scratch_dir.iterdir()), "the scratch file should exist while fio runs"
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert f"Error: {word} stopped the run after 1 fio run (1 of 5 cells measured at least once)" in stderr
    assert "Traceback" not in stderr
    assert list(scratch_dir.iterdir()) == []
    connection = sqlite3.connect(db_file)
    assert connection.execute("select status from runs").fetchall() == [("incomplete",)]
    assert connection.execute("select count(*) from cells").fetchone()[0] == 1
    assert connection.execute("select count(*) from fio_outputs").fetchone()[0] == 1
    shown = cli_here("show", connection.execute("select id from runs").fetchone()[0], "--db", f"sqlite:///{db_file}")
    assert "INCOMPLETE" in shown.stdout


def test_a_relative_target_is_measured_where_it_is_typed(tmp_path: Path, scratch_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """fio runs in its private job directory, so a relative target reached it as a path under that directory:
    `run -t bench` wrote its scratch file in /tmp/stackbench-run-.../stackbench-job-.../bench and measured
    that file system instead (strace: fio chdir'd there, then opened bench/stackbench-ID.scratch). The job
    file names the scratch file by its absolute path in the target."""
    monkeypatch.chdir(scratch_dir.parent)
    done = cli_here("run", "-t", scratch_dir.name, "--rw", "randread", "--bs", "4k", "--qd", "1", "--runs", "1",
                    "--ramp", "0", "--runtime", "1", "--size", "8M", "--db", _db(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    [output] = Store(_db(tmp_path)).fio_outputs(json.loads(done.stdout)["run_id"])
    filenames = re.findall(r"(?m)^filename=(.*)$", output["job_file"])
    assert filenames and [Path(name).parent for name in filenames] == [scratch_dir] * len(filenames), filenames
    assert list(scratch_dir.iterdir()) == []
