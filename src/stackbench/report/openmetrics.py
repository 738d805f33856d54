"""Stored runs as OpenMetrics text (Prometheus naming, base units): `GET /metrics` and
`stackbench export --openmetrics FILE` (docs/server.md, "Metrics").

Which runs: the latest complete run of every series (host, target, preset), by creation time. A run
that failed or was interrupted does not replace the last good one, so a dashboard keeps the last known
values and `stackbench_run_last_success_timestamp_seconds` tells how old they are. Every cell of the
chosen runs becomes one sample per metric, labelled host, target, preset, rw, bs (bytes), iodepth,
direction and cell (the workload key, which tells apart cells that differ in jobs, sync or direct).

Label values are user data (labels, targets, host names): they are escaped as the OpenMetrics text
format requires (backslash, double quote, newline), never trusted.
"""

from __future__ import annotations

from typing import Any, Iterable

from stackbench.model.results import Cell, Run

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
QUANTILES = (("0.5", "p50_ns"), ("0.99", "p99_ns"), ("0.999", "p999_ns"))


def run_host(run: Run) -> str:
    """The machine a run measured, from its facts ("" when the facts do not say, e.g. an imported file)."""
    system = (run.facts or {}).get("system")
    host = system.get("hostname") if isinstance(system, dict) else None
    return host if isinstance(host, str) else ""


def series_of(run: Run) -> tuple[str, str, str]:
    """(host, target, preset): the series a run belongs to."""
    return run_host(run), run.target or "", run.plan_name or ""


def latest_complete(runs: Iterable[Run]) -> list[Run]:
    """The newest complete run of each series, in series order (runs without cells are fine here)."""
    chosen: dict[tuple[str, str, str], Run] = {}
    for run in runs:
        if run.status != "complete":
            continue
        key = series_of(run)
        if key not in chosen or (run.created_at, run.id) > (chosen[key].created_at, chosen[key].id):
            chosen[key] = run
    return [chosen[key] for key in sorted(chosen)]


def escape_label(value: str) -> str:
    """A label value as the OpenMetrics text format writes it between double quotes."""
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, Any]]) -> str:
    return "{" + ",".join(f'{name}="{escape_label(str(value))}"' for name, value in pairs) + "}"


def _number(value: float) -> str:
    return repr(float(value))


def openmetrics_text(runs: Iterable[Run]) -> str:
    """The OpenMetrics exposition of `runs` (already chosen, with their cells), ending in `# EOF`."""
    families: dict[str, list[str]] = {name: [] for name in _FAMILIES}
    for run in runs:
        host, target, preset = series_of(run)
        series = (("host", host), ("target", target), ("preset", preset))
        families["stackbench_run"].append(
            "stackbench_run_info" + _labels((*series, ("run_id", run.id), ("label", run.label or ""),
                                             ("source", run.source))) + " 1")
        if run.finished_at is not None:
            families["stackbench_run_last_success_timestamp_seconds"].append(
                "stackbench_run_last_success_timestamp_seconds" + _labels(series)
                + " " + _number(run.finished_at.timestamp()))
        seen: set[tuple[str, str]] = set()
        for cell in run.cells:
            identity = (cell.workload.key, cell.result.direction + (cell.result.host or ""))
            if identity in seen:
                continue  # an imported file with two identical jobs: one series, the first job's values
            seen.add(identity)
            labels = _labels((*_cell_series(run, cell, series), *_cell_labels(cell)))
            families["stackbench_result_iops"].append(f"stackbench_result_iops{labels} {_number(cell.result.iops)}")
            families["stackbench_result_bytes_per_second"].append(
                f"stackbench_result_bytes_per_second{labels} {_number(cell.result.bw_bytes)}")
            clat = cell.result.clat
            for quantile, field in QUANTILES:
                value = getattr(clat, field) if clat else None
                if value is not None:
                    with_q = labels[:-1] + f',quantile="{quantile}"' + "}"
                    families["stackbench_result_latency_seconds"].append(
                        f"stackbench_result_latency_seconds{with_q} {_number(value / 1e9)}")
    lines: list[str] = []
    for name, (kind, unit, help_text) in _FAMILIES.items():
        lines.append(f"# TYPE {name} {kind}")
        if unit:
            lines.append(f"# UNIT {name} {unit}")
        lines.append(f"# HELP {name} {help_text}")
        lines.extend(families[name])
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _cell_series(run: Run, cell: Cell, series: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The run's series, with the cell's own host for a client/server fio output that names one."""
    if cell.result.host:
        return (("host", cell.result.host), *series[1:])
    return series


def _cell_labels(cell: Cell) -> tuple[tuple[str, Any], ...]:
    return (("rw", cell.workload.rw), ("bs", cell.workload.bs), ("iodepth", cell.workload.iodepth),
            ("direction", cell.result.direction), ("cell", cell.workload.key))


_FAMILIES: dict[str, tuple[str, str, str]] = {
    "stackbench_run": ("info", "", "The latest complete run of each host, target and preset."),
    "stackbench_run_last_success_timestamp_seconds": (
        "gauge", "seconds", "When the latest complete run of the series finished, in seconds since the epoch."),
    "stackbench_result_iops": ("gauge", "", "I/O operations per second of one cell of the latest complete run."),
    "stackbench_result_bytes_per_second": (
        "gauge", "bytes_per_second", "Bandwidth of one cell of the latest complete run, in bytes per second."),
    "stackbench_result_latency_seconds": (
        "summary", "seconds", "Completion latency percentiles of one cell of the latest complete run, in seconds."),
}
