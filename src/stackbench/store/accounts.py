"""Accounts, sessions and ownership of results: what `stackbench serve` stores (share links: share_links.py).

Who may see a stored run, scan or audit is decided here, once, as one SQL condition (`_visible`, the same
for the tables in `OWNED`): the lists and the loading of a single item all use it, so a list can
never show what a page would refuse or the other way round. The rule (docs/server.md, "Who sees what"):

- an account sees the runs (scans, audits) it owns, whatever their visibility;
- every account sees those whose owner made them `team`;
- those without an owner (stored by the CLI, or by an account since removed) are seen by admins only,
  until `stackbench user claim` gives them an owner. Nothing is ever visible to everyone.

An admin does not see other accounts' private runs: private means private.

Secrets (session ids, share tokens) reach this module only as keyed hashes; the web layer makes them.
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

from sqlalchemy import Integer, and_, bindparam, case, delete, false, func, insert, null, or_, select, text, true, update
from sqlalchemy.exc import IntegrityError

from stackbench.base.errors import StoreError
from stackbench.model.results import TOTAL_HOST, Cell, Run, new_id
from stackbench.store import schema
from stackbench.store.database import PLANNED_PER_EXECUTION, guard_public_methods
from stackbench.store.reads import read_runs
from stackbench.store.repository import Store
from stackbench.store.rows import aware, run_from_row
from stackbench.store.run_filter import NEWEST_FIRST, RunFilter, filtered, order_by, parameters_of, shape_of, tallied
from stackbench.store.share_links import SHARE_KINDS, ShareLink, ShareLinks, now


@dataclass(frozen=True)
class Account:
    id: str
    name: str
    is_admin: bool
    created_at: datetime


@dataclass(frozen=True)
class Viewer:
    """Who is asking, as the visibility rule needs it: an account's id and whether it is an admin."""

    account_id: str
    is_admin: bool


@dataclass(frozen=True)
class SessionRecord:
    account: Account
    csrf_secret: str
    created_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class RunSummary:
    """What a list of runs shows of each (the runs and SLOG pages): a run without its facts, warnings and
    cells, whose JSON a page of 50 rows would otherwise read and parse for nothing."""

    id: str
    label: str | None
    status: str
    source: str
    created_at: datetime
    target: str | None
    plan_name: str | None
    planned_cells: int | None
    host: str | None = None
    fs_type: str | None = None
    key_cell: KeyCell | None = None  # the plan's key cell, what the list's headline column shows


@dataclass(frozen=True)
class KeyCell:
    """A run's key cell as a runs list shows it: its first cell (the plan's first workload: quick's 4 KiB
    random read at QD 1), the total of a fleet run's hosts."""

    pattern: str
    iops: float
    bw_bytes: float


FACETS = ("plan", "fs", "device", "status", "owner", "visibility")
FACET_VALUES = 12  # the most frequent values of a facet that the list shows


# The results that have an owner and a visibility (migration 0005; tune sessions 0015), by kind.
OWNED = {"run": schema.runs, "scan": schema.scans, "audit": schema.audits, "tune": schema.tune_sessions}


def _visible(viewer: Viewer, table: Any = schema.runs) -> Any:
    """The one visibility rule as an SQL condition on `table`, one of OWNED or `run_tallies` (see the
    module's docstring)."""
    return _visible_to(viewer.account_id, viewer.is_admin, table)


def _visible_to(account_id: Any, is_admin: bool, table: Any = schema.runs) -> Any:
    """`_visible`, with the account's id a value or a bound parameter (for statements built once). Also a
    condition on `run_tallies` and `run_facet_tallies` (migrations 0008, 0016), which keep runs without an
    owner under the owner ''."""
    tallies = table is schema.run_tallies or table is schema.run_facet_tallies
    unowned = table.c.owner == "" if tallies else table.c.owner.is_(None)
    return or_(
        table.c.owner == account_id,
        and_(table.c.visibility == "team", ~unowned),
        and_(unowned, true() if is_admin else false()),
    )


# The session read of every request, built once per process with its value as a parameter: building the
# statement and the cache key SQLAlchemy derives from every new one cost two thirds of the read (~80 of
# ~120 us on the bench machine).
_SESSION = (
    select(schema.sessions.c.csrf_secret, schema.sessions.c.created_at, schema.sessions.c.last_seen_at,
           schema.accounts)
    .join(schema.accounts, schema.accounts.c.id == schema.sessions.c.account_id)
    .where(schema.sessions.c.id_hash == bindparam("id_hash"))
)


@functools.cache
def _runs_seen_query(is_admin: bool) -> Any:
    """`runs_seen`'s statement, built once per process for admins and once for other accounts (as
    `_SESSION`): the runs among the bound `run_ids` that the bound `viewer` (an account id) may see."""
    runs = schema.runs
    return select(runs).where(runs.c.id.in_(bindparam("run_ids", expanding=True)),
                              _visible_to(bindparam("viewer"), is_admin))


@guard_public_methods  # every public method reports a database failure as one line, as Store's do
class Accounts(ShareLinks):
    """The server's tables in a results store (the same SQLite file or PostgreSQL database)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine
        self.reader = store.reader  # reads outside a transaction on PostgreSQL (database._reader)
        self.where = store.where  # how `guarded` names the store in a one-line error
        self._has_search_index: bool | None = None

    def _shape(self, where: RunFilter) -> tuple[str, ...]:
        """`shape_of(where)`, narrowed by SQLite's substring index (migration 0018 made it where FTS5 has the
        trigram tokenizer) when the store has it, which is asked once. PostgreSQL's planner picks its own
        (`ix_runs_search`) for the search's ILIKE."""
        if where.search and self._has_search_index is None:
            self._has_search_index = False
            if self.engine.dialect.name == "sqlite":
                with self.reader.connect() as connection:
                    self._has_search_index = connection.execute(text(
                        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_search'")).first() is not None
        return shape_of(where, bool(self._has_search_index))

    # -- accounts --------------------------------------------------------------------------------

    def add_account(self, name: str, password_hash: str, *, admin: bool) -> Account:
        account = Account(id=new_id(), name=name, is_admin=admin, created_at=now())
        try:
            with self.engine.begin() as connection:
                connection.execute(insert(schema.accounts).values(
                    id=account.id, name=name, password_hash=password_hash, is_admin=admin,
                    created_at=account.created_at,
                ))
        except IntegrityError:
            raise StoreError(f"an account named {name!r} exists already",
                             "Choose another name, or remove it first with `stackbench user remove`") from None
        return account

    def list_accounts(self) -> list[Account]:
        with self.reader.connect() as connection:
            rows = connection.execute(select(schema.accounts).order_by(schema.accounts.c.name)).mappings().all()
        return [_account(row) for row in rows]

    def count_accounts(self) -> int:
        with self.reader.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(schema.accounts)).scalar_one())

    def account_named(self, name: str) -> Account:
        found = self.credentials(name)
        if found is None:
            raise StoreError(f"no account named {name!r}", "List the accounts with `stackbench user list`")
        return found[0]

    def credentials(self, name: str) -> tuple[Account, str] | None:
        """The account and its password hash, for checking a login; None when there is no such account."""
        with self.reader.connect() as connection:
            row = connection.execute(
                select(schema.accounts).where(schema.accounts.c.name == name)
            ).mappings().first()
        return None if row is None else (_account(row), row["password_hash"])

    def set_password_hash(self, account_id: str, password_hash: str, *, end_sessions: bool = False) -> None:
        """Store a new hash (a rehash at login, or a new password); a new password ends every session."""
        with self.engine.begin() as connection:
            connection.execute(update(schema.accounts).where(schema.accounts.c.id == account_id)
                               .values(password_hash=password_hash))
            if end_sessions:
                connection.execute(delete(schema.sessions).where(schema.sessions.c.account_id == account_id))

    def remove_account(self, name: str) -> tuple[Account, dict[str, int]]:
        """Remove an account in one transaction: its sessions end, its share links stop working, and its
        runs, scans and audits lose their owner (admins only see them then, until claimed), its API tokens are
        deleted. Returns the account and how many of each kind ("run", "scan", "audit") it owned."""
        account = self.account_named(name)
        with self.engine.begin() as connection:
            connection.execute(delete(schema.sessions).where(schema.sessions.c.account_id == account.id))
            connection.execute(delete(schema.share_links).where(schema.share_links.c.owner == account.id))
            connection.execute(delete(schema.api_tokens).where(schema.api_tokens.c.owner == account.id))
            owned = {
                kind: connection.execute(
                    update(table).where(table.c.owner == account.id).values(owner=None, visibility="private")
                ).rowcount
                for kind, table in OWNED.items()
            }
            connection.execute(delete(schema.accounts).where(schema.accounts.c.id == account.id))
        return account, owned

    # -- the server's secret ---------------------------------------------------------------------

    def server_secret(self, name: str = "hash-key") -> bytes:
        """The server's random key `name`, generated and stored on first use (no default secret exists)."""
        table = schema.server_secrets
        for _ in range(2):
            with self.reader.connect() as connection:
                value = connection.execute(select(table.c.value).where(table.c.name == name)).scalar()
            if value is not None:
                return bytes.fromhex(value)
            try:
                with self.engine.begin() as connection:
                    connection.execute(insert(table).values(name=name, value=secrets.token_hex(32), created_at=now()))
            except IntegrityError:
                pass  # another server process created it first: read theirs
        raise StoreError(f"cannot create the server secret in {self.store.where}", "Check the store is writable")

    # -- sessions --------------------------------------------------------------------------------

    def create_session(self, account_id: str, id_hash: str, csrf_secret: str) -> None:
        moment = now()
        with self.engine.begin() as connection:
            connection.execute(insert(schema.sessions).values(
                id_hash=id_hash, account_id=account_id, csrf_secret=csrf_secret, created_at=moment,
                last_seen_at=moment,
            ))

    def session(self, id_hash: str) -> SessionRecord | None:
        with self.reader.connect() as connection:
            row = connection.execute(_SESSION, {"id_hash": id_hash}).mappings().first()
        if row is None:
            return None
        return SessionRecord(_account(row), row["csrf_secret"], aware(row["created_at"]), aware(row["last_seen_at"]))

    def touch_session(self, id_hash: str, moment: datetime) -> None:
        with self.engine.begin() as connection:
            connection.execute(update(schema.sessions).where(schema.sessions.c.id_hash == id_hash)
                               .values(last_seen_at=moment))

    def end_session(self, id_hash: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(schema.sessions).where(schema.sessions.c.id_hash == id_hash))

    def end_sessions_older_than(self, idle: timedelta, absolute: timedelta) -> int:
        """Delete sessions past either timeout (they are refused anyway; this keeps the table small)."""
        s, moment = schema.sessions, now()
        with self.engine.begin() as connection:
            return connection.execute(delete(s).where(
                or_(s.c.last_seen_at < moment - idle, s.c.created_at < moment - absolute)
            )).rowcount

    # -- ownership -------------------------------------------------------------------------------

    def claim(self, account_id: str, run_ids: Sequence[str], *, take: bool = False) -> int:
        """Make `account_id` the owner of these runs (all or none); see `claim_items`."""
        return self.claim_items(account_id, [("run", run_id) for run_id in run_ids], take=take)

    def claim_items(self, account_id: str, items: Sequence[tuple[str, str]], *, take: bool = False) -> int:
        """Make `account_id` the owner of these (kind, id) runs, scans and audits, all or none in one
        transaction. Items owned by another account are refused unless `take`: claiming must not silently
        move someone's results. Returns how many were claimed."""
        claimed = 0
        with self.engine.begin() as connection:
            for kind, table in OWNED.items():
                ids = list(dict.fromkeys(i for k, i in items if k == kind))
                if not ids:
                    continue
                rows = connection.execute(select(table.c.id, table.c.owner).where(table.c.id.in_(ids))).all()
                missing = sorted(set(ids) - {row[0] for row in rows})
                if missing:
                    raise StoreError(f"no {kind} with id {missing[0]!r}",
                                     f"List the stored {kind}s with `stackbench runs --kind {kind}`")
                owned = [row[0] for row in rows if row[1] is not None and row[1] != account_id]
                if owned and not take:
                    raise StoreError(f"{kind} {owned[0][:12]} has an owner already",
                                     "Pass --take to move it to this account")
                claimed += connection.execute(update(table).where(table.c.id.in_(ids)).values(owner=account_id)).rowcount
        return claimed

    def unowned_run_ids(self) -> list[str]:
        return [i for _, i in self.unowned_items(("run",))]

    def unowned_items(self, kinds: Sequence[str] = tuple(OWNED)) -> list[tuple[str, str]]:
        """(kind, id) of every run, scan and audit without an owner."""
        with self.reader.connect() as connection:
            return [(kind, i) for kind in kinds
                    for i in connection.execute(select(OWNED[kind].c.id).where(OWNED[kind].c.owner.is_(None))).scalars()]

    def access(self, viewer: Viewer, kind: str, object_id: str) -> tuple[str | None, str] | None:
        """(owner, visibility) of the run, scan or audit when `viewer` may see it, else None: absent and
        hidden alike."""
        table = OWNED[kind]
        with self.reader.connect() as connection:
            row = connection.execute(
                select(table.c.owner, table.c.visibility).where(table.c.id == object_id, _visible(viewer, table))
            ).first()
        return None if row is None else (row[0], row[1])

    def runs_seen(
        self, viewer: Viewer, run_ids: Sequence[str], *, samples_for: Callable[[Cell], bool] | None = None
    ) -> dict[str, tuple[str | None, str, Run]]:
        """{id: (owner, visibility, run)} of those of `run_ids` that `viewer` may see, read together: the
        visibility rule is a condition of the query that reads the runs, so a run is checked and read in
        one statement, and a compare page's two runs in the same one. `samples_for` as in `read_runs`."""
        with self.reader.connect() as connection:
            found = read_runs(connection, _runs_seen_query(viewer.is_admin),
                              {"run_ids": sorted(set(run_ids)), "viewer": viewer.account_id}, samples_for=samples_for)
        return {run.id: (row["owner"], row["visibility"], run) for row, run in found}

    def latest_complete_runs(self, viewer: Viewer) -> list[Run]:
        """The newest complete run of each series that `viewer` may see, with cells (no samples): what
        `/metrics` exposes, in two statements however many runs are stored, not a read of every run.

        A series is report/openmetrics.py's `series_of`: the host named in the facts
        (`system.hostname`), the target and the preset. The host is read from the facts' JSON by the
        database; a hostname that is not a string (the report takes it as "") is kept apart by its JSON type,
        so each group here lies within one series of the report's, and `latest_complete` over these runs
        picks exactly the runs it picks over all of them."""
        runs = schema.runs
        path = ("system", "hostname")
        host = func.coalesce(runs.c.facts[path].as_string(), "")
        if self.engine.dialect.name == "postgresql":
            kind = func.json_typeof(runs.c.facts[path])
        else:
            kind = func.json_type(runs.c.facts, "$.system.hostname")
        newest = func.row_number().over(
            partition_by=(host, func.coalesce(kind, ""), func.coalesce(runs.c.target, ""),
                          func.coalesce(runs.c.plan_name, "")),
            order_by=(runs.c.created_at.desc(), runs.c.id.desc()))
        ranked = (select(runs.c.id, newest.label("newest")).where(runs.c.status == "complete", _visible(viewer))
                  .subquery())
        chosen = select(ranked.c.id).where(ranked.c.newest == 1)
        with self.reader.connect() as connection:
            return [run for _, run in read_runs(connection, select(runs).where(runs.c.id.in_(chosen)),
                                                samples_for=lambda _: False)]

    def set_visibility(self, object_id: str, visibility: str, kind: str = "run") -> None:
        if visibility not in schema.VISIBILITIES:
            raise StoreError(f"unknown visibility {visibility!r}", "Use private or team")
        table = OWNED[kind]
        with self.engine.begin() as connection:
            connection.execute(update(table).where(table.c.id == object_id).values(visibility=visibility))

    def visible_items(self, viewer: Viewer, kind: str, *, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """A page of the scans or audits `viewer` may see, newest first, as rows of their listed columns
        (not their documents) with `owner_name`, and how many there are in all."""
        table, accounts = OWNED[kind], schema.accounts
        heavy = {"document", "facts", "settings"}
        condition = _visible(viewer, table)
        query = (
            select(*[c for c in table.c if c.name not in heavy], accounts.c.name.label("owner_name"))
            .select_from(table.outerjoin(accounts, accounts.c.id == table.c.owner))
            .where(condition).order_by(table.c.created_at.desc(), table.c.id).offset(offset).limit(limit)
        )
        with self.reader.connect() as connection:
            rows, total = _page_and_total(connection, query, select(func.count()).select_from(table).where(condition))
        rows = [dict(r) for r in rows]
        for row in rows:
            row["created_at"] = aware(row["created_at"])
        return rows, total

    def visible_runs(
        self, viewer: Viewer, where: RunFilter, *, offset: int, limit: int, whole: bool = True,
        older_than: str | None = None, newer_than: str | None = None, sort: str = NEWEST_FIRST,
        total: int | None = None,
    ) -> tuple[list[tuple[Run | RunSummary, int, str | None, str]], int]:
        """A page of the runs `viewer` may see, newest first: (run, stored cells, owner name, visibility),
        and how many match in all. `whole=False` answers RunSummary rows, for lists that show no facts.

        `older_than` / `newer_than` (a run's id) ask for the page that follows or precedes that run in the
        list instead of skipping `offset` runs: the database starts reading the listing index at that run,
        so a deep page costs what the first one does. A run the viewer may not see (or no longer stored) is
        no anchor: the page is empty, and the caller falls back to the offset. `sort` is a name of `SORTS`
        (`-name` reverses it); in any order but the newest first, pages are skipped to by `offset`. A
        `total` the caller knows already (`run_facets` answers it) is answered as it is, not counted again:
        under a search, counting reads every visible run once more."""
        anchor_id = older_than or newer_than
        if sort != NEWEST_FIRST:  # keyset paging follows the newest-first index; other orders skip
            anchor_id = None
        anchor = None if anchor_id is None else ("older" if older_than else "newer")
        shape = self._shape(where)
        values = {**parameters_of(where), "viewer": viewer.account_id, "offset": offset, "limit": limit,
                  "anchor_id": anchor_id}
        query = _page_query(viewer.is_admin, shape, sort, anchor, whole, total is None)
        with self.reader.connect() as connection:
            rows = list(connection.execute(query, values).mappings().all())
            if total is None:  # counted along as a column of every row; a page past the end has none
                total = int(rows[0]["list_total"]) if rows else \
                    int(connection.execute(_count_query(viewer.is_admin, shape), values).scalar_one())
        made = run_from_row if whole else _summary_from_row
        return [(made(r), int(r["cell_count"]), r["owner_name"], r["visibility"]) for r in rows], total

    def run_facets(self, viewer: Viewer, where: RunFilter) -> tuple[dict[str, list[tuple[str, int]]], int]:
        """How many of the runs `viewer` may see under `where` have each plan, file system, device model,
        status, owner and visibility (`FACETS`), the most frequent first, `FACET_VALUES` of each: as datasette's facets;
        and how many they are in all (every run is in one combination), which `visible_runs` then need not count.

        One statement that answers the runs' number per combination of the six, a few dozen rows, and each
        facet's counts summed from those here, rather than six GROUP BYs (`_facets_query`)."""
        with self.reader.connect() as connection:
            rows = connection.execute(_facets_query(viewer.is_admin, self._shape(where)),
                                      {**parameters_of(where), "viewer": viewer.account_id}).all()
        found: dict[str, dict[str, int]] = {name: {} for name in FACETS}
        for *values, count in rows:
            for name, value in zip(FACETS, values):
                if value is not None:
                    found[name][str(value)] = found[name].get(str(value), 0) + int(count)
        return ({name: sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:FACET_VALUES]
                 for name, counts in found.items()}, sum(int(count) for *_, count in rows))


# The runs list's statements are built once per process for each shape of request (who: an admin or not;
# which filters are set; the order; an anchor; whole runs or summaries; whether the total is counted along),
# every value a bound parameter (`viewer`, the filter's as `parameters_of` names them, `offset`, `limit`,
# `anchor_id`), as `_SESSION` is: building the page's statement and the cache key SQLAlchemy derives from a
# new one cost about 3 ms of a list page's ~10 ms of CPU at 10,000 runs; the same statement object keeps its
# cache key and finds its compiled form in the engine's cache. Bounded: the shapes are the requester's choice.
_SHAPES = 512


@functools.lru_cache(maxsize=_SHAPES)
def _page_query(is_admin: bool, shape: tuple[str, ...], sort: str, anchor: str | None, whole: bool,
                with_total: bool) -> Any:
    """The statement of a page of `visible_runs` (its docstring), with its total as a column when
    `with_total`."""
    runs, cells, accounts = schema.runs, schema.cells, schema.accounts
    conditions = [_visible_to(bindparam("viewer"), is_admin), *filtered(shape)]
    # The page's ids are picked first from ix_runs_listing alone (newest first, visibility in the
    # index), and only those runs are read whole: skipping to a deep page walks the index, not every
    # run's facts. Cells are counted for the page's runs only (a correlated count over the indexed
    # run_id). Both keep the list fast with 10,000 runs (bench/serve_bench.py).
    newest_first = (runs.c.created_at.desc(), runs.c.id)
    ordered = order_by(sort)
    limit = bindparam("limit", type_=Integer)
    if anchor is None:
        page_ids = (select(runs.c.id.label("page_id")).where(*conditions).order_by(*ordered)
                    .offset(bindparam("offset", type_=Integer)).limit(limit).subquery())
    else:
        anchor_id = bindparam("anchor_id", type_=runs.c.id.type)
        moment = (select(runs.c.created_at).where(runs.c.id == anchor_id, _visible_to(bindparam("viewer"), is_admin))
                  .scalar_subquery())
        # The plain range on created_at is what lets the database start its index scan at the anchor;
        # the OR only breaks ties between runs created in the same microsecond.
        if anchor == "older":  # after the anchor in the list's order: older, or as old with a greater id
            beyond = and_(runs.c.created_at <= moment, or_(runs.c.created_at < moment, runs.c.id > anchor_id))
            order = newest_first
        else:  # before it, read from the anchor upwards (the page is put back in the list's order below)
            beyond = and_(runs.c.created_at >= moment, or_(runs.c.created_at > moment, runs.c.id < anchor_id))
            order = (runs.c.created_at.asc(), runs.c.id.desc())
        page_ids = (select(runs.c.id.label("page_id")).where(*conditions, beyond).order_by(*order)
                    .limit(limit).subquery())
    cell_count = (select(func.count()).select_from(cells).where(cells.c.run_id == runs.c.id)
                  .correlate(runs).scalar_subquery())
    joined = runs.join(page_ids, page_ids.c.page_id == runs.c.id).outerjoin(accounts, accounts.c.id == runs.c.owner)
    if whole:
        columns = [runs]
    else:  # the summary's columns and its key cell, found for the page's runs only (cells' run_id index)
        key = cells.alias("key_cell")
        first_cell = (select(cells.c.id).where(cells.c.run_id == runs.c.id)
                      .order_by(cells.c.seq, (cells.c.host == TOTAL_HOST).desc(), cells.c.id)
                      .limit(1).correlate(runs).scalar_subquery())
        joined = joined.outerjoin(key, key.c.id == first_cell)
        columns = [*(runs.c[name] for name in (*_SUMMARY_COLUMNS, "visibility")),
                   key.c.pattern.label("key_pattern"), key.c.iops.label("key_iops"),
                   key.c.bw_bytes.label("key_bw_bytes")]
    query = (select(*columns, cell_count.label("cell_count"), accounts.c.name.label("owner_name"))
             .select_from(joined).order_by(*(newest_first if anchor else ordered)))
    if with_total:  # the count rides along as a column of every row (an uncorrelated subquery, computed once),
        # so a list page costs one round trip to the database, not two
        query = query.add_columns(_count_query(is_admin, shape).scalar_subquery().label("list_total"))
    if "search" in shape:  # PostgreSQL's generic plan of a search's page misses ix_runs_search (database.py)
        query = query.execution_options(**{PLANNED_PER_EXECUTION: True})
    return query


@functools.lru_cache(maxsize=_SHAPES)
def _count_query(is_admin: bool, shape: tuple[str, ...]) -> Any:
    """The statement that counts the runs `visible_runs` lists under a filter of `shape` and the visibility
    rule: a sum of the few kept counts when the filter allows it, not a count of every run."""
    viewer = bindparam("viewer")
    if not shape:  # unfiltered: the counts per owner and visibility (migration 0008)
        tallies = schema.run_tallies
        return select(func.coalesce(func.sum(tallies.c.run_count), 0)).where(_visible_to(viewer, is_admin, tallies))
    tally_conditions = tallied(shape)
    if tally_conditions is not None:  # facet values only: the counts per combination of facets (0016)
        tallies = schema.run_facet_tallies
        return (select(func.coalesce(func.sum(tallies.c.run_count), 0))
                .where(_visible_to(viewer, is_admin, tallies), *tally_conditions))
    return select(func.count()).select_from(schema.runs).where(_visible_to(viewer, is_admin), *filtered(shape))


@functools.lru_cache(maxsize=_SHAPES)
def _facets_query(is_admin: bool, shape: tuple[str, ...]) -> Any:
    """`run_facets`' statement: the runs' number per combination of the six facets. Under facet values only
    (or none) the combinations are read as the database keeps them (`run_facet_tallies`, migration 0016): a
    GROUP BY over 10,000 runs was a quarter of the list page's time. A search or dates count the runs in one
    pass (the finder index, `ix_runs_finder`, holds every column it reads)."""
    accounts, tally_conditions, viewer = schema.accounts, tallied(shape), bindparam("viewer")
    if tally_conditions is None:  # a search or dates: the runs that match, counted
        runs = schema.runs
        keyed = (runs.c.plan_name, runs.c.fs_type, runs.c.device_model, runs.c.status, runs.c.owner,
                 runs.c.visibility)
        grouped = (select(*keyed, func.count().label("runs")).where(_visible_to(viewer, is_admin), *filtered(shape))
                   .group_by(*keyed).subquery())
    else:  # facet values only: the kept counts (0016), a few dozen rows whatever the number of runs
        tallies = schema.run_facet_tallies

        def value(name: str) -> Any:  # the runs' value back: NULL where `absent` says it is missing
            return case((tallies.c.absent.op("&")(schema.ABSENT[name]) != 0, null()),
                        else_=tallies.c[name]).label(name)

        grouped = (select(value("plan_name"), value("fs_type"), value("device_model"), tallies.c.status,
                          tallies.c.owner, tallies.c.visibility, tallies.c.run_count.label("runs"))
                   .where(_visible_to(viewer, is_admin, tallies), tallies.c.run_count > 0, *tally_conditions)
                   .subquery())
    return (select(grouped.c.plan_name, grouped.c.fs_type, grouped.c.device_model, grouped.c.status,
                   accounts.c.name, grouped.c.visibility, grouped.c.runs)
            .select_from(grouped.outerjoin(accounts, accounts.c.id == grouped.c.owner)))


def _page_and_total(connection: Any, page: Any, count: Any) -> tuple[list[Any], int]:
    """The rows of a list's page and how many rows the whole list has, in one statement: the count rides
    along as a column of every row (an uncorrelated subquery, computed once), so a list page costs one
    round trip to the database, not two. A page past the end has no rows to carry it: counted apart."""
    rows = connection.execute(page.add_columns(count.scalar_subquery().label("list_total"))).mappings().all()
    if rows:
        return list(rows), int(rows[0]["list_total"])
    return [], int(connection.execute(count).scalar_one())


def _account(row: Any) -> Account:
    return Account(id=row["id"], name=row["name"], is_admin=bool(row["is_admin"]), created_at=aware(row["created_at"]))


_SUMMARY_COLUMNS = tuple(name for name in RunSummary.__dataclass_fields__ if name != "key_cell")


def _summary_from_row(row: Any) -> RunSummary:
    key = None if row["key_iops"] is None else KeyCell(row["key_pattern"], row["key_iops"], row["key_bw_bytes"])
    return RunSummary(**{name: row[name] for name in _SUMMARY_COLUMNS if name != "created_at"},
                      created_at=aware(row["created_at"]), key_cell=key)


__all__ = ["Account", "Accounts", "FACETS", "FACET_VALUES", "KeyCell", "OWNED", "RunFilter", "RunSummary",
           "SHARE_KINDS", "SessionRecord", "ShareLink", "Viewer", "now"]  # ShareLink, SHARE_KINDS, now: share_links.py
