"""`stackbench import`: fio JSON written by fio itself becomes runs; bad files store nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import DATA, cli_here


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


FIO = Path(__file__).parents[1] / "data" / "fio"


def test_a_label_on_several_files_names_each_run_on_its_own(tmp_path: Path) -> None:
    """`import a b c --label X` made three runs labelled X, of which `show X` and `rm X` reached only the
    newest: each run now has its own label, X-1 to X-3 in the order given."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    files = [FIO / "randread-psync.json", FIO / "two-jobs-defaults.json", FIO / "numjobs4-group.json"]
    made = cli_here("import", *map(str, files), "--label", "old", "--db", db, "--json")
    assert made.returncode == 0, made.stderr
    runs = json.loads(made.stdout)["runs"]
    assert [r["label"] for r in runs] == ["old-1", "old-2", "old-3"]
    assert [r["facts"]["imported_from"] for r in runs] == [str(f.resolve()) for f in files]
    assert json.loads(cli_here("show", "old-2", "--db", db, "--json").stdout)["run_id"] == runs[1]["run_id"]
    gone = cli_here("rm", "old-1", "--yes", "--db", db)
    assert gone.returncode == 0 and "Deleted 1 run." in gone.stdout
    left = [r["label"] for r in json.loads(cli_here("runs", "--db", db, "--json").stdout)["runs"]]
    assert sorted(left) == ["old-2", "old-3"]
    one = cli_here("import", str(files[0]), "--label", "single", "--db", db, "--json")
    assert json.loads(one.stdout)["runs"][0]["label"] == "single"  # one file: the label as given


def test_rm_refuses_a_label_that_names_several_runs_and_show_says_which_it_shows(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    ids = []
    for _ in range(2):  # the same label on two separate imports (or runs): allowed, a label names the newest
        made = cli_here("import", str(FIO / "randread-psync.json"), "--label", "dup", "--db", db, "--json")
        ids.append(json.loads(made.stdout)["runs"][0]["run_id"])
    refused = cli_here("rm", "dup", "--yes", "--db", db)
    assert refused.returncode == 2, refused.stderr
    assert "the label 'dup' names 2 stored items" in refused.stderr and ids[0][:12] in refused.stderr
    assert "stackbench runs --label dup" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert len(json.loads(cli_here("runs", "--db", db, "--json").stdout)["runs"]) == 2
    shown = cli_here("show", "dup", "--db", db, "--json")
    assert json.loads(shown.stdout)["run_id"] == ids[1]
    assert f"names 2 stored items; this is the newest, run {ids[1][:12]}" in shown.stderr
    assert cli_here("rm", ids[0], "--yes", "--db", db).returncode == 0
    assert cli_here("rm", "dup", "--yes", "--db", db).returncode == 0  # one left: the label names it alone


def test_a_label_too_long_for_its_numbers_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    done = cli_here("import", str(FIO / "randread-psync.json"), str(FIO / "two-jobs-defaults.json"),
                    "--label", "x" * 199, "--db", f"sqlite:///{db}")
    assert done.returncode == 2 and "up to LABEL-2, 201 characters (at most 200)" in done.stderr
    assert json.loads(cli_here("runs", "--db", f"sqlite:///{db}", "--json").stdout)["runs"] == []


@pytest.fixture(scope="module")
def beyond_run_limits(fio_path: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real fio output of jobs `run` would never plan but fio runs (the null engine does no I/O, in ~1 s):
    iodepth 8192 with runtime=100000 (a cap: the job ends with its size), bs 512m, numjobs 512."""
    directory = tmp_path_factory.mktemp("beyond")
    job = directory / "beyond.fio"
    job.write_text(
        "[global]\nioengine=null\nthread=1\n"
        "[deep]\nrw=randread\nbs=4k\niodepth=8192\nsize=64m\nruntime=100000\n"
        "[huge]\nrw=read\nbs=512m\nsize=1g\n"
        "[many]\nnew_group\nrw=read\nbs=4k\nsize=1m\nnumjobs=512\ngroup_reporting=1\n"
    )
    output = directory / "beyond.json"
    subprocess.run([fio_path, "--output-format=json", f"--output={output}", str(job)], check=True, capture_output=True)
    return output


def test_real_fio_outputs_beyond_runs_plan_limits_are_imported(tmp_path: Path, beyond_run_limits: Path) -> None:
    """`run`'s limits (--qd up to 4096, --jobs 256, --bs 256m, --runtime 86400) are what it will plan; an
    import is what fio did elsewhere, and was refused with a message about --qd that named no file."""
    from stackbench.store import open_store

    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = cli_here("import", str(beyond_run_limits), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert {(c["iodepth"], c["bs"], c["numjobs"]) for c in run["cells"]} == {(8192, "4k", 1), (1, "512m", 1),
                                                                              (1, "4k", 512)}
    store = open_store(db)
    assert 100000 in {cell.workload.runtime for cell in store.get_run(run["run_id"]).cells}
    store.dispose()


def _edited(tmp_path: Path, change) -> Path:  # noqa: ANN001
    """A real fio 3.33 output (tests/data) with one value changed, as an edited or corrupted file has it."""
    document = json.loads((DATA / "fio" / "randread-psync.json").read_text())
    change(document["jobs"][0])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    return path


def _fio2_clat(job: dict, mean: float) -> None:
    job["read"]["clat"] = {**job["read"].pop("clat_ns"), "mean": mean}  # fio 2.x: usec


@pytest.mark.parametrize("change, named", [
    (lambda job: _fio2_clat(job, 1.7e308), "read clat has mean too large for fio's 64-bit counters"),
    (lambda job: _fio2_clat(job, 2.0**64), "read clat has mean too large"),  # in us: 1000 times fio's most
    (lambda job: job["read"]["clat_ns"].update(mean=1.7e308), "read clat_ns has mean too large"),
    (lambda job: job["read"].update(iops=1e300), "read has iops too large"),
    (lambda job: job["read"]["clat_ns"]["percentile"].update({"99.000000": 2**70}), "percentile 99.000000"),
    (lambda job: job["read"]["clat_ns"]["percentile"].update({"inf": 5}), "percentile key 'inf'"),
    (lambda job: job["job options"].update(iodepth="2147483648"), "iodepth=2147483648 is outside what fio accepts"),
    (lambda job: job["job options"].update(numjobs="4097"), "numjobs=4097 is outside what fio accepts"),
    (lambda job: job["job options"].update(runtime="inf"), "runtime=inf is outside what fio accepts"),
    (lambda job: job["job options"].update(bs="9223372036854775808"), "bs=9223372036854775808 is outside"),
])
def test_numbers_fio_cannot_report_are_refused_naming_the_file_and_the_field(tmp_path: Path, change,  # noqa: ANN001
                                                                            named: str) -> None:
    """A latency of 1.7e308 is finite, but its statistics were not: `report` and two chart kinds exited 70
    and `show --json` printed `Infinity`. Now the import refuses it, and stores nothing."""
    path = _edited(tmp_path, change)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = cli_here("import", str(path), "--db", db)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert str(path) in lines[0] and named in lines[0], lines[0]
    assert json.loads(cli_here("runs", "--db", db, "--json").stdout)["runs"] == []


def test_the_largest_numbers_fio_can_report_go_through_every_command(tmp_path: Path) -> None:
    """Values at the top of fio's 64-bit counters are accepted, and nothing after the import fails on
    them: `show --json` is strict JSON, the report and the charts are drawn."""
    top = 1.8e19

    def change(job: dict) -> None:
        latency = job["read"]["clat_ns"]
        latency.update(min=top, max=top, mean=top, stddev=top)
        latency["percentile"] = {key: int(top) for key in latency["percentile"]}
        job["read"].update(iops=top, bw_bytes=top, runtime=top, io_bytes=2**64 - 1, total_ios=2**64 - 1)
        job.update(usr_cpu=top, sys_cpu=top)

    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert cli_here("import", str(_edited(tmp_path, change)), "--label", "top", "--db", db).returncode == 0
    shown = cli_here("show", "top", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    json.loads(shown.stdout, parse_constant=lambda name: pytest.fail(f"{name} in show --json"))
    assert cli_here("report", "top", "-o", str(tmp_path / "r.html"), "--db", db).returncode == 0
    for kind in ("matrix", "percentiles"):
        drawn = cli_here("chart", "top", "--kind", kind, "-o", str(tmp_path / f"{kind}.svg"), "--db", db)
        assert drawn.returncode == 0, drawn.stderr
