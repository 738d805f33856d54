"""Job files fio reads exactly as meant: hostile paths, labels and engines are refused or carried literally.

The property tests check our reading of the job file; the fio tests run the real fio 3.x on the job file
stackbench writes and look at which file it actually created.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import cli_here
from stackbench.engine.fio import job_file
from stackbench.engine.jobtext import check_value, opened_files, read_back, render
from stackbench.base.errors import UsageError
from stackbench.model.plan import IOENGINES, build_plan

HOSTILE = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("\n\r\t\x00\x0b\x1b$:;#[]=\\ {}%~'\"|/ab.-")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    min_size=1,
    max_size=40,
)


def _workload():
    return build_plan(None, bs=["4k"], qd=[1], rw=["randwrite"], size="64k", runtime=0.2, ramp=0).workloads[0]


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(name=HOSTILE)
def test_a_hostile_path_is_refused_or_is_the_only_file_the_job_opens(name: str) -> None:
    path = "/srv/" + name
    try:
        text = job_file(_workload(), path)
    except UsageError as error:
        assert "\n" not in str(error)
        return
    assert opened_files(text) == [path]
    options = [option for _, option, _ in read_back(text)]
    assert options.count("filename") == 1
    assert set(options) <= {
        "ioengine", "filename", "size", "time_based", "runtime", "direct", "sync", "group_reporting",
        "write_iops_log", "write_bw_log", "write_lat_log", "log_avg_msec", "log_unix_epoch", "rw", "bs", "iodepth", "numjobs",
    }
    assert [section for section, _, _ in read_back(text)][0] == "global"


@settings(max_examples=300)
@given(label=HOSTILE)
def test_a_label_in_the_comment_line_never_becomes_an_option_or_section(label: str) -> None:
    text = job_file(_workload(), "/srv/x.scratch", title=label)
    assert text.split("\n", 1)[0].startswith("; ")
    assert read_back(text) == read_back(job_file(_workload(), "/srv/x.scratch", title="plain"))


@pytest.mark.parametrize(
    "value, named",
    [
        ("/srv/a\nfilename=/dev/sda", "U+000A"),
        ("/srv/a\r[other]", "U+000D"),
        ("/srv/${HOME}/x", "a dollar sign"),
        ("/srv/$ncpus", "a dollar sign"),
        ("/srv/a;b", "a semicolon"),
        ("/srv/a#b", "a hash sign"),
        ("/srv/a\u2028b", "U+2028"),
        (" /srv/a", "blank"),
    ],
)
def test_unsafe_values_are_refused_with_one_line_naming_the_character(value: str, named: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_value("filename", value, what="--target path")
    assert named in str(caught.value)
    assert "\n" not in str(caught.value) and "\r" not in str(caught.value)
    assert caught.value.exit_code == 2


def test_section_names_and_options_are_checked_too() -> None:
    with pytest.raises(UsageError):
        render("x", [("global", [("rw", "read\nfilename=/dev/sda")])])
    with pytest.raises(UsageError):
        render("x", [("a]b", [("rw", "read")])])


@pytest.mark.parametrize("name", ["a:b", "c\\d", "e\\:f", "[x]", "k=v", "sp ace", "ü é", "q'r\"s", "%d", "~t"])
def test_real_fio_creates_exactly_the_approved_file(tmp_path: Path, fio_path: str, name: str) -> None:
    """fio 3.x, given the job file stackbench writes, creates the file at the path we approved and no other."""
    directory = tmp_path / name
    directory.mkdir()
    target = directory / "stackbench-test.scratch"
    job = tmp_path / "cell.fio"
    job.write_text(job_file(_workload(), str(target), sample_logs=False))
    done = subprocess.run([fio_path, "--output-format=terse", str(job)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    created = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p != job)
    assert created == [target]


def test_fio_really_cuts_a_value_at_a_semicolon(tmp_path: Path, fio_path: str) -> None:
    """Why `;` is refused: fio reads it as a comment and opens a different file (measured, not assumed)."""
    (tmp_path / "g;h").mkdir()
    job = tmp_path / "raw.fio"
    job.write_text(f"[j]\nioengine=psync\nfilename={tmp_path}/g;h/f\nsize=64k\nrw=write\nbs=64k\n")
    subprocess.run([fio_path, "--output-format=terse", str(job)], capture_output=True, timeout=60, check=True)
    assert (tmp_path / "g").is_file() and not (tmp_path / "g;h" / "f").exists()


@pytest.mark.parametrize("engine", ["exec", "null", "libaio\nfilename=/dev/sda", "net", ""])
def test_unknown_engines_are_refused(engine: str) -> None:
    with pytest.raises(UsageError) as caught:
        build_plan(None, ioengine=engine or " ")
    assert ", ".join(IOENGINES) in str(caught.value)


def test_cli_refuses_a_directory_whose_name_injects_a_filename(tmp_path: Path, blank_loop: Path) -> None:
    """The reported attack: a directory name with a newline and `filename=<device>`. Nothing is written."""
    subprocess.run(["mkfs.ext4", "-q", str(blank_loop)], check=True)
    before = subprocess.run(["sha256sum", str(blank_loop)], capture_output=True, text=True, check=True).stdout.split()[0]
    evil = tmp_path / f"d\nfilename={blank_loop}"
    evil.mkdir(parents=True)
    result = cli_here("run", "-t", str(evil), "--runtime", "1", "--size", "16M", "--db", f"sqlite:///{tmp_path}/r.db")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --target path") and "U+000A" in lines[0]
    after = subprocess.run(["sha256sum", str(blank_loop)], capture_output=True, text=True, check=True).stdout.split()[0]
    assert before == after
    assert list(evil.iterdir()) == []
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize("engine", ["exec", "libaio\nfilename=/etc/passwd"])
def test_cli_refuses_an_unknown_ioengine_before_anything_is_created(tmp_path: Path, scratch_dir: Path, engine: str) -> None:
    result = cli_here("run", "-t", str(scratch_dir), "--ioengine", engine, "--db", f"sqlite:///{tmp_path}/r.db")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--ioengine" in result.stderr
    assert list(scratch_dir.iterdir()) == [] and not (tmp_path / "r.db").exists()
