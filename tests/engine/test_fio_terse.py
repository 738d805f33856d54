"""fio terse (v3) parser, checked value by value against the JSON of the same real run.

The pair-*-terse-json.txt captures hold one fio 3.33 run printed twice (`--output-format=terse,json`);
tests/data/fio/CAPTURED.md and tests/data/fio/text/CAPTURED-TEXT.md record the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.fio_terse import looks_like, parse_fio_terse
from stackbench.engine.truncated import recover
from stackbench.model.fio_result import FioResult
from stackbench.base.errors import FioOutputError

TEXT = Path(__file__).parent.parent / "data" / "fio" / "text"
PAIRS = sorted(p.name for p in TEXT.glob("pair-*-terse-json.txt") if not ("trim" in p.name or "enotdir" in p.name))
RW = {"read": "read", "randread": "read", "write": "write", "randwrite": "write", "rw": "rw", "randrw": "rw",
      "readwrite": "rw"}


def split(name: str) -> tuple[str, str]:
    """(the json document, the terse lines) of a pair capture."""
    text = (TEXT / name).read_text()
    start = text.index("{")
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[start:end], text[:start] + text[end:]


def truncated_usec(got: float | None, want: float | None) -> bool:
    """Terse prints min/max and percentiles as whole usec, truncated."""
    assert got is not None and want is not None
    return 0 <= want - got < 1000


@pytest.mark.parametrize("name", PAIRS)
def test_terse_output_matches_the_json_of_the_same_run(name: str) -> None:
    document, text = split(name)
    want = parse_fio_json(document)
    got = parse_fio_terse(text, source=name)
    assert got.fio_version == want.fio_version and got.raw_text == text
    assert got.job_errors == want.job_errors
    assert [(d.job_name, d.direction, d.numjobs) for d in got.directions] == [
        (d.job_name, d.direction, d.numjobs) for d in want.directions
    ]
    for g, w in zip(got.directions, want.directions, strict=True):
        assert g.rw == RW[w.rw]  # random or sequential is not in terse
        assert g.iodepth == min(w.iodepth, 64)  # the depth bucket; >=64 shows as 64, a placeholder only:
        assert {"pattern", "iodepth"} <= set(g.unknown)  # terse does not say them, so they are unknown
        assert ("bs" in g.unknown) == ("bsrange" in name) and ("bs" in g.derived) != ("bsrange" in name)
        assert ("numjobs" in g.unknown) == (g.numjobs == 1)  # one line: one job or a group_reporting sum
        # exact I/O count and block size, recovered from the truncated KiB, KiB/s and IOPS
        assert (g.total_ios, g.bs, g.io_bytes, g.runtime_ms) == (w.total_ios, w.bs, w.io_bytes, w.runtime_ms)
        assert g.options["bs_exact"] == ("0" if "bsrange" in name else "1")
        assert g.iops == pytest.approx(w.total_ios * 1000 / w.runtime_ms, rel=1e-12)
        assert g.iops == pytest.approx(w.iops, rel=1e-6)
        assert abs(g.bw_bytes - w.bw_bytes) < 1
        assert g.clat.mean_ns == pytest.approx(w.clat.mean_ns, abs=0.5)  # usec with 6 decimals
        assert g.clat.stddev_ns == pytest.approx(w.clat.stddev_ns, abs=0.5)
        for field in ("min_ns", "max_ns", "p50_ns", "p99_ns", "p999_ns"):
            assert truncated_usec(getattr(g.clat, field), getattr(w.clat, field)), field
        assert g.usr_cpu == pytest.approx(w.usr_cpu, abs=1e-6) and g.sys_cpu == pytest.approx(w.sys_cpu, abs=1e-6)


def test_the_captures_cover_what_the_parser_claims() -> None:
    names = " ".join(PAIRS)
    for needle in ("mixed", "numjobs2", "bs512", "bsrange", "msec-qd256", "rate", "randrw-split", "error-verify"):
        assert needle in names


def test_a_failed_job_is_a_job_error() -> None:
    document, text = split("pair-error-enotdir-terse-json.txt")
    result = parse_fio_terse(text)
    assert result.job_errors == parse_fio_json(document).job_errors
    assert [(e.job_name, e.code) for e in result.job_errors] == [("bad", 20)] and result.directions == ()


def test_trim_is_not_in_terse_v3_and_says_so() -> None:
    _, text = split("pair-trim-loop-terse-json.txt")
    with pytest.raises(FioOutputError, match=r"line 1: no job did read or write I/O \(terse v3 has no trim"):
        parse_fio_terse(text)


def test_a_cut_line_names_the_line_and_the_field_count() -> None:
    lines = (TEXT / "terse-two-jobs.txt").read_text().splitlines()
    text = lines[0] + "\n" + lines[1][: len(lines[1]) // 3]
    with pytest.raises(FioOutputError, match=r"t.txt line 2: \d+ fields, a terse v3 job line has at least 121; "
                                             r"the line is cut"):
        parse_fio_terse(text, source="t.txt")


def test_a_garbage_percentile_names_the_line_and_field() -> None:
    lines = (TEXT / "terse-two-jobs.txt").read_text().splitlines()
    lines[1] = lines[1].replace("50.000000%=", "50.000000%=x", 1)
    with pytest.raises(FioOutputError, match=r"line 2: field 24 \(read clat percentile\) is '50.000000%=x0', not 'P%=usec'"):
        parse_fio_terse("\n".join(lines))


def test_a_garbage_number_names_the_line_and_field() -> None:
    line = (TEXT / "terse-two-jobs.txt").read_text().splitlines()[0].split(";")
    line[7] = "12e4"
    with pytest.raises(FioOutputError, match=r"line 1: field 8 \(IOPS\) is '12e4', not a whole number"):
        parse_fio_terse(";".join(line))


def test_other_terse_versions_are_refused() -> None:
    line = (TEXT / "terse-two-jobs.txt").read_text().splitlines()[0]
    with pytest.raises(FioOutputError, match=r"line 1: terse version 4 is not supported.*--terse-version=3"):
        parse_fio_terse("4" + line[1:])


def test_unknown_text_names_its_line() -> None:
    with pytest.raises(FioOutputError, match=r"n.txt line 2: 'my benchmark notes' is not a terse v3 line"):
        parse_fio_terse("\nmy benchmark notes\n", source="n.txt")
    with pytest.raises(FioOutputError, match=r"line 1: no terse job lines"):
        parse_fio_terse("")
    assert not looks_like("my benchmark notes\n")
    assert looks_like((TEXT / "terse-two-jobs.txt").read_text())


def fio_prints(ios: int, bs: int, runtime: int) -> tuple[int, int, int, int]:
    """What fio 3.x's show_ddir_status_terse prints for these numbers (checked on every pair capture above)."""
    io_bytes = ios * bs
    return io_bytes >> 10, (1000 * io_bytes // runtime) // 1024, 1000 * ios // runtime, runtime


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 10**8), st.integers(1, 2048).map(lambda k: 512 * k), st.integers(1, 600_000))
def test_recovered_block_size_and_count_are_right_whenever_called_exact(ios: int, bs: int, runtime: int) -> None:
    found = recover(*fio_prints(ios, bs, runtime))
    if found.ios_exact:
        assert (found.ios, found.bs) == (ios, bs)
    if found.bs_exact:
        assert found.bs == bs
    assert found.ios >= 1 and found.bs >= 1


@pytest.mark.parametrize("ios, bs, runtime", [(22859, 4096, 1001), (150, 4096, 1001), (5850, 1 << 20, 2048),
                                              (183364, 512, 1007), (40_000_000, 8192, 600_000), (1, 4096, 1)])
def test_typical_runs_are_recovered_exactly(ios: int, bs: int, runtime: int) -> None:
    found = recover(*fio_prints(ios, bs, runtime))
    assert (found.ios, found.bs, found.ios_exact, found.bs_exact) == (ios, bs, True, True)


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_arbitrary_text_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        assert isinstance(parse_fio_terse(text), FioResult)
    except FioOutputError as error:
        assert " line " in error.one_line()


@FUZZ
@given(st.data())
def test_mutated_real_lines_give_a_result_or_a_clear_error(data) -> None:
    text = (TEXT / "terse-two-jobs.txt").read_text()
    position = data.draw(st.integers(0, len(text)))
    length = data.draw(st.integers(0, 8))
    noise = data.draw(st.text(alphabet=st.sampled_from("0123456789.;%=\nfio-3a"), max_size=8))
    try:
        assert isinstance(parse_fio_terse(text[:position] + noise + text[position + length:]), FioResult)
    except FioOutputError as error:
        assert " line " in error.one_line()
