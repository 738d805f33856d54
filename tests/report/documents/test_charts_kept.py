"""A report's charts kept by what they show (report/charts/stored.py, issue 34): `import` and `run` draw a
new run's charts into the chart directory ($XDG_CACHE_HOME/stackbench/charts), and `report -o X.html` reads
them instead of importing matplotlib; what it reads is the same to the byte as what it would draw, and
never the charts of another run, another redaction or another renderer. Runs are imported from a real fio
capture (tests/data/fio) but for the one `run` test; reports run as a user runs them, in a subprocess, so
that what they import can be seen (`-X importtime`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, cli_here
from report.documents.shared import MARKUP, SCRIPT

CAPTURE = DATA / "fio" / "randread-psync.json"
SECRET = "123e4567-e89b-12d3-a456-426614174000"  # an identifier a redacted report replaces (id-1)
FIRST, SECOND = f"{SECRET} {SCRIPT} {MARKUP}", f"other {SECRET}"


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "stackbench" / "charts").glob("*.json"))


def _report(cache: Path, db: str, where: Path, ref: str, *extra: str) -> subprocess.CompletedProcess:
    """`stackbench report REF -o report.html` in `where`, its imports traced: the same command line each time,
    so that two reports of one run are the same bytes."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "stackbench", "report", ref, "-o", "report.html",
                           "--force", "--db", db, *extra], cwd=where, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    assert done.returncode == 0, done.stderr
    return done


def _imports_matplotlib(done: subprocess.CompletedProcess) -> bool:
    return any(line.split("|")[-1].strip() == "matplotlib" for line in done.stderr.splitlines() if "|" in line)


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """Two imported runs whose charts `import --charts` drew into tmp_path/cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for label in (FIRST, SECOND):
        done = cli_here("import", str(CAPTURE), "--label", label, "--db", db, "--charts")
        assert done.returncode == 0, done.stderr
    return db, cache


@pytest.mark.slow
def test_a_stored_runs_report_reads_its_charts_without_matplotlib_the_same_bytes(stored, tmp_path: Path) -> None:
    db, cache = stored
    before = _entries(cache)
    assert len(before) == 2  # one per run, drawn by `import --charts`
    kept = _report(cache, db, tmp_path / "kept", FIRST)
    assert not _imports_matplotlib(kept), "the kept charts were drawn again"
    fresh = _report(tmp_path / "empty-cache", db, tmp_path / "fresh", FIRST)
    assert _imports_matplotlib(fresh)  # drawn: the check above can see matplotlib
    page = (tmp_path / "kept" / "report.html").read_bytes()
    assert page == (tmp_path / "fresh" / "report.html").read_bytes()
    assert page.count(b"<svg") >= 1 and b"<script" not in page.lower()  # the label stays escaped text
    assert _entries(cache) == before  # read, nothing added


@pytest.mark.slow
def test_the_charts_of_another_run_redaction_or_renderer_are_never_reused(stored, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from stackbench.load.report_contents import build_contents
    from stackbench.report.charts import figure
    from stackbench.report.charts.files import ChartFiles, renderer
    from stackbench.store import open_store

    db, cache = stored
    for ref, other in ((FIRST, SECOND), (SECOND, FIRST)):
        page = (tmp_path / "x").joinpath("report.html")
        _report(cache, db, tmp_path / "x", ref)
        svg = page.read_text().split("<svg", 1)[1]
        assert "other id-1" not in svg if ref == FIRST else "other id-1" in svg, other
        assert SECRET not in svg  # redacted
    assert len(_entries(cache)) == 2
    kept = _report(cache, db, tmp_path / "kept", FIRST, "--keep-identifiers")
    assert _imports_matplotlib(kept)  # the unredacted charts are drawn, not the redacted ones reused
    assert SECRET in (tmp_path / "kept" / "report.html").read_text().split("<svg", 1)[1]
    assert len(_entries(cache)) == 3
    store, files = open_store(db), ChartFiles(cache / "stackbench" / "charts")
    build_contents(store, [FIRST], charts=files)  # in this process: found
    assert len(_entries(cache)) == 3
    renderer.cache_clear()
    monkeypatch.setattr(figure, "RENDERER_VERSION", figure.RENDERER_VERSION + 1)
    try:
        build_contents(store, [FIRST], charts=files)
    finally:
        renderer.cache_clear()
    assert len(_entries(cache)) == 4  # another renderer: drawn again


@pytest.mark.parametrize("damage", ["truncated", "not json", "another key"])
@pytest.mark.slow
def test_a_damaged_kept_chart_is_drawn_again_not_embedded(stored, tmp_path: Path, damage: str) -> None:
    db, cache = stored
    _report(cache, db, tmp_path / "good", FIRST)
    good = (tmp_path / "good" / "report.html").read_bytes()
    entries = _entries(cache)
    for entry in entries:
        text = entry.read_bytes()
        entry.write_bytes({"truncated": text[: len(text) // 2], "not json": b"<svg><script>x</script></svg>",
                           "another key": text.replace(b'"key": "', b'"key": "x', 1)}[damage])
    again = _report(cache, db, tmp_path / "again", FIRST)
    assert _imports_matplotlib(again)
    assert (tmp_path / "again" / "report.html").read_bytes() == good
    assert b"<script" not in (tmp_path / "again" / "report.html").read_bytes().lower()


def test_a_chart_directory_that_cannot_be_used_costs_a_warning_never_the_import(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cache").write_text("a file where the directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = cli_here("import", str(CAPTURE), "--label", "kept", "--db", db, "--charts")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "chart cache" in warnings[0], done.stderr
    assert cli_here("show", "kept", "--db", db).returncode == 0  # the run is stored
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # another user could write it: its charts would go into reports unchecked
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    (shared / "stackbench").mkdir()
    (shared / "stackbench" / "charts").mkdir()
    (shared / "stackbench" / "charts").chmod(0o777)
    done = cli_here("report", "kept", "-o", str(tmp_path / "r.html"), "--db", db)
    assert done.returncode == 0 and "can be written by another user" in done.stderr, done.stderr
    assert not _entries(shared)


@pytest.mark.slow
def test_run_draws_its_charts_when_asked_and_a_short_run_does_not_by_default(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-second run is under charts_ahead's minute: it draws only with --charts (the rule itself is
    tested on its own below, since a test run of a minute would be too slow to make here)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    common = ("-t", str(tmp_path), "--db", db, "--bs", "4k", "--rw", "randread", "--qd", "1", "--runs", "1",
              "--runtime", "1", "--ramp", "0", "--size", "8M")
    for flags in (("--no-charts",), ()):
        done = cli_here("run", *common, *flags)
        assert done.returncode == 0, done.stderr
        assert not _entries(tmp_path / "cache")
    done = cli_here("run", *common, "--label", "drawn", "--charts")
    assert done.returncode == 0, done.stderr
    assert len(_entries(tmp_path / "cache")) == 1
    kept = _report(tmp_path / "cache", db, tmp_path / "kept", "drawn")
    assert not _imports_matplotlib(kept)


def test_the_chart_directory_keeps_the_newest_entries_within_its_size(tmp_path: Path) -> None:
    from stackbench.report.charts.files import Chart, ChartFiles

    files = ChartFiles(tmp_path, max_bytes=5000)
    for n in range(4):
        files.write(("k", n), [Chart("t", "a", b"x" * 2000)])
        os.utime(files._path(("k", n), ".json"), (n, n))  # written in this order, a second apart
    assert [files.read(("k", n)) is not None for n in range(4)] == [False, False, True, True]


def test_charts_are_drawn_ahead_as_asked_else_after_a_minute_of_measuring() -> None:
    from stackbench.cli.report_charts import AHEAD_AFTER_S, charts_ahead

    assert AHEAD_AFTER_S == 60.0  # docs/run.md and docs/reports.md say "a minute"
    assert [charts_ahead(None, s) for s in (0.0, 4.0, 59.9, 60.0, 225.0)] == [False, False, False, True, True]
    assert charts_ahead(True, 0.0) and not charts_ahead(False, 3600.0)


def test_an_import_draws_no_charts_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    done = cli_here("import", str(CAPTURE), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert done.returncode == 0, done.stderr
    assert not _entries(tmp_path / "cache")
