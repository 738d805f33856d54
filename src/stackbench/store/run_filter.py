"""Which runs a list shows and in what order: the filter a runs page or a command asks for, turned into SQL
conditions whose every value is a bound parameter (a search's wildcards escaped: user text is data), and
the whitelisted sort orders. Kept apart from accounts.py, which decides who may see a run; a list applies
both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Boolean, bindparam, func, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from stackbench.store import schema


@dataclass(frozen=True)
class RunFilter:
    search: str | None = None  # a part of the label, target or host, any case (wildcards are plain text)
    plan: str | None = None  # the preset or plan name (`import` for imported runs)
    fs_type: str | None = None  # the target's file system (facts' target.fs_type)
    device_model: str | None = None  # the target's first block device model (facts' target.block_devices)
    status: str | None = None
    owner: str | None = None  # the owner account's name
    visibility: str | None = None
    since: date | None = None  # created on or after this day (UTC)
    until: date | None = None  # created on or before this day (UTC)
    sync_writes: bool = False  # only runs with a 4 KiB random synchronous write cell: SLOG candidates


# The runs list's orders (`visible_runs`' `sort`): a whitelist of names, each its columns; `-name` reverses.
# Every order ends with the newest first and the id, so that equal values keep one order between pages; text
# a person types sorts in any case (SQLite's binary order puts "Zed" before "alpha").
SORTS = {"created": (schema.runs.c.created_at,), "label": (func.lower(schema.runs.c.label),),
         "status": (schema.runs.c.status,), "plan": (schema.runs.c.plan_name,),
         "target": (func.lower(schema.runs.c.target),), "host": (func.lower(schema.runs.c.host),),
         "fs": (schema.runs.c.fs_type,)}
NEWEST_FIRST = "-created"
# The runs list's facets: (name, the column whose values it counts); the owner's is the account's name


def has_sync_write_cell() -> Any:
    """A run with a 4 KiB random synchronous write cell: what `stackbench slog` ranks (analysis/slog.py
    looks for that cell at QD1 and QD16), so `synclat` sweeps, `slog` candidates, `run --preset slog` and
    imported `diskinfo -wS` or fio sync-write outputs."""
    cells, runs = schema.cells, schema.runs
    return (
        select(cells.c.id)
        .where(cells.c.run_id == runs.c.id, cells.c.rw == "randwrite", cells.c.bs == 4096,
               cells.c.direction == "write", cells.c.sync.is_(True))
        .correlate(runs)
        .exists()
    )


def filtered(where: RunFilter) -> list[Any]:
    """`where` as SQL conditions on `runs`, every value a bound parameter; the search a LIKE with its
    wildcards escaped, so that `50%_mix` finds that text and nothing else."""
    runs = schema.runs
    conditions = []
    if where.search:
        pattern = bindparam("search", like_pattern(where.search))
        conditions.append(or_(*(ContainsAnyCase(column, pattern)
                                for column in (runs.c.label, runs.c.target, runs.c.host))))
    for column, value in ((runs.c.plan_name, where.plan), (runs.c.fs_type, where.fs_type),
                          (runs.c.device_model, where.device_model), (runs.c.status, where.status),
                          (runs.c.visibility, where.visibility)):
        if value:
            conditions.append(column == value)
    if where.owner:
        conditions.append(runs.c.owner.in_(select(schema.accounts.c.id).where(schema.accounts.c.name == where.owner)))
    if where.since:
        conditions.append(runs.c.created_at >= datetime.combine(where.since, datetime.min.time(), timezone.utc))
    if where.until:
        end = datetime.combine(where.until, datetime.min.time(), timezone.utc) + timedelta(days=1)
        conditions.append(runs.c.created_at < end)
    if where.sync_writes:
        conditions.append(has_sync_write_cell())
    return conditions


def tallied(where: RunFilter) -> list[Any] | None:
    """`where` as conditions on `run_facet_tallies` (migration 0016) when it is made only of facet values,
    so that its counts are read from the kept tallies; None when it needs the runs themselves (a search,
    dates, the SLOG cell). A facet's value is never empty here (an empty one filters nothing, as in
    `filtered`), so it cannot match a missing value's ''."""
    if where.search or where.since or where.until or where.sync_writes:
        return None
    tallies = schema.run_facet_tallies
    conditions = [column == value for column, value in (
        (tallies.c.plan_name, where.plan), (tallies.c.fs_type, where.fs_type),
        (tallies.c.device_model, where.device_model), (tallies.c.status, where.status),
        (tallies.c.visibility, where.visibility)) if value]
    if where.owner:
        conditions.append(tallies.c.owner.in_(select(schema.accounts.c.id).where(schema.accounts.c.name == where.owner)))
    return conditions


def like_pattern(text: str) -> str:
    """`text` as the LIKE pattern of a search for it anywhere: its wildcards (`%`, `_`) and the escape
    character (`/`) escaped, so that they are plain text."""
    return "%" + text.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"


class ContainsAnyCase(FunctionElement):
    """`column LIKE pattern ESCAPE '/'` in any case: ILIKE on PostgreSQL; on SQLite a plain LIKE, which ignores
    ASCII case already and folds nothing else, as SQLite's lower() (SQLAlchemy's `icontains` wraps both sides
    in lower(), which cost five times the LIKE over 10,000 runs' label, target and host)."""

    type = Boolean()
    name = "contains_any_case"
    inherit_cache = True


@compiles(ContainsAnyCase)
def _contains_any_case(element: ContainsAnyCase, compiler: Any, **kw: Any) -> str:
    column, pattern = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"lower({column}) LIKE lower({pattern}) ESCAPE '/'"


@compiles(ContainsAnyCase, "sqlite")
def _contains_any_case_sqlite(element: ContainsAnyCase, compiler: Any, **kw: Any) -> str:
    column, pattern = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"{column} LIKE {pattern} ESCAPE '/'"


@compiles(ContainsAnyCase, "postgresql")
def _contains_any_case_postgresql(element: ContainsAnyCase, compiler: Any, **kw: Any) -> str:
    column, pattern = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"{column} ILIKE {pattern} ESCAPE '/'"


def order_by(sort: str) -> tuple[Any, ...]:
    """The ORDER BY of a runs list sorted by `sort` (a name of SORTS, `-` first for descending); the
    caller checked the name."""
    name = sort.removeprefix("-")
    descending = sort.startswith("-")
    runs = schema.runs
    first = tuple((column.desc() if descending else column.asc()).nulls_last() for column in SORTS[name])
    return (*first, runs.c.created_at.desc(), runs.c.id) if name != "created" else \
        (runs.c.created_at.desc() if descending else runs.c.created_at.asc(), runs.c.id)
