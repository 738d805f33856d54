"""`stackbench import`: fio JSON written by fio itself becomes runs; bad files store nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import cli_here


@pytest.fixture(scope="module")
def fio_json_file(fio_path: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A json+ file from a real fio run with two jobs (randread, and randwrite with fdatasync)."""
    directory = tmp_path_factory.mktemp("import")
    job = directory / "two.fio"
    job.write_text(
        "[global]\nioengine=psync\nsize=8M\ntime_based=1\nruntime=1\n"
        f"filename={directory / 'data'}\n"
        "[reader]\nrw=randread\nbs=4k\n"
        "[writer]\nstonewall\nrw=randwrite\nbs=8k\nfdatasync=1\n"
    )
    output = directory / "two.json"
    subprocess.run([fio_path, "--output-format=json+", f"--output={output}", str(job)], check=True,
                   capture_output=True)
    (directory / "data").unlink()
    return output


def test_import_stores_each_job_as_a_cell_with_the_run_json_shape(tmp_path: Path, fio_json_file: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = cli_here("import", str(fio_json_file), "--label", "old", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert len(runs) == 1
    run = runs[0]
    document = json.loads(fio_json_file.read_text())
    assert run["source"] == "imported" and run["label"] == "old"
    assert run["facts"]["fio_version"] == document["fio version"]
    patterns = [c["pattern"] for c in run["cells"]]
    assert patterns == ["4K QD1 rnd read", "8K QD1 rnd write sync"]
    assert run["cells"][0]["iops"] == document["jobs"][0]["read"]["iops"]
    assert run["cells"][1]["iops"] == document["jobs"][1]["write"]["iops"]
    assert run["cells"][1]["sync_lat_p99_us"] == document["jobs"][1]["sync"]["lat_ns"]["percentile"]["99.000000"] / 1000
    shown = cli_here("show", "old", "--db", db, "--json")
    assert json.loads(shown.stdout)["cells"] == run["cells"]
    table = cli_here("show", "old", "--db", db)
    assert "8K QD1 rnd write sync" in table.stdout and "p99 sync" in table.stdout


def test_import_with_text_before_the_json_still_works(tmp_path: Path, fio_json_file: Path) -> None:
    polluted = tmp_path / "polluted.json"
    polluted.write_text("fio: some notice on stdout\nnote: both iodepth and rate set\n" + fio_json_file.read_text())
    result = cli_here("import", str(polluted), "--db", f"sqlite:///{tmp_path / 'r.db'}", "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["runs"][0]["cells"]) == 2


@pytest.mark.parametrize("content, message", [
    ("", "no fio JSON document"),
    ("hello world", "unknown format"),
    ('{"jobs": [', "not complete fio JSON"),
    ('{"something": 1}', "unknown format"),
])
def test_bad_files_are_one_line_errors_and_nothing_is_stored(
    tmp_path: Path, fio_json_file: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    result = cli_here("import", str(fio_json_file), str(bad), "--db", db)
    assert result.returncode == 1
    assert message in result.stderr and str(bad) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert json.loads(cli_here("runs", "--db", db, "--json").stdout)["runs"] == []


def test_truncated_real_output_is_refused(tmp_path: Path, fio_json_file: Path) -> None:
    text = fio_json_file.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    result = cli_here("import", str(cut), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1
    assert "truncated" in result.stderr


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    result = cli_here("import", str(tmp_path / "nope.json"), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 1
    assert "nope.json does not exist" in result.stderr


def test_import_prints_markdown_or_csv_with_format(tmp_path: Path, fio_json_file: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = cli_here("import", str(fio_json_file), "--format", "csv", "--db", db)
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.strip().splitlines()
    assert header.startswith("Pattern,IOPS,") and len(rows) == 2
    markdown = cli_here("import", str(fio_json_file), "--format", "markdown", "--db", db)
    assert "| Pattern | IOPS |" in markdown.stdout
