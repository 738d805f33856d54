"""fio's per-second logs (write_iops_log / write_bw_log / write_lat_log with log_avg_msec=1000).

These are the samples the statistics work on: one IOPS value per second per direction. fio writes one file
per job (`<prefix>_iops.<job>.log`) with lines `time_ms, value, direction, bs, offset[, prio]`; with several
jobs the values of the same one-second window are summed (IOPS, bandwidth) or averaged (latency). Window
times differ by a few ms between jobs, so windows are matched by rounding to the second.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from stackbench.model.fio_result import DirectionResult, Sample
from stackbench.base.errors import FioOutputError

LOG_AVG_MSEC = 1000
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
    ]


def read_samples(directory: Path, prefix: str, *, client: bool = False) -> dict[str, list[Sample]]:
    """Samples per direction ("read", "write", "trim") from the logs fio wrote in `directory`; with
    `client`, the logs fio's client wrote for its servers (their names end in the server's host name)."""
    values: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sorted(directory.iterdir()):
        match = _NAME.match(path.name)
        if not match or match["prefix"] != prefix or bool(match["client"]) != client:
            continue
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
            window = max(1, round(t_ms / LOG_AVG_MSEC))
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
    return samples


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
