"""What else the machine was doing while fio ran: one sample a second, from a thread of its own.

A result measured on a shared machine is the target's doing only if nothing else was competing for the CPU
or the device; nothing in fio's output says whether something was. The kernel counts it: stall time per
resource (PSI), CPU time by kind (steal included), the clock, memory and page-cache pressure, every block
device's requests, and the ZFS ARC. `ConditionSampler` reads those counters once a second around a fio run
and keeps each second's change as a plain dict (stored as JSON; analysis/conditions.py reads them); for
the pools it is given it runs probe/vdev_iostat.py's `zpool iostat` beside it, whose reports it keeps as
`vdevs`; told fio's ramp, it also reads the devices' counters alone around the moment fio's measured
window begins (`edges`).

Every source is optional: a file this kernel lacks, or one that does not parse, is named in the sample's
`unavailable` list and the sample goes on without it. Nothing here raises into the run, memory is bounded
(`MAX_SAMPLES` a run, the rest counted as `dropped`), and `stop` always ends the thread.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import deque
from typing import Any, Iterable

from stackbench.base import spawn
from stackbench.base.processes import stat_fields
from stackbench.probe.vdev_iostat import VdevSampler

PROC = "/proc"
KTHREADD = 2  # the kernel threads' parent
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SYS_CPU = "/sys/devices/system/cpu"
ARCSTATS = "/proc/spl/kstat/zfs/arcstats"
PSI_RESOURCES = ("cpu", "io", "memory")
MAX_SAMPLES = 7200  # two hours of seconds per fio run; past that, seconds are counted and not kept
MEMINFO_KEYS = {"MemAvailable": "available", "Cached": "cached", "Dirty": "dirty", "Writeback": "writeback"}
VMSTAT_KEYS = ("pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgmajfault", "pswpin",
               "pswpout")
ARC_KEYS = ("hits", "misses", "size", "c", "l2_hits", "l2_misses", "l2_size")
# /proc/diskstats fields after major, minor, name (Documentation/admin-guide/iostats.rst)
DISK_FIELDS = ("reads", "read_merges", "read_sectors", "read_ms", "writes", "write_merges", "write_sectors",
               "write_ms", "in_flight", "busy_ms", "queue_ms")
GAUGES = ("in_flight",)  # a level, not a counter: kept as read
# The devices' counters read alone around when fio's ramp ends (`ConditionSampler.watch`): from its job's
# start plus the ramp, every EDGE_STEP seconds for EDGE_SPAN seconds (the job's setup before its clock starts)
EDGE_STEP = 0.025
EDGE_SPAN = 0.5
STARTTIME = 19  # /proc/PID/stat's starttime (field 22 of proc(5)) in stat_fields' numbering


def _read(path: str) -> str | None:
    """A /proc or /sys file's text, or None when this kernel has no such file or it cannot be read."""
    try:
        with open(path, errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return None


def read_pressure(root: str = PROC) -> dict[str, float]:
    """Cumulative stall microseconds per resource: `cpu`, `io`, `memory` (some) and `io_full`,
    `memory_full` (every task stalled); {} without PSI."""
    totals: dict[str, float] = {}
    for resource in PSI_RESOURCES:
        text = _read(f"{root}/pressure/{resource}")
        for line in (text or "").splitlines():
            kind, _, rest = line.partition(" ")
            fields = dict(part.split("=", 1) for part in rest.split() if "=" in part)
            if "total" in fields and kind in ("some", "full"):
                totals[resource if kind == "some" else f"{resource}_full"] = float(fields["total"])
    totals.pop("cpu_full", None)  # the kernel reports it as 0 for the CPU: meaningless
    return totals


def read_cpu(root: str = PROC) -> dict[str, float]:
    """Cumulative CPU time of all CPUs in ticks by kind (the `cpu` line of /proc/stat), and running tasks."""
    text = _read(f"{root}/stat") or ""
    found: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu" and len(parts) >= 9:
            user, nice, system, idle, iowait, irq, softirq, steal = (float(v) for v in parts[1:9])
            found.update(user=user + nice, system=system + irq + softirq, idle=idle, iowait=iowait, steal=steal)
        elif parts and parts[0] == "procs_running" and len(parts) == 2:
            found["running"] = float(parts[1])
    return found


def read_process_ticks(leader: int | None, root: str = PROC) -> dict[str, dict[int, float]]:
    """CPU ticks by pid of three kinds of process: `fio`, the live process `leader` and its descendants
    (fio's job processes each start a session of their own, so only parentage finds them), user plus
    system time; `kernel`, the kernel's threads (kthreadd's children: the block layer's and the file
    system's workers, busy with fio's I/O as much as anyone's); and `other`, every other process but this
    one, with the time of the children it reaped (`cutime`: a build's short-lived compilers are gone before
    the next reading, their parent keeps their time). A child seen alive and then reaped is counted twice,
    which errs towards calling a machine busy."""
    stats: dict[int, tuple[int, float, float]] = {}
    for name in os.listdir(root):
        if name.isdigit():
            read = _stat_ticks(f"{root}/{name}/stat")
            if read is not None:
                stats[int(name)] = read
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    fio: dict[int, float] = {}
    todo = [leader] if leader is not None and leader in stats else []
    while todo:
        pid = todo.pop()
        if pid not in fio:
            fio[pid] = stats[pid][1]
            todo.extend(children.get(pid, ()))
    kernel = {pid: stats[pid][1] for pid in [KTHREADD, *children.get(KTHREADD, ())] if pid in stats}
    skip = {os.getpid(), *fio, *kernel}
    other = {pid: own + reaped for pid, (_, own, reaped) in stats.items() if pid not in skip}
    return {"fio": fio, "kernel": kernel, "other": other}


def _stat_ticks(path: str) -> tuple[int, float, float] | None:
    """A /proc/PID/stat's parent pid, utime + stime, and cutime + cstime (its reaped children's), or None
    (gone or unreadable)."""
    fields = stat_fields(path)
    if fields is None:
        return None
    try:
        return int(fields[1]), float(int(fields[11]) + int(fields[12])), float(int(fields[13]) + int(fields[14]))
    except (IndexError, ValueError):
        return None


def job_started(pids: Iterable[int], leader: int | None, root: str = PROC) -> float | None:
    """When the first of fio's job processes (`pids` but the `leader`, fio's own) started, in epoch seconds
    (to 1/TICKS_PER_SECOND, rounded down), or None before fio forked one: a job starts its clock, and its
    ramp, once set up after it forks."""
    starts = []
    for pid in pids:
        fields = stat_fields(f"{root}/{pid}/stat") if pid != leader else None
        if fields is not None and len(fields) > STARTTIME and fields[STARTTIME].isdigit():
            starts.append(int(fields[STARTTIME]) / TICKS_PER_SECOND)
    if not starts:
        return None
    return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + min(starts)


def read_load(root: str = PROC) -> float | None:
    text = _read(f"{root}/loadavg")
    try:
        return float(text.split()[0]) if text else None
    except (ValueError, IndexError):
        return None


def read_freq_mhz(sys_cpu: str = SYS_CPU, root: str = PROC) -> float | None:
    """The CPUs' mean clock now: cpufreq's current frequency where the kernel has cpufreq, else /proc/cpuinfo."""
    try:
        cpus = [name for name in os.listdir(sys_cpu) if name.startswith("cpu") and name[3:].isdigit()]
    except OSError:
        cpus = []
    khz = [_read(f"{sys_cpu}/{cpu}/cpufreq/scaling_cur_freq") for cpu in cpus]
    values = [float(v) / 1000 for v in khz if v and v.strip().isdigit()]
    if not values:
        text = _read(f"{root}/cpuinfo") or ""
        values = [float(line.split(":", 1)[1]) for line in text.splitlines()
                  if line.startswith("cpu MHz") and ":" in line]
    return sum(values) / len(values) if values else None


def _keyed(text: str | None, wanted: Iterable[str], separator: str | None = None) -> dict[str, float]:
    found: dict[str, float] = {}
    keys = set(wanted)
    for line in (text or "").splitlines():
        parts = line.replace(":", " ").split() if separator is None else line.split(separator)
        if len(parts) >= 2 and parts[0] in keys:
            found[parts[0]] = float(parts[1])
    return found


def read_memory(root: str = PROC) -> dict[str, float]:
    """Memory levels in bytes (available, page cache, dirty, under writeback)."""
    kib = _keyed(_read(f"{root}/meminfo"), MEMINFO_KEYS)
    return {MEMINFO_KEYS[key]: value * 1024 for key, value in kib.items()}


def read_vmstat(root: str = PROC) -> dict[str, float]:
    """Cumulative reclaim and paging counters (pages scanned and stolen, major faults, swap)."""
    return _keyed(_read(f"{root}/vmstat"), VMSTAT_KEYS)


def read_diskstats(names: Iterable[str], root: str = PROC) -> dict[str, dict[str, float]]:
    """The counters of these block devices (by kernel name, `sda`, `loop3`, `nvme0n1p2`)."""
    wanted = set(names)
    found: dict[str, dict[str, float]] = {}
    for line in (_read(f"{root}/diskstats") or "").splitlines():
        parts = line.split()
        if len(parts) >= 3 + len(DISK_FIELDS) and parts[2] in wanted:
            found[parts[2]] = {field: float(value) for field, value in zip(DISK_FIELDS, parts[3:])}
    return found


def read_arc(path: str = ARCSTATS) -> dict[str, float]:
    """The ZFS ARC's (and L2ARC's) hits, misses and sizes; {} without ZFS."""
    found: dict[str, float] = {}
    for line in (_read(path) or "").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ARC_KEYS and parts[2].isdigit():
            found[parts[0]] = float(parts[2])
    return found


def scrub_state(pools: Iterable[str]) -> dict[str, str]:
    """Each pool's scan line when a scrub or resilver is running (`zpool status`), {} otherwise: a scrub
    reads every block of the pool, so a result measured during one is the scrub's as much as the target's."""
    running: dict[str, str] = {}
    for pool in pools:
        try:
            done = spawn.run(["zpool", "status", "-p", "--", pool], capture_output=True, text=True, timeout=10,
                             check=False)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            continue
        for line in done.stdout.splitlines():
            line = line.strip()
            if line.startswith("scan:") and "in progress" in line:
                running[pool] = line.removeprefix("scan:").strip()[:200]
    return running


class Counters:
    """One reading of every source, with the names of those that could not be read. The block devices'
    counters are read first, at the reading's time `t`: the layer table sets their seconds against fio's
    bytes in the same seconds, and the rest (every process's CPU time above all) takes a while to read: in
    the lab guests, on an emulated CPU, 60-250 ms of CPU a reading, and read after it the devices' seconds
    ran late: the layers that pass fio's I/O through one for one read fewer bytes than fio's in them in five
    of six runs (0.90-0.99x), and on both sides of 1.00x once read first."""

    def __init__(self, devices: tuple[str, ...], zfs: bool, fio_pid: int | None = None) -> None:
        self.t = time.time()
        self.unavailable: list[str] = []
        try:
            self.disks = read_diskstats(devices) if devices else {}
        except (ValueError, OSError):
            self.disks = {}
        self.unavailable.extend(f"diskstats:{name}" for name in devices if name not in self.disks)
        self.pressure = self._take("pressure", read_pressure, {})
        self.cpu = self._take("cpu", read_cpu, {})
        own = _stat_ticks(f"{PROC}/self/stat")
        self.own = own[1] if own else None
        self.fio_pid = fio_pid
        self.processes = self._take("processes", lambda: read_process_ticks(fio_pid), {})
        self.load = read_load() if not self.pressure else None
        self.freq = self._take("freq", read_freq_mhz)
        self.memory = self._take("memory", read_memory, {})
        self.vm = self._take("vmstat", read_vmstat, {})
        self.arc = self._take("arcstats", read_arc, {}) if zfs else {}

    def _take(self, name: str, reader: Any, empty: Any = None) -> Any:
        """A source's reading, or `empty` with its name listed as unavailable."""
        try:
            value = reader()
        except (ValueError, TypeError, IndexError, OSError):
            value = None
        if not value:
            self.unavailable.append(name)
            return empty
        return value


def _delta(now: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {key: (value if key in GAUGES else value - before[key]) for key, value in now.items() if key in before}


def _share(now: dict[str, float], before: dict[str, float], wanted: Iterable[str]) -> dict[str, float]:
    change = _delta(now, before)
    total = sum(v for k, v in change.items() if k in ("user", "system", "idle", "iowait", "steal"))
    return {key: round(100 * change[key] / total, 2) for key in wanted if key in change} if total > 0 else {}


def sample_between(before: Counters, now: Counters) -> dict[str, Any]:
    """What changed between two readings, as one stored second: stall and CPU shares in percent of the
    interval, the device counters' increments, memory levels as read at its end."""
    dt = max(now.t - before.t, 1e-6)
    sample: dict[str, Any] = {"t": round(now.t, 3), "dt": round(dt, 3)}
    if now.pressure and before.pressure:
        sample["psi"] = {key: round(min(100.0, v / (dt * 1e4)), 2) for key, v in
                         _delta(now.pressure, before.pressure).items()}
    if now.load is not None:
        sample["load1"] = now.load
    if now.cpu and before.cpu:
        sample["cpu"] = _share(now.cpu, before.cpu, ("user", "system", "iowait", "steal"))
        if "running" in now.cpu:
            sample["running"] = now.cpu["running"]
        procs = _process_cpus(before, now, dt)
        if procs:
            sample["procs"] = procs
    if now.freq is not None:
        sample["freq_mhz"] = round(now.freq, 1)
    if now.memory:
        sample["mem"] = now.memory
    if now.vm and before.vm:
        sample["vm"] = _delta(now.vm, before.vm)
    disks = {name: _delta(counters, before.disks[name]) for name, counters in now.disks.items()
             if name in before.disks}
    if disks:
        sample["disks"] = disks
    if now.arc and before.arc:
        sample["arc"] = {**_delta({k: v for k, v in now.arc.items() if not k.endswith("size") and k != "c"}, before.arc),
                         **{k: v for k, v in now.arc.items() if k.endswith("size") or k == "c"}}
    unavailable = sorted(set(before.unavailable) | set(now.unavailable))
    if unavailable:
        sample["unavailable"] = unavailable
    return sample


def _process_cpus(before: Counters, now: Counters, dt: float) -> dict[str, float]:
    """CPUs' worth of time (CPU-seconds a second) used by fio's processes, by this process, by the kernel's
    threads, and by every other process (`read_process_ticks`); {} until fio's pid is known. Each is
    summed from the processes' own counters, not taken as the rest of /proc/stat's busy time: that holds
    the idle task's work of waking fio at every completion, which belongs to no process (0.1-0.2 CPUs at
    4K QD1 on a two-core VM)."""
    if now.fio_pid is None or not now.processes or not before.processes or now.own is None or before.own is None:
        return {}
    scale = dt * TICKS_PER_SECOND
    used = {kind: _grown(before.processes[kind], now.processes[kind]) for kind in ("fio", "kernel", "other")}
    used["own"] = max(0.0, now.own - before.own)
    return {kind: round(used[kind] / scale, 3) for kind in ("fio", "own", "kernel", "other")}


def _grown(before: dict[int, float], now: dict[int, float]) -> float:
    """Ticks the processes of `now` used since `before` (a new one since its start)."""
    return sum(max(0.0, ticks - before.get(pid, 0.0)) for pid, ticks in now.items())


class ConditionSampler:
    """A thread that reads the machine's counters once a second while it runs (`with sampler:`, or `start`
    and `stop`), for the block devices `devices` and the ZFS pools `pools`. The samples, at most
    `max_samples`, the devices' readings around the end of fio's ramp (`edges`, where `watch` was given
    it), and the scrubs seen at the start or the end, are what `stop` returns."""

    def __init__(self, devices: Iterable[str] = (), pools: Iterable[str] = (), *, interval: float = 1.0,
                 max_samples: int = MAX_SAMPLES) -> None:
        self.devices = tuple(dict.fromkeys(devices))
        self.pools = tuple(dict.fromkeys(pools))
        self.interval = interval
        self.samples: deque[dict[str, Any]] = deque(maxlen=max_samples)
        self.edges: list[dict[str, Any]] = []
        self.dropped = 0
        self.scrubs: dict[str, str] = {}
        self.failed: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: Counters | None = None
        self._fio_pid: int | None = None
        self.vdevs = VdevSampler(self.pools, interval=interval)
        self._vdevs: dict[str, Any] | None = None
        self._ramp: float | None = None  # fio's ramp, seconds, until its job is seen and the edges planned
        self._edge_at: deque[float] = deque()  # the edges' planned times, monotonic

    def watch(self, pid: int, ramp_s: float | None = None) -> None:
        """Count the CPU time of process `pid` (fio) and its descendants as fio's from the next reading on,
        and what the other processes use beside it. With fio's `ramp_s` (a fio process of one job), also
        read the devices alone around when its measured window begins (`edges`): fio says when that was
        only in its logs, after it ends, and the layer table must count the devices from there
        (analysis/conditions.py); counted from the first once-a-second reading inside the window instead,
        fio's bytes before it were its first logged second's spread evenly over it, while on a slow CPU
        fio's rate changes several-fold within a second (a 1x layer read 0.94-1.08x of fio's bytes in
        the lab guests). The job's start is seen at the first reading after it forks, so a ramp longer
        than the interval gets its edges in time."""
        self._ramp = ramp_s if ramp_s is not None and ramp_s >= 0 else None
        self._fio_pid = pid

    def _reading(self) -> Counters:
        return Counters(self.devices, bool(self.pools) or os.path.exists(ARCSTATS), self._fio_pid)

    def _keep(self, now: Counters) -> None:
        if self._last is not None:
            if len(self.samples) == self.samples.maxlen:
                self.dropped += 1
            self.samples.append(sample_between(self._last, now))
        self._last = now
        if self._ramp is not None and now.processes.get("fio"):
            started = job_started(now.processes["fio"], now.fio_pid)
            if started is not None:
                self._plan_edges(started + self._ramp)

    def _plan_edges(self, at: float) -> None:
        """The edges' times, from fio's job's start plus its ramp (`at`, epoch seconds) on: each EDGE_STEP
        for EDGE_SPAN, from now on where the job was seen late."""
        self._ramp = None
        offset = time.monotonic() - time.time()
        steps = round(EDGE_SPAN / EDGE_STEP)
        self._edge_at.extend(t for t in (at + offset + i * EDGE_STEP for i in range(steps + 1))
                             if t >= time.monotonic())

    def _edge(self) -> None:
        """The devices' counters alone, now, as their change since the last reading (`from`): the analysis
        splits the sample it falls in there (analysis/conditions.split_at_start). Those whose time has
        passed meanwhile (a reading that took long) are one, this one."""
        self._edge_at.popleft()
        while self._edge_at and self._edge_at[0] <= time.monotonic():
            self._edge_at.popleft()
        last = self._last
        if last is None or not self.devices:
            return
        now = time.time()
        try:
            disks = read_diskstats(self.devices)
        except (ValueError, OSError):  # as a reading's: the run goes on without this edge
            return
        self.edges.append({"t": round(now, 3), "from": round(last.t, 3),
                           "disks": {name: _delta(counters, last.disks[name]) for name, counters in disks.items()
                                     if name in last.disks}})

    def start(self) -> "ConditionSampler":
        self.scrubs.update(scrub_state(self.pools))
        self._last = self._reading()
        self._thread = threading.Thread(target=self._loop, name="stackbench-conditions", daemon=True)
        self._thread.start()
        self.vdevs.start()  # last: nothing after it can fail and leave its process to no `stop`
        return self

    def _loop(self) -> None:
        next_at = time.monotonic() + self.interval
        try:
            while True:
                edge = self._edge_at[0] if self._edge_at else None
                wake = next_at if edge is None else min(edge, next_at)
                if self._stop.wait(max(0.0, wake - time.monotonic())):
                    break
                if edge is not None and edge < next_at:
                    self._edge()
                    continue
                self._keep(self._reading())
                next_at += self.interval
                if next_at < time.monotonic():  # a stall (suspend, a stopped process): sample on from now
                    next_at = time.monotonic() + self.interval
        except Exception as error:  # noqa: BLE001 - whatever a reading does, the run goes on without samples
            self.failed = f"{type(error).__name__}: {error}"[:200]

    def stop(self) -> dict[str, Any]:
        """End the thread (it wakes at once) and return what was sampled, a last partial second included."""
        self._stop.set()
        if self.vdevs.process is not None:  # first: its process ends whatever the rest does
            self._vdevs = self.vdevs.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
            if not self._thread.is_alive() and self.failed is None and self._last is not None:
                try:
                    if time.time() - self._last.t >= 0.05:
                        self._keep(self._reading())
                except Exception as error:  # noqa: BLE001 - as in the loop
                    self.failed = f"{type(error).__name__}: {error}"[:200]
            self._thread = None
            self.scrubs.update(scrub_state(self.pools))
        return self.result()

    def result(self) -> dict[str, Any]:
        return {
            "interval_s": self.interval,
            "devices": list(self.devices),
            "pools": list(self.pools),
            "samples": list(self.samples),
            "dropped": self.dropped,
            "scrubs": dict(self.scrubs),
            **({"vdevs": self._vdevs if self._vdevs is not None else self.vdevs.result()} if self.pools else {}),
            **({"edges": list(self.edges)} if self.edges else {}),
            **({"failed": self.failed} if self.failed else {}),
        }

    def __enter__(self) -> "ConditionSampler":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
