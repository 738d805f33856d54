"""Parse FreeBSD `diskinfo -wS DEVICE` output: device facts and the synchronous-write latency table.

FreeBSD's `-S` writes random blocks from the sector size (or 4 KiB) up to 8 MiB, doubling, each followed by a
cache flush, for at least a second per size, and prints `usec/IO` and `Mbytes/s` (2^20 bytes per second,
as diskinfo.c divides by 1024 * 1024). Importing it puts FreeBSD measurements beside Linux `synclat` runs.
Each size becomes a 4 KiB..8 MiB random-write cell at QD1 with O_DIRECT+O_DSYNC semantics: IOPS =
1e6 / usec, bandwidth = Mbytes/s x 2^20, mean completion latency = usec (diskinfo prints no percentiles).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from stackbench.engine.result import DirectionResult, FioResult, Latency
from stackbench.errors import FioOutputError

_FIX = "Pass the complete output of `diskinfo -wS DEVICE` (FreeBSD)"
_FACT = re.compile(r"^\s*(?P<value>.*?)\s*#\s*(?P<key>.+?)\s*$")
_ROW = re.compile(r"^\s*(?P<kb>\d+(?:\.\d+)?)\s+kbytes:\s+(?P<usec>\d+(?:\.\d+)?)\s+usec/IO\s+=\s+(?P<mb>\d+(?:\.\d+)?)\s+Mbytes/s\s*$")
_KEYS = {
    "sectorsize": ("sector_size", int),
    "mediasize in bytes": ("media_size_bytes", int),
    "mediasize in sectors": ("media_size_sectors", int),
    "stripesize": ("stripe_size", int),
    "stripeoffset": ("stripe_offset", int),
    "Disk descr.": ("description", str),
    "Disk ident.": ("ident", str),
    "Attachment": ("attachment", str),
    "TRIM/UNMAP support": ("trim", str),
    "Rotation rate in RPM": ("rotation_rpm", str),
    "Zone Mode": ("zone_mode", str),
    "Physical path": ("physical_path", str),
}


@dataclass(frozen=True)
class DiskinfoResult:
    device: str | None
    facts: dict[str, Any] = field(default_factory=dict)
    rows: tuple[tuple[int, float, float], ...] = ()  # (size in bytes, usec per write, MiB/s)


def looks_like_diskinfo(text: str) -> bool:
    return "Synchronous random writes:" in text or bool(re.search(r"#\s*sectorsize", text))


def parse_diskinfo(text: str, *, source: str = "diskinfo output") -> DiskinfoResult:
    device = None
    facts: dict[str, Any] = {}
    rows: list[tuple[int, float, float]] = []
    in_table = False
    for line_no, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("Synchronous random writes"):
            in_table = True
            continue
        if in_table:
            match = _ROW.match(line)
            if not match:
                raise FioOutputError(
                    f"{source} line {line_no}: expected 'N kbytes: U usec/IO = M Mbytes/s', got {stripped[:60]!r}", _FIX
                )
            size = float(match["kb"]) * 1024
            if size != int(size) or size <= 0:
                raise FioOutputError(f"{source} line {line_no}: {match['kb']} kbytes is not a whole byte size", _FIX)
            rows.append((int(size), float(match["usec"]), float(match["mb"])))
            continue
        if match := _FACT.match(line):
            key = re.sub(r"\s*\(.*\)$", "", match["key"])  # "mediasize in bytes (3.6T)"
            name, kind = _KEYS.get(key, (key.lower().replace(" ", "_").rstrip("."), str))
            value: Any = match["value"]
            if kind is int:
                try:
                    value = int(value)
                except ValueError:
                    raise FioOutputError(f"{source} line {line_no}: {key} {value!r} is not a number", _FIX) from None
            facts[name] = value
            continue
        if device is None and not facts and " " not in stripped:
            device = stripped  # the first line names the device, e.g. /dev/ada0
            continue
        raise FioOutputError(f"{source} line {line_no}: unexpected line {stripped[:60]!r}", _FIX)
    if not rows:
        raise FioOutputError(f"{source} has no 'Synchronous random writes' table (was -S given?)", _FIX)
    return DiskinfoResult(device=device, facts=facts, rows=tuple(rows))


def diskinfo_to_fio_result(result: DiskinfoResult, raw_text: str) -> FioResult:
    directions = []
    for size, usec, mib_per_s in result.rows:
        latency = Latency(mean_ns=usec * 1000)
        directions.append(
            DirectionResult(
                job_name=f"diskinfo {size} bytes",
                direction="write",
                rw="randwrite",
                bs=size,
                iodepth=1,
                numjobs=1,
                iops=1e6 / usec if usec else 0.0,
                bw_bytes=mib_per_s * 1024 * 1024,
                io_bytes=0,
                total_ios=0,
                runtime_ms=0,
                usr_cpu=None,
                sys_cpu=None,
                clat=latency,
                sync_lat=latency,
                host=None,
                options={"rw": "randwrite", "bs": str(size), "sync": "dsync", "direct": "1", "ioengine": "diskinfo"},
            )
        )
    return FioResult(
        fio_version="diskinfo -wS", timestamp=None, directions=tuple(directions), job_errors=(), raw_text=raw_text
    )
