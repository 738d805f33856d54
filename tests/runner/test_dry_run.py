"""`run --dry-run` is the run's own preparation (preparation.prepare, preparation.cell_job_file): the job files it
prints are the ones the run passes to fio, after the O_DIRECT probe and the sizing; it refuses what the run
refuses, with the same line and exit status; and it writes nothing, not even the store."""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import MiB, cli_here

SCRATCH = re.compile(r"stackbench-[0-9a-f]{32}\.scratch")

QUICK = ["--preset", "quick", "--runs", "1", "--runtime", "0.2", "--ramp", "0", "--size", "4M"]
EXPLICIT = ["--bs", "64k,4k", "--qd", "4,1", "--rw", "randwrite", "--buffered", "--runs", "1", "--runtime", "0.2",
            "--size", "4M"]
FILL = ["--preset", "cache-exhaustion", "--size", "8M"]


def _refusing_o_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake: every local file system of this kernel (6.18, tmpfs since 6.6) opens O_DIRECT, and ramfs, which
    refuses it, reports no free space; so the EINVAL of an older tmpfs is simulated at stackbench's own
    os.open. fio runs for real, with the job file the run chose (direct=0)."""
    real_open = os.open

    def refusing(path, flags, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)


@pytest.fixture
def target(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Path, list[str]]]:
    """(target path, extra options) of the kind the test is parametrized with."""
    kind = request.param
    if kind == "disk directory":
        yield tmp_path / "scratch", []
    elif kind == "tmpfs directory":
        mount: Callable[[str], Path] = request.getfixturevalue("tmpfs_mount")
        yield mount("64M"), []
    elif kind == "directory refusing O_DIRECT":
        _refusing_o_direct(monkeypatch)
        yield tmp_path / "scratch", []
    elif kind == "new file":
        yield tmp_path / "scratch" / "new.file", []
    elif kind == "existing file":
        given = tmp_path / "scratch" / "given.file"
        given.parent.mkdir(exist_ok=True)
        given.write_bytes(b"\0" * MiB)
        yield given, ["--destroy-data"]
    else:
        yield request.getfixturevalue("blank_loop"), ["--destroy-data"]


@pytest.fixture(autouse=True)
def _scratch(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir(exist_ok=True)


def _dry(target: Path, args: list[str], db: Path) -> dict:
    shown = cli_here("run", "-t", str(target), *args, "--db", str(db), "--dry-run", "--json")
    assert shown.returncode == 0, shown.stderr
    assert not db.exists(), "the dry run created the store"
    return json.loads(shown.stdout)


def _passed_to_fio(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("select job_file from fio_outputs order by seq")]


def _written(target: Path) -> list[str]:
    """What is there besides what the test made: files next to the target, or a device no longer blank."""
    if target.is_block_device():
        with open(target, "rb") as device:
            return [] if device.read(16 * MiB).count(0) == 16 * MiB else [f"data on {target}"]
    directory = target if target.is_dir() else target.parent
    return sorted(p.name for p in directory.iterdir() if p.name != "given.file")


@pytest.mark.slow
@pytest.mark.parametrize("target, args", [
    ("disk directory", QUICK),
    ("disk directory", EXPLICIT),
    ("disk directory", FILL),
    ("tmpfs directory", QUICK),
    ("tmpfs directory", FILL),
    ("directory refusing O_DIRECT", QUICK),
    ("new file", QUICK),
    ("existing file", EXPLICIT),
    ("blank loop device", QUICK),
    ("blank loop device", FILL),
], indirect=["target"])
def test_the_dry_run_prints_the_job_files_the_run_passes_to_fio(
    target: tuple[Path, list[str]], args: list[str], tmp_path: Path,
) -> None:
    path, extra = target
    shown = _dry(path, [*args, *extra], tmp_path / "dry.db")
    assert _written(path) == [], "the dry run wrote something (a scratch or probe file, or to the device)"
    db = tmp_path / "real.db"
    made = cli_here("run", "-t", str(path), *args, *extra, "--db", str(db), "--json")
    assert made.returncode == 0, made.stderr
    passed = [SCRATCH.sub("stackbench-<id>.scratch", text) for text in _passed_to_fio(db)]
    assert passed == [cell["job_file"] for cell in shown["cells"]]
    run = json.loads(made.stdout)
    assert [c["pattern"] for c in run["cells"]] == [c["pattern"] for c in shown["cells"]]
    assert shown["plan"]["workloads"] == run["facts"]["plan"]["workloads"]  # direct and size as settled
    assert [w["code"] for w in shown["warnings"]] == [w["code"] for w in run["warnings"]
                                                      if w["code"] in ("PAGE_CACHE", "TMPFS_TARGET",
                                                                       "DIRECT_IO_UNAVAILABLE")]


def test_the_dry_run_shows_o_direct_as_probed_not_as_planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick preset plans O_DIRECT 'where honoured': the dry run printed direct=0 on a disk that honours it."""
    honoured = _dry(tmp_path / "scratch", QUICK, tmp_path / "r.db")
    assert all("direct=1" in cell["job_file"] for cell in honoured["cells"])
    _refusing_o_direct(monkeypatch)
    refused = _dry(tmp_path / "scratch", QUICK, tmp_path / "r.db")
    assert all("direct=0" in cell["job_file"] for cell in refused["cells"])
    assert [w["code"] for w in refused["warnings"]] == ["DIRECT_IO_UNAVAILABLE", "PAGE_CACHE"]
    assert list((tmp_path / "scratch").iterdir()) == []


def test_the_dry_run_sizes_and_lists_cells_as_the_run_will(tmp_path: Path) -> None:
    table = cli_here("run", "-t", str(tmp_path / "scratch"), "--bs", "4k", "--rw", "randread", "--runs", "1",
                     "--db", str(tmp_path / "r.db"), "--dry-run")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("Plan quick+custom: 3 cells x 1 run, file 256.0 MiB, about ")
    rows = re.findall(r"^\s+\d\. (4K QD\d+ rnd read)", table.stdout, re.MULTILINE)
    assert rows == ["4K QD1 rnd read", "4K QD4 rnd read", "4K QD16 rnd read"]
    assert table.stdout.count("; stackbench ") == 3 and "filename=" + str(tmp_path / "scratch") in table.stdout
    one = cli_here("run", "-t", str(tmp_path / "scratch"), "--bs", "4k", "--rw", "randread", "--qd", "1",
                   "--runs", "1", "--db", str(tmp_path / "r.db"), "--dry-run")
    assert one.stdout.startswith("Plan quick+custom: 1 cell x 1 run,")


@pytest.fixture
def sector_4k_loop(tmp_path: Path) -> Iterator[Path]:
    """A blank loop device with 4096-byte logical sectors (a 4Kn disk), detached afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices")
    backing = tmp_path / "loop-backing-4k.img"
    with open(backing, "wb") as handle:
        handle.truncate(64 * MiB)
    device = Path(subprocess.run(["losetup", "-f", "--show", "--sector-size", "4096", str(backing)],
                                 capture_output=True, text=True, check=True).stdout.strip())
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", str(device)], capture_output=True)


CASES = {
    "too little space": lambda t: (t["tmpfs"], ["--size", "64M"]),
    "existing file": lambda t: (t["file"], []),
    "block device without --destroy-data": lambda t: (t["loop"], []),
    "unaligned O_DIRECT block size": lambda t: (t["loop4k"], ["--bs", "2k", "--direct", "--destroy-data"]),
    "job file cannot carry the path": lambda t: (t["semicolon"], []),
    "bad push URL": lambda t: (t["dir"], ["--push", "ftp://bench"]),
    "cache-exhaustion without room": lambda t: (t["tiny"], ["--preset", "cache-exhaustion"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_check_that_refuses_the_run_refuses_the_dry_run_with_the_same_line(
    case: str, tmp_path: Path, tmpfs_mount: Callable[[str], Path], blank_loop: Path, sector_4k_loop: Path,
) -> None:
    precious = tmp_path / "scratch" / "precious.dat"
    precious.write_bytes(b"user data")
    semicolon = tmp_path / "scratch" / "a;b"
    semicolon.mkdir()
    targets = {"tmpfs": tmpfs_mount("32M"), "file": precious, "loop": blank_loop, "loop4k": sector_4k_loop,
               "semicolon": semicolon, "dir": tmp_path / "scratch", "tiny": tmpfs_mount("8M")}
    path, args = CASES[case](targets)
    base = ["run", "-t", str(path), "--runs", "1", "--runtime", "0.2", *args]
    dry = cli_here(*base, "--db", str(tmp_path / "dry.db"), "--dry-run")
    real = cli_here(*base, "--db", str(tmp_path / "real.db"))
    assert real.returncode != 0 and real.stderr.startswith("Error: ")
    assert (dry.returncode, dry.stderr) == (real.returncode, real.stderr)
    assert len(dry.stderr.strip().splitlines()) == 1 and dry.stdout == ""
    assert not (tmp_path / "dry.db").exists()
    assert precious.read_bytes() == b"user data"
    assert sorted(p.name for p in (tmp_path / "scratch").iterdir()) == ["a;b", "precious.dat"]


def test_a_missing_fio_refuses_the_dry_run_as_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STACKBENCH_FIO", "/nonexistent/fio")
    base = ["run", "-t", str(tmp_path / "scratch"), "--runs", "1"]
    dry = cli_here(*base, "--db", str(tmp_path / "dry.db"), "--dry-run")
    real = cli_here(*base, "--db", str(tmp_path / "real.db"))
    assert (dry.returncode, dry.stderr) == (real.returncode, real.stderr) == (1, dry.stderr)
    assert dry.stderr.startswith("Error: fio was not found")


def test_the_dry_run_reads_an_existing_store_without_changing_it(tmp_path: Path) -> None:
    """The estimate learns from earlier runs on the target; the store file is not written (no migration,
    no abandoned-run sweep, no row)."""
    db = tmp_path / "r.db"
    assert cli_here("import", str(Path(__file__).parents[1] / "data/fio/randread-psync.json"), "--db",
                    str(db)).returncode == 0
    before = (db.stat().st_mtime_ns, db.read_bytes())
    shown = cli_here("run", "-t", str(tmp_path / "scratch"), "--runs", "1", "--db", str(db), "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before
