"""`import` over fio outputs nobody here wrote: 41 files of benchmarking frameworks, Kubernetes storage tools
and homelab benchmarks (tests/data/fio/public, SOURCES says where each comes from), and 22 outputs of fio
2.1.4, 2.2.10 and 3.1 built from their release tags (tests/data/fio/old) for the formats no licensed public
file shows.

Each `expected.tsv` was written by reading the files, never from stackbench's output: per cell the job and
direction, the row title (what the file does not say is `?`), IOPS, bytes/s and p99 completion latency; per
file the coded warnings an import must store, or the phrase of its one-line refusal. Every file goes through
the real importer into a real SQLite store and is read back. The tests after the table name the defects
these files exposed: a fio 2.1 JSON's five jobs stored as one `4K QD1 seq read` key, gtod_reduce latencies
of 0 us, fio 3.1's normal output refused, fio 2.x normal output refused with a cryptic message, terse
imports stating a pattern and a depth the format does not hold, verify reads stored under the write."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import DATA, cli_here
from stackbench.base.errors import StackbenchError
from stackbench.load.importer import import_files
from stackbench.model.results import Run
from stackbench.store import open_store

PUBLIC = DATA / "fio" / "public"
OLD = DATA / "fio" / "old"
PROJECTS = {"fio-plot": ("github.com/louwrentius/fio-plot", "BSD-3-Clause"),
            "PerfKitBenchmarker": ("github.com/GoogleCloudPlatform/PerfKitBenchmarker", "Apache-2.0"),
            "kbench": ("github.com/longhorn/kbench", "Apache-2.0"),
            "VirtualClient": ("github.com/microsoft/VirtualClient", "MIT"),
            "metrics-operator": ("github.com/converged-computing/metrics-operator", "MIT")}


@dataclass
class Expected:
    cells: dict[str, tuple[str, Fraction, Fraction, int | None]] = field(default_factory=dict)
    warnings: frozenset[str] | None = None
    error: str | None = None


def _lines(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _table(base: Path) -> dict[str, Expected]:
    table: dict[str, Expected] = {}
    for row in _lines(base / "expected.tsv"):
        entry = table.setdefault(row[0], Expected())
        if row[1] == "WARNINGS":
            assert len(row) == 3 and entry.warnings is None, row
            entry.warnings = frozenset() if row[2] == "-" else frozenset(row[2].split(","))
        elif row[1] == "ERROR":
            assert len(row) == 3 and entry.error is None, row
            entry.error = row[2]
        else:
            cell, title, iops, bw, p99 = row[1:]
            assert cell not in entry.cells, row
            entry.cells[cell] = (title, Fraction(iops), Fraction(bw), None if p99 == "-" else int(p99))
    for name, entry in table.items():  # a stored file has cells and warnings; a refused one only its phrase
        assert (entry.error is None) == bool(entry.cells) == (entry.warnings is not None), name
    return table


EXPECTED = {**{f"public/{name}": entry for name, entry in _table(PUBLIC).items()},
            **{f"old/{name}": entry for name, entry in _table(OLD).items()}}


def imported(name: str, tmp_path: Path) -> Run:
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = import_files(store, [DATA / "fio" / name])[0].id
    return store.get_run(run_id)  # read back: what a later `show` or `compare` sees


def cells_of(run: Run) -> dict[str, tuple[str, float, float, float | None]]:
    got = {}
    for cell in run.cells:
        r = cell.result
        key = f"{r.job_name}/{r.direction}" + (f"@{r.host}" if r.host else "")
        assert key not in got, f"two cells for {key}"
        got[key] = (cell.pattern, r.iops, r.bw_bytes, r.clat.p99_ns if r.clat else None)
    return got


def test_every_file_has_its_rows_and_its_source() -> None:
    public = sorted(str(p.relative_to(PUBLIC)) for p in PUBLIC.rglob("*") if p.is_file()
                    and p.parent != PUBLIC)
    sources = {row[0]: row[1:] for row in _lines(PUBLIC / "SOURCES")}
    assert public == sorted(sources) == sorted(n.removeprefix("public/") for n in EXPECTED if n.startswith("public/"))
    assert len(public) >= 40
    for name, (project, repository, path, commit, licence, sha256) in sources.items():
        assert (repository, licence) == PROJECTS[project] and name == f"{project}/{path}", name
        assert re.fullmatch(r"[0-9a-f]{40}", commit), name
        assert hashlib.sha256((PUBLIC / name).read_bytes()).hexdigest() == sha256, f"{name} was edited"
    old = sorted(p.name for p in OLD.iterdir() if p.suffix in (".json", ".txt"))
    assert old == sorted(n.removeprefix("old/") for n in EXPECTED if n.startswith("old/"))
    captured = (OLD / "CAPTURED.md").read_text()
    assert all(f"`{name}`" in captured for name in old)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_imports_exactly_as_its_rows_say(name: str, tmp_path: Path) -> None:
    expected = EXPECTED[name]
    if expected.error is not None:
        with pytest.raises(StackbenchError) as refused:
            imported(name, tmp_path)
        message = str(refused.value)
        assert expected.error in message and "\n" not in message, message
        return
    run = imported(name, tmp_path)
    got = cells_of(run)
    assert sorted(got) == sorted(expected.cells)
    for key, (title, iops, bw, p99) in expected.cells.items():
        got_title, got_iops, got_bw, got_p99 = got[key]
        assert got_title == title, key
        assert got_iops == pytest.approx(float(iops), rel=1e-9), key
        assert got_bw == pytest.approx(float(bw), rel=1e-9), key
        assert got_p99 == p99, key
    assert {w.code.value for w in run.warnings} == expected.warnings


def test_a_wrong_row_fails(tmp_path: Path) -> None:
    """The comparison can fail: the table is not a mirror of whatever the import says."""
    name = "public/PerfKitBenchmarker/tests/data/fio/fio-parser-sample-result.json"
    got = cells_of(imported(name, tmp_path))
    title, iops, bw, p99 = EXPECTED[name].cells["sequential_write/write"]
    assert got["sequential_write/write"][0] == title != "4K QD1 seq read"  # what main stored for all five jobs
    assert got["sequential_write/write"][1] != pytest.approx(float(iops) * 1.001, rel=1e-9)


# --- the defects, each on the files that showed it ----------------------------------------------------------

PKB_21 = "public/PerfKitBenchmarker/tests/data/fio/fio-parser-sample-result.json"  # fio 2.1.4, no job options


def test_a_fio_2_json_without_job_options_keeps_its_five_jobs_apart(tmp_path: Path) -> None:
    """Five stonewalled jobs (seq write and read 512K QD64, randwrite and randread 4K QD1, randread 4K QD64)
    were five `4K QD1 seq read` cells with one match key, fio 2.1's KiB read as bytes. Now bs follows from
    bytes / I/Os, the direction from the side that moved data, the rest is unknown and said so."""
    run = imported(PKB_21, tmp_path)
    cells = {c.result.job_name: c for c in run.cells}
    assert [c.workload.bs for c in cells.values()] == [512 * 1024] * 2 + [4096] * 3
    assert [c.result.direction for c in cells.values()] == ["write", "read", "write", "read", "read"]
    assert cells["sequential_write"].result.io_bytes == 361_984 * 1024  # "io_bytes" : 361984: fio 2.1's io_bytes are KiB
    assert all(set(c.workload.unknown) == {"pattern", "iodepth", "numjobs"} for c in cells.values())
    assert {w.code.value for w in run.warnings} == {"IMPORT_UNKNOWN", "IMPORT_DERIVED"}


def test_two_imports_of_unknown_patterns_share_no_compare_key_and_compare_says_why(tmp_path: Path) -> None:
    """`compare` of two such imports silently showed 2 of 5 rows: cells whose workload the file does not say
    now match nothing, and compare names the warning instead of a partial table."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for label, name in (("a", PKB_21), ("b", PKB_21)):
        assert cli_here("import", str(DATA / "fio" / name), "--label", label, "--db", db).returncode == 0
    compared = cli_here("compare", "a", "b", "--db", db)
    assert compared.returncode != 0 and "have no cells in common" in compared.stderr
    assert "IMPORT_UNKNOWN" in compared.stderr and len(compared.stderr.strip().splitlines()) == 1

    svg = tmp_path / "matrix.svg"  # the chart does not draw the placeholders as QD1 and one job either
    assert cli_here("chart", "a", "--kind", "matrix", "--db", db, "-o", str(svg)).returncode == 0
    drawn = svg.read_text()
    assert "QD? x ? jobs" in drawn and "write (rnd/seq?)" in drawn and "QD1" not in drawn


@pytest.mark.parametrize("name", ["old/3.1-gtod-reduce.json", "old/3.1-gtod-reduce-normal.txt",
                                  "old/2.2.10-gtod-reduce.json", "public/metrics-operator/examples/python/io-fio/metrics.json"])
def test_latency_fio_did_not_measure_stays_absent_through_the_store_and_every_view(name: str, tmp_path: Path) -> None:
    """gtod_reduce=1: fio measured no latency, and the import stored mean and max 0.0 us."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert cli_here("import", str(DATA / "fio" / name), "--label", "fast", "--db", db).returncode == 0
    shown = json.loads(cli_here("show", "fast", "--db", db, "--json").stdout)
    latency = [key for key in shown["cells"][0] if key.startswith("clat_")]
    assert latency and all(cell[key] is None for cell in shown["cells"] for key in latency)
    assert "NO_LATENCY" in {w["code"] for w in shown["warnings"]}
    table = cli_here("show", "fast", "--db", db).stdout
    assert " 0 ns" not in table and "0.0 µs" not in table and "0.0 us" not in table


@pytest.mark.parametrize("name", ["old/3.1-pkb-stonewall-normal.txt", "old/3.1-randrw-normal.txt"])
def test_fio_3_1_normal_output_with_its_three_issued_counts_is_read(name: str, tmp_path: Path) -> None:
    assert "issued rwt: total=" in (DATA / "fio" / name).read_text()
    assert len(imported(name, tmp_path).cells) == len(EXPECTED[name].cells)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("old/2.") and n.endswith("-normal.txt")))
def test_fio_2_normal_output_is_refused_in_one_line_naming_what_is_supported(name: str, tmp_path: Path) -> None:
    refused = cli_here("import", str(DATA / "fio" / name), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    for words in ("fio 2.x normal output", "not supported", "fio normal output (fio 3.0 and later)", "terse",
                  "JSON", "--output-format=json"):
        assert words in refused.stderr, words


@pytest.mark.parametrize("name", ["old/3.1-randrw-terse.txt", "old/2.2.10-pkb-stonewall-terse.txt"])
def test_terse_states_no_pattern_and_no_depth_the_format_does_not_hold(name: str, tmp_path: Path) -> None:
    """A randrw job became `seq rw`, bs the average bytes per I/O, QD the mode of the depth histogram."""
    run = imported(name, tmp_path)
    assert all({"pattern", "iodepth"} <= set(c.workload.unknown) for c in run.cells)
    assert all("seq" not in c.pattern.replace("rnd/seq?", "") for c in run.cells)
    assert "IMPORT_UNKNOWN" in {w.code.value for w in run.warnings}
    said = cli_here("import", str(DATA / "fio" / name), "--db", f"sqlite:///{tmp_path / 'cli.db'}")
    assert said.returncode == 0 and "Warning: " in said.stderr and "does not say random or sequential" in said.stderr


@pytest.mark.parametrize("name", ["old/3.1-verify.json", "old/3.1-verify-normal.txt", "old/2.2.10-verify.json"])
def test_the_reads_of_a_write_jobs_verify_pass_are_stored_as_reads(name: str, tmp_path: Path) -> None:
    run = imported(name, tmp_path)
    reads = [c for c in run.cells if c.result.direction == "read"]
    assert len(reads) == 1 and reads[0].workload.rw in ("read", "rw")
    assert "write" not in reads[0].pattern.replace("(write)", "")
    assert any("verify" in w.text for w in run.warnings if w.code.value == "IMPORT_UNKNOWN") or name.startswith("old/2.")
