"""The outputs `stackbench import` reads, one `InputFormat` record each, in the order they are detected.

A record names the engine module that reads its format (`looks_like(text) -> bool`, what only that format
has; `read(text, source) -> (FioResult, facts to store with the run)`), imported only when a file is read,
so `--help` and the commands that import nothing stay light. `--input-format`'s help, the error for a
format that is none of these, the sentence that names what is read, and the docs' table of formats
(docs/run.md, docs/sync-writes.md) are made from the records. A new format is its module under engine/ and
one `InputFormat(...)` here (docs/architecture.md, "Where a new thing goes").
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from stackbench.base.registry import by_name, one_of, unknown

if TYPE_CHECKING:
    from stackbench.model.fio_result import FioResult

AUTO = "auto"  # --input-format's default: detect each file's format


@dataclass(frozen=True)
class InputFormat:
    name: str  # what --input-format calls it
    module: str  # the engine module that reads it (`looks_like`, `read`)
    title: str  # what it is, as the help and the errors name it
    versions: str  # the versions read (docs' table)
    detected_by: str  # what auto-detection looks for (docs' table)
    says: str  # what the file says (docs' table)
    computes: str  # what the import computes from it or cannot know (docs' table)

    def looks_like(self, text: str) -> bool:
        return bool(self._reader().looks_like(text))

    def read(self, text: str, source: str) -> tuple[FioResult, dict[str, Any]]:
        return self._reader().read(text, source)  # type: ignore[no-any-return]

    def _reader(self) -> Any:
        return import_module(f"stackbench.engine.{self.module}")


# Detection order matters: each `looks_like` tests what only its format has (a JSON document with jobs,
# diskinfo's table title, terse's `3;fio-` lines, the normal output's `name: (groupid=N, jobs=N): err=`).
FORMATS: dict[str, InputFormat] = by_name(
    InputFormat(
        name="json",
        module="fio_json",
        title="fio JSON and json+",
        versions="fio 2.0 and later",
        detected_by="a JSON document with `jobs` or `client_stats`, after any text",
        says="each job's explicit options (`job options`, from 2.17; absent options are fio's defaults), exact "
             "counts, latency (µs before 3.0, ns after); client/server output gives one cell per host; tested on "
             "fio 2.1.4, 2.2.10, 2.17, 2.18, 3.1 to 3.34",
        computes="fio 2.x's `io_bytes` is KiB and is read as such; a job without `job options` (fio 2.1, 2.2, some "
                 "client entries) says no rw, bs, iodepth or numjobs: the direction is the side that moved data, "
                 "the block size bytes / I/Os where exact (from `total_ios`, or from the truncated KiB, KiB/s and "
                 "IOPS before 2.17), random or sequential, iodepth and numjobs unknown",
    ),
    InputFormat(
        name="diskinfo",
        module="diskinfo",
        title="FreeBSD diskinfo -wS",
        versions="any release",
        detected_by="`Synchronous random writes:` or `# sectorsize`",
        says="one size per line: usec per write and Mbytes/s (MiB); the device's sector size, media size, model, "
             "ident, TRIM and rotation rate",
        computes="one 4K-to-8M random O_DSYNC write cell per size, IOPS = 1e6 / usec, MB/s from Mbytes/s; the "
                 "device facts stored with the run (docs/sync-writes.md)",
    ),
    InputFormat(
        name="terse",
        module="fio_terse",
        title="fio terse version 3",
        versions="fio 2.x and 3.x",
        detected_by="lines starting `3;fio-`",
        says="KiB, KiB/s and IOPS truncated to integers, latencies in µs, an I/O-depth histogram; no rw, bs or "
             "iodepth",
        computes="the direction is read/write/rw; the I/O count and block size where only one pair fits the three "
                 "truncations; random or sequential, iodepth (the histogram's bucket is a lower bound) and, for "
                 "one line per job, numjobs unknown",
    ),
    InputFormat(
        name="normal",
        module="fio_text",
        title="fio normal output",
        versions="fio 3.0 and later",
        detected_by="`name: (groupid=N, jobs=N): err=` result lines",
        says="rw, block sizes, ioengine and iodepth in the job header; counts in `issued` (3.1's `issued rwt:` "
             "with three counts, 3.2's `issued rwts:`); latencies and percentiles as printed (3 to 4 significant "
             "digits); sync latency from the `fsync/fdatasync/sync_file_range` block",
        computes="IOPS and bandwidth exactly from the counts and the runtime in ms, as fio computes them; with "
                 "bsrange or bssplit the block size is unknown (the average bytes per I/O is kept); fio 2.x normal "
                 "output is refused (use its JSON)",
    ),
)
NAMES = (AUTO, *FORMATS)


def input_format(name: str) -> InputFormat:
    """The format `--input-format NAME` forces."""
    if name not in FORMATS:
        raise unknown("--input-format", name, NAMES)
    return FORMATS[name]


def detect(text: str) -> InputFormat | None:
    """The first format whose `looks_like` holds, in the registry's order."""
    return next((f for f in FORMATS.values() if f.looks_like(text)), None)


def supported() -> str:
    """The sentence an error ends with when a file is none of the formats, or one of an unread version."""
    return "stackbench imports " + one_of((f"{f.title} ({f.versions})" for f in FORMATS.values()), "and")


def titles() -> str:
    """The formats as help names them: `fio JSON and json+, FreeBSD diskinfo -wS, ... or fio normal output`."""
    return one_of(f.title for f in FORMATS.values())
