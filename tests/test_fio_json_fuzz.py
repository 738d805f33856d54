"""Hypothesis fuzzing of the fio JSON parser: any input gives a result or FioOutputError, never a traceback."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.result import FioResult
from stackbench.errors import FioOutputError

DATA = Path(__file__).parent / "data" / "fio"
DOCUMENTS = {p.name: p.read_text() for p in sorted(DATA.glob("*.json"))}
CLEAN = {n: t for n, t in DOCUMENTS.items() if t.lstrip().startswith("{") and "status-interval" not in n}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


@FUZZ
@given(name=st.sampled_from(sorted(CLEAN)), data=st.data())
def test_mutated_real_documents_give_a_result_or_a_clear_error(name: str, data) -> None:
    document = json.loads(CLEAN[name])
    paths = [p for p in _paths(document) if p]
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(paths))
        parent = document
        try:
            for step in path[:-1]:
                parent = parent[step]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    _parse(json.dumps(document))


@FUZZ
@given(name=st.sampled_from(sorted(CLEAN)), cut=st.floats(0, 1))
def test_truncated_real_documents_give_a_result_or_a_clear_error(name: str, cut: float) -> None:
    text = CLEAN[name]
    _parse(text[: int(len(text) * cut)])


@FUZZ
@given(name=st.sampled_from(sorted(CLEAN)), noise=st.lists(st.text(alphabet=st.characters(blacklist_characters="{"), max_size=40), max_size=5))
def test_noise_lines_before_a_real_document_do_not_change_the_result(name: str, noise: list[str]) -> None:
    clean = parse_fio_json(CLEAN[name])
    noisy = parse_fio_json("\n".join(noise) + "\n" + CLEAN[name])
    assert noisy.directions == clean.directions
    assert noisy.job_errors == clean.job_errors


def test_deeply_nested_input_is_a_clear_error() -> None:
    _parse("{" + '"a":[' * 100000)
    _parse('{"jobs": ' + "[" * 100000 + "]" * 100000 + "}")


def test_mutation_strategy_reaches_the_parser_with_real_structure() -> None:
    """Guards the fuzz test itself: an unmutated copy parses to the same result as the original."""
    for text in CLEAN.values():
        assert parse_fio_json(json.dumps(copy.deepcopy(json.loads(text)))).directions == parse_fio_json(text).directions
