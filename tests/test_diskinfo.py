"""FreeBSD diskinfo -wS parsing. The inputs are built from the documented format, not captured from FreeBSD
(see tests/data/diskinfo/README.md): this project's machines cannot run FreeBSD."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackbench.engine.diskinfo import diskinfo_to_fio_result, parse_diskinfo
from stackbench.errors import FioOutputError

DATA = Path(__file__).parent / "data" / "diskinfo"


def test_device_facts_and_the_table_are_read() -> None:
    result = parse_diskinfo((DATA / "optane-4k-start.txt").read_text())
    assert result.device == "/dev/nvd1"
    assert result.facts["sector_size"] == 512
    assert result.facts["media_size_bytes"] == 375083606016
    assert result.facts["description"] == "INTEL SSDPE21D375GA"
    assert result.facts["trim"] == "Yes" and result.facts["rotation_rpm"] == "0"
    sizes = [row[0] for row in result.rows]
    assert sizes[0] == 4096 and sizes[-1] == 8 * 1024**2
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:]))


def test_half_kilobyte_rows_and_millisecond_latencies() -> None:
    result = parse_diskinfo((DATA / "hdd-512-start.txt").read_text())
    assert result.rows[0][0] == 512
    assert result.rows[0][1] > 10_000  # usec: spinning disk


def test_rows_become_qd1_random_sync_write_cells() -> None:
    text = (DATA / "optane-4k-start.txt").read_text()
    info = parse_diskinfo(text)
    fio = diskinfo_to_fio_result(info, text)
    first = fio.directions[0]
    size, usec, mib = info.rows[0]
    assert (first.bs, first.iodepth, first.rw, first.direction) == (size, 1, "randwrite", "write")
    assert first.iops == pytest.approx(1e6 / usec)
    assert first.bw_bytes == pytest.approx(mib * 1024 * 1024)
    assert first.clat.mean_ns == pytest.approx(usec * 1000)
    assert first.options["sync"] == "dsync"


def test_truncated_table_names_the_line() -> None:
    with pytest.raises(FioOutputError, match=r"line 18: expected 'N kbytes"):
        parse_diskinfo((DATA / "truncated.txt").read_text())


def test_output_without_the_sync_table_says_so() -> None:
    facts_only = (DATA / "optane-4k-start.txt").read_text().split("Synchronous")[0]
    with pytest.raises(FioOutputError, match="was -S given"):
        parse_diskinfo(facts_only)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        parse_diskinfo(text)
    except FioOutputError:
        pass
