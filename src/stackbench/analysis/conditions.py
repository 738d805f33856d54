"""Was the machine quiet while a cell ran? One fio run's conditions summed up, and the warnings they call for.

probe/conditions.py samples the machine once a second around every fio run; this reduces the seconds of
fio's measured window (its runtime, ending when fio wrote its output) to one summary per run, stored with
the run's replicate (`measurement.replicates[].conditions`, docs/json.md), and says which cells ran
disturbed:

- CPU pressure (PSI `some`: time in which a runnable task waited for a CPU) above `PRESSURE_LIMIT` percent
  while processes other than fio's, stackbench's and the kernel's threads used at least `OTHER_CPU_LIMIT`
  CPUs: pressure alone is not someone else's doing, as fio's own threads wait for a CPU at every
  completion (13-19 % on an idle two-core VM). Runs recorded before the sampler counted processes' CPU time are judged on pressure alone.
- Memory pressure above `PRESSURE_LIMIT`, or CPU steal above `STEAL_LIMIT`. I/O pressure is recorded but
  never judged: fio waiting for its own I/O is I/O pressure. Without PSI, more runnable tasks than CPUs
  stands in for CPU pressure, under the same condition on the other processes' CPU time.
- A ZFS scrub or resilver running on the target's pool.
- I/O on the target's device that fio did not do above `FOREIGN_LIMIT` of fio's own bytes: the device's
  counted sectors in the window minus fio's bytes. The file system's own writes (journal, metadata) count
  as foreign too, so the limit is generous; between two runs of the same workload they cancel out.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any, Iterable, Sequence

from stackbench.base.units import count, format_bytes
from stackbench.model.results import Cell
from stackbench.model.warning import Warning, WarningCode

PRESSURE_LIMIT = 10.0  # % of the window with a task stalled on CPU or memory
OTHER_CPU_LIMIT = 0.25  # CPUs' worth of time used by processes other than fio's and stackbench's
STEAL_LIMIT = 5.0  # % of CPU time the hypervisor gave to other guests
FOREIGN_LIMIT = 0.25  # device bytes fio did not move, as a share of the bytes it did
SECTOR = 512
VDEV_FIELDS = ("reads", "writes", "read_bytes", "write_bytes")  # as probe/vdev_iostat.FIELDS
SNAP_S = 0.025  # a reading this close to fio's window's start counts as at it (the edges are 25 ms apart)
GAUGES = ("in_flight",)  # a device counter that is a level, not a count (probe/conditions.py): never subtracted

# When fio moved its bytes: per direction, (start, end, bytes) spans of epoch seconds that tile its measured
# window, one a second of its per-second logs (measure/telemetry.fio_timeline)
FioTimeline = dict[str, list[tuple[float, float, float]]]


def fio_window(end_s: float | None, runtime_s: float) -> tuple[float, float] | None:
    """fio's measured window in epoch seconds: its runtime, ending when it wrote its output."""
    if end_s is None or runtime_s <= 0:
        return None
    return end_s - runtime_s, end_s


def _overlap(sample: dict[str, Any], window: tuple[float, float] | None) -> float:
    """The part of the sample's second inside the window (1 for every sample without a window)."""
    t, dt = float(sample.get("t", 0.0)), float(sample.get("dt", 1.0)) or 1.0
    if window is None:
        return 1.0
    start, end = window
    return max(0.0, min(t, end) - max(t - dt, start)) / dt


def _mean(pairs: Iterable[tuple[float, float]]) -> float | None:
    pairs = [(v, w) for v, w in pairs if w > 0]
    total = sum(w for _, w in pairs)
    return round(sum(v * w for v, w in pairs) / total, 2) if total > 0 else None


def summarize(conditions: dict[str, Any], window: tuple[float, float] | None, *, fio_bytes: float,
              foreign_on: str | None = None, cpus: int | None = None,
              fio_moved: dict[str, float] | None = None, idle_after: bool = False,
              timeline: FioTimeline | None = None) -> dict[str, Any]:
    """One fio run's conditions: mean and peak stall and CPU shares, the clock, memory levels, each sampled
    device's traffic (per direction, with the time its requests took and its in-flight level: what the
    layer table of analysis/layer_activity.py reads) and the part of the traffic of `foreign_on` (the
    device under the target's file system, None where none carries fio's bytes one for one) that fio did
    not do, what fio itself moved per direction (`fio_moved`), the ARC's hits and misses, each pool's vdevs
    (`zpool iostat`'s reports: `_vdevs`), scrubs, and what could not be read. With `idle_after`, fio moved
    nothing after its window (one fio run of one job: it only tears down), so the second that holds the
    window's end counts as inside it (`_kept_seconds`). With fio's `timeline`, each device's `inside` keeps
    fio's bytes in the very seconds it counts (`fio_bytes`), and the foreign I/O is reckoned against them:
    fio's rate from second to second, not its mean."""
    samples = conditions.get("samples") or []
    if window is not None:
        edges = conditions.get("edges") or []
        window = (counting_start(samples, edges, window[0]), window[1])
        samples = split_at_start(samples, edges, window[0])
    weighted = [(s, _overlap(s, window)) for s in samples]
    weighted = [(s, w) for s, w in weighted if w > 0]
    summary: dict[str, Any] = {"seconds": round(sum(float(s.get("dt", 1.0)) * w for s, w in weighted), 2)}
    summary.update(_machine(weighted))
    devices = conditions.get("devices") or []
    if devices:
        disks = {name: _disk(name, weighted, summary["seconds"] or 1.0, window, idle_after, timeline)
                 for name in devices}
        disks = {name: disk for name, disk in disks.items() if disk is not None}
        if disks:
            summary["disks"] = disks
        target = disks.get(foreign_on) if foreign_on else None
        if target is not None and fio_bytes > 0:
            device_bytes, fio_share = (_inside(weighted, foreign_on, window, fio_bytes, idle_after, timeline)
                                       or (target["bytes"], fio_bytes))
            foreign = max(0.0, device_bytes - fio_share)
            summary["foreign"] = {"device": foreign_on, "bytes": round(foreign),
                                  "share": round(foreign / fio_share, 3)}
    if fio_moved:
        summary["fio_bytes"] = {direction: round(moved) for direction, moved in fio_moved.items()}
    arc = {key: sum((s.get("arc") or {}).get(key, 0.0) * w for s, w in weighted) for key in ("hits", "misses")}
    if any("arc" in s for s, _ in weighted):
        summary["arc"] = {key: round(value) for key, value in arc.items()}
    if vdevs := _vdevs(conditions.get("vdevs"), window, idle_after, timeline):
        summary["vdevs"] = vdevs
    if conditions.get("scrubs"):
        summary["scrubs"] = dict(conditions["scrubs"])
    unavailable = sorted({name for s, _ in weighted for name in s.get("unavailable") or ()})
    unavailable += _vdev_sampler_said(conditions)
    if conditions.get("failed"):
        unavailable.append("sampler")
    if not weighted:
        unavailable.append("samples")
    if unavailable:
        summary["unavailable"] = unavailable
    if cpus:
        summary["cpus"] = cpus
    return summary


def _machine(weighted: list[tuple[dict[str, Any], float]]) -> dict[str, Any]:
    """The machine's side of the window's seconds: stall, CPU by kind and by whom, run queue, load, clock
    and direct reclaim, each weighted by its second's part in the window."""
    machine: dict[str, Any] = {}
    pressure: dict[str, Any] = {}
    for key in ("cpu", "io", "memory"):
        values = [(s["psi"][key], w) for s, w in weighted if key in (s.get("psi") or {})]
        if values:
            pressure[key] = _mean(values)
            pressure[f"{key}_max"] = max(v for v, _ in values)
    if pressure:
        machine["pressure"] = pressure
    cpu = {key: _mean((s["cpu"][key], w) for s, w in weighted if key in (s.get("cpu") or {}))
           for key in ("user", "system", "iowait", "steal")}
    if any(v is not None for v in cpu.values()):
        machine["cpu"] = cpu
    procs = {key: _mean((s["procs"][key], w) for s, w in weighted if key in (s.get("procs") or {}))
             for key in ("fio", "own", "kernel", "other")}
    if any(v is not None for v in procs.values()):
        machine["procs"] = procs
    running = [s["running"] for s, _ in weighted if "running" in s]
    if running:
        machine["running_max"] = max(running)
    loads = [s["load1"] for s, _ in weighted if "load1" in s]
    if loads:
        machine["load_max"] = max(loads)
    freqs = [s["freq_mhz"] for s, _ in weighted if "freq_mhz" in s]
    if freqs:
        machine["freq_mhz"] = {"min": min(freqs), "mean": round(sum(freqs) / len(freqs), 1)}
    reclaim = sum((s.get("vm") or {}).get(k, 0.0) * w for s, w in weighted for k in ("pgscan_direct",))
    if any("vm" in s for s, _ in weighted):
        machine["direct_reclaim_pages"] = round(reclaim)
    return machine


def _vdev_sampler_said(conditions: dict[str, Any]) -> list[str]:
    """What the vdev sampler itself could not read (no zpool, zpool iostat failing)."""
    sampled = conditions.get("vdevs")
    return [str(why) for why in sampled.get("unavailable") or ()] if isinstance(sampled, dict) else []


def counting_start(samples: list[dict[str, Any]], edges: list[dict[str, Any]], start: float) -> float:
    """Where the devices are counted from: the sampler's reading nearest fio's window's `start` (an edge, or
    a once-a-second reading's start or end) when one is within `SNAP_S` on either side, else `start`. A
    reading just before the start counts a few ms of the ramp's I/O (fio's timeline has none of its bytes
    there); taking only readings at or after it, a guest whose sampler thread was inside a slow reading as the
    window began had an edge 15 ms before the start, a second's reading 2 ms before it, and its first edge
    after it 418 ms late, and its zvol read 1.092x of fio's bytes (fio's first second spread evenly over
    the 418 ms, while its rate changed several-fold in it); counted from the reading 2 ms before, within 1 %."""
    readings = [float(e["t"]) for e in edges if isinstance(e, dict) and "t" in e]
    for sample in samples:
        t = float(sample.get("t", 0.0))
        readings += [t - float(sample.get("dt", 1.0)), t]
    near = min(readings, key=lambda r: abs(r - start), default=start)
    return near if abs(near - start) <= SNAP_S else start


def split_at_start(samples: list[dict[str, Any]], edges: list[dict[str, Any]], start: float) -> list[dict[str, Any]]:
    """The samples with the one that holds fio's window's `start` split at the first of the sampler's
    `edges` (its readings of the devices alone as fio's ramp ended: probe/conditions.ConditionSampler.watch)
    at or after it: the part from there is wholly inside the window, so the devices are counted from within
    a few ms of its start, and only that sliver of fio's first logged second is taken at its mean rate, not
    the part-second up to the next once-a-second reading (in which fio's rate on the guests' emulated CPU
    changed several-fold). The part before the edge has the devices' counts alone; the other figures (CPU,
    pressure, memory) stay with the part after it, read at the sample's end as they were. Unchanged where
    no edge falls in a sample whose start is the edge's reading before it (a dropped second)."""
    after = [edge for edge in edges if isinstance(edge, dict) and float(edge.get("t", 0.0)) >= start]
    if not after:
        return samples
    edge = min(after, key=lambda e: float(e["t"]))
    at, since = float(edge["t"]), float(edge.get("from", 0.0))
    for index, sample in enumerate(samples):
        t, dt = float(sample.get("t", 0.0)), float(sample.get("dt", 1.0))
        if t - dt - 0.005 <= at < t and abs(t - dt - since) <= 0.005:
            counted = edge.get("disks") or {}
            before = {"t": at, "dt": round(at - since, 3), "disks": counted}
            rest = {name: {key: (value if key in GAUGES else value - (counted.get(name) or {}).get(key, 0.0))
                           for key, value in disk.items()} for name, disk in (sample.get("disks") or {}).items()}
            return [*samples[:index], before, {**sample, "dt": round(t - at, 3), "disks": rest}, *samples[index + 1:]]
    return samples


def _kept(weighted: list[tuple[dict[str, Any], float]], device: str, window: tuple[float, float] | None,
          idle_after: bool) -> tuple[list[dict[str, Any]], float, list[tuple[float, float]]]:
    """The device's counters of the seconds that count as inside fio's window, how much of the window
    they cover, and those seconds' spans of epoch time (`_kept_seconds`)."""
    seconds, covered, spans = _kept_seconds([(s, w) for s, w in weighted if device in (s.get("disks") or {})],
                                            window, idle_after)
    return [s["disks"][device] for s in seconds], covered, spans


def _kept_seconds(weighted: list[tuple[dict[str, Any], float]], window: tuple[float, float] | None,
                  idle_after: bool) -> tuple[list[dict[str, Any]], float, list[tuple[float, float]]]:
    """The seconds that count as inside fio's window, how much of the window they cover, and their spans of
    epoch time: each second wholly inside it, and with `idle_after` the second that holds its end, whole,
    for its part inside (after fio's end it moved nothing, so what a device did then was fio's last I/O or
    nothing; prorated, that second read as fewer bytes at the layer than fio moved, most in a short run
    whose whole seconds cover less than half its window)."""
    kept: list[dict[str, Any]] = []
    spans: list[tuple[float, float]] = []
    covered = 0.0
    for sample, weight in weighted:
        t, dt = float(sample.get("t", 0.0)), float(sample.get("dt", 1.0))
        if weight >= 0.999:
            kept.append(sample)
            covered += dt
        elif idle_after and window is not None and t >= window[1] and t - dt >= window[0]:
            kept.append(sample)
            covered += weight * dt
        else:
            continue
        spans.append((t - dt, t))
    return kept, covered, spans


def _fio_within(timeline: FioTimeline, spans: list[tuple[float, float]]) -> dict[str, float]:
    """fio's bytes per direction in these spans of time: each second of its timeline prorated by its part in
    them, so a steady rate is assumed within a second of fio's logs, never across them. Each second of fio's
    is set against the spans that can meet it (`_Spans.meeting`), not every span: a run of hours has as many
    seconds of each, and every pair would cost minutes; the terms left out are the 0.0 of spans that do not
    meet it, so the sum is the same."""
    within = _Spans(spans)
    return {direction: sum(moved * max(0.0, min(end, stop) - max(start, begin)) / (end - start)
                           for start, end, moved in pieces if end > start
                           for begin, stop in within.meeting(start, end))
            for direction, pieces in timeline.items()}


class _Spans:
    """Spans of time, found by where they end: the sampler's seconds, in order."""

    def __init__(self, spans: list[tuple[float, float]]) -> None:
        self.spans = spans
        self.stops = [stop for _, stop in spans]
        self.ordered = all(earlier <= later for earlier, later in zip(self.stops, self.stops[1:]))
        # a span begins no earlier than its end less the longest span; a second more against rounding
        self.reach = max((stop - begin for begin, stop in spans), default=0.0) + 1.0

    def meeting(self, start: float, end: float) -> list[tuple[float, float]]:
        """The spans, in order, that may overlap [start, end]: from the first that ends after `start` to the
        last that ends before `end` plus the longest span; all of them where their ends are not in order."""
        if not self.ordered:
            return self.spans
        first = bisect_right(self.stops, start)
        return self.spans[first:bisect_left(self.stops, end + self.reach, lo=first)]


def _clipped(samples: Iterable[dict[str, Any]], window: tuple[float, float] | None) -> list[tuple[float, float]]:
    """Each sample's span of epoch time cut to fio's window: its part inside, as a prorated count weighs it."""
    spans = []
    for sample in samples:
        t, dt = float(sample.get("t", 0.0)), float(sample.get("dt", 1.0))
        spans.append((max(t - dt, window[0]), min(t, window[1])) if window is not None else (t - dt, t))
    return spans


def _vdevs(sampled: Any, window: tuple[float, float] | None, idle_after: bool,
           timeline: FioTimeline | None = None) -> dict[str, Any]:
    """Each pool's vdevs over fio's window from `zpool iostat`'s reports (probe/vdev_iostat.py: rates per
    second over each report's own interval, which is not the sampler's second): per vdev the operations and
    bytes per direction over the reports wholly inside the window (as `_kept_seconds`), or, where those
    cover less than half of it, over every report prorated by its part inside; with the vdevs a report
    could not read, and why. With fio's `timeline`, `fio_bytes`: what fio moved in those very intervals
    (as a device's `inside` has it), which the vdev rows' amplification divides by."""
    if not isinstance(sampled, dict):
        return {}
    reports = [s for s in sampled.get("samples") or () if isinstance(s, dict) and isinstance(s.get("vdevs"), dict)]
    found: dict[str, Any] = {}
    for pool in sampled.get("pools") or ():
        weighted = [(s, _overlap(s, window)) for s in reports if s.get("pool") == pool]
        weighted = [(s, w) for s, w in weighted if w > 0]
        if not weighted:
            continue
        kept, covered, spans = _kept_seconds(weighted, window, idle_after)
        if window is not None and covered >= 0.5 * (window[1] - window[0]) > 0:
            counted = [(s, 1.0) for s in kept]
        else:
            counted, covered = weighted, sum(float(s.get("dt", 1.0)) * w for s, w in weighted)
            spans = _clipped((s for s, _ in weighted), window)
        vdevs: dict[str, dict[str, float]] = {}
        missing: dict[str, str] = {}
        for report, weight in counted:
            span = float(report.get("dt", 1.0)) * weight
            for name, rates in report["vdevs"].items():
                totals = vdevs.setdefault(str(name), dict.fromkeys(VDEV_FIELDS, 0.0))
                for key, rate in zip(VDEV_FIELDS, rates if isinstance(rates, list) else ()):
                    totals[key] += float(rate) * span if isinstance(rate, (int, float)) else 0.0
            for name, reason in (report.get("unavailable") or {}).items():
                missing.setdefault(str(name), str(reason))
        fio = ({"fio_bytes": {d: round(moved) for d, moved in _fio_within(timeline, spans).items()}}
               if timeline is not None and window is not None else {})
        found[str(pool)] = {"seconds": round(covered, 3),
                            "vdevs": {name: {k: round(v) for k, v in totals.items()} for name, totals in vdevs.items()},
                            **fio, **({"unavailable": missing} if missing else {})}
    return found


def _disk(name: str, weighted: list[tuple[dict[str, Any], float]], span: float,
          window: tuple[float, float] | None, idle_after: bool = False,
          timeline: FioTimeline | None = None) -> dict[str, Any] | None:
    """One device's traffic over the window, None where no second counted it; and `inside`, what the
    layer table reads: the same over the seconds wholly inside the window where they cover half of it or
    more. A second that straddles the window's edge, prorated, undercounts a device that was idle in the
    part outside it (7 % of a 3-second window of writes on a loop device), which reads as fewer bytes at
    the layer than fio moved. With fio's `timeline`, `inside` has fio's bytes in those same seconds."""
    seen = [((s.get("disks") or {})[name], w) for s, w in weighted if name in (s.get("disks") or {})]
    if not seen:
        return None
    counted = _counted(seen)
    inside, covered, spans = _kept(weighted, name, window, idle_after)
    whole = window is not None and covered >= 0.5 * (window[1] - window[0]) > 0
    kept = _counted([(disk, 1.0) for disk in inside]) if whole else counted
    if not whole and window is not None:  # each second's part inside the window, as `counted` weighs them
        spans = _clipped((s for s, _ in weighted if name in (s.get("disks") or {})), window)
    fio = ({"fio_bytes": {d: round(moved) for d, moved in _fio_within(timeline, spans).items()}}
           if timeline is not None and window is not None else {})
    return {
        "reads": round(counted["reads"]), "writes": round(counted["writes"]),
        "bytes": round((counted["read_sectors"] + counted["write_sectors"]) * SECTOR),
        "util": round(min(100.0, counted["busy_ms"] / (10 * span)), 1),
        "inside": {
            "seconds": round(covered if whole else span, 3), "reads": round(kept["reads"]),
            "writes": round(kept["writes"]), "read_bytes": round(kept["read_sectors"] * SECTOR),
            "write_bytes": round(kept["write_sectors"] * SECTOR), "busy_ms": round(kept["busy_ms"], 1),
            "io_ms": round(kept["read_ms"] + kept["write_ms"], 1), "queue_ms": round(kept["queue_ms"], 1),
            **fio,
        },
        **_in_flight([(s, (s.get("disks") or {})[name]) for s, w in weighted if w >= 0.5
                      and name in (s.get("disks") or {})]),
    }


def _counted(seen: list[tuple[dict[str, Any], float]]) -> dict[str, float]:
    """The counters' sums over these seconds, each weighted by its part inside the window."""
    return {k: sum(d.get(k, 0.0) * w for d, w in seen) for k in
            ("reads", "writes", "read_sectors", "write_sectors", "busy_ms", "read_ms", "write_ms", "queue_ms")}


def _queue_level(sample: dict[str, Any], disk: dict[str, Any]) -> float:
    """A second's average requests in flight: time in queue (ms) over the second's length, else the gauge."""
    dt = float(sample.get("dt", 1.0))
    if "queue_ms" in disk and dt > 0:
        return float(disk["queue_ms"]) / (1000.0 * dt)
    return float(disk["in_flight"])


def _in_flight(levels: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """The device's queue over the window: each second's average number of requests in flight (its
    time-weighted time in queue over the second, iostat's aqu-sz; the in-flight gauge read at the second's
    end where a run did not keep that), their mean and the rise of their least-squares line from the
    window's first second to its last, from three seconds on; a queue that keeps growing is a layer taking
    requests faster than it completes them. Not the gauge: read once a second it is one instant, and under a
    device fed in bursts (dm-delay hands its held requests on together) it read 0, 0, 16 over three seconds
    of a steady 16-deep run in a lab guest, a "growing" queue on a loop device 2.5 % utilised."""
    points = [(float(s.get("t", 0.0)), _queue_level(s, d)) for s, d in levels if "queue_ms" in d or "in_flight" in d]
    if len(points) < 3:
        return {}
    mean_t = sum(t for t, _ in points) / len(points)
    mean = sum(v for _, v in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    slope = sum((t - mean_t) * (v - mean) for t, v in points) / spread if spread > 0 else 0.0
    return {"in_flight": {"mean": round(mean, 2), "rise": round(slope * (points[-1][0] - points[0][0]), 2)}}


def _inside(weighted: list[tuple[dict[str, Any], float]], device: str, window: tuple[float, float] | None,
            fio_bytes: float, idle_after: bool = False,
            timeline: FioTimeline | None = None) -> tuple[float, float] | None:
    """The device's bytes in the seconds wholly inside fio's window, with fio's bytes in them (from its
    `timeline`, else prorated at its mean rate); None when those seconds cover less than half the window. A
    second that straddles the window's start holds part of what came before it (the file's layout, the
    ramp), which spread over that second would pass for I/O fio did not do."""
    if window is None or window[1] <= window[0]:
        return None
    inside, covered, spans = _kept(weighted, device, window, idle_after)
    length = window[1] - window[0]
    if covered < 0.5 * length:
        return None
    moved = sum((disk.get("read_sectors", 0.0) + disk.get("write_sectors", 0.0)) * SECTOR for disk in inside)
    if timeline is not None:
        return moved, sum(_fio_within(timeline, spans).values())
    return moved, fio_bytes * min(1.0, covered / length)


def disturbances(summary: dict[str, Any]) -> list[str]:
    """What in one run's conditions makes its result partly the machine's doing, as short phrases."""
    found = []
    pressure = summary.get("pressure") or {}
    other = (summary.get("procs") or {}).get("other")
    if (pressure.get("cpu") or 0.0) >= PRESSURE_LIMIT:
        if other is None:
            found.append(f"CPU pressure {pressure['cpu']:.0f} %")
        elif other >= OTHER_CPU_LIMIT:
            found.append(f"CPU pressure {pressure['cpu']:.0f} % while other processes used {other:.1f} CPUs")
    if (pressure.get("memory") or 0.0) >= PRESSURE_LIMIT:
        found.append(f"memory pressure {pressure['memory']:.0f} %")
    crowded = (summary.get("running_max") or 0) > (summary.get("cpus") or float("inf")) + 1
    if not pressure and crowded and (other is None or other >= OTHER_CPU_LIMIT):  # fio's own tasks are runnable too
        found.append(f"{summary['running_max']:.0f} runnable tasks on {summary['cpus']} CPUs")
    steal = (summary.get("cpu") or {}).get("steal") or 0.0
    if steal >= STEAL_LIMIT:
        found.append(f"CPU steal {steal:.0f} %")
    for pool, scan in sorted((summary.get("scrubs") or {}).items()):
        found.append(f"{'a resilver' if 'resilver' in scan else 'a scrub'} on {pool}")
    foreign = summary.get("foreign") or {}
    if (foreign.get("share") or 0.0) >= FOREIGN_LIMIT:
        found.append(f"I/O fio did not do on {foreign['device']} ({format_bytes(foreign['bytes'])}, "
                     f"{100 * foreign['share']:.0f} % of fio's)")
    return found


def cell_conditions(cell: Cell) -> list[dict[str, Any]]:
    """The conditions summaries of a cell's separate runs, where they were recorded."""
    replicates = (cell.measurement or {}).get("replicates") or []
    return [r["conditions"] for r in replicates if isinstance(r, dict) and isinstance(r.get("conditions"), dict)]


NAMED_CELLS = 4  # past this many disturbed cells the warning names the worst 3 and counts the rest


def disturbance_warnings(cells: Sequence[Cell]) -> list[Warning]:
    """One DISTURBED warning for the run, naming every cell whose runs ran disturbed and, per kind of
    disturbance, the worst run's figures; past NAMED_CELLS cells, their number and the worst three (a busy
    machine disturbs most cells of a run, and 28 cells' figures made one warning of 2,000 characters)."""
    worst: dict[str, dict[str, str]] = {}
    runs: dict[str, int] = {}
    for cell in cells:
        for summary in cell_conditions(cell):
            found = disturbances(summary)
            if found:
                kinds = worst.setdefault(cell.pattern, {})
                for phrase in found:
                    kind = phrase.split(" (")[0] if "(" in phrase else re.sub(r"[\d.]+", "#", phrase)
                    if kind not in kinds or _size(phrase) > _size(kinds[kind]):
                        kinds[kind] = phrase
                runs[cell.pattern] = runs.get(cell.pattern, 0) + 1
    if not worst:
        return []
    parts = {pattern: f"{pattern} ({count(runs[pattern], 'run')}: {', '.join(kinds.values())})"
             for pattern, kinds in worst.items()}
    if len(worst) <= NAMED_CELLS:
        subject, said = ", ".join(worst), "during these cells: " + "; ".join(parts.values())
    else:  # a busy machine disturbs most cells: the count and the worst few, not a paragraph per cell
        first = sorted(worst, key=lambda p: -max(_size(phrase) for phrase in worst[p].values()))[:NAMED_CELLS - 1]
        subject = f"{len(worst)} of {count(len(cells), 'cell')}"
        said = (f"in {count(sum(runs.values()), 'run')}; the worst: "
                + "; ".join(parts[p] for p in first) + f"; and {count(len(worst) - len(first), 'more cell')}")
    return [Warning(
        WarningCode.DISTURBED, subject,
        "the machine was busy with something else " + said
        + " (`stackbench show RUN --json`: measurement.replicates[].conditions)",
        "measure on a quiet machine, or compare both configurations in one `stackbench ab` session, whose "
        "rounds pair them in time",
    )]


def _size(phrase: str) -> float:
    """The figure a disturbance phrase leads with (a pressure's percent, a share of fio's bytes)."""
    numbers = re.findall(r"(\d+(?:\.\d+)?) %", phrase)
    return float(numbers[-1]) if numbers else 0.0
