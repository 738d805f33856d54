"""The fio JSON parser on outputs captured from real fio runs (tests/data/fio, see CAPTURED.md).

Every expected value is read from the captured document itself, never typed in: the test checks that the
parser picks the right field, unit and job, not what some machine measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.merge import bins_of, merge_segments, percentile_from_bins
from stackbench.base.errors import FioOutputError

DATA = Path(__file__).parent.parent / "data" / "fio"
JSON_FILES = sorted(DATA.glob("*.json"))


def _text(name: str) -> str:
    return (DATA / name).read_text()


def _doc(name: str) -> dict:
    text = _text(name)
    return json.loads(text[text.index("{"):])


FAILS_BY_DESIGN = {"error-setup-failed.json"}  # exit 1, error 0 and no I/O: nothing to report


def _documents(text: str) -> list[dict]:
    decoder = json.JSONDecoder()
    documents, position = [], text.index("{")
    while position < len(text):
        document, position = decoder.raw_decode(text, position)
        documents.append(document)
        while position < len(text) and text[position] in " \n\r\t":
            position += 1
    return documents


def _entries(doc: dict) -> list[dict]:
    if "client_stats" in doc:
        return [e for e in doc["client_stats"] if e["jobname"] != "All clients"]
    return doc["jobs"]


def test_every_captured_file_parses() -> None:
    assert len(JSON_FILES) >= 25
    for path in JSON_FILES:
        if path.name in FAILS_BY_DESIGN:
            continue
        result = parse_fio_json(path.read_text(), source=path.name)
        assert result.fio_version == _documents(path.read_text())[-1]["fio version"], path


@pytest.mark.parametrize("name", [p.name for p in JSON_FILES if p.name not in FAILS_BY_DESIGN])
def test_every_direction_that_moved_bytes_is_reported_with_the_documents_own_numbers(name: str) -> None:
    text = _text(name)
    doc = _documents(text)[-1]
    expected = [
        (entry["jobname"], direction, entry[direction])
        for entry in _entries(doc)
        for direction in ("read", "write", "trim", "mixed")
        if direction in entry and entry[direction]["io_bytes"] > 0
    ]
    result = parse_fio_json(text, source=name)
    assert [(d.job_name, d.direction) for d in result.directions] == [(n, d) for n, d, _ in expected]
    for cell, (_, _, stats) in zip(result.directions, expected):
        assert cell.iops == stats["iops"]
        assert cell.bw_bytes == stats["bw_bytes"]
        assert cell.io_bytes == stats["io_bytes"] and cell.total_ios == stats["total_ios"]
        assert cell.runtime_ms == stats["runtime"]
        assert cell.clat.mean_ns == stats["clat_ns"]["mean"] and cell.clat.samples == stats["clat_ns"]["N"]
        assert cell.clat.p99_ns == stats["clat_ns"].get("percentile", {}).get("99.000000")
    errors = [(e["jobname"], e["error"]) for e in _entries(doc) if e["error"]]
    assert [(e.job_name, e.code) for e in result.job_errors] == errors


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
    for name in ("randread-psync.json", "randrw-split-bs.json", "client-one-server.json"):
        for cell in parse_fio_json(_text(name)).directions:
            assert cell.sync_lat is None, name
    for name in ("randwrite-fdatasync-psync.json", "randwrite-fdatasync-libaio.jsonplus.json", "client-fdatasync.json"):
        doc = _doc(name)
        sync = _entries(doc)[0]["sync"]["lat_ns"]
        (cell,) = parse_fio_json(_text(name)).directions
        assert cell.sync_lat.p99_ns == sync["percentile"]["99.000000"], name
        assert cell.sync_lat.mean_ns == sync["mean"] and cell.sync_lat.samples == sync["N"] > 0, name


def test_plain_json_and_json_plus_give_the_same_fields() -> None:
    plain = parse_fio_json(_text("randwrite-fdatasync-psync.json")).directions[0]
    plus = parse_fio_json(_text("randwrite-fdatasync-libaio.jsonplus.json")).directions[0]
    assert (plain.iodepth, plus.iodepth) == (1, 4)
    for cell in (plain, plus):
        assert None not in (cell.clat.p50_ns, cell.clat.p99_ns, cell.clat.p999_ns, cell.sync_lat.p99_ns)


def test_mixed_job_gives_one_result_per_direction_with_its_own_block_size() -> None:
    doc = _doc("randrw-split-bs.json")
    result = parse_fio_json(_text("randrw-split-bs.json"))
    by_direction = {d.direction: d for d in result.directions}
    assert set(by_direction) == {"read", "write"}
    assert by_direction["read"].bs == 4096 and by_direction["write"].bs == 65536
    assert by_direction["read"].iops == doc["jobs"][0]["read"]["iops"]
    assert by_direction["write"].iops == doc["jobs"][0]["write"]["iops"]


def test_empty_block_size_values_mean_fios_default_as_fio_measured() -> None:
    for name, read_bs, write_bs in (("randrw-bs-write-only.json", 4096, 65536), ("randrw-bs-read-only.json", 8192, 4096)):
        doc = _doc(name)
        by_direction = {d.direction: d for d in parse_fio_json(_text(name)).directions}
        assert (by_direction["read"].bs, by_direction["write"].bs) == (read_bs, write_bs), name
        for direction, cell in by_direction.items():  # fio's own byte and I/O counts agree
            stats = doc["jobs"][0][direction]
            assert stats["io_bytes"] == stats["total_ios"] * cell.bs, (name, direction)


def test_bs_is_seq_rand_takes_the_random_size_for_a_random_job() -> None:
    doc = _doc("randrw-bs-seq-rand.json")
    assert doc["jobs"][0]["job options"]["bs_is_seq_rand"] == "1"
    by_direction = {d.direction: d for d in parse_fio_json(_text("randrw-bs-seq-rand.json")).directions}
    assert (by_direction["read"].bs, by_direction["write"].bs) == (65536, 65536)
    write = doc["jobs"][0]["write"]
    assert write["io_bytes"] == write["total_ios"] * 65536


def test_unified_rw_reporting_gives_a_mixed_direction() -> None:
    (mixed,) = parse_fio_json(_text("unified-rw-mixed.json")).directions
    assert mixed.direction == "mixed" and mixed.iops == _doc("unified-rw-mixed.json")["jobs"][0]["mixed"]["iops"]
    both = parse_fio_json(_text("unified-rw-both.json")).directions
    assert [d.direction for d in both] == ["read", "write", "mixed"]
    assert both[2].total_ios == both[0].total_ios + both[1].total_ios


def test_numjobs_without_group_reporting_gives_one_entry_per_clone() -> None:
    doc = _doc("numjobs4-separate.json")
    cells = parse_fio_json(_text("numjobs4-separate.json")).directions
    assert len(cells) == 4 == len(doc["jobs"])
    assert [c.iops for c in cells] == [j["read"]["iops"] for j in doc["jobs"]]


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
    assert cell.iops == _doc("numjobs4-group.json")["jobs"][0]["read"]["iops"]


def test_lat_percentiles_leave_clat_percentiles_as_the_reported_ones() -> None:
    doc = _doc("lat-percentiles.json")
    write = doc["jobs"][0]["write"]
    (cell,) = parse_fio_json(_text("lat-percentiles.json")).directions
    assert "percentile" in write["lat_ns"]
    assert cell.clat.p99_ns == write["clat_ns"]["percentile"]["99.000000"]


def test_missing_percentiles_are_none_not_zero() -> None:
    (cell,) = parse_fio_json(_text("clat-percentiles-off.json")).directions
    assert cell.clat.p99_ns is None and cell.clat.mean_ns > 0


def test_status_interval_output_uses_the_last_document() -> None:
    text = _text("status-interval.json")
    documents = _documents(text)
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
    assert sorted(d.iops for d in result.directions) == sorted(
        e["write"]["iops"] for e in doc["client_stats"] if e["jobname"] != "All clients"
    )
    assert {(d.host, d.job_name) for d in result.directions} == {
        (e["hostname"], e["jobname"]) for e in doc["client_stats"] if e["jobname"] != "All clients"
    }
    single = parse_fio_json(_text("client-one-server.json"))
    assert len(single.directions) == 1 and single.directions[0].host == "127.0.0.1"


def test_client_group_reporting_without_an_aggregate_keeps_every_host() -> None:
    doc = _doc("client-two-servers-group-reporting.json")
    assert all(e["jobname"] != "All clients" for e in doc["client_stats"])  # fio #1881
    result = parse_fio_json(_text("client-two-servers-group-reporting.json"))
    assert [d.direction for d in result.directions] == ["read", "write", "read", "write"]
    assert [d.host for d in result.directions] == ["127.0.0.1"] * 4


@pytest.mark.parametrize("name, job, code, message", [
    ("error-not-a-directory.json", "bad", 20, "Not a directory"),
    ("error-readonly-missing-file.json", "ro", 2, "No such file or directory"),
    ("error-direct-unaligned.json", "direct", 22, "Invalid argument"),
    ("error-direct-unaligned-output-file.json", "direct", 22, "Invalid argument"),
    ("error-trim-regular-file.json", "t", 25, "Inappropriate ioctl for device"),
    ("error-verify-stdout.json", "vfail", 84, "Invalid or incomplete multibyte or wide character"),
])
def test_reports_job_error_with_errno_text(name: str, job: str, code: int, message: str) -> None:
    result = parse_fio_json(_text(name))
    assert [(e.job_name, e.code, e.message) for e in result.job_errors] == [(job, code, message)]
    assert _doc(name)["jobs"][0]["error"] == code


def test_the_failed_io_of_an_errored_job_is_not_a_measurement() -> None:
    trim = _doc("error-trim-regular-file.json")["jobs"][0]["trim"]
    assert (trim["total_ios"], trim["io_bytes"]) == (1, 0)  # fio counts the I/O that failed
    assert parse_fio_json(_text("error-trim-regular-file.json")).directions == ()


def test_a_run_that_did_nothing_and_reported_no_error_is_a_clear_error() -> None:
    with pytest.raises(FioOutputError, match="none did any I/O"):
        parse_fio_json(_text("error-setup-failed.json"), source="error-setup-failed.json")


def test_text_before_the_json_is_kept_as_preamble() -> None:
    for name in ("error-verify-stdout.json", "error-direct-unaligned.json", "error-readonly-missing-file.json"):
        text = _text(name)
        result = parse_fio_json(text)
        assert result.preamble == text[: text.index("{")] and result.preamble.startswith("fio: "), name
    assert "first direct IO errored" in parse_fio_json(_text("error-direct-unaligned.json")).preamble
    assert parse_fio_json(_text("error-direct-unaligned-output-file.json")).preamble == ""


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


@pytest.mark.parametrize("name", ["randread-psync.json", "randwrite-fdatasync-libaio.jsonplus.json",
                                  "client-two-servers.json", "error-direct-unaligned.json"])
@pytest.mark.parametrize("fraction", [0.001, 0.1, 0.3, 0.5, 0.9, 0.999])
def test_truncated_real_output_names_line_and_column(name: str, fraction: float) -> None:
    text = _text(name).rstrip()
    cut = text[: max(text.index("{") + 5, int(len(text) * fraction))]
    with pytest.raises(FioOutputError) as caught:
        parse_fio_json(cut, source="cut.json")
    message = caught.value.one_line()
    found = re.search(r"\(line (\d+), column (\d+): ", message)
    assert "truncated" in message and found and "\n" not in message, message
    assert 1 <= int(found.group(1)) <= cut.count("\n") + 1


@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.99])
def test_a_truncated_last_status_document_is_an_error_not_an_earlier_snapshot(fraction: float) -> None:
    text = _text("status-interval.json").rstrip()
    last = text.rindex('{\n  "fio version"')
    cut = text[: last + int((len(text) - last) * fraction)]
    with pytest.raises(FioOutputError, match=r"truncated"):
        parse_fio_json(cut, source="cut.json")


def test_hundreds_of_status_documents_still_give_the_last_one() -> None:
    text = _text("status-interval.json")
    documents = _documents(text)
    first, last = json.dumps(documents[0], indent=2), json.dumps(documents[-1], indent=2)
    (cell,) = parse_fio_json("\n".join([first] * 300 + [last])).directions
    assert cell.total_ios == documents[-1]["jobs"][0]["read"]["total_ios"] != documents[0]["jobs"][0]["read"]["total_ios"]


def test_many_braces_in_the_text_before_the_document_do_not_hide_it() -> None:
    noise = "".join(f"fio: option {{x{i}}} ${{HOME}} {{\n" for i in range(300))
    clean = parse_fio_json(_text("randread-psync.json"))
    noisy = parse_fio_json(noise + _text("randread-psync.json"))
    assert noisy.directions == clean.directions and noisy.preamble == noise


@pytest.mark.parametrize("text", [
    '{"name": "not fio", "values": [1, 2]}',
    '{"fio version": "fio-3.33"}',
    '[{"name": 1}, 2]',
    '"jobs"',
])
def test_valid_json_that_is_not_fio_output_is_a_clear_error(text: str) -> None:
    with pytest.raises(FioOutputError, match="no fio JSON document found in x.json"):
        parse_fio_json(text, source="x.json")


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", "fast"), "iops='fast'"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"].__setitem__("percentile", [1, 2]), "percentile is not an object"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"]["percentile"].__setitem__("p99", 5), "percentile key 'p99'"),
    (lambda d: d["jobs"][0].__setitem__("error", "bad"), "non-numeric error"),
    (lambda d: d["jobs"][0]["job options"].__setitem__("iodepth", "deep"), "iodepth='deep'"),
    (lambda d: d["jobs"][0]["read"].__setitem__("bw_bytes", -5), "bw_bytes=-5"),
    (lambda d: d["jobs"][0]["read"]["clat_ns"]["percentile"].__setitem__("99.000000", [1]), "has a bad value [1]"),
    (lambda d: d["jobs"][0]["read"].__setitem__("clat_ns", "fast"), "clat_ns is not an object"),
    (lambda d: d["jobs"][0].__setitem__("read", [1]), "read is not an object"),
    (lambda d: d["jobs"][0].__setitem__("job options", [1]), "job options that are not an object"),
    # each of these raised OverflowError before
    (lambda d: d["jobs"][0]["read"].__setitem__("iops", 10**400), "iops=1000000000"),
    (lambda d: d["jobs"][0].__setitem__("usr_cpu", -(10**400)), "usr_cpu=-1000000000"),
    (lambda d: d["jobs"][0]["job options"].__setitem__("iodepth", "inf"), "iodepth='inf'"),
    (lambda d: d["jobs"][0]["job options"].__setitem__("iodepth", "1e400"), "iodepth='1e400'"),
    (lambda d: d["jobs"][0]["job options"].__setitem__("numjobs", "nan"), "numjobs='nan'"),
    (lambda d: d["jobs"][0]["read"].update(io_kbytes=1e307, io_bytes=None) or d["jobs"][0]["read"].pop("io_bytes"),
     "io_kbytes too large"),
])
def test_wrong_types_inside_a_real_document_are_named(mutate, message: str) -> None:
    doc = _doc("randread-psync.json")
    mutate(doc)
    with pytest.raises(FioOutputError) as caught:
        parse_fio_json(json.dumps(doc), source="x.json")
    assert message in caught.value.one_line()
    assert "\n" not in caught.value.one_line() and len(caught.value.one_line()) < 400


def test_an_integer_too_long_for_python_is_a_clear_error_not_a_value_error() -> None:
    text = _text("randread-psync.json").replace('"total_ios" : ', '"total_ios" : ' + "9" * 5000 + " , \"x\" : ", 1)
    with pytest.raises(FioOutputError, match=r"line 1, column 1: Exceeds the limit"):
        parse_fio_json(text, source="x.json")


def test_json_plus_buckets_are_held_compactly_and_read_back_exactly() -> None:
    """The parser keeps json+ buckets as LatencyBuckets (16 bytes each, not a dict): the histogram read from
    them is the one read from the plain JSON, for every captured json+ output, and they read like the dict."""
    from collections import Counter

    from stackbench.model.fio_result import LatencyBuckets

    for name in ("randwrite-fdatasync-libaio.jsonplus.json", "seqwrite-posixaio.jsonplus.json"):
        plain = _doc(name)["jobs"][0]["write"]["clat_ns"]["bins"]
        kept = parse_fio_json(_text(name)).document["jobs"][0]["write"]["clat_ns"]["bins"]
        assert isinstance(kept, LatencyBuckets) and dict(kept) == plain, name
        assert bins_of(parse_fio_json(_text(name)).document, "write") == Counter({int(k): v for k, v in plain.items()})
        dropped = parse_fio_json(_text(name), buckets=False).document["jobs"][0]["write"]["clat_ns"]["bins"]
        assert len(dropped) == 0, name


@pytest.mark.parametrize("bins, said", [
    ('{"1000": -1}', "has a count -1 in bucket '1000'"),
    ('{"1000": 18446744073709551616}', "has a count 18446744073709551616"),
    ('{"1000": 1.5}', "has a count 1.5"),
    ('{"1000": true}', "has a count True"),
    ('{"1000": 1, "x": 2}', "has a bucket 'x'"),
    ('{"1000": 1, "": 2}', "has a bucket ''"),
    ('{"1000": 1, "18446744073709551616": 2}', "has a bucket '18446744073709551616'"),
    ('{"9' + "9" * 5000 + '": 1}', "has a bucket '999"),
    ('[1, 2]', "is [1, 2], not an object of buckets"),
])
def test_json_plus_buckets_outside_fios_counters_are_refused_naming_the_field(bins: str, said: str) -> None:
    text = _text("seqwrite-posixaio.jsonplus.json")
    start = text.index('"bins" : {')
    broken = text[:start] + '"bins" : ' + bins + text[text.index("}", start) + 1:]
    with pytest.raises(FioOutputError, match=re.escape(f"f.json: job 's' write clat_ns bins {said}")):
        parse_fio_json(broken, source="f.json")
