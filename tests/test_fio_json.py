"""The fio JSON parser on outputs captured from real fio runs (tests/data/fio, see CAPTURED.md).

Every expected value is read from the captured document itself, never typed in: the test checks that the
parser picks the right field, unit and job, not what some machine measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.merge import bins_of, merge_segments, percentile_from_bins
from stackbench.errors import FioOutputError

DATA = Path(__file__).parent / "data" / "fio"
JSON_FILES = sorted(DATA.glob("*.json"))


def _text(name: str) -> str:
    return (DATA / name).read_text()


def _doc(name: str) -> dict:
    text = _text(name)
    return json.loads(text[text.index("{"):])


def test_every_captured_file_parses() -> None:
    assert len(JSON_FILES) >= 12
    for path in JSON_FILES:
        result = parse_fio_json(path.read_text(), source=path.name)
        assert result.fio_version.startswith("fio-3."), path


def test_values_come_from_the_right_fields_and_units() -> None:
    doc = _doc("randwrite-fdatasync-libaio.jsonplus.json")
    write = doc["jobs"][0]["write"]
    result = parse_fio_json(_text("randwrite-fdatasync-libaio.jsonplus.json"))
    (cell,) = result.directions
    assert (cell.direction, cell.rw, cell.bs, cell.iodepth) == ("write", "randwrite", 4096, 4)
    assert cell.iops == write["iops"]
    assert cell.bw_bytes == write["bw_bytes"]
    assert cell.clat.mean_ns == write["clat_ns"]["mean"]
    assert cell.clat.p50_ns == write["clat_ns"]["percentile"]["50.000000"]
    assert cell.clat.p99_ns == write["clat_ns"]["percentile"]["99.000000"]
    assert cell.clat.p999_ns == write["clat_ns"]["percentile"]["99.900000"]
    assert cell.usr_cpu == doc["jobs"][0]["usr_cpu"]
    assert cell.sync_lat.p99_ns == doc["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"]
    assert cell.sync_lat.samples == doc["jobs"][0]["sync"]["lat_ns"]["N"]


def test_sync_latency_only_when_the_job_synced() -> None:
    (cell,) = parse_fio_json(_text("randread-psync.json")).directions
    assert cell.sync_lat is None


def test_mixed_job_gives_one_result_per_direction_with_its_own_block_size() -> None:
    doc = _doc("randrw-split-bs.json")
    result = parse_fio_json(_text("randrw-split-bs.json"))
    by_direction = {d.direction: d for d in result.directions}
    assert set(by_direction) == {"read", "write"}
    assert by_direction["read"].bs == 4096 and by_direction["write"].bs == 65536
    assert by_direction["read"].iops == doc["jobs"][0]["read"]["iops"]
    assert by_direction["write"].iops == doc["jobs"][0]["write"]["iops"]


def test_fio_defaults_fill_options_the_output_does_not_list() -> None:
    (cell,) = parse_fio_json(_text("defaults-only.json")).directions
    assert (cell.rw, cell.bs, cell.iodepth, cell.numjobs) == ("read", 4096, 1, 1)


def test_two_jobs_stay_separate_with_their_own_options() -> None:
    result = parse_fio_json(_text("two-jobs-defaults.json"))
    assert [(d.job_name, d.rw, d.bs, d.direction) for d in result.directions] == [
        ("first", "randread", 4096, "read"),
        ("second", "write", 65536, "write"),
    ]


def test_group_reporting_numjobs_is_recorded() -> None:
    (cell,) = parse_fio_json(_text("numjobs4-group.json")).directions
    assert cell.numjobs == 4


def test_missing_percentiles_are_none_not_zero() -> None:
    (cell,) = parse_fio_json(_text("clat-percentiles-off.json")).directions
    assert cell.clat.p99_ns is None and cell.clat.mean_ns > 0


def test_status_interval_output_uses_the_last_document() -> None:
    text = _text("status-interval.json")
    decoder = json.JSONDecoder()
    documents, position = [], text.index("{")
    while position < len(text):
        document, position = decoder.raw_decode(text, position)
        documents.append(document)
        while position < len(text) and text[position] in " \n\r\t":
            position += 1
    assert len(documents) >= 2
    (cell,) = parse_fio_json(text).directions
    assert cell.total_ios == documents[-1]["jobs"][0]["read"]["total_ios"]
    assert cell.total_ios != documents[0]["jobs"][0]["read"]["total_ios"]


def test_client_server_output_lists_hosts_and_drops_the_aggregate() -> None:
    doc = _doc("client-two-servers.json")
    result = parse_fio_json(_text("client-two-servers.json"))
    hosts = [d.host for d in result.directions]
    assert len(hosts) == 2 and all(hosts)
    assert "All clients" not in [d.job_name for d in result.directions]
    assert any(entry["jobname"] == "All clients" for entry in doc["client_stats"])
    single = parse_fio_json(_text("client-one-server.json"))
    assert len(single.directions) == 1 and single.directions[0].host


def test_job_errors_are_reported_with_the_errno_text() -> None:
    result = parse_fio_json(_text("error-not-a-directory.json"))
    assert [(e.job_name, e.code) for e in result.job_errors] == [("bad", 20)]
    assert result.job_errors[0].message == "Not a directory"


def test_text_before_the_json_is_kept_as_preamble() -> None:
    result = parse_fio_json(_text("error-verify-stdout.json"))
    assert result.preamble.startswith("fio: pid=")
    assert result.job_errors[0].code == 84


def test_percentiles_recomputed_from_json_plus_bins_match_fio_exactly() -> None:
    for name in ("randwrite-fdatasync-libaio.jsonplus.json", "seqwrite-posixaio.jsonplus.json"):
        doc = _doc(name)
        direction = "write"
        bins = bins_of(doc, direction)
        assert bins
        for key, value in doc["jobs"][0][direction]["clat_ns"]["percentile"].items():
            assert percentile_from_bins(bins, float(key)) == value, (name, key)


def test_merging_one_segment_is_the_identity_and_two_copies_keep_rates() -> None:
    result = parse_fio_json(_text("randwrite-fdatasync-libaio.jsonplus.json"))
    (alone,) = result.directions
    assert merge_segments([result], "write") == alone
    doubled = merge_segments([result, result], "write")
    assert doubled.total_ios == 2 * alone.total_ios
    assert doubled.iops == pytest.approx(alone.total_ios / (alone.runtime_ms / 1000))
    assert doubled.clat.p99_ns == alone.clat.p99_ns and doubled.clat.samples == 2 * alone.clat.samples
    assert doubled.clat.mean_ns == pytest.approx(alone.clat.mean_ns)


@pytest.mark.parametrize("text, message", [
    ("", "no fio JSON document"),
    ("fio: engine libaio not loadable\n", "no fio JSON document"),
    ("[1, 2, 3]", "no fio JSON document"),
    ('{"jobs": "x"}', "no 'jobs' list"),
    ('{"jobs": []}', "contains no jobs"),
    ('{"jobs": [1]}', "is not an object"),
])
def test_garbage_is_a_one_line_error(text: str, message: str) -> None:
    with pytest.raises(FioOutputError) as caught:
        parse_fio_json(text, source="out.json")
    assert message in caught.value.one_line()
    assert "\n" not in caught.value.one_line()


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.5, 0.9, 0.999])
def test_truncated_real_output_names_line_and_column(fraction: float) -> None:
    text = _text("randread-psync.json")
    cut = text[: int(len(text) * fraction)]
    with pytest.raises(FioOutputError) as caught:
        parse_fio_json(cut, source="cut.json")
    assert "truncated" in caught.value.one_line() and "line" in caught.value.one_line()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", "fast"), "iops='fast'"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"].__setitem__("percentile", [1, 2]), "percentile is not an object"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"]["percentile"].__setitem__("p99", 5), "percentile key 'p99'"),
    (lambda d: d["jobs"][0].__setitem__("error", "bad"), "non-numeric error"),
    (lambda d: d["jobs"][0]["job options"].__setitem__("iodepth", "deep"), "iodepth='deep'"),
    (lambda d: d["jobs"][0]["read"].__setitem__("bw_bytes", -5), "bw_bytes=-5"),
])
def test_wrong_types_inside_a_real_document_are_named(mutate, message: str) -> None:
    doc = _doc("randread-psync.json")
    mutate(doc)
    with pytest.raises(FioOutputError) as caught:
        parse_fio_json(json.dumps(doc), source="x.json")
    assert message in caught.value.one_line()
