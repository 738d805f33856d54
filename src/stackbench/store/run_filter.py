"""Which runs a list shows and in what order: the filter a runs page or a command asks for, turned into SQL
conditions whose every value is a bound parameter (a search's wildcards escaped: user text is data), and
the whitelisted sort orders. Kept apart from accounts.py, which decides who may see a run; a list applies
both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Boolean, bindparam, func, literal_column, or_, select, table
from sqlalchemy import column as table_column
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


# The filter's fields that are values of a run's own columns, each its bound parameter's name
_VALUE_COLUMNS = {"plan": "plan_name", "fs_type": "fs_type", "device_model": "device_model", "status": "status",
                  "visibility": "visibility"}


# SQLite's substring index of the runs' label, target and host (migration 0018: FTS5, trigram tokenizer),
# where the store has it; not part of the schema's metadata, since a store may lack it
RUN_SEARCH = table("run_search", table_column("run_id"))
SEARCH_INDEX_MIN = 3  # a trigram index answers a search of three characters or more; a shorter one scans


def shape_of(where: RunFilter, search_index: bool = False) -> tuple[str, ...]:
    """Which of `where`'s fields are set (the names of RunFilter's fields, in their order), and
    `search_index` when the search is narrowed by the store's substring index (`search_index`: the store
    has one, SQLite's `run_search`): a list's statements depend on that alone, so that they are built once
    per shape (store/accounts.py) and its values are sent as parameters (`parameters_of`). At most 2**11
    shapes; a cache of them is bounded."""
    fields = tuple(name for name in RunFilter.__dataclass_fields__ if getattr(where, name))
    # FTS5 reads its query as a C string: a NUL (`q=%00`) would end it early, so such a search scans
    indexed = search_index and len(where.search or "") >= SEARCH_INDEX_MIN and "\x00" not in (where.search or "")
    return (*fields, "search_index") if indexed else fields


def parameters_of(where: RunFilter) -> dict[str, Any]:
    """`where`'s values as the bound parameters of `filtered(shape_of(where))` and `tallied`: the search
    as its LIKE pattern, the days as the moments they start and end."""
    values: dict[str, Any] = {name: getattr(where, name) for name in ("owner", *_VALUE_COLUMNS) if getattr(where, name)}
    if where.search:
        values["search"] = like_pattern(where.search)
        values["search_phrase"] = '"' + where.search.replace('"', '""') + '"'  # an FTS5 string: all of it text
    if where.since:
        values["since"] = datetime.combine(where.since, datetime.min.time(), timezone.utc)
    if where.until:
        values["until"] = datetime.combine(where.until, datetime.min.time(), timezone.utc) + timedelta(days=1)
    return values


def filtered(shape: tuple[str, ...]) -> list[Any]:
    """A filter of `shape` as SQL conditions on `runs`, every value a bound parameter named as
    `parameters_of` names it; the search a LIKE whose pattern has its wildcards escaped, so that `50%_mix`
    finds that text and nothing else."""
    runs = schema.runs
    conditions = []
    if "search" in shape:
        pattern = bindparam("search")
        conditions.append(or_(*(ContainsAnyCase(column, pattern)
                                for column in (runs.c.label, runs.c.target, runs.c.host))))
    if "search_index" in shape:  # the runs whose label, target or host hold the search's trigrams: a superset
        # of the LIKE's (FTS5 folds the case of more than ASCII), which the LIKE above then decides on
        conditions.append(runs.c.id.in_(select(RUN_SEARCH.c.run_id)
                                        .where(literal_column("run_search").op("MATCH")(bindparam("search_phrase")))))
    conditions += [runs.c[column] == bindparam(name) for name, column in _VALUE_COLUMNS.items() if name in shape]
    if "owner" in shape:
        conditions.append(runs.c.owner.in_(_owner_ids()))
    if "since" in shape:
        conditions.append(runs.c.created_at >= bindparam("since"))
    if "until" in shape:
        conditions.append(runs.c.created_at < bindparam("until"))
    if "sync_writes" in shape:
        conditions.append(has_sync_write_cell())
    return conditions


def tallied(shape: tuple[str, ...]) -> list[Any] | None:
    """A filter of `shape` as conditions on `run_facet_tallies` (migration 0016) when it is made only of
    facet values, so that its counts are read from the kept tallies; None when it needs the runs themselves
    (a search, dates, the SLOG cell). A facet's value is never empty here (an empty one filters nothing, as
    in `filtered`), so it cannot match a missing value's ''."""
    if {"search", "since", "until", "sync_writes"} & set(shape):
        return None
    tallies = schema.run_facet_tallies
    conditions = [tallies.c[column] == bindparam(name) for name, column in _VALUE_COLUMNS.items() if name in shape]
    if "owner" in shape:
        conditions.append(tallies.c.owner.in_(_owner_ids()))
    return conditions


def _owner_ids() -> Any:
    return select(schema.accounts.c.id).where(schema.accounts.c.name == bindparam("owner"))


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
