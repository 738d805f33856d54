"""Hypothesis: in every import format, numbers no fio reports (NaN, Infinity, 1.7e308, negatives, 2^64 and
past it, thousands of digits) put where the real captured outputs have numbers. Each file then imports with
every number in range, or is refused with one StackbenchError naming the file: never another exception,
and never a value that a later command cannot compute with (a latency of 1.7e308 was imported, then
`report` and two chart kinds exited 70 and `show --json` printed `Infinity`).

The samples are real outputs (tests/data), one per entry of `engine/input_formats.FORMATS`: a new format must add its
own sample here, or `test_every_import_format_has_a_sample` fails.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from stackbench.model.fio_result import DirectionResult, FioResult, Latency
from stackbench.base.errors import StackbenchError
from stackbench.engine.input_formats import FORMATS
from stackbench.load.importer import parse_text, workload_of

SAMPLES: dict[str, tuple[Path, ...]] = {
    "json": (DATA / "fio" / "randread-psync.json", DATA / "fio" / "seqwrite-posixaio.jsonplus.json",
             DATA / "fio" / "client-two-servers.json"),
    "terse": (DATA / "fio" / "text" / "terse-two-jobs.txt",),
    "normal": (DATA / "fio" / "text" / "normal-randrw.txt", DATA / "fio" / "text" / "normal-randwrite-fdatasync.txt"),
    "diskinfo": (DATA / "diskinfo" / "optane-4k-start.txt",),
}
SOURCE = "edited-output"
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
HOSTILE = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "Infinity", "-Infinity", "-1", "1e309", "1.7e308", "1e300", "1e-400",
                     "18446744073709551616", "18446744073709551615", "9223372036854775808", "2147483648",
                     "4097", "99999999999999999999", "0", "9" * 400, "9" * 5000]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
)


def test_every_import_format_has_a_sample() -> None:
    assert sorted(SAMPLES) == sorted(FORMATS)


def _numbers(value: object) -> list[float]:
    """Every number a parsed result holds (the result, its latencies)."""
    if isinstance(value, (DirectionResult, Latency)):
        return [n for item in dataclasses.fields(value) for n in _numbers(getattr(value, item.name))]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return []
    return [value]


def _check_imported(result: FioResult) -> None:
    """What an accepted file must hold: numbers fio can report, a workload for each cell, strict JSON."""
    for direction in result.directions:
        for number in _numbers(direction):
            assert math.isfinite(number) and 0 <= number <= 2**64, (direction.job_name, number)
        try:
            workload_of(direction, SOURCE)
        except StackbenchError as error:
            assert SOURCE in str(error) and "\n" not in str(error)
        json.dumps(dataclasses.asdict(direction), allow_nan=False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_numbers_fio_cannot_report_in_any_import_format_are_refused_or_never_reach_a_result(
    data: st.DataObject,
) -> None:
    fmt = data.draw(st.sampled_from(sorted(SAMPLES)))
    text = data.draw(st.sampled_from(SAMPLES[fmt])).read_text()
    spots = list(NUMBER.finditer(text))
    chosen = sorted(data.draw(st.sets(st.integers(0, len(spots) - 1), min_size=1, max_size=3)), reverse=True)
    for index in chosen:  # from the end, so the earlier positions stay right
        spot = spots[index]
        text = text[:spot.start()] + data.draw(HOSTILE) + text[spot.end():]
    try:
        result, _extra = parse_text(text, SOURCE, fmt)
    except StackbenchError as error:
        assert SOURCE in str(error) and "\n" not in str(error), str(error)
        return
    _check_imported(result)


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_the_samples_themselves_import(fmt: str) -> None:
    """The mutations start from outputs that import: what fails above fails because of the mutation."""
    for sample in SAMPLES[fmt]:
        result, _extra = parse_text(sample.read_text(), SOURCE, fmt)
        _check_imported(result)
