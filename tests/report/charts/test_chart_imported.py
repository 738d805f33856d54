"""`stackbench chart` on captured fio outputs (tests/data/fio, real fio-3.33 output) imported into a real
SQLite store: what each kind draws, checked on the SVG without pixels, and every error path of the command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_cli
from report.charts.conftest import Store, chart, cli_here, ids, svg_tree, texts


def _ok(result) -> None:  # noqa: ANN001 - CompletedProcess
    assert result.returncode == 0, result.stderr


def test_matrix_svg_has_units_footer_and_one_series_per_depth(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "m.svg"
    _ok(chart(imported, out, "jsonplus", "--kind", "matrix"))
    root = svg_tree(out)
    words = texts(root)
    assert "IOPS (I/O per second)" in words
    assert "block size (bytes, K = 1024)" in words
    footer = next(t for t in words if "stackbench" in t and "run " in t)
    assert "fio-3.33" in footer and "jsonplus" in footer and imported.runs["jsonplus"][:8] in footer
    assert len(ids(root, "series-")) == 1  # one queue depth in this capture
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left beside it


def test_matrix_in_mb_s_and_png_is_800_px_wide(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "m.png"
    _ok(chart(imported, out, "seqplus", "--metric", "mb_s"))
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == 800


def test_percentiles_are_three_series_on_a_log_axis(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "p.svg"
    _ok(chart(imported, out, "jsonplus", "-k", "percentiles"))
    root = svg_tree(out)
    assert len(ids(root, "series-")) == 3
    assert "completion latency (µs), log scale" in texts(root)


def test_histogram_from_the_stored_json_plus_buckets(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "h.svg"
    _ok(chart(imported, out, "jsonplus", "-k", "histogram"))
    root = svg_tree(out)
    words = texts(root)
    assert "share of I/Os (%), log scale" in words
    assert len(ids(root, "percentile-")) == 3
    footer = next(t for t in words if "json+ buckets" in t)
    assert "I/Os" in footer and "fio-3.33" in footer


def test_histogram_of_plain_json_names_the_fix(imported: Store, tmp_path: Path) -> None:
    """A two-job capture in plain json: no buckets for the named job, and the error says what has them."""
    result = chart(imported, tmp_path / "h.svg", "twojobs", "-k", "histogram")
    assert result.returncode == 1
    assert "no json+ latency buckets" in result.stderr and "percentiles needs no buckets" in result.stderr
    assert not (tmp_path / "h.svg").exists()


def test_normal_output_import_has_no_buckets_and_no_samples(imported: Store, tmp_path: Path) -> None:
    histogram = chart(imported, tmp_path / "h.svg", "normal", "-k", "histogram")
    assert histogram.returncode == 1 and "no json+ latency buckets" in histogram.stderr
    timeline = chart(imported, tmp_path / "t.svg", "normal", "-k", "timeline")
    assert timeline.returncode == 1
    assert "has no per-second samples" in timeline.stderr and "stackbench run" in timeline.stderr
    assert len(timeline.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_compare_of_imports_draws_no_evidence_with_the_band(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "c.svg"
    _ok(chart(imported, out, "jsonplus", "again", "-k", "compare", "--min-effect", "10"))
    root = svg_tree(out)
    assert ids(root, "min-effect-band")
    assert len(ids(root, "verdict-no-evidence")) == 1 and not ids(root, "whisker-")
    assert any("±10 % (--min-effect)" in t for t in texts(root))


def test_layers_of_imports_names_the_factor_and_proves_no_gap(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "l.svg"
    _ok(chart(imported, out, "jsonplus", "again", "-k", "layers", "--names", "host,vm"))
    root = svg_tree(out)
    words = texts(root)
    assert "×1 ~" in words  # the same capture twice: nothing lost, and nothing proven (no separate runs)
    # imports have one number per cell: no test can prove a gap, so none is outlined or named
    assert len(ids(root, "series-")) == 2 and not ids(root, "biggest-gap-")
    assert "no gap proven by the runs (~: within the noise)" in words
    assert any("IOPS (I/O per second), log scale" in t for t in words)


def test_custom_bars_per_run_label(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "x.svg"
    _ok(chart(imported, out, "jsonplus", "seqplus", "--x", "label", "--y", "mb_s", "--series", "rw"))
    root = svg_tree(out)
    assert len(ids(root, "series-")) == 2  # randwrite and write
    words = texts(root)
    assert "MB/s (10^6 bytes per second)" in words and "run" in words


def test_synclat_of_one_imported_size(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "s.svg"
    _ok(chart(imported, out, "jsonplus", "seqplus", "-k", "synclat"))
    root = svg_tree(out)
    assert len(ids(root, "series-")) == 2
    assert "time per synchronous write (µs), log scale" in texts(root)


def test_a_label_is_text_not_mathtext(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    label = "$x^2$ <b>&"
    result = cli_here("import", str(Path(__file__).parents[2] / "data/fio/randread-psync.json"), "-l", label,
                     "--db", url)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "m.svg"
    assert cli_here("chart", label, "-o", str(out), "--db", url).returncode == 0
    footer = next(t for t in texts(svg_tree(out)) if "stackbench" in t)
    assert label in footer


@pytest.mark.parametrize(("args", "message"), [
    (["jsonplus", "-o", "{tmp}/x.gif"], "cannot tell the image format"),
    (["jsonplus", "-o", "{tmp}/missing/x.svg"], "does not exist"),
    (["jsonplus", "-k", "pie", "-o", "{tmp}/x.svg"], "Use one of: matrix, percentiles"),
    (["jsonplus", "-k", "special", "-o", "{tmp}/x.svg"], "smallblocks PATH --chart"),
    (["nosuchrun", "-o", "{tmp}/x.svg"], "no run with id or label 'nosuchrun'"),
    (["jsonplus", "-k", "histogram", "--cell", "1M QD9 nope", "-o", "{tmp}/x.svg"], "Use one of: 4K QD4 rnd write"),
    (["jsonplus", "-k", "compare", "-o", "{tmp}/x.svg"], "compare draws two runs, A then B; got 1"),
    (["jsonplus", "-k", "layers", "-o", "{tmp}/x.svg"], "layers draws at least two runs, bottom layer first; got 1"),
    (["jsonplus", "again", "-k", "matrix", "-o", "{tmp}/x.svg"], "matrix draws one run"),
    (["jsonplus", "-k", "custom", "-o", "{tmp}/x.svg"], "--kind custom needs --x"),
    (["jsonplus", "-k", "matrix", "--x", "bs", "-o", "{tmp}/x.svg"], "--x is for custom, not matrix. Leave out --x"),
    (["jsonplus", "--cell", "x", "-o", "{tmp}/x.svg"], "--cell is for histogram"),
    (["jsonplus", "again", "-k", "compare", "--names", "a,b", "-o", "{tmp}/x.svg"], "--names is for layers"),
    (["jsonplus", "--metric", "p99", "-o", "{tmp}/x.svg"], "--metric 'p99' is not iops or mb_s"),
    (["jsonplus", "--x", "qd", "-o", "{tmp}/x.svg"], "--x 'qd' is not a field. Use one of: bs, iodepth"),
    (["jsonplus", "--x", "bs", "--y", "lat", "-o", "{tmp}/x.svg"], "--y 'lat' is not a metric"),
    (["jsonplus", "--x", "bs", "--series", "bs", "-o", "{tmp}/x.svg"], "--series bs is also --x"),
    (["jsonplus", "--x", "bs", "--where", "rw", "-o", "{tmp}/x.svg"], "Write FIELD=VALUE"),
    (["jsonplus", "--x", "bs", "--where", "rw=read", "-o", "{tmp}/x.svg"], "The runs hold rw = randwrite"),
    (["jsonplus", "--x", "bs", "--where", "iodepth=x", "-o", "{tmp}/x.svg"], "Use one of: 4"),
    (["jsonplus", "again", "--x", "bs", "-o", "{tmp}/x.svg"], "they differ in label"),
    (["jsonplus", "-o", "/proc/x.svg"], "cannot write /proc/x.svg"),  # the one writer's message (output_files.py)
    (["nopct", "-k", "percentiles", "-o", "{tmp}/x.svg"], "have no completion-latency percentiles"),
    (["rw-both", "-k", "synclat", "-o", "{tmp}/x.svg"], "several cells per write size"),
    (["jsonplus", "seqplus", "-k", "compare", "--force", "-o", "{tmp}/x.svg"], "have no cells in common"),
    (["jsonplus", "seqplus", "-k", "layers", "-o", "{tmp}/x.svg"], "the runs have no cells in common"),
])
def test_errors_are_one_line_naming_the_fix(imported: Store, tmp_path: Path, args: list[str], message: str) -> None:
    result = cli_here("chart", *[a.replace("{tmp}", str(tmp_path)) for a in args], "--db", imported.url)
    assert result.returncode in (1, 2), result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_lists_kinds_and_examples_without_importing_matplotlib() -> None:
    result = cli_here("chart", "--help")
    assert result.returncode == 0
    assert "stackbench chart baseline -k matrix -o matrix.svg" in result.stdout
    probe = run_cli("--help", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert probe.returncode == 0 and "stackbench" in probe.stderr  # the import log is there ...
    assert "matplotlib" not in probe.stderr  # ... and holds no matplotlib


def test_smallblocks_draws_the_special_chart(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for size in (100, 3000, 5000, 9000, 70_000, 300_000):
        (tree / f"f{size}").write_bytes(os.urandom(size))
    out = tmp_path / "special.svg"
    result = cli_here("smallblocks", str(tree), "--special-size", "1M", "--chart", str(out))
    assert result.returncode == 0, result.stderr
    root = svg_tree(out)
    assert len(ids(root, "series-")) == 3  # files, bytes, cumulative bytes
    assert ids(root, "cutoff-") and len(ids(root, "capacity-")) == 2
    words = texts(root)
    assert "files (count), log scale" in words and "cumulative bytes (% of all scanned)" in words
    assert any(f"scan of {tree}" in t for t in words)


def test_a_stored_scan_draws_the_same_special_chart(tmp_path: Path) -> None:
    """`chart SCAN -k special` from the store gives the bytes `smallblocks --chart` drew during the scan."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for size in (100, 3000, 5000, 9000, 70_000, 300_000):
        (tree / f"f{size}").write_bytes(os.urandom(size))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    direct, stored = tmp_path / "direct.svg", tmp_path / "stored.svg"
    scanned = cli_here("smallblocks", str(tree), "--special-size", "1M", "--chart", str(direct), "--db", db,
                       "-l", "tree-scan")
    assert scanned.returncode == 0, scanned.stderr
    drawn = cli_here("chart", "tree-scan", "-k", "special", "-o", str(stored), "--db", db)
    assert drawn.returncode == 0, drawn.stderr
    assert stored.read_bytes() == direct.read_bytes()
    several = cli_here("chart", "tree-scan", "tree-scan", "-k", "special", "-o", str(tmp_path / "x.svg"), "--db", db)
    assert several.returncode == 2 and "special draws one scan" in several.stderr


def test_the_special_chart_shows_no_user_name_unless_identifiers_are_kept(tmp_path: Path) -> None:
    """The scanned path in the footer, /home/NAME/..., is redacted as `report` redacts it, in `smallblocks
    --chart` and in `chart -k special` alike."""
    tree = tmp_path / "home" / "mallory-sb" / "data"
    tree.mkdir(parents=True)
    (tree / "f").write_bytes(os.urandom(5000))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    direct, stored, kept = tmp_path / "direct.svg", tmp_path / "stored.svg", tmp_path / "kept.svg"
    assert cli_here("smallblocks", str(tree), "--chart", str(direct), "--db", db, "-l", "home-scan").returncode == 0
    assert cli_here("chart", "home-scan", "-k", "special", "-o", str(stored), "--db", db).returncode == 0
    assert cli_here("chart", "home-scan", "-k", "special", "-o", str(kept), "--db", db,
                    "--keep-identifiers").returncode == 0
    for path in (direct, stored):
        words = " ".join(texts(svg_tree(path)))
        assert "mallory-sb" not in words and "/home/user-1/data" in words
    assert stored.read_bytes() == direct.read_bytes()
    assert f"scan of {tree}" in " ".join(texts(svg_tree(kept)))


def test_smallblocks_refuses_a_bad_chart_name_before_scanning(tmp_path: Path) -> None:
    result = cli_here("smallblocks", str(tmp_path), "--chart", str(tmp_path / "x.jpg"))
    assert result.returncode == 2
    assert "Name the file FILE.svg or FILE.png" in result.stderr


def test_cache_wants_a_write_cell_with_samples(imported: Store, tmp_path: Path) -> None:
    result = chart(imported, tmp_path / "c.svg", "seqplus", "-k", "cache")
    assert result.returncode == 1
    assert "has no write cell with per-second samples" in result.stderr and "--rw write" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_where_label_takes_the_run_label(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "x.svg"
    _ok(chart(imported, out, "jsonplus", "seqplus", "--x", "label", "--y", "iops", "--where", "label=seqplus"))
    words = texts(svg_tree(out))
    assert any(t.startswith("seqplus (") for t in words) and not any(t.startswith("jsonplus (") for t in words)


def test_custom_names_a_mixed_cell_by_its_direction(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "x.svg"
    _ok(chart(imported, out, "rw-both", "--x", "rw", "--y", "mb_s", "--where", "rw=randrw"))
    words = texts(svg_tree(out))
    assert {"randrw/read", "randrw/write"} <= set(words)


def test_histogram_buckets_of_repeated_job_names_are_each_jobs_own(tmp_path: Path, fio_path: str) -> None:
    """Two jobs with one name in one fio json+ output (as numjobs without group_reporting writes): each
    imported cell gets the buckets of its own job entry, not the first one's. fio runs here, 1 s."""
    import subprocess

    from stackbench.store.latency_bins import cell_bins
    from stackbench.store import open_store

    job = tmp_path / "two.fio"
    job.write_text(f"[global]\nfilename={tmp_path / 'data'}\nsize=8M\nrw=randread\nbs=4k\nioengine=psync\n"
                   "time_based=1\nruntime=1\n[x]\nrate_iops=200\n[x]\n")
    output = tmp_path / "out.json"
    subprocess.run([fio_path, str(job), "--output-format=json+", f"--output={output}"], check=True,
                   capture_output=True)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    assert cli_here("import", str(output), "-l", "dup", "--db", url).returncode == 0
    store = open_store(url)
    run = store.get_run("dup")
    totals = [sum(cell_bins(store, run, cell).values()) for cell in run.cells]
    store.dispose()
    assert totals == [cell.result.total_ios for cell in run.cells]
    assert totals[0] != totals[1]  # the capped job did far fewer I/Os
