"""The list of what is stored (`stackbench runs`): runs, smallblocks scans, audits and tune sessions, newest
first, each marked with its kind. On the terminal and in Markdown short ids and local times, in CSV full ids
and UTC times a script can join on, in JSON the fields of docs/json.md (runs under `runs` as before, scans,
audits and tune sessions under their own keys, so a script that reads runs sees only runs)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from stackbench.base import units
from stackbench.report.document import Report
from stackbench.report.tabular import Tabular
from stackbench.model.results import Run

STATUS_STYLES = {"complete": "green", "incomplete": "yellow", "partial": "yellow", "clean": "green",
                 "info": "cyan", "warn": "yellow", "completed": "green",
                 "interrupted": "yellow"}  # any other status (failed, abandoned, err, crit): red
SEVERITIES = ("crit", "err", "warn", "info")


def runs_report(rows: Sequence[tuple[Run, int]], scans: Sequence[Any] = (), audits: Sequence[Any] = (),
                limit: int | None = None, tunes: Sequence[Any] = ()) -> Report:
    """`rows`: each run with its number of stored cells, newest first, as the store lists them; `scans`,
    `audits` and `tunes` the store's `StoredScan`s, `StoredAudit`s and `StoredTuneSession`s. Together at most
    `limit` items, newest first."""
    items = sorted(
        [("run", run.created_at, (run, count)) for run, count in rows]
        + [("scan", scan.created_at, scan) for scan in scans]
        + [("audit", audit.created_at, audit) for audit in audits]
        + [("tune", tune.created_at, tune) for tune in tunes],
        key=lambda item: item[1], reverse=True,
    )[:limit]
    kept_runs = [value for kind, _, value in items if kind == "run"]
    kept_scans = [value for kind, _, value in items if kind == "scan"]
    kept_audits = [value for kind, _, value in items if kind == "audit"]
    kept_tunes = [value for kind, _, value in items if kind == "tune"]
    data = {**runs_json(kept_runs), "scans": [scan_json(s) for s in kept_scans],
            "audits": [audit_json(a) for a in kept_audits], "tunes": [tune_json(t) for t in kept_tunes]}
    return Report(tables=(_terminal_table(items),), data=data, csv_tables=(_export_table(items),))


def _terminal_row(kind: str, value: Any) -> list[str]:
    if kind == "run":
        run, count = value
        return [run.id[:12], kind, _local(run.created_at), run.label or "", run.status,
                f"{count}" if run.planned_cells is None else f"{count}/{run.planned_cells}",
                run.plan_name or run.source, run.target or ""]
    if kind == "scan":
        return [value.id[:12], kind, _local(value.created_at), value.label or "", value.status,
                units.count(value.files, "file"), "smallblocks", ", ".join(value.paths)]
    if kind == "tune":
        return [value.id[:12], kind, _local(value.created_at), value.label or "", value.status,
                units.count(value.knobs, "knob"), f"tune ({value.kept} kept)", value.target or ""]
    return [value.id[:12], kind, _local(value.created_at), value.label or "", audit_status(value),
            units.count(value.findings_count, "finding"), "audit",
            value.subject_name or "unknown subject"]


def _terminal_table(items: Sequence[tuple[str, datetime, Any]]) -> Tabular:
    """Count: a run's stored/planned cells, a scan's files, an audit's findings, a tune session's knobs."""
    headers = ["ID", "Kind", "Created", "Label", "Status", "Count", "Plan", "Target"]
    rows = [_terminal_row(kind, value) for kind, _, value in items]
    return Tabular(
        headers=headers,
        rows=rows,
        right_aligned=frozenset({5}),
        cell_styles={(index, 4): STATUS_STYLES.get(row[4], "red") for index, row in enumerate(rows)},
        no_wrap=frozenset({0, 1, 2, 4, 5}),
        fold=frozenset(range(len(headers))),  # a long label, plan or path breaks, it is never cut short
    )


def _export_table(items: Sequence[tuple[str, datetime, Any]]) -> Tabular:
    """CSV: the run columns as before, then Kind (run, scan, audit or tune) last."""
    rows = []
    for kind, _, value in items:
        if kind == "run":
            run, count = value
            rows.append([run.id, run.created_at.isoformat(), run.label or "", run.status, str(count),
                         str(run.planned_cells or ""), run.plan_name or run.source, run.target or "", kind])
        elif kind == "scan":
            rows.append([value.id, value.created_at.isoformat(), value.label or "", value.status, "", "",
                         "smallblocks", ", ".join(value.paths), kind])
        elif kind == "tune":
            rows.append([value.id, value.created_at.isoformat(), value.label or "", value.status, "", "",
                         f"tune ({value.knobs} knobs, {value.kept} kept)", value.target or "", kind])
        else:
            rows.append([value.id, value.created_at.isoformat(), value.label or "", audit_status(value), "", "",
                         f"audit ({value.source})", value.subject_name or "", kind])
    return Tabular(["ID", "Created (UTC)", "Label", "Status", "Cells", "Planned", "Plan", "Target", "Kind"], rows,
                   right_aligned=frozenset({4, 5}))  # the counts


def runs_json(rows: Sequence[tuple[Run, int]]) -> dict[str, Any]:
    return {
        "runs": [
            {
                "run_id": run.id,
                "label": run.label,
                "status": run.status,
                "source": run.source,
                "created_at": run.created_at.isoformat(),
                "plan": run.plan_name,
                "target": run.target,
                "cells": count,
                "planned_cells": run.planned_cells,
            }
            for run, count in rows
        ]
    }


def scan_json(scan: Any) -> dict[str, Any]:
    return {"scan_id": scan.id, "label": scan.label, "status": scan.status, "created_at": scan.created_at.isoformat(),
            "paths": scan.paths, "files": scan.files, "bytes": scan.bytes, "seconds": scan.seconds,
            "files_per_s": scan.files_per_s}


def audit_json(audit: Any) -> dict[str, Any]:
    return {"audit_id": audit.id, "label": audit.label, "created_at": audit.created_at.isoformat(),
            "subject": audit.subject_name, "subject_key": audit.subject_key, "source": audit.source,
            "findings": audit.findings_count, "worst": audit_status(audit), "zfs_version": audit.zfs_version,
            "previous_audit_id": audit.previous_id}


def tune_json(tune: Any) -> dict[str, Any]:
    return {"tune_id": tune.id, "label": tune.label, "status": tune.status, "created_at": tune.created_at.isoformat(),
            "finished_at": tune.finished_at.isoformat() if tune.finished_at else None, "target": tune.target,
            "knobs": tune.knobs, "kept": tune.kept}


def audit_status(audit: Any) -> str:
    """The most severe finding's severity, or `clean`."""
    return audit.worst_severity or "clean"


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
