"""Parse FreeBSD `diskinfo -wS DEVICE` output: device facts and the synchronous-write latency table.

`diskinfo -wS` is the measurement FreeBSD users quote when choosing a ZFS log device (docs/method.md
section 4); importing it puts those numbers beside Linux `synclat` runs. What diskinfo.c prints, and so what
this parser expects (FreeBSD usr.sbin/diskinfo/diskinfo.c; -S implies -v):

    DEVICE                                        the argument as typed, e.g. /dev/ada0 or ada0
    \t%-12u\t# sectorsize                          then mediasize in bytes (humanized), mediasize in sectors,
    ...                                            stripesize, stripeoffset, [Cylinders/Heads/Sectors according
                                                   to firmware.], [Disk descr.], [Disk ident.], [Physical path],
                                                   TRIM/UNMAP support (Yes/No), Rotation rate in RPM (a number,
                                                   0 = non-rotating, Unknown or Invalid), [Zone Mode]
    (blank line; -c/-t/-i sections may follow: skipped)
    Synchronous random writes:
    \t%4.4g kbytes: %8.1f usec/IO = %8.1f Mbytes/s  one row per size, from the sector size doubling to 8 MiB

Each size is written at random offsets, one write at a time, each followed by a cache flush (DIOCGFLUSH),
for at least a second; `usec/IO` is elapsed time / writes and `Mbytes/s` is size x writes / elapsed /
(1024 x 1024), i.e. MiB/s. Sizes over 128 KiB are split into parallel 128 KiB AIO writes by diskinfo itself.
A run interrupted mid-size leaves a row without its numbers (`  16 kbytes: `): that is reported as cut.
diskinfo prints no percentiles, no write count and no elapsed time, so imported cells carry the mean only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stackbench.model.fio_result import DirectionResult, FioResult, Latency
from stackbench.base.errors import FioOutputError

_FIX = "Pass the complete output of `diskinfo -wS DEVICE` (FreeBSD)"
_TITLE = "Synchronous random writes:"
_FACT = re.compile(r"^\s+(?P<value>.*?)\s*#\s(?P<key>.+?)\s*$")  # tabs may have become spaces in a paste
_ROW_START = re.compile(r"^\s*(?P<kb>\d{1,5}(?:\.\d{1,6})?)\s+kbytes:")
_ROW = re.compile(
    r"^\s*(?P<kb>\d{1,5}(?:\.\d{1,6})?)\s+kbytes:\s+(?P<usec>\d{1,15}\.\d)\s+usec/IO\s+=\s+"
    r"(?P<mb>\d{1,15}\.\d)\s+Mbytes/s\s*$"
)
_OTHER_SECTIONS = ("I/O command overhead:", "Seek times:", "Transfer rates:", "Asynchronous random reads:")
_MAX_SIZE = 8 * 1024 * 1024  # diskinfo's MAXTX
_INT_FACTS = {
    "sectorsize": "sector_size",
    "mediasize in bytes": "media_size_bytes",
    "mediasize in sectors": "media_size_sectors",
    "stripesize": "stripe_size",
    "stripeoffset": "stripe_offset",
    "Cylinders according to firmware.": "firmware_cylinders",
    "Heads according to firmware.": "firmware_heads",
    "Sectors according to firmware.": "firmware_sectors",
}
_TEXT_FACTS = {
    "Disk descr.": "description",
    "Disk ident.": "ident",
    "Physical path": "physical_path",
    "Zone Mode": "zone_mode",
    "Attachment": "attachment",
}


@dataclass(frozen=True)
class DiskinfoResult:
    """One device's `diskinfo -wS` output.

    facts: sector_size, media_size_bytes, media_size_human ("3.6T"), media_size_sectors, stripe_size,
    stripe_offset, description, ident, physical_path, trim (bool), rotation_rpm (int, 0 = non-rotating;
    None when diskinfo says Unknown/Invalid), zone_mode, ... as printed; unknown `# key` lines are kept
    under a snake_case name as text.
    """

    device: str | None
    facts: dict[str, Any] = field(default_factory=dict)
    rows: tuple[tuple[int, float, float], ...] = ()  # (size in bytes, usec per write, MiB/s)


def looks_like(text: str) -> bool:
    """True for text with diskinfo's table title or its `# sectorsize` fact line (for auto-detection)."""
    return _TITLE in text or bool(re.search(r"^\s+\d+\s+# sectorsize\s*$", text, re.MULTILINE))


def read(text: str, source: str) -> tuple[FioResult, dict[str, Any]]:
    """`import`'s reader: one cell per size, and the device's facts to store with the run."""
    info = parse_diskinfo(text, source=source)
    return diskinfo_to_fio_result(info, text), {"diskinfo": {"device": info.device, **info.facts}}


def parse_diskinfo(text: str, *, source: str = "diskinfo output") -> DiskinfoResult:
    """Parse `diskinfo -wS DEVICE` output; raise `FioOutputError` naming the line at fault."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise FioOutputError(f"{source} is not text", _FIX)
    device: str | None = None
    device_line = 0
    facts: dict[str, Any] = {}
    rows: list[tuple[int, float, float]] = []
    section = "facts"  # facts -> (other) -> table
    table_line = 0
    lines = text.splitlines()
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    for line_no, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            if section == "other":
                section = "between"
            continue
        if stripped == _TITLE:
            if table_line:
                raise _fail(source, line_no, f"a second {_TITLE!r} table (the first is at line {table_line}); "
                            "import one device per file")
            section, table_line = "table", line_no
            continue
        if stripped in _OTHER_SECTIONS:  # -c, -t or -i given too: not imported
            section = "other"
            continue
        if section == "other":
            continue
        if section == "table":
            if device is not None and re.fullmatch(r"[^\s#]{1,200}", line):
                raise _fail(source, line_no, f"a second device {stripped[:60]!r} (the first, {device!r}, is at "
                            f"line {device_line}); import one device per file")
            rows.append(_row(source, line_no, line, rows, line_no == last))
            continue
        if match := _FACT.match(line):
            if device is None and not facts:
                raise _fail(source, line_no, "a fact line before the device name line (e.g. /dev/ada0)")
            if section != "facts":
                raise _fail(source, line_no, f"a device fact line after the facts ended: {stripped[:60]!r}")
            _fact(source, line_no, match["key"], match["value"].strip(), facts)
            continue
        if device is None and re.fullmatch(r"[^\s#]{1,200}", line):
            device, device_line = stripped, line_no
            continue
        if device is not None and facts and re.fullmatch(r"[^\s#]{1,200}", line):
            raise _fail(source, line_no, f"a second device {stripped[:60]!r} (the first, {device!r}, is at line "
                        f"{device_line}); import one device per file")
        raise _fail(source, line_no, f"unexpected line {stripped[:60]!r}; not diskinfo -wS output")
    if not table_line:
        first = next((n for n, line in enumerate(lines, 1) if line.strip()), 1)
        raise _fail(source, first, f"no {_TITLE!r} table in the output (was -S given, with -w?)")
    if not rows:
        raise _fail(source, table_line, "the table has no rows; the output is cut")
    return DiskinfoResult(device=device, facts=facts, rows=tuple(rows))


def _row(
    source: str, line_no: int, line: str, rows: list[tuple[int, float, float]], is_last: bool
) -> tuple[int, float, float]:
    match = _ROW.match(line)
    if not match:
        if is_last and _ROW_START.match(line):
            raise _fail(source, line_no, f"the row {line.strip()[:60]!r} has no 'U usec/IO = M Mbytes/s'; the "
                        "output is cut (diskinfo stopped during this size)")
        raise _fail(source, line_no, f"expected 'N kbytes: U usec/IO = M Mbytes/s', got {line.strip()[:60]!r}")
    size = float(match["kb"]) * 1024
    if not size.is_integer() or size <= 0 or size > _MAX_SIZE:
        raise _fail(source, line_no, f"{match['kb']} kbytes is not a write size diskinfo uses (512 B to 8 MiB)")
    if rows and int(size) != 2 * rows[-1][0]:
        raise _fail(source, line_no, f"{match['kb']} kbytes does not double the previous size "
                    f"({rows[-1][0]} bytes); rows are missing or out of order")
    usec = float(match["usec"])
    if usec <= 0:
        raise _fail(source, line_no, f"{match['usec']} usec/IO is not a positive time")
    return int(size), usec, float(match["mb"])


def _fact(source: str, line_no: int, key: str, value: str, facts: dict[str, Any]) -> None:
    if key.startswith("mediasize in bytes"):
        human = re.search(r"\((.*)\)$", key)
        if human:
            facts["media_size_human"] = human[1]
        key = "mediasize in bytes"
    if key in _INT_FACTS:
        if not re.fullmatch(r"\d{1,20}", value) or int(value) > 2**64 - 1:
            raise _fail(source, line_no, f"{key} {value[:30]!r} is not a whole number up to 2^64-1")
        facts[_INT_FACTS[key]] = int(value)
    elif key == "TRIM/UNMAP support":
        if value not in ("Yes", "No"):
            raise _fail(source, line_no, f"TRIM/UNMAP support {value[:30]!r} is not Yes or No")
        facts["trim"] = value == "Yes"
    elif key == "Rotation rate in RPM":
        facts["rotation_rpm"] = int(value) if re.fullmatch(r"\d{1,9}", value) else None
    else:
        name = _TEXT_FACTS.get(key) or re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_") or "fact"
        facts[name] = value


def _fail(source: str, line_no: int, what: str) -> FioOutputError:
    return FioOutputError(f"{source} line {line_no}: {what}", _FIX)


def diskinfo_to_fio_result(result: DiskinfoResult, raw_text: str = "") -> FioResult:
    """Turn each table row into a QD1 random synchronous-write cell, so diskinfo numbers sit in the same
    tables as `stackbench synclat` runs.

    IOPS = 1e6 / usec (one write at a time); the mean completion latency and the sync latency are the usec
    figure. Bandwidth is taken from whichever printed figure carries more digits: Mbytes/s (MiB, x 2^20)
    normally, size x 1e6 / usec when Mbytes/s prints as a few tenths (0.0 for 512 B on a disk). No write
    count or run time is printed, so io_bytes, total_ios and runtime_ms are 0.
    """
    directions = []
    for size, usec, mib_per_s in result.rows:
        latency = Latency(mean_ns=usec * 1000)
        bw_bytes = mib_per_s * 1024 * 1024 if mib_per_s >= usec else size * 1e6 / usec
        directions.append(
            DirectionResult(
                job_name=f"{size} bytes",
                direction="write",
                rw="randwrite",
                bs=size,
                iodepth=1,
                numjobs=1,
                iops=1e6 / usec,
                bw_bytes=bw_bytes,
                io_bytes=0,
                total_ios=0,
                runtime_ms=0,
                usr_cpu=None,
                sys_cpu=None,
                clat=latency,
                sync_lat=latency,
                host=None,
                options={
                    "rw": "randwrite",
                    "bs": str(size),
                    "iodepth": "1",
                    "sync": "dsync",  # a cache flush after every write, as O_DSYNC gives
                    "direct": "1",  # diskinfo opens the device O_DIRECT
                    "ioengine": "diskinfo",
                },
            )
        )
    return FioResult(
        fio_version="diskinfo -wS",
        timestamp=None,
        directions=tuple(directions),
        job_errors=(),
        raw_text=raw_text,
    )
