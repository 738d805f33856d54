"""fio's per-second logs (write_iops_log / write_bw_log / write_lat_log with log_avg_msec=1000).

These are the samples the statistics work on: one IOPS value per second per direction. fio writes one file
per job (`<prefix>_iops.<job>.log`) with lines `time_ms, value, direction, bs, offset[, prio]`; with several
jobs the values of the same one-second window are summed (IOPS, bandwidth) or averaged (latency). Window
times differ by a few ms between jobs, so windows are matched by rounding to the second.

fio writes the times as Unix epoch ms (`log_unix_epoch`): a job's first line closes the first second of its
measured window (after the ramp), so the logs also say when fio began measuring, which nothing else in its
output does. Its JSON's `timestamp_ms` is when it wrote the report, after its teardown (43-57 ms after its
I/O stopped on this idle VM, more on a slow machine), so a window placed back from it is late by that much,
and the layer telemetry counted idle time as fio's. Logs with times from the job's start (an older
stackbench's, a test's) are read as before and say nothing of the start.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from stackbench.model.fio_result import DirectionResult, Sample
from stackbench.base.errors import FioOutputError

LOG_AVG_MSEC = 1000
EPOCH_MS_MIN = 10**11  # a log time past this is epoch ms (1973 on), not ms since the job began
DIRECTION_NAMES = {0: "read", 1: "write", 2: "trim"}
# fio's client (--client) writes the logs each server sends it with the server's host name appended
# (client.c, fio_client_handle_iolog: "%s.%s", the log's name, the client's hostname), so a fleet run's
# logs are `<prefix>_iops.<job>.log.127.0.0.1`: the prefix, different in every host's job file, tells them
# apart, since every host is reached through a forward on 127.0.0.1.
_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw|clat)\.(?P<job>\d+)\.log(?P<client>\..+)?$")


def log_options(prefix: str) -> list[tuple[str, str]]:
    """Job-file options that make fio write the per-second logs next to the job file."""
    return [
        ("write_iops_log", prefix),
        ("write_bw_log", prefix),
        ("write_lat_log", prefix),
        ("log_avg_msec", str(LOG_AVG_MSEC)),
        ("log_unix_epoch", "1"),
    ]


def read_samples(directory: Path, prefix: str, *, client: bool = False) -> dict[str, list[Sample]]:
    """Samples per direction ("read", "write", "trim") from the logs fio wrote in `directory`; with
    `client`, the logs fio's client wrote for its servers (their names end in the server's host name)."""
    return read_logs(directory, prefix, client=client)[0]


def read_logs(directory: Path, prefix: str, *, client: bool = False) -> tuple[dict[str, list[Sample]], float | None]:
    """`read_samples`, and when the earliest job began its measured window in epoch seconds: None where the
    logs have no epoch times or no full second."""
    values: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    starts: list[int] = []
    for path in sorted(directory.iterdir()):
        match = _NAME.match(path.name)
        if not match or match["prefix"] != prefix or bool(match["client"]) != client:
            continue
        origin: int | None = None  # epoch ms of the job's measured start, from its first line
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            fields = [f.strip() for f in line.split(",")]
            try:
                t_ms, value, direction = int(fields[0]), float(fields[1]), int(fields[2])
            except (IndexError, ValueError):
                raise FioOutputError(
                    f"fio log {path.name} line {number} is not 'time, value, direction, ...': {line[:60]!r}",
                    "Re-run the cell; if it repeats, report the fio version",
                ) from None
            if origin is None and t_ms >= EPOCH_MS_MIN:
                origin = t_ms - LOG_AVG_MSEC
                starts.append(origin)
            window = max(1, round((t_ms - (origin or 0)) / LOG_AVG_MSEC))
            values[DIRECTION_NAMES.get(direction, str(direction))][match["kind"]][window].append(value)
    samples: dict[str, list[Sample]] = {}
    for direction, kinds in values.items():
        iops = kinds.get("iops", {})
        bw = kinds.get("bw", {})
        clat = kinds.get("clat", {})
        samples[direction] = [
            Sample(
                t_s=window * LOG_AVG_MSEC / 1000,
                iops=sum(iops[window]),
                bw_bytes=sum(bw[window]) * 1024 if window in bw else None,  # fio logs bandwidth in KiB/s
                clat_mean_ns=sum(clat[window]) / len(clat[window]) if clat.get(window) else None,
            )
            for window in sorted(iops)
        ]
    return samples, min(starts) / 1000 if starts else None


def whole_run_sample(result: DirectionResult) -> Sample:
    """One sample for a fio run that ended before its first window closed: fio logs a window only when
    it is full, so a write of the file once that takes 0.4 s leaves an empty log. Its window is the run
    (t_s its end, as for every sample), its values fio's averages over the run."""
    return Sample(
        t_s=result.runtime_ms / 1000,
        iops=result.iops,
        bw_bytes=result.bw_bytes,
        clat_mean_ns=result.clat.mean_ns if result.clat else None,
    )
