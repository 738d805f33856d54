"""fio normal (human-readable) output parser, checked value by value against the JSON of the same real run.

The pair-*-normal-json.txt captures hold one fio 3.33 run printed twice (`--output-format=normal,json`);
tests/data/fio/CAPTURED.md and tests/data/fio/text/CAPTURED-TEXT.md record the commands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.fio_text import looks_like, parse_fio_text
from stackbench.model.fio_result import FioResult
from stackbench.base.errors import FioOutputError

TEXT = Path(__file__).parent.parent / "data" / "fio" / "text"
UNIT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
PAIRS = sorted(p.name for p in TEXT.glob("pair-*-normal-json.txt") if "enotdir" not in p.name)


def split(name: str) -> tuple[str, str]:
    """(the json document, the normal text) of a pair capture."""
    text = (TEXT / name).read_text()
    start = text.index("{")
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[start:end], text[:start] + text[end:]


def units(text: str) -> list[dict[str, float]]:
    """Per read/write/trim/mixed section in order: the unit (ns) its clat line and percentiles are printed in."""
    sections: list[dict[str, float]] = []
    for line in text.splitlines():
        if re.match(r"^\s+(read|write|trim|mixed)\s*: IOPS=", line):
            sections.append({"stat": 1.0, "pct": 1.0})
        elif match := re.match(r"^\s+clat \((\w+)\)", line):
            sections[-1]["stat"] = UNIT_NS[match[1]]
        elif match := re.match(r"^\s+clat percentiles \((\w+)\)", line):
            sections[-1]["pct"] = UNIT_NS[match[1]]
    return sections


def close(got: float | None, want: float | None, unit: float) -> bool:
    """Equal within what fio prints: one unit of the line's scale, or the 4-5 digits of a k/M-suffixed value."""
    if got is None or want is None:
        return got is None and want is None
    return abs(got - want) <= max(unit, 1e-4 * abs(want))


def block_size_is_fixed(name: str) -> bool:
    return "bsrange" not in name


@pytest.mark.parametrize("name", PAIRS)
def test_normal_output_matches_the_json_of_the_same_run(name: str) -> None:
    document, text = split(name)
    want = parse_fio_json(document)
    got = parse_fio_text(text, source=name)
    assert got.fio_version == want.fio_version
    assert got.raw_text == text
    assert got.job_errors == want.job_errors
    assert [(d.job_name, d.direction, d.rw, d.iodepth, d.numjobs) for d in got.directions] == [
        (d.job_name, d.direction, d.rw, d.iodepth, d.numjobs) for d in want.directions
    ]
    for g, w, unit in zip(got.directions, want.directions, units(text), strict=True):
        # IOPS exact: issued I/Os / runtime, as fio computes it (the JSON prints it with 6 decimals)
        assert (g.total_ios, g.runtime_ms) == (w.total_ios, w.runtime_ms)
        assert g.iops == pytest.approx(w.total_ios * 1000 / w.runtime_ms, rel=1e-12)
        assert g.iops == pytest.approx(w.iops, rel=1e-6)
        if block_size_is_fixed(name):
            assert (g.bs, g.io_bytes) == (w.bs, w.io_bytes)
            assert g.bw_bytes == pytest.approx(w.io_bytes * 1000 / w.runtime_ms, rel=1e-12)
            assert abs(g.bw_bytes - w.bw_bytes) < 1  # fio's bw_bytes is truncated to whole bytes/s
        else:  # bsrange: only the 3-digit io size is printed
            assert g.bs == pytest.approx(w.bs, rel=5e-3)
            assert g.bw_bytes == pytest.approx(w.bw_bytes, rel=5e-3)
        assert g.options["ioengine"] == w.options.get("ioengine", g.options["ioengine"])
        for field in ("mean_ns", "stddev_ns", "min_ns", "max_ns"):
            assert close(getattr(g.clat, field), getattr(w.clat, field), unit["stat"]), field
        for field in ("p50_ns", "p99_ns", "p999_ns"):
            assert close(getattr(g.clat, field), getattr(w.clat, field), unit["pct"]), field
        assert (g.sync_lat is None) == (w.sync_lat is None)
        if g.sync_lat is not None:
            assert close(g.sync_lat.mean_ns, w.sync_lat.mean_ns, 1000)  # sync lines print usec here
            assert close(g.sync_lat.p99_ns, w.sync_lat.p99_ns, 1000)
            assert g.options["fsync"] == "1"
        assert g.usr_cpu == pytest.approx(w.usr_cpu, abs=0.006)
        assert g.sys_cpu == pytest.approx(w.sys_cpu, abs=0.006)


def test_the_captures_cover_what_the_parser_claims() -> None:
    text = "".join(split(name)[1] for name in PAIRS)
    for needle in ("clat (nsec)", "clat (usec)", "clat (msec)", "percentiles (msec)", "k, avg=", "mixed:",
                   "trim:", "fsync/fdatasync/sync_file_range:", "err=84", "jobs=3", "(W) 16.0KiB"):
        assert needle in text, needle


def test_rounded_iops_in_the_summary_are_not_used() -> None:
    _, text = split("pair-two-jobs-normal-json.txt")
    assert "IOPS=17.6k" in text or re.search(r"IOPS=\d+\.\dk", text)
    first = parse_fio_text(text).directions[0]
    assert first.iops != round(first.iops, -2)


def test_a_job_that_failed_before_io_prints_no_result_block() -> None:
    _, text = split("pair-error-enotdir-normal-json.txt")
    with pytest.raises(FioOutputError, match=r"x.txt line 1: job 'bad' starts here but no result block .*stderr"):
        parse_fio_text(text, source="x.txt")


def test_its_error_is_read_from_stderr_when_kept() -> None:
    result = parse_fio_text((TEXT / "stderr-error-enotdir-normal.txt").read_text())
    assert [(e.job_name, e.code, e.message) for e in result.job_errors] == [("bad", 20, "Not a directory")]
    assert result.directions == ()


@pytest.mark.parametrize("name", ["normal-randrw.txt", "normal-randwrite-fdatasync.txt", "normal-two-jobs.txt"])
def test_plain_normal_captures_parse(name: str) -> None:
    text = (TEXT / name).read_text()
    result = parse_fio_text(text)
    issued = [int(x) for line in text.splitlines() if "issued rwts" in line
              for x in line.split("total=")[1].split()[0].split(",")[:3] if int(x)]
    assert [d.total_ios for d in result.directions] == issued
    assert result.fio_version.startswith("fio-3.")
    assert looks_like(text)


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_garbage_in_a_percentile_row_names_its_line() -> None:
    text = (TEXT / "normal-randrw.txt").read_text().replace("99.00th=[", "99.00th=[x", 1)
    with pytest.raises(FioOutputError, match=rf"f.txt line {_line_of(text, '99.00th=[x')}: cannot read the percentile"):
        parse_fio_text(text, source="f.txt")


def test_garbage_in_a_latency_line_names_its_line() -> None:
    text = (TEXT / "normal-randrw.txt").read_text().replace("avg=", "avg=garbage", 1)
    with pytest.raises(FioOutputError, match=rf"line {_line_of(text, 'avg=garbage')}: cannot read 'avg=garbage"):
        parse_fio_text(text)


@pytest.mark.parametrize("cut_before, message", [
    ("99.50th=[", "the output is cut|cannot read the percentile"),  # cut inside the percentile table
    ("issued rwts", "line 5: job 'm' has no 'issued rwts: total=...' line; the output is cut"),
    ("    clat (nsec)", "line 6: job 'm': the read section has no latency lines; the output is cut"),
])
def test_a_truncated_capture_is_an_error_naming_the_line(cut_before: str, message: str) -> None:
    text = (TEXT / "normal-randrw.txt").read_text()
    cut = text[: text.index(cut_before) + len(cut_before) // 2]
    with pytest.raises(FioOutputError, match=message):
        parse_fio_text(cut)


def test_results_without_their_header_line() -> None:
    text = "\n".join(line for line in (TEXT / "normal-randrw.txt").read_text().splitlines() if ": (g=" not in line)
    with pytest.raises(FioOutputError, match=r"line 4: job 'm' has results but no header line"):
        parse_fio_text(text)


def test_fio2_direction_lines_are_refused_by_line() -> None:
    text = (TEXT / "normal-randrw.txt").read_text().replace(
        "  read: IOPS=", "  read : io=70.5MB, bw=72000KB/s, iops=18000, runt= 1001msec\n  x: IOPS=", 1
    )
    with pytest.raises(FioOutputError, match=r"line 6: cannot read the direction summary .*fio 2.x"):
        parse_fio_text(text)


def test_unknown_text_names_its_first_line() -> None:
    with pytest.raises(FioOutputError, match=r"notes.txt line 2: 'my benchmark notes' does not start fio"):
        parse_fio_text("\nmy benchmark notes\nnothing here\n", source="notes.txt")
    assert not looks_like("my benchmark notes\n")


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_arbitrary_text_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        assert isinstance(parse_fio_text(text), FioResult)
    except FioOutputError as error:
        assert " line " in error.one_line()


@FUZZ
@given(st.data())
def test_cut_and_mutated_real_output_gives_a_result_or_a_clear_error(data) -> None:
    text = (TEXT / data.draw(st.sampled_from(["normal-randrw.txt", "normal-randwrite-fdatasync.txt"]))).read_text()
    cut = data.draw(st.integers(0, len(text)))
    position = data.draw(st.integers(0, max(0, cut - 1)))
    noise = data.draw(st.text(alphabet=st.sampled_from("0123456789.,=[]|k: \nabc"), max_size=6))
    try:
        assert isinstance(parse_fio_text(text[:position] + noise + text[position:cut]), FioResult)
    except FioOutputError as error:
        assert " line " in error.one_line()


PAIRS_OK = [name for name in PAIRS if "error" not in name and "trim" not in name]  # trim is not stored


@pytest.mark.parametrize("name", PAIRS_OK)
def test_the_importer_reads_normal_output_like_the_json_of_the_same_run(name: str) -> None:
    """The production import path (format detection, then the one text parser) against fio's own JSON."""
    from stackbench.load.importer import parse_any, workload_of

    document, normal = split(name)
    from_text, _ = parse_any(normal.encode(), name)
    from_json, _ = parse_any(document.encode(), name)
    assert len(from_text.directions) == len(from_json.directions)
    for text_dir, json_dir in zip(from_text.directions, from_json.directions):
        a, b = workload_of(text_dir), workload_of(json_dir)
        assert (a.rw, a.iodepth, a.numjobs) == (b.rw, b.iodepth, b.numjobs), name
        assert a.bs == pytest.approx(b.bs, abs=1 if "bsrange" in name else 0), name  # bsrange: mean I/O size
        assert text_dir.direction == json_dir.direction
        assert text_dir.iops == pytest.approx(json_dir.iops, rel=0.01, abs=0.5), name
