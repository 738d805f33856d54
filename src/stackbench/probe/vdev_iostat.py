"""What each vdev of the target's pools did, a second at a time: one long-lived `zpool iostat -HpvPy POOL... 1`.

The kernel's /proc/diskstats counts a pool's disks, not its vdevs, and OpenZFS on Linux keeps no per-vdev
kstat; `zpool iostat -v` is where a pool's users look. One zpool process streams a report per interval (a
process a second would cost a start of libzfs every second), read by a thread of its own:

- `-y` leaves out the first report (the averages since the pool was imported); every report after it holds
  the rates over the interval that just ended: `-p` prints them exactly, in operations and bytes per second
  (the counts over the interval scaled by 10^9 / its length in ns, truncated to integers).
- `-H` prints each row as tab-separated fields, `name alloc free read-ops write-ops read-bytes write-bytes`,
  without the tree's indentation and without the class headers: where `zpool iostat -v` prints a `dedup`,
  `special`, `logs` or `cache` header row, `-H` prints an empty line (OpenZFS 2.1 and 2.3 alike,
  cmd/zpool/zpool_main.c print_vdev_stats). Which vdev is in which class, and which leaf under which vdev,
  is the stack's to say (stack/zfs.py, from `zpool status -P`).
- `-P` names each leaf by its full path, as `zpool status -P` does and so as the stack's `vdevs` name it.

What a row counts (module/zfs/vdev.c, 2.1 and 2.3): only a leaf's own I/Os are counted (`vdev_stat_update`),
and an interior vdev's row is the sum of its children's (`vdev_get_stats_ex_impl`): a mirror's row is both
legs together, the pool's every top-level vdev's (data, special, dedup and log, not the cache). The leaf's
operations are counted before the leaf's queue aggregates them, so its bytes match the disk's
/proc/diskstats and its operations can exceed them.

All lines of one report come in one burst (zpool writes a report, flushes, then sleeps): a report is taken
as finished when the next pool row arrives or when no line came for `QUIET_S`. Its time is when its first
line arrived, taken as the end of the interval it covers: zpool prints neither that interval nor its counts,
so a reader late by a second (an overloaded machine) counts a report's rates over the wrong length of time.
That is why the layer table takes the rows of a pool whose leaves are block devices from their
/proc/diskstats counts instead (analysis/layer_activity.py), and these reports only for a pool with a file
vdev. `parse_row` and `parse_report` are pure and never raise: a
line that is not a row of numbers makes its vdev unavailable, with the reason.

Without a zpool command or without a pool nothing is sampled and nothing fails; `stop` always ends the
process and the thread, and the process also dies with the thread that started it (PR_SET_PDEATHSIG): a
stackbench killed outright leaves no zpool behind.
"""

from __future__ import annotations

import math
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from stackbench.base import spawn
from stackbench.base.processes import stat_fields

FIELDS = ("reads", "writes", "read_bytes", "write_bytes")  # per second, as zpool prints them
QUIET_S = 0.25  # no line for this long after a report's lines began: the report is whole
MAX_REPORTS = 7200  # two hours of seconds per pool and fio run; past that, reports are counted, not kept
MAX_REASON = 120
NUMERIC = frozenset("0123456789.")
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def iostat_argv(pools: Sequence[str], interval: float = 1.0) -> list[str]:
    """The one zpool command that streams every pool's per-vdev report each `interval` seconds."""
    return ["zpool", "iostat", "-H", "-p", "-v", "-P", "-y", *pools, f"{interval:g}"]


@dataclass(frozen=True)
class VdevRow:
    """One row of a report: a vdev's rates (FIELDS, per second), or why they could not be read. `section`
    counts the empty lines before it in its report: 0 for the pool and its normal vdevs, then one more per
    class (dedup, special, logs, cache, in that order, each only where the pool has it)."""

    name: str
    section: int
    rates: tuple[float, float, float, float] | None
    reason: str | None = None


@dataclass
class PoolReport:
    """One pool's rows of one interval, the pool's own first; `pool` is None for rows before any pool's row."""

    pool: str | None
    rows: list[VdevRow] = field(default_factory=list)


def _shown(text: str) -> str:
    """Text from the command, cut short and with its control characters named: it is data, never markup."""
    cut = text[:MAX_REASON]
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)


def _number(text: str) -> float | None:
    """A rate as `-p` prints it (ASCII digits), or None for anything else: a sign, a unit, nan, other digits."""
    if not text or not set(text) <= NUMERIC or text.count(".") > 1 or text == ".":
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_row(line: str, section: int = 0) -> VdevRow:
    """One non-empty line of `zpool iostat -Hpv` as a row: its name and its four rates, or the reason it has
    none (the wrong number of fields, a field that is not a number)."""
    fields = line.rstrip("\r\n").split("\t")
    name = _shown(fields[0].strip()) or "?"
    if len(fields) != 7:
        return VdevRow(name, section, None, f"{len(fields)} fields where zpool iostat -Hpv prints 7")
    values = [_number(text.strip()) for text in fields[3:]]
    bad = [text for text, value in zip(fields[3:], values) if value is None]
    if bad:
        return VdevRow(name, section, None, f"not a number: {_shown(bad[0])!r}")
    reads, writes, read_bytes, write_bytes = (float(v) for v in values if v is not None)
    return VdevRow(name, section, (reads, writes, read_bytes, write_bytes))


def parse_report(text: str, pools: Iterable[str]) -> list[PoolReport]:
    """Every report in `zpool iostat -Hpv` output: a row named after one of `pools` begins one (a vdev is
    never named like a pool: top-level vdevs are `mirror-0`, `raidz1-0`, and with -P leaves are paths), an
    empty line begins the next class's section. Never raises."""
    names = set(pools)
    reports: list[PoolReport] = []
    current: PoolReport | None = None
    section = 0
    for line in text.split("\n"):
        if not line.strip():
            section += 1 if current is not None and current.rows else 0
            continue
        row = parse_row(line, section)
        if row.name in names:
            section = 0
            current = PoolReport(row.name, [VdevRow(row.name, 0, row.rates, row.reason)])
            reports.append(current)
        else:
            if current is None:
                current = PoolReport(None)
                reports.append(current)
            current.rows.append(row)
    return reports


def report_sample(report: PoolReport, t: float, dt: float) -> dict[str, Any]:
    """A pool's report as one stored second: its time (the end of its interval), its length, and each
    vdev's rates (FIELDS), those without them under `unavailable` with the reason."""
    rates = {row.name: list(row.rates) for row in report.rows if row.rates is not None}
    sample: dict[str, Any] = {"t": round(t, 3), "dt": round(dt, 3), "pool": report.pool, "vdevs": rates}
    missing = {row.name: row.reason or "no figures" for row in report.rows if row.rates is None}
    if missing:
        sample["unavailable"] = missing
    return sample


def _process_cpu_s(pid: int) -> float | None:
    """The process's CPU time so far (user and system), in seconds; None where /proc does not say."""
    fields = stat_fields(f"/proc/{pid}/stat")
    try:
        return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND if fields else None
    except (IndexError, ValueError):
        return None


class VdevSampler:
    """`zpool iostat -HpvPy POOLS INTERVAL` running while it runs (`start`, `stop`), its reports kept as
    samples; `stop` returns them with the process's CPU time and what could not be read."""

    def __init__(self, pools: Iterable[str], *, interval: float = 1.0, max_reports: int = MAX_REPORTS) -> None:
        self.pools = tuple(dict.fromkeys(pools))
        self.interval = interval
        self.samples: deque[dict[str, Any]] = deque(maxlen=max_reports * max(1, len(self.pools)))
        self.dropped = 0
        self.unavailable: list[str] = []
        self.process: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None
        self._pending: PoolReport | None = None
        self._pending_t = 0.0
        self._pending_section = 0
        self._last_t: dict[str, float] = {}
        self._last_names: dict[str, tuple[str, ...]] = {}
        self._stderr = b""
        self._started = 0.0
        self._cpu_s: float | None = None
        self._seconds: float | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> "VdevSampler":
        """Start the zpool process and its reader; without zpool (no ZFS here) only note it."""
        if not self.pools:
            return self
        try:
            self.process = spawn.popen(iostat_argv(self.pools, self.interval), death_signal=signal.SIGKILL,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True, close_fds=True)
        except (OSError, ValueError) as error:  # no zpool command: a host without ZFS
            self.unavailable.append(f"zpool iostat: {_shown(getattr(error, 'strerror', None) or str(error))}")
            return self
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._read, name="stackbench-vdev-iostat", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        """Read the process's output until it ends: whole lines into reports, a report finished by the next
        pool row or by a quiet `QUIET_S`; its standard error kept (bounded) to say why it ended."""
        assert self.process is not None and self.process.stdout is not None and self.process.stderr is not None
        out, err = self.process.stdout.fileno(), self.process.stderr.fileno()
        open_fds, buffered = {out, err}, b""
        try:
            while open_fds:
                ready, _, _ = select.select(list(open_fds), [], [], QUIET_S)
                if not ready:
                    self._finish(complete=True)
                    continue
                for fd in ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        open_fds.discard(fd)
                    elif fd == err:
                        self._stderr = (self._stderr + chunk)[:2000]
                    else:
                        lines = (buffered + chunk).split(b"\n")
                        buffered = lines.pop()[-4096:]  # a line not yet ended (bounded: a row is short)
                        now = time.time()
                        for raw in lines:
                            self._line(raw.decode("utf-8", "replace"), now)
        except (OSError, ValueError) as error:  # the pipe closed under us at stop: the reports so far stand
            self.unavailable.append(f"zpool iostat: {_shown(str(error))}")

    def _line(self, line: str, now: float) -> None:
        if not line.strip():
            if self._pending is not None and self._pending.rows:
                self._pending_section += 1
            return
        row = parse_row(line, self._pending_section)
        if row.name in self.pools:
            self._finish(complete=True)
            self._pending, self._pending_t, self._pending_section = PoolReport(row.name, [row]), now, 0
        elif self._pending is not None:
            self._pending.rows.append(row)
        else:
            self._note("zpool iostat: a row outside a pool's report")

    def _note(self, reason: str) -> None:
        if reason not in self.unavailable and len(self.unavailable) < 20:
            self.unavailable.append(reason)

    def _finish(self, *, complete: bool) -> None:
        """Keep the pending report as a sample: its interval is since the pool's last report (the first one:
        `interval`). An incomplete one (the process ended mid-report) is kept only when it has the rows of
        the pool's report before it."""
        report, self._pending = self._pending, None
        if report is None or report.pool is None:
            return
        names = tuple(row.name for row in report.rows)
        if not complete and names != self._last_names.get(report.pool):
            self._note(f"zpool iostat: the last report of {report.pool} was cut short")
            return
        last = self._last_t.get(report.pool)
        dt = self._pending_t - last if last is not None and 0 < self._pending_t - last < 3 * self.interval \
            else self.interval
        self._last_t[report.pool], self._last_names[report.pool] = self._pending_t, names
        if len(self.samples) == self.samples.maxlen:
            self.dropped += 1
        self.samples.append(report_sample(report, self._pending_t, dt))

    def stop(self) -> dict[str, Any]:
        """End the process (its CPU time read first) and the reader; what was sampled."""
        process = self.process
        if process is not None:
            self._seconds = time.monotonic() - self._started
            self._cpu_s = _process_cpu_s(process.pid)
            if process.poll() is None:
                process.kill()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._note("zpool iostat: did not end within 5 s of SIGKILL")
            if self._thread is not None:
                self._thread.join(timeout=5)
                self._thread = None
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
            self._finish(complete=False)
            if process.returncode not in (None, -signal.SIGKILL):
                said = _shown(self._stderr.decode("utf-8", "replace").strip().splitlines()[0]) if self._stderr.strip() \
                    else "no message"
                self._note(f"zpool iostat: exited {process.returncode}: {said}")
            self.process = None
        return self.result()

    def result(self) -> dict[str, Any]:
        found: dict[str, Any] = {"pools": list(self.pools), "interval_s": self.interval,
                                 "samples": list(self.samples), "dropped": self.dropped}
        if self._cpu_s is not None and self._seconds:
            found["cpu_s"], found["seconds"] = round(self._cpu_s, 3), round(self._seconds, 3)
        if self.unavailable:
            found["unavailable"] = list(self.unavailable)
        return found
