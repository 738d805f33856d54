"""A store of synthetic runs with fixed ids, times and numbers, so every command prints the same bytes on
every machine: the input of the exact-output tests (tests/report/test_report_snapshots.py).

Four runs of the same three cells, five separate fio runs each: `baseline` and `lz4` (a tuning change, for
`compare`), `vm` and `vm-luks` (layers above `baseline`, for `layers`); `vm-luks` is incomplete, one cell
short; `baseline` has a page-cache warning. One goal is stored, set for the runs labelled `baseline`, so
`show baseline` prints the goals table too (and `show lz4`, whose cell would match it, does not). Two
candidates of a `slog` session, a smallblocks scan, an audit and an account are stored too.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from sqlalchemy import update

from stackbench.analysis.goals import parse_goal
from stackbench.model.results import Cell, Run
from stackbench.store import open_store, schema
from stackbench.store.accounts import Accounts
from stackbench.store.repository import CellRecord, OutputRecord
from stackbench.model.warning import Warning, WarningCode
from synthetic import cell, run, slog_candidate

FACTS = {
    "fio_version": "fio-3.33",
    "target": {"fs_type": "zfs"},
    "plan": {"workloads": [{"size": 1024**3}]},
}
# `baseline` carries one coded warning, so the JSON shows the warning object (docs/json.md).
CACHE = Warning(WarningCode.PAGE_CACHE, "4K QD1 rnd read",
                "read results are cache-dominated: the test file (1.0 GiB) is smaller than 2x RAM (16.0 GiB)",
                "use --size of at least 32.0 GiB (2x RAM) for device numbers")
GOAL = "4K QD4 rnd write >= 3000 IOPS"
GOAL_ID = "90a1" * 8


def _cells(write: list[float], read: list[float], seq: list[float] | None) -> list[Cell]:
    cells = [
        cell(rw="randwrite", bs=4096, qd=4, runs=write, p99_ns=1.2e6),
        cell(rw="randread", bs=4096, qd=1, runs=read, p99_ns=180e3),
    ]
    if seq is not None:
        cells.append(cell(rw="write", bs=1024**2, qd=4, runs=seq, p99_ns=12e6))
    return cells


def _at(day: int, hour: int) -> datetime:
    return datetime(2024, 5, day, hour, 30, tzinfo=timezone.utc)


def runs() -> list[Run]:
    """The four runs, oldest first."""
    made = [
        ("1111aaaa" * 4, "baseline", _cells([3000, 3050, 2980, 3020, 2990], [12000, 12100, 11900, 12050, 11950],
                                           [410, 415, 405, 412, 408]), 1),
        ("2222bbbb" * 4, "lz4", _cells([3600, 3650, 3580, 3620, 3590], [12010, 12080, 11920, 12040, 11960],
                                      [370, 372, 366, 371, 368]), 2),
        ("3333cccc" * 4, "vm", _cells([120, 125, 118, 122, 121], [2500, 2550, 2480, 2520, 2490],
                                     [300, 305, 298, 302, 299]), 3),
        ("4444dddd" * 4, "vm-luks", _cells([100, 104, 98, 101, 99], [2000, 2040, 1980, 2010, 1990], None), 4),
    ]
    return [
        replace(
            run(cells, label=label, facts=FACTS, run_id=run_id),
            created_at=_at(day, 9),
            finished_at=_at(day, 10),
            target="/tank/bench" if label in ("baseline", "lz4") else "/mnt/vm-bench",
            status="complete" if len(cells) == 3 else "incomplete",
            planned_cells=3,
            warnings=(CACHE,) if label == "baseline" else (),
        )
        for run_id, label, cells, day in made
    ]


def slog_runs() -> list[Run]:
    """Two candidates of one `stackbench slog` session, five rounds each (median QD1 latency in µs)."""
    made = [("optane", [20.0, 21.0, 19.5, 20.5, 20.2], 7), ("sata-ssd", [180.0, 190.0, 175.0, 185.0, 182.0], 8)]
    return [replace(slog_candidate(label, medians, session="7777" * 8, rounds=[0, 1, 2, 3, 4]),
                    created_at=_at(day, 9), finished_at=_at(day, 10), target=f"/mnt/{label}")
            for label, medians, day in made]


SCAN_ID = "5555eeee" * 4
AUDIT_ID = "6666ffff" * 4


def scan_document() -> dict:
    """A smallblocks scan of a fixed histogram, built by the same code as `smallblocks --json`."""
    from stackbench.report.smallblocks import smallblocks_json
    from stackbench.scan.histogram import SizeHistogram
    from stackbench.scan.special_vdev import estimates, recommend
    from stackbench.scan.walker import WalkResult

    histogram = SizeHistogram()
    for size, count in ((0, 3), (700, 40), (3000, 25), (9000, 12), (100_000, 6), (5_000_000, 2), (3 * 1024**3, 1)):
        for _ in range(count):
            histogram.add(size)
    result = WalkResult(histogram=histogram, seconds=0.25, workers=4)
    rec = recommend(histogram, 64 * 1024**2, 0.003, 128 * 1024)
    about = {"scan_id": SCAN_ID, "label": "tank-files", "created_at": _at(5, 9).isoformat(), "paths": ["/tank/files"],
             "settings": {"recordsize_bytes": 131072, "special_size_bytes": 64 * 1024**2, "metadata_share_pct": 0.3,
                          "one_file_system": False, "workers": None},
             "stackbench_version": "0.1.0"}
    return smallblocks_json(result, rec, estimates(histogram, 0.003, 128 * 1024), about)


def audit_document() -> tuple[dict, list[dict]]:
    """An audit of the real Proxmox config tests/data/pve/100-bad.conf with its storage.cfg, as `audit --json`
    prints it (fixed id and time), and every finding as stored."""
    import tempfile
    from pathlib import Path

    from stackbench.audit.facts import load_facts
    from stackbench.audit.report import run_rules
    from stackbench.audit.rules import REGISTRY
    from stackbench.audit.subject import audit_subject

    pve = Path(__file__).parent / "data" / "pve"
    with tempfile.TemporaryDirectory() as empty:
        facts = load_facts(Path(empty), [pve / "100-bad.conf"], pve / "storage.cfg")
        subject = audit_subject(Path(empty), facts, captured_here=False, vm_configs=[pve / "100-bad.conf"])
    report = run_rules(facts, REGISTRY)
    document = report.to_json(facts)
    for finding in document["findings"]:
        finding["change"] = None
    document.update({
        "audit_id": AUDIT_ID, "label": "pve-vm100", "created_at": _at(6, 9).isoformat(),
        "subject": {"key": subject.key, "name": subject.name, "source": subject.source,
                    "detail": "--from facts; --vm-config pve/100-bad.conf"},
        "facts": {**subject.facts, "files": ["--vm-config pve/100-bad.conf"]}, "min_severity": "info",
        "rules_checked": len(REGISTRY), "changes": None,
    })
    return document, [f.to_json() for f in report.findings]


def store_run(store, stored: Run) -> None:  # noqa: ANN001 - a Store
    """Write one synthetic run into `store` as the runner would, its id and times included."""
    store.create_run(
        source=stored.source, label=stored.label, target=stored.target, plan_name=stored.plan_name,
        planned_cells=stored.planned_cells, facts=stored.facts, warnings=stored.warnings, run_id=stored.id,
    )
    for each in stored.cells:
        store.add_measurement(
            stored.id,
            [OutputRecord(raw_text="synthetic", fio_version=stored.facts["fio_version"])],
            [CellRecord(each.workload, each.result, each.samples, each.measurement)],
        )
    store.finish_run(stored.id, stored.status)
    with store.engine.begin() as connection:
        connection.execute(
            update(schema.runs)
            .where(schema.runs.c.id == stored.id)
            .values(created_at=stored.created_at, finished_at=stored.finished_at)
        )


def build_store(url: str) -> None:
    """Write the runs and the goal into a new store at `url`, times and ids included."""
    store = open_store(url)
    for stored in [*runs(), *slog_runs()]:
        store_run(store, stored)
    store.add_scan(scan_id=SCAN_ID, label="tank-files", created_at=_at(5, 9), status="complete",
                   document=scan_document())
    document, findings = audit_document()
    store.add_audit(audit_id=AUDIT_ID, label="pve-vm100", created_at=_at(6, 9), subject_key=document["subject"]["key"],
                    subject_name=document["subject"]["name"], source=document["subject"]["source"],
                    source_detail=document["subject"]["detail"], zfs_version=None, previous_id=None,
                    facts=document["facts"], document=document, findings=findings)
    goal_id = store.add_goal(parse_goal(GOAL, label="baseline"))
    account = Accounts(store).add_account("alice", "not a hash: nobody logs in", admin=True)
    with store.engine.begin() as connection:
        connection.execute(update(schema.goals).where(schema.goals.c.id == goal_id).values(id=GOAL_ID))
        connection.execute(update(schema.accounts).where(schema.accounts.c.id == account.id)
                           .values(id="8888" * 8, created_at=_at(8, 12)))
    store.dispose()
