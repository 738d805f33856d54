"""Reading and writing runs. The only module that issues SQL.

Writes are small transactions: a run row when the run starts, then one transaction per finished cell (its
raw fio output and its values together), then the final status. A crash or Ctrl-C therefore leaves every
finished cell and never a cell without its raw output.
"""

from __future__ import annotations

import functools
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from sqlalchemy import Engine, bindparam, create_engine, delete, event, func, insert, select, text, update
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from stackbench import __version__
from stackbench.base.credentials import scrub_text
from stackbench.model.fio_result import DirectionResult, Latency, Sample
from stackbench.base.errors import StoreError, UsageError
from stackbench.model.plan import Workload
from stackbench.model.results import Cell, Run, new_id
from stackbench.store import schema
from stackbench.store.database_url import database_url
from stackbench.store.failures import describe
from stackbench.base.usertext import check
from stackbench.model.warning import Warning

if TYPE_CHECKING:
    from stackbench.model.goal import Goal

MIGRATIONS = Path(__file__).with_name("migrations")


@dataclass(frozen=True)
class OutputRecord:
    """One fio invocation's output as it is stored verbatim."""

    raw_text: str
    fio_version: str | None
    command: list[str] | None = None
    job_file: str | None = None
    exit_code: int | None = None
    source_name: str | None = None
    started_at: datetime | None = None


@dataclass(frozen=True)
class CellRecord:
    """A cell to store: its workload, the (merged) result, its samples and how it was measured."""

    workload: Workload
    result: DirectionResult
    samples: Sequence[Sample] = ()
    measurement: dict[str, Any] | None = None


@dataclass(frozen=True)
class StoredScan:
    """A `smallblocks --db` scan as stored: the listed columns and the printed JSON document."""

    id: str
    label: str | None
    status: str  # complete | partial
    created_at: datetime
    paths: list[str]
    files: int
    bytes: int
    seconds: float
    files_per_s: float
    document: Any  # the `smallblocks --json` document; checked by whoever reads it (it may be damaged)


@dataclass(frozen=True)
class StoredAudit:
    """An `audit --db` audit as stored: who and what was audited, its findings and the printed JSON."""

    id: str
    label: str | None
    created_at: datetime
    subject_key: str | None
    subject_name: str | None
    source: str  # host | guest | capture | config
    source_detail: str | None
    zfs_version: str | None
    findings_count: int
    worst_severity: str | None
    previous_id: str | None
    facts: Any
    document: Any  # the `audit --json` document as printed
    findings: tuple[dict[str, Any], ...] = ()  # rule, severity, subject, vm, disks, evidence, fix


KINDS = ("run", "scan", "audit")


def default_db_url() -> str:
    """`$STACKBENCH_DB`, else an SQLite file under the XDG data directory."""
    env = os.environ.get("STACKBENCH_DB")
    if env:
        return env
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'stackbench' / 'results.db'}"


_REVISION = re.compile(r"""^(down_)?revision\s*(?::[^=]*)?=\s*(?:["']([^"']*)["']|None)\s*$""", re.MULTILINE)


@functools.cache
def head_revision() -> str:
    """The newest migration's revision id, read from the migration scripts' own `revision` and
    `down_revision` lines: the one no other script names as its parent. A test holds it equal to
    Alembic's answer."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("*.py"):
        for down, value in _REVISION.findall(script.read_text(encoding="utf-8")):
            if value:
                (parents if down else revisions).add(value)
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"the migration scripts have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def _no_such_table(error: SQLAlchemyError) -> bool:
    original = getattr(error, "orig", None)
    return getattr(original, "sqlstate", None) == "42P01" or "no such table" in str(original)


def open_store(url: str | None = None) -> "Store":
    if url is not None and not url.strip():
        raise UsageError(
            "--db (or STACKBENCH_DB) is empty", "Pass a file path or URL, or leave it out for the default store"
        )
    return Store(url or default_db_url())


def open_store_to_read(url: str | None = None) -> "Store | None":
    """The store as it is, for a command that promises to write nothing (`run --dry-run`): None when it does
    not exist yet or its schema is not this release's, instead of creating or migrating it."""
    if url is not None and not url.strip():
        return None
    normal = database_url(url or default_db_url())  # a mistake in --db fails the dry run as it fails the run
    if normal.startswith("sqlite:///") and not Path(normal.removeprefix("sqlite:///").split("?", 1)[0]).is_file():
        return None
    try:
        return Store(url or default_db_url(), migrate=False)
    except StoreError:
        return None


class Store:
    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = database_url(url)
        if self.url.startswith("sqlite:///"):
            path = Path(self.url.removeprefix("sqlite:///").split("?", 1)[0])
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(
                    f"cannot create the database directory {path.parent}: {error.strerror}",
                    "Pass a writable location with --db or STACKBENCH_DB",
                ) from None
        try:
            self.engine: Engine = create_engine(self.url, future=True)
        except (ArgumentError, ImportError, SQLAlchemyError) as error:
            raise StoreError(
                f"cannot use database URL {scrub_text(url)!r}: {error}",
                "Use sqlite:///PATH or postgresql://USER@HOST/DB (pip install 'stackbench[postgres]')",
            ) from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.reader: Engine = _reader(self.engine)
        if migrate:
            self._migrate()
        elif not self._at_head():
            raise StoreError(f"the results database {self.where} is not at this release's schema", "Open it with "
                             "any stackbench command that writes, which migrates it")

    @property
    def where(self) -> str:
        """The store as a user names it: the SQLite file's path, or the URL without its password."""
        if self.url.startswith("sqlite:///"):
            return self.url.removeprefix("sqlite:///")
        return scrub_text(self.url)

    def _migrate(self) -> None:
        """Bring the schema to this release's head, all of it in one transaction (store/migrate.py);
        refuse stores we must not or cannot change: a newer schema (its revision is not in our scripts:
        an older stackbench would corrupt it), and a database that holds tables of its own and none of
        ours (stackbench never mixes its tables into someone else's database)."""
        if self._at_head():
            return
        from stackbench.store.migrate import upgrade

        upgrade(self.engine, self.where, str(MIGRATIONS))

    def _at_head(self) -> bool:
        """Whether the store's schema is this release's head, answered without importing Alembic.

        The question every command asks on opening, so it is one query (Alembic's own start-up cost a
        tenth of a second, issue 12). No version table, or another version, answers False and leaves the
        decision to the full check in `_migrate`; a store that cannot be read at all (locked, not a database) is
        one line with the fix here, not a second wait in Alembic.
        """
        try:
            with self.reader.connect() as connection:
                versions = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
        except SQLAlchemyError as error:
            if _no_such_table(error):
                return False
            raise describe(error, self.where) from None
        return versions == {head_revision()}

    # -- writing ---------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        source: str,
        label: str | None,
        target: str | None,
        plan_name: str | None,
        planned_cells: int | None,
        facts: dict[str, Any],
        warnings: Sequence[Warning] = (),
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or new_id()
        with self.engine.begin() as connection:
            _insert_run(connection, run_id, source=source, label=label, target=target, plan_name=plan_name,
                        planned_cells=planned_cells, facts=facts, warnings=warnings, status="running")
        return run_id

    def import_run(
        self,
        *,
        label: str | None,
        facts: dict[str, Any],
        output: "OutputRecord",
        cells: Sequence[tuple[Workload, DirectionResult]],
        run_id: str | None = None,
        warnings: Sequence[Warning] = (),
    ) -> str:
        """Store an imported fio output as one complete run in one transaction: all of it or nothing.

        The caller may choose `run_id` so that, interrupted, it can ask `has_run` whether the commit landed."""
        run_id = run_id or new_id()
        with self.engine.begin() as connection:
            _insert_run(connection, run_id, source="imported", label=label, target=None, plan_name="import",
                        planned_cells=len(cells), facts=facts, warnings=warnings, status="complete")
            _insert_measurement(connection, run_id, [output], [CellRecord(w, r) for w, r in cells])
        return run_id

    def add_measurement(
        self, run_id: str, outputs: Sequence["OutputRecord"], cells: Sequence["CellRecord"]
    ) -> list[str]:
        """Store the fio outputs of one measured cell (one per segment) and its cells in one transaction."""
        with self.engine.begin() as connection:
            return _insert_measurement(connection, run_id, outputs, cells)

    def add_replicate(
        self, run_id: str, group_id: str, output: "OutputRecord", cells: Sequence["CellRecord"]
    ) -> list[str]:
        """Store one more fio run of a cell the moment it finishes, in one transaction.

        `group_id` names the cell across its runs (rounds are interleaved, so a cell's runs arrive between
        other cells' runs). The first run creates the cell rows; later runs add their output and samples
        and replace the cells' merged result and `measurement` (which lists every run). An interruption
        therefore keeps every finished run, and a cell is never half-updated.
        """
        fo, cl = schema.fio_outputs, schema.cells
        output_id = new_id()
        ids: list[str] = []
        with self.engine.begin() as connection:
            seq_out = connection.execute(
                select(func.count()).select_from(fo).where(fo.c.run_id == run_id)
            ).scalar_one()
            segment = connection.execute(
                select(func.count()).select_from(fo).where(fo.c.group_id == group_id)
            ).scalar_one()
            connection.execute(
                insert(fo).values(
                    id=output_id, run_id=run_id, seq=seq_out, fio_version=output.fio_version,
                    command=output.command, job_file=output.job_file, raw_text=output.raw_text,
                    exit_code=output.exit_code, source_name=output.source_name, started_at=output.started_at,
                    finished_at=_now(), segment=segment, group_id=group_id,
                )
            )
            existing = {  # a fleet run's cell has one row per host (and one for the total) per direction
                (row.direction, row.host): (row.id, row.seq)
                for row in connection.execute(
                    select(cl.c.id, cl.c.seq, cl.c.direction, cl.c.host)
                    .join(fo, fo.c.id == cl.c.fio_output_id)
                    .where(fo.c.group_id == group_id)
                )
            }
            seq_cell = connection.execute(
                select(func.count()).select_from(cl).where(cl.c.run_id == run_id)
            ).scalar_one()
            for record in cells:
                direction = (record.result.direction, record.result.host)
                if direction in existing:
                    cell_id, seq = existing[direction]
                    first_output = connection.execute(
                        select(cl.c.fio_output_id).where(cl.c.id == cell_id)
                    ).scalar_one()
                else:
                    cell_id, seq, first_output = new_id(), seq_cell, output_id
                    seq_cell += 1
                cell = Cell(id=cell_id, seq=seq, workload=record.workload, result=record.result,
                            measurement=record.measurement)
                row = _cell_row(run_id, first_output, cell)
                if direction in existing:
                    del row["id"]
                    connection.execute(update(cl).where(cl.c.id == cell_id).values(**row))
                else:
                    connection.execute(insert(cl).values(**row))
                start = connection.execute(
                    select(func.count()).select_from(schema.samples).where(schema.samples.c.cell_id == cell_id)
                ).scalar_one()
                if record.samples:
                    connection.execute(
                        insert(schema.samples),
                        [
                            {
                                "cell_id": cell_id, "idx": start + index, "segment": sample.segment,
                                "t_s": sample.t_s, "iops": sample.iops, "bw_bytes": sample.bw_bytes,
                                "clat_mean_ns": sample.clat_mean_ns, "ramp": sample.ramp,
                            }
                            for index, sample in enumerate(record.samples)
                        ],
                    )
                ids.append(cell_id)
        return ids

    def add_cells(
        self,
        run_id: str,
        *,
        raw_text: str,
        fio_version: str | None,
        cells: Iterable[tuple[Workload, DirectionResult]],
        command: list[str] | None = None,
        job_file: str | None = None,
        exit_code: int | None = None,
        source_name: str | None = None,
        started_at: datetime | None = None,
    ) -> list[str]:
        """Store one fio output and the cells parsed from it (no samples): the import path."""
        output = OutputRecord(raw_text, fio_version, command, job_file, exit_code, source_name, started_at)
        return self.add_measurement(run_id, [output], [CellRecord(w, r) for w, r in cells])

    def finish_run(self, run_id: str, status: str, warnings: Sequence[Warning] | None = None) -> None:
        values: dict[str, Any] = {"status": status, "finished_at": _now()}
        if warnings is not None:
            values["warnings"] = [w.to_json() for w in warnings]
        with self.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == run_id).values(**values))

    def delete_runs(self, run_ids: Sequence[str]) -> int:
        """Delete whole runs (samples, cells, fio outputs, the run) in one transaction: all or none.

        Rows are deleted child first rather than through ON DELETE CASCADE, so a PostgreSQL or SQLite
        store that was created without enforced foreign keys is cleaned up just the same.
        """
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return 0
        with self.engine.begin() as connection:
            return _delete_runs(connection, ids)

    def running_runs(self) -> list[tuple[str, dict[str, Any]]]:
        """`(id, facts)` of every run still marked running: for finding the abandoned ones."""
        runs = schema.runs
        with self.reader.connect() as connection:
            rows = connection.execute(select(runs.c.id, runs.c.facts).where(runs.c.status == "running")).all()
        return [(row[0], row[1] or {}) for row in rows]

    def record_process(self, run_id: str, key: str, value: dict[str, Any]) -> None:
        """Set `facts.process[key]` of a running run: the fio process it is starting, recorded before fio
        has its job so that a cleanup after SIGKILL knows it (abandoned.py)."""
        runs = schema.runs
        with self.engine.begin() as connection:
            row = connection.execute(select(runs.c.facts).where(runs.c.id == run_id)).first()
            if row is None:
                return
            facts = dict(row[0] or {})
            facts["process"] = {**(facts.get("process") or {}), key: value}
            connection.execute(update(runs).where(runs.c.id == run_id).values(facts=facts))

    def mark_abandoned(self, run_id: str, note: Warning) -> bool:
        """Mark a running run abandoned with `note` among its warnings; False if another process was first."""
        runs = schema.runs
        with self.engine.begin() as connection:
            row = connection.execute(
                select(runs.c.warnings).where(runs.c.id == run_id, runs.c.status == "running")
            ).first()
            if row is None:
                return False
            done = connection.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.status == "running")
                .values(status="abandoned", finished_at=_now(), warnings=[*(row[0] or []), note.to_json()])
            )
            return bool(done.rowcount)

    # -- reading ---------------------------------------------------------------------------------

    def has_run(self, run_id: str) -> bool:
        """Whether a run with exactly this id is stored (no prefix or label lookup)."""
        with self.reader.connect() as connection:
            return connection.execute(select(schema.runs.c.id).where(schema.runs.c.id == run_id)).first() is not None

    def resolve(self, ref: str) -> str:
        """A run by full id, unique id prefix (at least 4 characters) or label (the newest with it)."""
        return self.resolve_any(ref, kinds=("run",))[1]

    def get_run(self, ref: str) -> Run:
        return self.run_by_id(self.resolve(ref))

    def run_by_id(self, run_id: str) -> Run:
        """The run with this exact id, with all its samples, without resolving prefixes and labels as
        `get_run` does."""
        with self.reader.connect() as connection:
            return read_runs(connection, select(schema.runs).where(schema.runs.c.id == run_id))[0][1]

    def with_samples(self, runs: Sequence[Run]) -> list[Run]:
        """`runs` with every per-second sample of every cell (one query for all): for a run loaded with
        only the samples its replicates need (`read_runs`), where a page draws or ranks per-second samples.
        Cells are matched by id, so a redacted copy (report/redact.py) gets its samples too."""
        with self.reader.connect() as connection:
            samples = _samples_by_cell(connection.execute(_samples_of(sorted({run.id for run in runs}))).all())
        return [replace(run, cells=tuple(replace(c, samples=tuple(samples.get(c.id, ()))) for c in run.cells))
                for run in runs]

    def list_runs(self, limit: int | None = None, label: str | None = None) -> list[tuple[Run, int]]:
        """Runs newest first, each with its number of stored cells."""
        runs, cells = schema.runs, schema.cells
        counts = (
            select(cells.c.run_id, func.count().label("n")).group_by(cells.c.run_id).subquery()
        )
        query = (
            select(runs, func.coalesce(counts.c.n, 0).label("cell_count"))
            .select_from(runs.outerjoin(counts, counts.c.run_id == runs.c.id))
            .order_by(runs.c.created_at.desc())
        )
        if label is not None:
            query = query.where(runs.c.label == label)
        if limit:
            query = query.limit(limit)
        with self.reader.connect() as connection:
            rows = connection.execute(query).mappings().all()
        return [(_run_from_row(row), int(row["cell_count"])) for row in rows]

    def measured_runs_on(self, target: str, limit: int = 5) -> list[Run]:
        """The newest runs measured on `target` (as the run recorded it) with their cells but no samples:
        what an estimate learns from (analysis/estimate.py, Priors)."""
        runs = schema.runs
        query = (select(runs).where(runs.c.target == target, runs.c.source == "measured",
                                    runs.c.status.in_(("complete", "incomplete")))
                 .order_by(runs.c.created_at.desc()).limit(limit))
        with self.reader.connect() as connection:
            return [run for _, run in read_runs(connection, query, samples_for=lambda cell: False)]

    def fio_outputs(self, run_id: str) -> list[dict[str, Any]]:
        with self.reader.connect() as connection:
            rows = connection.execute(
                select(schema.fio_outputs)
                .where(schema.fio_outputs.c.run_id == run_id)
                .order_by(schema.fio_outputs.c.seq)
            ).mappings().all()
        return [dict(row) for row in rows]

    # -- goals -----------------------------------------------------------------------------------

    def add_goal(self, goal: "Goal") -> str:
        goal_id = new_id()
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.goals).values(id=goal_id, text=goal.text, spec=goal.to_dict(), created_at=_now())
            )
        return goal_id

    def list_goals(self) -> list[tuple[str, "Goal"]]:
        from stackbench.model.goal import Goal

        with self.reader.connect() as connection:
            rows = connection.execute(_GOALS).mappings().all()
        return [(row["id"], Goal.from_dict(row["spec"])) for row in rows]

    def remove_goal(self, ref: str) -> "Goal":
        matches = [(gid, goal) for gid, goal in self.list_goals() if gid.startswith(ref.lower()) or goal.text == ref]
        if len(matches) != 1:
            raise StoreError(
                f"{'no goal' if not matches else 'several goals'} match {ref!r}",
                "List them with `stackbench goal list` and give a unique id prefix",
            )
        with self.engine.begin() as connection:
            connection.execute(schema.goals.delete().where(schema.goals.c.id == matches[0][0]))
        return matches[0][1]

    # -- scans and audits ------------------------------------------------------------------------

    def add_scan(
        self, *, scan_id: str, label: str | None, created_at: datetime, status: str, document: dict[str, Any]
    ) -> str:
        """Store a smallblocks scan in one transaction; `document` is its JSON as printed (docs/json.md)."""
        check("a label", label)
        recommendation = document.get("recommendation") or {}
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.scans).values(
                    id=scan_id, label=label, status=status, created_at=created_at,
                    paths=list(document["paths"]), files=int(document["files"]), bytes=int(document["bytes"]),
                    seconds=float(document["seconds"]), files_per_s=float(document["files_per_s"]),
                    special_small_blocks=(recommendation.get("special_small_blocks")
                                          if recommendation.get("special_size") is not None else None),
                    settings=document["settings"], document=document, stackbench_version=__version__,
                )
            )
        return scan_id

    def get_scan(self, scan_id: str) -> StoredScan:
        with _damage_reported("scan", scan_id), self.reader.connect() as connection:
            row = connection.execute(select(schema.scans).where(schema.scans.c.id == scan_id)).mappings().first()
            if row is None:
                raise StoreError(f"no scan with id {scan_id!r}",
                                 "List the stored scans with `stackbench runs --kind scan`")
            return _scan_from_row(row)

    def list_scans(self, limit: int | None = None, label: str | None = None) -> list[StoredScan]:
        """Scans newest first, without their documents (a damaged document does not stop a listing)."""
        scans = schema.scans
        query = select(*[c for c in scans.c if c.name != "document"]).order_by(scans.c.created_at.desc())
        if label is not None:
            query = query.where(scans.c.label == label)
        if limit:
            query = query.limit(limit)
        with _damage_reported("scan", None), self.reader.connect() as connection:
            return [_scan_from_row({**row, "document": None}) for row in connection.execute(query).mappings().all()]

    def add_audit(
        self,
        *,
        audit_id: str,
        label: str | None,
        created_at: datetime,
        subject_key: str | None,
        subject_name: str | None,
        source: str,
        source_detail: str | None,
        zfs_version: str | None,
        previous_id: str | None,
        facts: dict[str, Any],
        document: dict[str, Any],
        findings: Sequence[dict[str, Any]],
    ) -> str:
        """Store an audit and its findings (most severe first, as the audit orders them) in one transaction:
        all of it or nothing."""
        check("a label", label)
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.audits).values(
                    id=audit_id, label=label, created_at=created_at, subject_key=subject_key,
                    subject_name=subject_name, source=source, source_detail=source_detail, zfs_version=zfs_version,
                    findings_count=len(findings), worst_severity=findings[0]["severity"] if findings else None,
                    previous_id=previous_id, facts=facts, document=document,
                    stackbench_version=__version__,
                )
            )
            if findings:
                connection.execute(
                    insert(schema.audit_findings),
                    [
                        {"audit_id": audit_id, "idx": index, "rule": f["rule"], "severity": f["severity"],
                         "subject": f["subject"], "vm": f.get("vm"), "disks": list(f.get("disks") or []),
                         "evidence": f["evidence"], "fix": f["fix"]}
                        for index, f in enumerate(findings)
                    ],
                )
        return audit_id

    def get_audit(self, audit_id: str) -> StoredAudit:
        with _damage_reported("audit", audit_id), self.reader.connect() as connection:
            row = connection.execute(select(schema.audits).where(schema.audits.c.id == audit_id)).mappings().first()
            if row is None:
                raise StoreError(
                    f"no audit with id {audit_id!r}", "List the stored audits with `stackbench runs --kind audit`"
                )
            return _audit_from_row(row, _findings_of(connection, audit_id))

    def latest_audit(self, subject_key: str) -> StoredAudit | None:
        """The newest stored audit of this subject, with its findings: what a new audit is compared with."""
        audits = schema.audits
        with self.reader.connect() as connection:
            found = connection.execute(
                select(audits.c.id).where(audits.c.subject_key == subject_key)
                .order_by(audits.c.created_at.desc()).limit(1)
            ).first()
        return None if found is None else self.get_audit(found[0])

    def list_audits(self, limit: int | None = None, label: str | None = None) -> list[StoredAudit]:
        """Audits newest first, without their findings, facts and documents."""
        audits = schema.audits
        query = select(*[c for c in audits.c if c.name not in ("document", "facts")]).order_by(
            audits.c.created_at.desc()
        )
        if label is not None:
            query = query.where(audits.c.label == label)
        if limit:
            query = query.limit(limit)
        with _damage_reported("audit", None), self.reader.connect() as connection:
            return [_audit_from_row({**row, "document": None, "facts": None}, ())
                    for row in connection.execute(query).mappings().all()]

    def resolve_any(self, ref: str, kinds: Sequence[str] = KINDS) -> tuple[str, str]:
        """(kind, id) of a stored run, scan or audit named by full id, unique id prefix (4+ hex characters)
        or label (the newest with it). Ids are random, so a prefix names at most one item of any kind in
        practice; a label that names items of two kinds is refused rather than guessed."""
        tables = {"run": schema.runs, "scan": schema.scans, "audit": schema.audits}
        chosen = {kind: tables[kind] for kind in kinds}
        listed = list(chosen)
        names = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"
        with self.reader.connect() as connection:
            for kind, table in chosen.items():
                if connection.execute(select(table.c.id).where(table.c.id == ref)).first():
                    return kind, ref
            if len(ref) >= 4 and all(c in "0123456789abcdef" for c in ref.lower()):
                matches = [
                    (kind, found)
                    for kind, table in chosen.items()
                    for found in connection.execute(
                        select(table.c.id).where(table.c.id.like(ref.lower() + "%")).limit(3)
                    ).scalars().all()
                ]
                if len(matches) == 1:
                    return matches[0]
                if len(matches) > 1:
                    raise StoreError(
                        f"id prefix {ref!r} matches several {listed[0] + 's' if len(listed) == 1 else 'stored items'} "
                        f"({', '.join(f'{k} {found[:12]}' for k, found in matches)})",
                        "Give more characters of the id",
                    )
            labelled = []
            for kind, table in chosen.items():
                row = connection.execute(
                    select(table.c.id).where(table.c.label == ref).order_by(table.c.created_at.desc()).limit(1)
                ).first()
                if row:
                    labelled.append((kind, row[0]))
        if len(labelled) == 1:
            return labelled[0]
        if len(labelled) > 1:
            shown = ", ".join(f"{kind} {found[:12]}" for kind, found in labelled)
            raise StoreError(f"the label {ref!r} names a {' and a '.join(k for k, _ in labelled)} ({shown})",
                             "Give the id instead (`stackbench runs --label LABEL` lists them)")
        raise StoreError(f"no {names} with id or label {ref!r}", "List what is stored with `stackbench runs`")

    def delete_stored(
        self, *, runs: Sequence[str] = (), scans: Sequence[str] = (), audits: Sequence[str] = ()
    ) -> int:
        """Delete runs (with their cells, samples and outputs), scans and audits (with their findings) in
        one transaction: all or none. Children first, as `delete_runs` explains."""
        run_ids, scan_ids, audit_ids = (list(dict.fromkeys(ids)) for ids in (runs, scans, audits))
        deleted = 0
        with self.engine.begin() as connection:
            if run_ids:
                deleted += _delete_runs(connection, run_ids)
            if scan_ids:
                deleted += connection.execute(delete(schema.scans).where(schema.scans.c.id.in_(scan_ids))).rowcount
            if audit_ids:
                connection.execute(delete(schema.audit_findings).where(schema.audit_findings.c.audit_id.in_(audit_ids)))
                deleted += connection.execute(delete(schema.audits).where(schema.audits.c.id.in_(audit_ids))).rowcount
        return deleted

    def dispose(self) -> None:
        self.engine.dispose()


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def guarded(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except SQLAlchemyError as error:
            raise describe(error, self.where) from None

    return guarded


# Every public method reports a database failure as one line (full disk, lock, read-only, garbage file).
for _name, _method in list(vars(Store).items()):
    if not _name.startswith("_") and callable(_method):
        setattr(Store, _name, _guarded(_method))


_SAMPLE_COLUMNS = (schema.samples.c.cell_id, schema.samples.c.t_s, schema.samples.c.iops, schema.samples.c.bw_bytes,
                   schema.samples.c.clat_mean_ns, schema.samples.c.segment, schema.samples.c.ramp)


# Statements of every run and compare page, built once per process with their values as parameters:
# building a statement and the cache key SQLAlchemy derives from every new one cost more than running it
# (a run page's reads 0.5 -> 0.2 ms on the bench machine).
_GOALS = select(schema.goals).order_by(schema.goals.c.created_at)
_CELLS_OF_RUNS = (
    select(schema.cells, select(schema.samples.c.cell_id).where(schema.samples.c.cell_id == schema.cells.c.id)
           .correlate(schema.cells).exists().label("has_samples"))
    .where(schema.cells.c.run_id.in_(bindparam("run_ids", expanding=True)))
    .order_by(schema.cells.c.run_id, schema.cells.c.seq)
)


def read_runs(
    connection: Any, query: Any, params: dict[str, Any] | None = None, *,
    samples_for: Callable[[Cell], bool] | None = None,
) -> list[tuple[Any, Run]]:
    """The runs `query` selects (whole rows of the runs table: `select(schema.runs).where(...)`, with
    `params` for its bound parameters), each with its cells: (row, run) pairs, the row carrying the
    columns a Run does not (the server's owner and visibility).

    Two statements for any number of runs (their rows, then all their cells), and a third only when a
    cell that has samples wants them: every sample when `samples_for` is None, else the samples of the
    cells for which `samples_for(cell)` is true (the cell given without samples). A 48-cell run holds 8,640
    per-second samples; a page that shows only its tables needs them only where its replicates are made
    of samples (analysis/cells.py, `samples_needed`).
    """
    s = schema.samples
    rows = connection.execute(query, params or {}).mappings().all()
    if not rows:
        return []
    cell_rows = connection.execute(_CELLS_OF_RUNS, {"run_ids": [r["id"] for r in rows]}).mappings().all()
    made = [(r["run_id"], _cell_from_row(r), bool(r["has_samples"])) for r in cell_rows]
    having = [cell for _, cell, has in made if has]
    wanted = [cell.id for cell in having if samples_for is None or samples_for(cell)]
    samples: dict[str, list[Sample]] = {}
    if wanted:
        # plain tuples of the columns Sample needs: a 48-cell run has thousands of samples, and building
        # a mapping per row cost more than the query (58 -> 23 ms for 8,640 samples)
        query = _samples_of([r["id"] for r in rows])
        if len(wanted) < len(having):  # only some cells' (all of them: no list of every cell id to send)
            query = query.where(s.c.cell_id.in_(wanted))
        samples = _samples_by_cell(connection.execute(query).all())
    by_run: dict[str, list[Cell]] = {}
    for run_id, cell, _ in made:
        by_run.setdefault(run_id, []).append(replace(cell, samples=tuple(samples.get(cell.id, ()))))
    return [(row, replace(_run_from_row(row), cells=tuple(by_run.get(row["id"], ())))) for row in rows]


def _samples_of(run_ids: Sequence[str]) -> Any:
    """The query of every per-second sample of these runs' cells (`_SAMPLE_COLUMNS`), in each cell's order."""
    s, cells = schema.samples, schema.cells
    return (select(*_SAMPLE_COLUMNS).join(cells, cells.c.id == s.c.cell_id)
            .where(cells.c.run_id.in_(run_ids)).order_by(s.c.cell_id, s.c.idx))


def _samples_by_cell(rows: Iterable[Any]) -> dict[str, list[Sample]]:
    """Sample rows (`_SAMPLE_COLUMNS`, which unpack like tuples) by cell id, in the order given."""
    samples: dict[str, list[Sample]] = {}
    for cell_id, t_s, iops, bw_bytes, clat_mean_ns, segment, ramp in rows:
        samples.setdefault(cell_id, []).append(
            Sample(t_s=t_s, iops=iops, bw_bytes=bw_bytes, clat_mean_ns=clat_mean_ns, segment=segment, ramp=bool(ramp))
        )
    return samples


def _delete_runs(connection: Any, ids: list[str]) -> int:
    cells, samples = schema.cells, schema.samples
    cell_ids = select(cells.c.id).where(cells.c.run_id.in_(ids)).scalar_subquery()
    connection.execute(delete(samples).where(samples.c.cell_id.in_(cell_ids)))
    connection.execute(delete(cells).where(cells.c.run_id.in_(ids)))
    connection.execute(delete(schema.fio_outputs).where(schema.fio_outputs.c.run_id.in_(ids)))
    return connection.execute(delete(schema.runs).where(schema.runs.c.id.in_(ids))).rowcount


@contextmanager
def _damage_reported(kind: str, item_id: str | None) -> Iterator[None]:
    """A stored row whose JSON or numbers cannot be read (edited by hand, a disk error) is one line naming
    it and the way out, never a traceback."""
    try:
        yield
    except (ValueError, TypeError, KeyError) as error:
        which = f"{kind} {item_id[:12]}" if item_id else f"a stored {kind}"
        raise StoreError(
            f"the stored {which} is damaged and cannot be read ({type(error).__name__}: {str(error)[:100]})",
            f"Delete it with `stackbench rm {item_id[:12] if item_id else 'ID'} --yes` and make it again",
        ) from None


def _findings_of(connection: Any, audit_id: str) -> tuple[dict[str, Any], ...]:
    table = schema.audit_findings
    rows = connection.execute(
        select(table).where(table.c.audit_id == audit_id).order_by(table.c.idx)
    ).mappings().all()
    return tuple(
        {"rule": r["rule"], "severity": r["severity"], "subject": r["subject"], "vm": r["vm"],
         "disks": r["disks"] or [], "evidence": r["evidence"], "fix": r["fix"]}
        for r in rows
    )


def _scan_from_row(row: Any) -> StoredScan:
    return StoredScan(
        id=row["id"], label=row["label"], status=row["status"], created_at=_aware(row["created_at"]),
        paths=list(row["paths"] or []), files=int(row["files"]), bytes=int(row["bytes"]),
        seconds=float(row["seconds"]), files_per_s=float(row["files_per_s"]), document=row["document"],
    )


def _audit_from_row(row: Any, findings: tuple[dict[str, Any], ...]) -> StoredAudit:
    return StoredAudit(
        id=row["id"], label=row["label"], created_at=_aware(row["created_at"]), subject_key=row["subject_key"],
        subject_name=row["subject_name"], source=row["source"], source_detail=row["source_detail"],
        zfs_version=row["zfs_version"], findings_count=int(row["findings_count"]),
        worst_severity=row["worst_severity"], previous_id=row["previous_id"],
        facts=row["facts"], document=row["document"], findings=findings,
    )


def _reader(engine: Engine) -> Engine:
    """The engine of the store's reads (`Store.reader`): on PostgreSQL outside a transaction.

    psycopg opens a transaction before a connection's first statement (a BEGIN of its own, one round trip)
    and the pool ends it when the connection is returned (a ROLLBACK, another): two round trips to the
    database server per read for nothing, since under PostgreSQL's READ COMMITTED every statement takes a
    snapshot of its own either way. A server page makes several reads, and each round trip is a wait on
    a process that shares the machine's cores (bench/RESULTS.md, "Server pages under load"). Writes keep
    `engine.begin()`: their transactions are what makes them all-or-nothing. SQLite's driver starts no
    transaction for a SELECT, so its reads are unchanged (the same engine)."""
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="AUTOCOMMIT")
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _insert_run(connection: Any, run_id: str, *, status: str, warnings: Sequence[Warning], **values: Any) -> None:
    check("a label", values.get("label"))  # every entry checks first; this is the store's own backstop
    connection.execute(
        insert(schema.runs).values(
            id=run_id,
            status=status,
            created_at=_now(),
            finished_at=_now() if status != "running" else None,
            warnings=[w.to_json() for w in warnings],
            stackbench_version=__version__,
            **values,
        )
    )


def _insert_measurement(
    connection: Any, run_id: str, outputs: Sequence["OutputRecord"], cells: Sequence["CellRecord"]
) -> list[str]:
    group_id = new_id()
    output_ids = [new_id() for _ in outputs]
    ids: list[str] = []
    seq_out = connection.execute(
        select(func.count()).select_from(schema.fio_outputs).where(schema.fio_outputs.c.run_id == run_id)
    ).scalar_one()
    seq_cell = connection.execute(
        select(func.count()).select_from(schema.cells).where(schema.cells.c.run_id == run_id)
    ).scalar_one()
    for segment, (output_id, output) in enumerate(zip(output_ids, outputs)):
        connection.execute(
            insert(schema.fio_outputs).values(
                id=output_id,
                run_id=run_id,
                seq=seq_out + segment,
                fio_version=output.fio_version,
                command=output.command,
                job_file=output.job_file,
                raw_text=output.raw_text,
                exit_code=output.exit_code,
                source_name=output.source_name,
                started_at=output.started_at,
                finished_at=_now(),
                segment=segment,
                group_id=group_id,
            )
        )
    for offset, record in enumerate(cells):
        cell = Cell(
            id=new_id(),
            seq=seq_cell + offset,
            workload=record.workload,
            result=record.result,
            samples=tuple(record.samples),
            measurement=record.measurement,
        )
        connection.execute(insert(schema.cells).values(**_cell_row(run_id, output_ids[0], cell)))
        if cell.samples:
            connection.execute(
                insert(schema.samples),
                [
                    {
                        "cell_id": cell.id,
                        "idx": index,
                        "segment": sample.segment,
                        "t_s": sample.t_s,
                        "iops": sample.iops,
                        "bw_bytes": sample.bw_bytes,
                        "clat_mean_ns": sample.clat_mean_ns,
                        "ramp": sample.ramp,
                    }
                    for index, sample in enumerate(cell.samples)
                ],
            )
        ids.append(cell.id)
    return ids


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _cell_row(run_id: str, output_id: str, cell: Cell) -> dict[str, Any]:
    result, workload = cell.result, cell.workload
    clat, sync = result.clat, result.sync_lat
    return {
        "id": cell.id,
        "run_id": run_id,
        "fio_output_id": output_id,
        "seq": cell.seq,
        "key": workload.key,
        "pattern": cell.pattern,
        "rw": workload.rw,
        "direction": result.direction,
        "bs": workload.bs,
        "iodepth": workload.iodepth,
        "numjobs": workload.numjobs,
        "sync": workload.sync,
        "direct": workload.direct,
        "host": result.host,
        "iops": result.iops,
        "bw_bytes": result.bw_bytes,
        "clat_mean_ns": clat.mean_ns if clat else None,
        "clat_p50_ns": clat.p50_ns if clat else None,
        "clat_p99_ns": clat.p99_ns if clat else None,
        "clat_p999_ns": clat.p999_ns if clat else None,
        "sync_lat_mean_ns": sync.mean_ns if sync else None,
        "sync_lat_p99_ns": sync.p99_ns if sync else None,
        "usr_cpu": result.usr_cpu,
        "sys_cpu": result.sys_cpu,
        "workload": workload.to_dict(),
        "result": result.to_dict(),
        "measurement": cell.measurement,
    }


def _cell_from_row(row: Any, samples: tuple[Sample, ...] = ()) -> Cell:
    data = dict(row["result"])
    for key in ("clat", "sync_lat"):
        if data.get(key) is not None:
            data[key] = Latency(**data[key])
    return Cell(
        id=row["id"],
        seq=row["seq"],
        workload=Workload.from_dict(row["workload"]),
        result=DirectionResult(**data),
        fio_output_id=row["fio_output_id"],
        samples=samples,
        measurement=row["measurement"],
    )


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)  # SQLite drops the zone; we always store UTC
    return value


def _run_from_row(row: Any) -> Run:
    return Run(
        id=row["id"],
        label=row["label"],
        status=row["status"],
        source=row["source"],
        created_at=_aware(row["created_at"]),
        finished_at=_aware(row["finished_at"]),
        target=row["target"],
        plan_name=row["plan_name"],
        planned_cells=row["planned_cells"],
        facts=row["facts"] or {},
        warnings=tuple(Warning.from_json(w) for w in row["warnings"] or ()),  # dicts; plain strings before codes
    )
