"""Where a fleet run's wall time goes: its phases, when `STACKBENCH_FLEET_TIMING` asks for them.

A fleet run spends seconds around fio's own run (ssh handshakes, the hosts' checks, fio's servers and
their forwards, storing, stopping, cleaning up), and issue 15 bounds that overhead. With
`STACKBENCH_FLEET_TIMING=FILE` a run writes its phases to FILE as JSON when the process ends (through
stackbench/base/output_files.py: whole, a new or regular file, which it replaces: each bench run writes it
anew); with `STACKBENCH_FLEET_TIMING=-` it prints them on stderr. Unset, every call here is a
no-op costing one dictionary look-up. bench/fleet_bench.py reads the file to show the breakdown.

The phases are the main thread's, one after the other (so they add up to the wall time, less the gaps
named `unaccounted`); work that overlaps them (the ssh handshakes while stackbench imports its store, the
hosts' own checks) is recorded per host (`hosts`) as each host's agent measured it.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

from stackbench.base import processes

ENV = "STACKBENCH_FLEET_TIMING"


def process_age() -> float | None:
    """Seconds since this process started (Linux: /proc/self/stat and the boot-time clock), else None."""
    ticks = processes.start_ticks(os.getpid())
    if ticks is None:
        return None
    try:
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, AttributeError):
        return None


class Timeline:
    """Phases as (name, start, end) in seconds since the process started, and per-host remote timings."""

    def __init__(self, destination: str) -> None:
        self.destination = destination
        age = process_age()
        self.origin = time.monotonic() - (age or 0.0)
        self.epoch = time.time() - (age or 0.0)  # the process's start as wall-clock time, for a caller's own clock
        self.phases: list[tuple[str, float, float]] = []
        self.hosts: dict[str, dict[str, Any]] = {}
        if age is not None:
            self.phases.append(("startup", 0.0, age))  # python, stackbench's imports, the command line

    def now(self) -> float:
        return time.monotonic() - self.origin

    def document(self) -> dict[str, Any]:
        end = self.now()
        covered = sum(e - s for _, s, e in self.phases)
        return {
            "process_started_epoch": round(self.epoch, 6),
            "ended_s": round(end, 6),
            "phases": [{"name": n, "start_s": round(s, 6), "seconds": round(e - s, 6)} for n, s, e in self.phases],
            "totals": {**totals(self.phases), "unaccounted": round(max(0.0, end - covered), 6)},
            "hosts": self.hosts,
        }

    def write(self) -> None:
        document = self.document()
        if self.destination == "-":
            parts = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in document["totals"].items())
            sys.stderr.write(f"fleet timing: {document['ended_s']:.3f} s in all: {parts}\n")
            for host, values in self.hosts.items():
                said = ", ".join(f"{k} {v:.3f} s" for k, v in values.items() if isinstance(v, (int, float)))
                sys.stderr.write(f"fleet timing: {host}: {said}\n")
            return
        from pathlib import Path

        from stackbench.base.errors import StackbenchError
        from stackbench.base.output_files import Destination, write_file

        try:
            write_file(Path(self.destination), json.dumps(document, indent=1).encode(), force=True,
                       destination=Destination(ENV, force=None))
        except StackbenchError as error:  # a debugging aid must not turn a finished run into a failure
            sys.stderr.write(f"stackbench: cannot write {ENV}={self.destination}: {error.one_line()}\n")


def totals(phases: list[tuple[str, float, float]]) -> dict[str, float]:
    """Seconds per phase name (a phase that happens once per fio run is summed), in order of first use."""
    summed: dict[str, float] = {}
    for name, start, end in phases:
        summed[name] = round(summed.get(name, 0.0) + end - start, 6)
    return summed


_timeline: Timeline | None = None
_checked = False


def timeline() -> Timeline | None:
    """The process's timeline when STACKBENCH_FLEET_TIMING is set (made, and written at exit, on first use)."""
    global _timeline, _checked
    if not _checked:
        _checked = True
        destination = os.environ.get(ENV)
        if destination:
            _timeline = Timeline(destination)
            atexit.register(_timeline.write)
    return _timeline


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Record the time the main thread spends in the block as phase `name` (nothing when timing is off)."""
    line = timeline()
    if line is None:
        yield
        return
    start = line.now()
    try:
        yield
    finally:
        line.phases.append((name, start, line.now()))


def host(name: str, **values: Any) -> None:
    """Remote or per-host timings of `name` (seconds), merged into what is known of it."""
    line = timeline()
    if line is not None:
        line.hosts.setdefault(name, {}).update({k: round(v, 6) if isinstance(v, float) else v
                                                for k, v in values.items()})


def since_start() -> float | None:
    """Seconds since the process started on the timeline's clock (None when timing is off)."""
    line = timeline()
    return line.now() if line is not None else None
