"""fio normal and terse output parsers, checked field by field against the JSON of the same real run.

The pair-*.txt captures hold one fio run printed twice (`--output-format=normal,json` or `terse,json`);
tests/data/fio/CAPTURED.md records the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.fio_normal import parse_fio_normal
from stackbench.engine.fio_terse import parse_fio_terse
from stackbench.engine.result import FioResult
from stackbench.errors import FioOutputError

TEXT = Path(__file__).parent / "data" / "fio" / "text"


def _split(name: str) -> tuple[str, str]:
    """(the json document, the other text) of a pair capture."""
    text = (TEXT / name).read_text()
    start = text.index("{")
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[start:end], text[:start] + text[end:]


def _close(a: float | None, b: float | None, rel: float) -> bool:
    """Equal within what fio prints: 3-4 significant digits, and percentiles as whole units (1 µs at worst
    for latencies below 100 ms)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(rel * abs(b), 1000.0)


@pytest.mark.parametrize("name", sorted(p.name for p in TEXT.glob("pair-*-normal-json.txt")))
def test_normal_output_matches_the_json_of_the_same_run(name: str) -> None:
    document, text = _split(name)
    expected = parse_fio_json(document).directions
    parsed = parse_fio_normal(text, source=name)
    assert [(d.job_name, d.direction, d.rw, d.bs, d.iodepth, d.numjobs) for d in parsed.directions] == [
        (d.job_name, d.direction, d.rw, d.bs, d.iodepth, d.numjobs) for d in expected
    ]
    for got, want in zip(parsed.directions, expected):
        assert got.total_ios == want.total_ios and got.runtime_ms == want.runtime_ms
        assert got.iops == pytest.approx(want.iops, rel=1e-6)  # exact: from issued I/Os and runtime
        assert got.bw_bytes == pytest.approx(want.bw_bytes, rel=1e-3)
        # printed with 3-4 significant digits
        assert _close(got.clat.mean_ns, want.clat.mean_ns, 0.01)
        assert _close(got.clat.p50_ns, want.clat.p50_ns, 0.01)
        assert _close(got.clat.p99_ns, want.clat.p99_ns, 0.01)
        assert (got.sync_lat is None) == (want.sync_lat is None)
        if got.sync_lat:
            assert _close(got.sync_lat.p99_ns, want.sync_lat.p99_ns, 0.01)
        assert got.usr_cpu == pytest.approx(want.usr_cpu, abs=0.01)


def test_terse_output_matches_the_json_of_the_same_run() -> None:
    document, text = _split("pair-two-jobs-terse-json.txt")
    expected = parse_fio_json(document).directions
    parsed = parse_fio_terse(text)
    assert [(d.job_name, d.direction, d.bs) for d in parsed.directions] == [
        (d.job_name, d.direction, d.bs) for d in expected
    ]
    for got, want in zip(parsed.directions, expected):
        assert abs(got.iops - want.iops) < 1  # terse truncates IOPS to an integer
        assert got.bw_bytes == pytest.approx(want.bw_bytes, rel=1e-3)
        assert got.clat.mean_ns == pytest.approx(want.clat.mean_ns, rel=1e-6)
        assert abs(got.clat.p99_ns - want.clat.p99_ns) <= 1000  # usec resolution
    assert parsed.fio_version == "fio-3.33"


@pytest.mark.parametrize("mangle, message", [
    (lambda t: t.replace("clat (usec): min=", "clat (usec): min=x", 1).replace("avg=", "avg=garbage", 1),
     "line"),
    (lambda t: t[: t.index("issued rwts")], "truncated"),
    (lambda t: "\n".join(l for l in t.splitlines() if ": (g=" not in l), "no header line"),
    (lambda t: t.replace("99.00th=[", "99.00th=[x", 1), "cannot read percentiles"),
])
def test_broken_normal_output_names_the_problem(mangle, message: str) -> None:
    text = (TEXT / "normal-randwrite-fdatasync.txt").read_text()
    with pytest.raises(FioOutputError) as caught:
        parse_fio_normal(mangle(text), source="x.txt")
    assert message in caught.value.one_line()


def test_truncated_terse_line_names_the_line() -> None:
    line = (TEXT / "terse-two-jobs.txt").read_text().splitlines()[0]
    with pytest.raises(FioOutputError, match="line 1: .* fields"):
        parse_fio_terse(line[: len(line) // 3])


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_normal_parser_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        assert isinstance(parse_fio_normal(text), FioResult)
    except FioOutputError:
        pass


@FUZZ
@given(st.data())
def test_normal_parser_survives_cut_and_mutated_real_output(data) -> None:
    text = (TEXT / "normal-randrw.txt").read_text()
    cut = data.draw(st.integers(0, len(text)))
    position = data.draw(st.integers(0, max(0, cut - 1)))
    noise = data.draw(st.text(max_size=5))
    try:
        parse_fio_normal(text[:position] + noise + text[position:cut])
    except FioOutputError:
        pass


@FUZZ
@given(st.text(alphabet=st.sampled_from("3;fio-.0123456789%=abc\n"), max_size=600))
def test_terse_parser_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        parse_fio_terse(text)
    except FioOutputError:
        pass
