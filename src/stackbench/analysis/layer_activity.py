"""What every layer of the target's stack did during a cell: the layer table (docs/stack.md).

Each fio run's conditions summary (analysis/conditions.py) counts, per block device of the stack, the I/Os
it completed, its bytes per direction, the time its requests took and its busy time, over the seconds
wholly inside fio's measured window (`inside`), with fio's own bytes in those very seconds, from its
per-second logs (`inside.fio_bytes`: measure/telemetry.fio_timeline). A summary without them (written before
they were kept, or a job of a fio process that ran several) has fio's bytes prorated to the seconds at its
mean rate, which puts an uneven run's bytes in the wrong seconds (a 1x layer read 0.70-1.13x of them in the
lab guests), and names that in `not_recorded` (`PRORATED`). A cell's table sums those counts and seconds
over the cell's separate runs, and per layer, top down, gives what `iostat -x` would have: IOPS, MB/s
(10^6 bytes/s), the average request size, await (ms per completed I/O), utilisation (share of the seconds
with a request in flight) and the average queue; and the amplification: the bytes the layer moved in a
direction over the bytes fio moved in it (2x on each disk's sum under a mirror, > 1 for a journal's or
parity's writes, < 1 for merged or cached reads).

A pool's rows are `zpool iostat -v`'s (`VdevActivity`: the pool, its vdevs, their leaves), placed before the
first counted device under the pool, with IOPS, MB/s, the operation's size and the amplification; they have
no utilisation and are never the busiest. A leaf that is a block device counts what its disk counts (its
bytes are the partition's in /proc/diskstats: 1.00-1.01x in the lab guests), and a vdev's row is its leaves'
summed (OpenZFS's own rule), so those rows are the leaves' diskstats counts over the devices' own seconds
(`DISKSTATS`): read at the sampler's instants, exact however late any reader ran. Only a row with a leaf
that is no block device (a file vdev) takes `zpool iostat`'s reports (`ZPOOL_IOSTAT`, each run's `vdevs`
summary: rates over intervals timed by when their lines arrived, which a loaded machine delays), against
fio's bytes in those intervals, placed by its logs as the devices' are, else prorated (`PRORATED`).

A layer is saturated when its utilisation is `SATURATED_UTIL` % or more, or its in-flight queue grew over
the runs (`queue_growing`). The busiest layer named is where the saturated layers' time is spent: a
layer's busy time holds the time its requests wait on the layers under it, so every layer above a
saturated disk is busy too, and of a chain of saturated layers, each directly under the one before, the
lowest holds the others' time. The chain starts at the topmost saturated layer and ends above a layer that
is not saturated: a disk saturated under an idle layer is busy with something else (other processes' I/O
on a shared disk), not with the time of the layers above. And where a cgroup throttle held the run's
requests to the layer under the chain's end, that layer is named: the throttle holds a request before the
device counts it, so its counters show it idle while the layer above waits (docs/stack.md, "A throttled
layer"). Utilisation says a request was in flight, not that the device could take no more: a device that
serves requests in parallel (an SSD, a virtual disk) can be 100 % utilised below its limit, so the name
is a place to look, not a verdict.

Summaries written before a figure was kept lack it: the figure is then None and named in `not_recorded`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, Sequence

from stackbench.analysis.conditions import cell_conditions
from stackbench.model.results import Cell

SATURATED_UTIL = 90.0  # % of the window with a request in flight
QUEUE_RISE_MIN = 2.0  # requests the in-flight level must rise by over a run to count as growing
DIRECTIONS = ("read", "write")
DISKSTATS, ZPOOL_IOSTAT = "diskstats", "zpool iostat"  # a vdev row's source (VdevActivity.source)
VDEV_COUNTS = ("reads", "writes", "read_bytes", "write_bytes")  # a vdev row's counts, as a device's `inside` has them
PRORATED = "fio's bytes per second"  # not_recorded: the amplification took fio's bytes at its mean rate
# what the busiest layer is, in the words the layer table, the stack chart and docs/stack.md use for it
BUSIEST_MEANS = "where the saturated layers' time is spent"
BUSIEST_RULE = (f"busiest layer = {BUSIEST_MEANS}: the lowest of the saturated layers (util >= "
                f"{SATURATED_UTIL:.0f} % or queue growing) under the topmost one, or the cgroup-throttled device "
                "under it")


class Place(Protocol):
    """Where a sampled device sits in the stack (stack/layer.CountedLayer)."""

    device: str
    kind: str
    depth: int
    bottom: bool
    throttle: str | None
    pool: str | None


class VdevSpot(Protocol):
    """Where a row of `zpool iostat -v` sits in its pool (stack/layer.VdevPlace)."""

    pool: str
    name: str
    kind: str
    vdev_class: str | None
    level: int
    devices: tuple[str, ...]


@dataclass(frozen=True)
class LayerActivity:
    """One layer's figures over a cell's runs; None where the runs' summaries did not record them."""

    device: str
    kind: str  # the stack's kind of layer (loop, disk, md, ...), or "device" where the run saved no stack
    depth: int  # counted layers above it
    bottom: bool | None  # nothing counted under it; None where the run saved no stack
    seconds: float
    iops: float
    mb_per_s: float
    avg_request_bytes: float | None
    await_ms: float | None
    util_pct: float
    queue_depth: float | None  # the average number of requests in flight (iostat's aqu-sz)
    read_bytes: float | None
    write_bytes: float | None
    amplification: dict[str, float | None]  # per direction fio moved bytes in: layer bytes / fio's bytes
    queue_growing: bool | None
    saturated: bool
    throttle: str | None = None  # the cgroup throttle that held the run's requests to it, where the stack saw one

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device, "kind": self.kind, "depth": self.depth, "bottom": self.bottom,
            "seconds": self.seconds, "iops": self.iops, "mb_per_s": self.mb_per_s,
            "avg_request_bytes": self.avg_request_bytes, "await_ms": self.await_ms, "util_pct": self.util_pct,
            "queue_depth": self.queue_depth, "read_bytes": self.read_bytes, "write_bytes": self.write_bytes,
            "read_amplification": self.amplification.get("read"),
            "write_amplification": self.amplification.get("write"),
            "queue_growing": self.queue_growing, "saturated": self.saturated, "throttle": self.throttle,
        }


@dataclass(frozen=True)
class VdevActivity:
    """One row of `zpool iostat -v` over a cell's runs: the pool, a top-level vdev or a leaf, with its
    operations and bytes over the seconds counted (its leaves' block devices', or its zpool reports'). A
    vdev's row is the sum of its leaves' (a mirror's is both legs'), the pool's every vdev's but the cache's."""

    pool: str
    name: str  # as zpool iostat -vP prints it: tank, mirror-0, /dev/vdd1
    kind: str  # "pool", the vdev's type (mirror, raidz1, disk, ...), "leaf", or "vdev" where the run saved no stack
    vdev_class: str | None  # normal, special, dedup, logs, cache; None for the pool or without a stack
    level: int  # 0 the pool, 1 a top-level vdev, 2 a leaf under one
    depth: int  # for the table: the counted layers above the pool, plus `level`
    at: int  # where the pool's rows go in the cell's layers: before the first device under the pool
    seconds: float
    iops: float
    mb_per_s: float
    avg_request_bytes: float | None
    read_bytes: float
    write_bytes: float
    amplification: dict[str, float | None]  # per direction fio moved bytes in: the row's bytes / fio's
    source: str = DISKSTATS  # where its counts are from: its leaves' DISKSTATS, or ZPOOL_IOSTAT's reports

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool, "name": self.name, "kind": self.kind, "class": self.vdev_class, "level": self.level,
            "depth": self.depth, "seconds": self.seconds, "iops": self.iops, "mb_per_s": self.mb_per_s,
            "avg_request_bytes": self.avg_request_bytes, "read_bytes": self.read_bytes,
            "write_bytes": self.write_bytes, "read_amplification": self.amplification.get("read"),
            "write_amplification": self.amplification.get("write"), "source": self.source,
        }


@dataclass(frozen=True)
class CellLayers:
    """A cell's layer table: its layers top down, the amplification at the bottom of the stack (the sum
    over the layers nothing counted is under: both legs of a mirror), the busiest layer (where the
    saturated layers' time is spent), the ARC's hit ratio, and the figures its runs did not record."""

    runs: int
    layers: tuple[LayerActivity, ...]
    fio_bytes: dict[str, float] | None
    bottom_amplification: dict[str, float | None]
    busiest: str | None
    busiest_reason: str | None
    arc_hit_pct: float | None
    not_recorded: tuple[str, ...]
    vdevs: tuple[VdevActivity, ...] = ()

    @property
    def several_bottom(self) -> bool:
        """Whether more than one layer is at the bottom (both legs of a mirror): only then is their sum a
        figure of its own, beside each layer's."""
        return sum(1 for layer in self.layers if layer.bottom) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "layers": [layer.to_json() for layer in self.layers],
            "fio_read_bytes": (self.fio_bytes or {}).get("read"),
            "fio_write_bytes": (self.fio_bytes or {}).get("write"),
            "bottom_read_amplification": self.bottom_amplification.get("read"),
            "bottom_write_amplification": self.bottom_amplification.get("write"),
            "busiest": self.busiest,
            "busiest_reason": self.busiest_reason,
            "arc_hit_pct": self.arc_hit_pct,
            "not_recorded": list(self.not_recorded),
            "vdevs": [vdev.to_json() for vdev in self.vdevs],
        }


def cell_layers(cell: Cell, places: Sequence[Place] | None,
                vdev_places: Sequence[VdevSpot] | None = None) -> CellLayers | None:
    """The cell's layer table from its runs' summaries, the layers in the stack's order (`places`, None
    where the run saved no stack: the sampled devices' order, top down as well), and its pools' vdevs in
    `zpool iostat -v`'s (`vdev_places`); None where no run of the cell sampled a device or a vdev."""
    every = cell_conditions(cell)
    summaries = [s for s in every if isinstance(s.get("disks"), dict) and s["disks"]]
    pooled = [s for s in every if isinstance(s.get("vdevs"), dict) and s["vdevs"]]
    if not summaries and not pooled:
        return None
    where = {place.device: place for place in places or ()}
    names = [p.device for p in places or () if any(p.device in s["disks"] for s in summaries)]
    names += [n for s in summaries for n in s["disks"] if n not in names and n not in where]
    names = list(dict.fromkeys(names))
    missing: set[str] = set()
    fio = _fio_bytes(summaries, missing)
    # Without a saved stack the sampled devices' order is the only depth known (the probe's, top down)
    layers = tuple(_layer(name, where.get(name), 0 if places else index, summaries, missing)
                   for index, name in enumerate(names))
    busiest, reason = _busiest(layers)
    vdevs = _vdev_rows([s for s in every if s in summaries or s in pooled], layers,
                       {p.device: p.pool for p in places or ()}, vdev_places, missing)
    return CellLayers(
        runs=max(len(summaries), len(pooled)), layers=layers, fio_bytes=fio,
        bottom_amplification=_bottom(layers, summaries, fio) if places else {},
        busiest=busiest, busiest_reason=reason, arc_hit_pct=_arc_hit_pct(summaries or pooled),
        not_recorded=tuple(sorted(missing)),
        vdevs=vdevs,
    )


def _vdev_rows(summaries: list[dict[str, Any]], layers: tuple[LayerActivity, ...], pool_of: dict[str, str | None],
               places: Sequence[VdevSpot] | None, missing: set[str]) -> tuple[VdevActivity, ...]:
    """Each pool's `zpool iostat -v` rows over the runs that sampled them: in the stack's order (`places`;
    rows it does not name after them, a pool's own first), each pool's rows placed before the first
    counted device under it. A row whose leaves are block devices takes their /proc/diskstats counts in
    the seconds the devices' rows count (`_from_disks`); zpool's own reports only the others' (a file vdev,
    a run without a saved stack): their intervals are timed by when their lines arrived."""
    sampled: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any], float, Any]]] = {}
    reported: set[tuple[str, str]] = set()  # rows some run took from zpool's reports
    for summary in summaries:
        counted: set[tuple[str, str]] = set()
        for place in places or ():
            found = _from_disks(summary, place.devices)
            if found is not None:
                counted.add((place.pool, place.name))
                sampled.setdefault((place.pool, place.name), []).append((summary, *found))
        for pool, found in (summary.get("vdevs") or {}).items():
            if isinstance(found, dict) and isinstance(found.get("vdevs"), dict):
                for name, entry in found["vdevs"].items():
                    if isinstance(entry, dict) and (pool, name) not in counted:
                        reported.add((pool, name))
                        sampled.setdefault((pool, name), []).append(
                            (summary, entry, float(found.get("seconds") or 0.0), found.get("fio_bytes")))
    where = {(place.pool, place.name): place for place in places or ()}
    order = [key for key in where if key in sampled]
    order += sorted((key for key in sampled if key not in where), key=lambda key: key[1] != key[0])
    rows = []
    for pool in dict.fromkeys(key[0] for key in order):
        first = next((i for i, layer in enumerate(layers) if pool_of.get(layer.device) == pool), None)
        base, at = (layers[first].depth, first) if first is not None else (0, len(layers))
        for key in (key for key in order if key[0] == pool):
            place = where.get(key)
            level = place.level if place else (0 if key[1] == pool else 1)
            rows.append(replace(_vdev(key, sampled[key], place, level, base + level, at, missing),
                                source=ZPOOL_IOSTAT if key in reported else DISKSTATS))
    return tuple(rows)


def _from_disks(summary: dict[str, Any], devices: Sequence[str]) -> tuple[dict[str, float], float, Any] | None:
    """A vdev row's operations and bytes in one run as its leaves' block devices counted them, summed, over
    the seconds inside fio's window that every device's row counts (read at the sampler's own instants, so
    exact however late a reader ran), with fio's bytes in them; None where a device was not counted."""
    disks = summary.get("disks")
    inside = [((disks or {}).get(device) or {}).get("inside") for device in devices]
    if not devices or not all(isinstance(entry, dict) and all(key in entry for key in VDEV_COUNTS)
                              for entry in inside):  # a summary from before the bytes per direction were kept
        return None
    counts = {key: sum(float(entry.get(key) or 0) for entry in inside) for key in VDEV_COUNTS}
    return counts, float(inside[0].get("seconds") or 0.0), inside[0].get("fio_bytes")


def _vdev(key: tuple[str, str], runs: list[tuple[dict[str, Any], dict[str, Any], float, Any]],
          place: VdevSpot | None, level: int, depth: int, at: int, missing: set[str]) -> VdevActivity:
    """One `zpool iostat -v` row's figures over the runs that sampled it, against fio's bytes in the
    seconds its counts cover in each run (its leaves' devices' or its reports'): as fio's logs placed them
    where the run kept them (`fio_bytes`), else prorated at fio's mean rate (`PRORATED`)."""
    seconds = sum(run[2] for run in runs)
    span = seconds or 1.0
    ops = sum(float(entry.get("reads") or 0) + float(entry.get("writes") or 0) for _, entry, _, _ in runs)
    moved = {d: sum(float(entry.get(f"{d}_bytes") or 0) for _, entry, _, _ in runs) for d in DIRECTIONS}
    known = all(isinstance(summary.get("fio_bytes"), dict) for summary, _, _, _ in runs)
    timed = known and all(isinstance(placed, dict) for _, _, _, placed in runs)
    if known and not timed:
        missing.add(PRORATED)
    fio = {d: sum(float(placed.get(d, 0.0)) if timed else
                  float(summary["fio_bytes"].get(d, 0.0)) * covered / float(summary.get("seconds") or covered or 1.0)
                  for summary, _, covered, placed in runs) if known else 0.0 for d in DIRECTIONS}
    total = moved["read"] + moved["write"]
    return VdevActivity(
        pool=key[0], name=key[1], kind=place.kind if place else ("pool" if level == 0 else "vdev"),
        vdev_class=place.vdev_class if place else None, level=level, depth=depth, at=at,
        seconds=round(seconds, 2), iops=round(ops / span, 1), mb_per_s=round(total / span / 1e6, 3),
        avg_request_bytes=round(total / ops) if ops else None, read_bytes=moved["read"], write_bytes=moved["write"],
        amplification={d: round(moved[d] / fio[d], 3) if known and fio[d] > 0 else None
                       for d in DIRECTIONS if not known or fio[d] > 0},
    )


def _fio_bytes(summaries: list[dict[str, Any]], missing: set[str]) -> dict[str, float] | None:
    """What fio moved per direction over the runs, None where a run's summary did not keep it."""
    if not all(isinstance(s.get("fio_bytes"), dict) for s in summaries):
        missing.add("amplification")
        return None
    return {d: float(sum(s["fio_bytes"].get(d, 0.0) for s in summaries)) for d in DIRECTIONS}


def _run_figures(summary: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """One run's counts of a device over the seconds they cover, and fio's bytes over the same seconds
    (`timed`: as its logs placed them; else prorated at its mean rate); None for what the run's summary did
    not keep. A summary's `inside` counts the seconds wholly inside fio's window (analysis/conditions.py);
    an older one the window with its edges prorated, and nothing per direction."""
    window = float(summary.get("seconds") or 0.0)
    inside = entry.get("inside")
    fio = summary.get("fio_bytes")
    placed = inside.get("fio_bytes") if isinstance(inside, dict) else None
    if isinstance(inside, dict):
        seconds = float(inside.get("seconds") or 0.0)
        found: dict[str, Any] = {key: inside.get(key) for key in ("reads", "writes", "busy_ms", "io_ms", "queue_ms")}
        found |= {d: inside.get(f"{d}_bytes") for d in DIRECTIONS}
        found["bytes"] = sum(float(found[d] or 0.0) for d in DIRECTIONS)
    else:
        seconds = window
        found = {"reads": entry.get("reads"), "writes": entry.get("writes"), "bytes": entry.get("bytes"),
                 "busy_ms": float(entry.get("util") or 0.0) * 10 * seconds, "io_ms": None, "queue_ms": None,
                 "read": None, "write": None}
    share = seconds / window if window > 0 else 1.0
    found["timed"] = isinstance(fio, dict) and isinstance(placed, dict)
    if found["timed"]:
        found["fio"] = {d: float(placed.get(d, 0.0)) for d in DIRECTIONS}
    else:
        found["fio"] = {d: float(fio.get(d, 0.0)) * share for d in DIRECTIONS} if isinstance(fio, dict) else None
    found["seconds"] = seconds
    return found


def _total(runs: list[dict[str, Any]], key: str) -> float | None:
    """The key's sum over the runs, None where one run did not record it."""
    values = [run.get(key) for run in runs]
    return float(sum(values)) if values and all(isinstance(v, (int, float)) for v in values) else None


def _layer(name: str, place: Place | None, depth: int, summaries: list[dict[str, Any]],
           missing: set[str]) -> LayerActivity:
    """One device's figures over the runs that counted it."""
    entries = [s["disks"][name] for s in summaries if name in s["disks"]]
    runs = [_run_figures(s, s["disks"][name]) for s in summaries if name in s["disks"]]
    seconds = sum(run["seconds"] for run in runs)
    span = seconds or 1.0
    ios = float(sum((run["reads"] or 0) + (run["writes"] or 0) for run in runs))
    moved = float(sum(run["bytes"] or 0 for run in runs))
    io_ms, queue_ms = _total(runs, "io_ms"), _total(runs, "queue_ms")
    directed = {d: _total(runs, d) for d in DIRECTIONS}
    for key, value in (("await", io_ms), ("queue depth", queue_ms), ("bytes per direction", directed["write"])):
        if value is None:
            missing.add(key)
    util = min(100.0, sum(float(run["busy_ms"] or 0.0) for run in runs) / (10 * span))
    growing = _queue_growing(entries)
    if growing is None:
        missing.add("queue trend")
    known = all(run["fio"] is not None for run in runs)
    if known and not all(run["timed"] for run in runs):
        missing.add(PRORATED)
    fio = {d: sum(run["fio"][d] for run in runs) if known else 0.0 for d in DIRECTIONS}
    amplification = {d: round(directed[d] / fio[d], 3) if known and fio[d] > 0 and directed[d] is not None else None
                     for d in DIRECTIONS if not known or fio[d] > 0}
    return LayerActivity(
        device=name, kind=place.kind if place else "device", depth=place.depth if place else depth,
        bottom=place.bottom if place else None, seconds=round(seconds, 2), iops=round(ios / span, 1),
        mb_per_s=round(moved / span / 1e6, 3), avg_request_bytes=round(moved / ios) if ios else None,
        await_ms=round(io_ms / ios, 3) if io_ms is not None and ios else None, util_pct=round(util, 1),
        queue_depth=round(queue_ms / 1000 / span, 2) if queue_ms is not None else None,
        read_bytes=directed["read"], write_bytes=directed["write"], amplification=amplification,
        queue_growing=growing, saturated=util >= SATURATED_UTIL or bool(growing),
        throttle=place.throttle if place else None,
    )


def _queue_growing(entries: list[dict[str, Any]]) -> bool | None:
    """Whether the in-flight level rose over the runs: by `QUEUE_RISE_MIN` requests or more a run on
    average, and by at least half its mean level; None where a run did not record the trend."""
    trends = [e.get("in_flight") for e in entries]
    if not trends or not all(isinstance(t, dict) for t in trends):
        return None
    rise = sum(float(t.get("rise", 0.0)) for t in trends) / len(trends)
    level = sum(float(t.get("mean", 0.0)) for t in trends) / len(trends)
    return rise >= QUEUE_RISE_MIN and rise >= 0.5 * level


def _bottom(layers: tuple[LayerActivity, ...], summaries: list[dict[str, Any]],
            fio: dict[str, float] | None) -> dict[str, float | None]:
    """The bytes of the layers at the bottom of the stack together over fio's, per direction fio moved
    bytes in: what reached the media (each layer's amplification over the same seconds, summed). None where
    a bottom layer was not counted in every run or did not record it."""
    bottom = [layer for layer in layers if layer.bottom]
    if fio is None or not bottom:
        return {}
    counted = all(all(layer.device in s["disks"] for s in summaries) for layer in bottom)
    found: dict[str, float | None] = {}
    for direction in DIRECTIONS:
        if fio[direction] <= 0:
            continue
        values = [layer.amplification.get(direction) for layer in bottom]
        known = counted and all(v is not None for v in values)
        found[direction] = round(sum(v or 0.0 for v in values), 3) if known else None
    return found


def _busiest(layers: tuple[LayerActivity, ...]) -> tuple[str | None, str | None]:
    """Where the saturated layers' time is spent, and why: from the topmost saturated layer down through
    the saturated layers directly under it to the lowest of them (a stacked device's time in flight holds
    its backing device's: the saturation above is inherited), then the layer directly under that one if a
    cgroup throttle held the run's requests to it (the wait is before its counters: they show it idle)."""
    saturated = [layer for layer in layers if layer.saturated]
    if not saturated:
        return None, None
    chosen = min(saturated, key=lambda layer: (layer.depth, -layer.util_pct))
    while under := [layer for layer in saturated if layer.depth == chosen.depth + 1]:
        chosen = max(under, key=lambda layer: layer.util_pct)
    reasons = []
    if chosen.util_pct >= SATURATED_UTIL:
        reasons.append(f"utilisation {chosen.util_pct:.0f} %")
    if chosen.queue_growing:
        reasons.append("its queue grew")
    why = " and ".join(reasons)
    throttled = [layer for layer in layers if layer.depth == chosen.depth + 1 and layer.throttle]
    if throttled:
        return throttled[0].device, (f"a cgroup throttle, {throttled[0].throttle}, held the requests of "
                                     f"{chosen.device} above it ({why}) before its own counters saw them")
    return chosen.device, why + (f"; a cgroup throttle on it: {chosen.throttle}" if chosen.throttle else "")


def _arc_hit_pct(summaries: list[dict[str, Any]]) -> float | None:
    """The ARC's hits over its hits and misses in the runs that sampled it, in %."""
    hits = sum(float((s.get("arc") or {}).get("hits", 0.0)) for s in summaries)
    misses = sum(float((s.get("arc") or {}).get("misses", 0.0)) for s in summaries)
    return round(100 * hits / (hits + misses), 1) if hits + misses > 0 else None
