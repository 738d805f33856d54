"""Hypothesis fuzzing of the fio JSON parser: any input gives a result or FioOutputError, never a traceback.

The structured tests start from the real captured documents (tests/data/fio, see CAPTURED.md), so the
mutations reach deep into the parser instead of failing at the first `{`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stackbench.engine.fio_json import parse_fio_json
from stackbench.model.fio_result import FioResult
from stackbench.base.errors import FioOutputError

DATA = Path(__file__).parent.parent / "data" / "fio"


def _split(text: str) -> tuple[str, list]:
    """The text before the first document and every concatenated document (status-interval has several)."""
    decoder = json.JSONDecoder()
    start = text.index("{")
    documents, position = [], start
    while position < len(text):
        document, position = decoder.raw_decode(text, position)
        documents.append(document)
        while position < len(text) and text[position].isspace():
            position += 1
    return text[:start], documents


def _parses(text: str) -> bool:
    try:
        parse_fio_json(text)
    except FioOutputError:
        return False
    return True


TEXTS = {p.name: p.read_text() for p in sorted(DATA.glob("*.json"))}
SPLIT = {name: _split(text) for name, text in TEXTS.items()}
GOOD = sorted(name for name, text in TEXTS.items() if _parses(text))

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10)
    | st.sampled_from(["inf", "nan", "1e400", "-1", "4k,", ",", "99.000000", ""]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
FUZZ = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse(text) -> None:
    try:
        result = parse_fio_json(text, source="fuzz")
    except FioOutputError as error:
        assert error.one_line() and "\n" not in error.one_line()
    else:
        assert isinstance(result, FioResult)


@FUZZ
@given(st.text())
def test_arbitrary_text_never_raises_anything_else(text: str) -> None:
    _parse(text)


@FUZZ
@given(st.binary())
def test_arbitrary_bytes_never_raise_anything_else(data: bytes) -> None:
    _parse(data)


@FUZZ
@given(st.text(alphabet='{}[]":,0123456789.e- \nabcfiojsvron', max_size=200))
def test_json_looking_text_never_raises_anything_else(text: str) -> None:
    _parse(text)
    _parse('{"fio version" : "fio-3.33", "jobs" : ' + text)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS)), data=st.data())
@pytest.mark.slow
def test_mutated_real_documents_give_a_result_or_a_clear_error(name: str, data) -> None:
    preamble, documents = SPLIT[name]
    documents = copy.deepcopy(documents)
    target = documents[data.draw(st.integers(0, len(documents) - 1))]
    paths = [p for p in _paths(target) if p]
    for _ in range(data.draw(st.integers(1, 6))):
        path = data.draw(st.sampled_from(paths))
        parent = target
        try:
            for step in path[:-1]:
                parent = parent[step]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    text = preamble + "\n".join(json.dumps(d, indent=data.draw(st.sampled_from([None, 2]))) for d in documents)
    if data.draw(st.booleans()):
        text = text[: data.draw(st.integers(0, len(text)))]
    _parse(text)


@FUZZ
@given(name=st.sampled_from(sorted(TEXTS)), cut=st.floats(0, 1))
def test_truncated_real_documents_give_a_result_or_a_clear_error(name: str, cut: float) -> None:
    text = TEXTS[name].rstrip()
    cut_text = text[: int(len(text) * cut)]
    if len(cut_text) < len(text) and len(SPLIT[name][1]) == 1:
        try:
            parse_fio_json(cut_text)
        except FioOutputError:
            return
        raise AssertionError(f"{name} cut at {len(cut_text)} of {len(text)} parsed")
    _parse(cut_text)


noise_lines = st.lists(st.text(max_size=60), max_size=8)


@FUZZ
@given(name=st.sampled_from(GOOD), noise=noise_lines)
def test_noise_lines_before_a_real_document_do_not_change_the_result(name: str, noise: list[str]) -> None:
    prefix = "".join(line + "\n" for line in noise)
    assume("fio version" not in prefix)
    clean = parse_fio_json(TEXTS[name])
    noisy = parse_fio_json(prefix + TEXTS[name])
    assert noisy.directions == clean.directions
    assert noisy.job_errors == clean.job_errors
    assert noisy.fio_version == clean.fio_version
    assert noisy.preamble == prefix + clean.preamble


def test_deeply_nested_input_is_a_clear_error() -> None:
    _parse("{" + '"a":[' * 100000)
    _parse('{"jobs": ' + "[" * 100000 + "]" * 100000 + "}")
    _parse('{"fio version": "x", "jobs": ' + "[" * 100000 + "]" * 100000 + "}")


def test_mutation_strategy_reaches_the_parser_with_real_structure() -> None:
    """Guards the fuzz test itself: an unmutated re-serialisation parses to the same result as the original."""
    assert len(GOOD) >= 25
    for name in GOOD:
        preamble, documents = SPLIT[name]
        again = preamble + "\n".join(json.dumps(d) for d in documents)
        assert parse_fio_json(again).directions == parse_fio_json(TEXTS[name]).directions, name
