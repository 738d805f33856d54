"""FreeBSD diskinfo -wS parsing. The inputs are built from diskinfo.c's printf formats, not captured from
FreeBSD (see tests/data/diskinfo/README.md): this project's machines cannot run FreeBSD."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.engine.diskinfo import (
    DiskinfoResult,
    diskinfo_to_fio_result,
    looks_like,
    parse_diskinfo,
)
from stackbench.base.errors import FioOutputError

DATA = Path(__file__).parent.parent / "data" / "diskinfo"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_device_facts_and_the_table_are_read() -> None:
    result = parse_diskinfo(read("optane-4k-start.txt"))
    assert result.device == "/dev/nvd1"
    assert result.facts["sector_size"] == 512
    assert result.facts["media_size_bytes"] == 375083606016
    assert result.facts["media_size_human"] == "349G"
    assert result.facts["media_size_sectors"] == 732585168
    assert result.facts["description"] == "INTEL SSDPE21D375GA"
    assert result.facts["ident"] == "PHM27xxxxxxx375AGN"
    assert result.facts["trim"] is True and result.facts["rotation_rpm"] == 0
    assert result.rows[0] == (4096, 15.8, 247.2)
    assert result.rows[-1] == (8 * 1024**2, 3700.4, 2161.9)
    sizes = [row[0] for row in result.rows]
    assert all(b == 2 * a for a, b in pairwise(sizes))


def test_half_kilobyte_rows_millisecond_latencies_and_a_spinning_disk() -> None:
    result = parse_diskinfo(read("hdd-512-start.txt"))
    assert result.rows[0] == (512, 11003.0, 0.0)
    assert result.facts["rotation_rpm"] == 5400 and result.facts["trim"] is False
    assert result.facts["zone_mode"] == "Not_Zoned"


def test_4k_sector_device_with_physical_path() -> None:
    result = parse_diskinfo(read("nvme-4kn-start.txt"))
    assert result.device == "nvd0" and result.facts["sector_size"] == 4096
    assert result.facts["physical_path"] == "nvme0"
    assert [row[0] for row in result.rows] == [4096 * 2**i for i in range(12)]


@pytest.mark.parametrize("name", ["with-command-overhead.txt", "tabs-as-spaces.txt"])
def test_other_sections_and_pasted_spaces_give_the_same_result(name: str) -> None:
    assert parse_diskinfo(read(name)) == parse_diskinfo(read("nvme-4kn-start.txt"))


def test_rows_become_qd1_random_sync_write_cells() -> None:
    text = read("optane-4k-start.txt")
    info = parse_diskinfo(text)
    fio = diskinfo_to_fio_result(info, text)
    assert fio.raw_text == text and fio.job_errors == ()
    assert len(fio.directions) == len(info.rows)
    for cell, (size, usec, mib) in zip(fio.directions, info.rows):
        assert (cell.job_name, cell.bs, cell.iodepth, cell.numjobs) == (f"{size} bytes", size, 1, 1)
        assert (cell.rw, cell.direction) == ("randwrite", "write")
        assert cell.iops == pytest.approx(1e6 / usec)
        # diskinfo's Mbytes are MiB; both printed columns come from one elapsed time, so they agree within
        # their rounding (0.05 of the last digit), and the parser takes the finer one
        assert abs(cell.bw_bytes - mib * 2**20) <= 0.05 * 2**20 + mib * 2**20 * 0.05 / usec
        assert cell.clat.mean_ns == pytest.approx(usec * 1000) and cell.sync_lat == cell.clat
        assert cell.options["sync"] == "dsync" and cell.options["direct"] == "1"


def test_bandwidth_below_the_printed_precision_comes_from_the_latency() -> None:
    cell = diskinfo_to_fio_result(parse_diskinfo(read("hdd-512-start.txt"))).directions[0]
    assert cell.bw_bytes == pytest.approx(512 * 1e6 / 11003.0)  # printed as 0.0 Mbytes/s


def test_the_printed_columns_agree_with_each_other() -> None:
    """Mbytes/s = size / usec in MiB/s, as diskinfo's TS() computes both from one elapsed time."""
    for name in ("optane-4k-start.txt", "hdd-512-start.txt", "nvme-4kn-start.txt"):
        for size, usec, mib in parse_diskinfo(read(name)).rows:
            assert abs(mib - size / usec * 1e6 / 2**20) <= 0.05 + mib * 0.05 / usec + 1e-9


@pytest.mark.parametrize("name, message", [
    ("truncated.txt", r"truncated.txt line 18: the row '64 kbytes: 42.' has no .* the output is cut"),
    ("interrupted.txt", r"interrupted.txt line 21: the row '512 kbytes:' has no .* cut"),
    ("two-devices.txt", r"two-devices.txt line 28: a second device 'nvd0' .* one device per file"),
])
def test_broken_outputs_name_the_line(name: str, message: str) -> None:
    with pytest.raises(FioOutputError, match=message):
        parse_diskinfo(read(name), source=name)


def test_output_without_the_sync_table_says_so() -> None:
    facts_only = read("optane-4k-start.txt").split("Synchronous")[0]
    with pytest.raises(FioOutputError, match="line 1: .*was -S given"):
        parse_diskinfo(facts_only)


@pytest.mark.parametrize("mangle, message", [
    (lambda t: t.replace("17.6 usec/IO", "17.6 usec/XX"), r"line 15: expected 'N kbytes"),
    (lambda t: t.replace("  16 kbytes", "  24 kbytes"), r"line 16: 24 kbytes does not double"),
    (lambda t: t.replace("512         \t# sectorsize", "five-twelve \t# sectorsize"), r"line 2: sectorsize"),
    (lambda t: "my notes\n" + t, r"line 1: unexpected line 'my notes'"),
    (lambda t: t.replace("\tINTEL", "/dev/nvd2\n\tINTEL"), r"line 7: a second device '/dev/nvd2'"),
    (lambda t: "just some notes about disks\n", r"line 1: unexpected line"),
])
def test_garbage_names_the_line(mangle, message: str) -> None:
    with pytest.raises(FioOutputError, match=message):
        parse_diskinfo(mangle(read("optane-4k-start.txt")))


def test_detection() -> None:
    assert looks_like(read("tabs-as-spaces.txt"))
    assert looks_like(read("optane-4k-start.txt").split("Synchronous")[0])
    assert not looks_like("3;fio-3.33;job;0;0\n")


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_arbitrary_text_gives_a_result_or_a_clear_error(text: str) -> None:
    try:
        assert isinstance(parse_diskinfo(text), DiskinfoResult)
    except FioOutputError as error:
        assert " line " in error.one_line()


@FUZZ
@given(st.data())
def test_cut_and_mutated_output_gives_a_result_or_a_clear_error(data) -> None:
    text = read("hdd-512-start.txt")
    cut = data.draw(st.integers(0, len(text)))
    position = data.draw(st.integers(0, max(0, cut - 1)))
    noise = data.draw(st.text(max_size=5))
    try:
        result = parse_diskinfo(text[:position] + noise + text[position:cut])
        diskinfo_to_fio_result(result)
    except FioOutputError as error:
        assert " line " in error.one_line()
