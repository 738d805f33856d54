"""Tables of the results store (SQLAlchemy Core).

Queryable values (IOPS, bandwidth, latency percentiles) are columns; the complete parsed result and the
workload are JSON beside them, and the raw fio output is kept verbatim in `fio_outputs`, so any number can
be recomputed by a later version of the parser. The migrations in `migrations/versions` create exactly
these tables; change both together.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    func,
)

from stackbench.base.credentials import scrub

metadata = MetaData()


class ScrubbedJSON(TypeDecorator):
    """A JSON column that can hold a user's words (a command line, a shell command, a config's text):
    every credential in a value is replaced before the value is written (credentials.py), whichever code
    writes it: the CLI, an upload to the server, a future command. Reads are as stored."""

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return None if value is None else scrub(value)


class ScrubbedText(TypeDecorator):
    """A text column that can hold a user's words, scrubbed on write like `ScrubbedJSON`."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return None if value is None else scrub(value)


runs = Table(
    "runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("label", String(200), index=True),
    Column("status", String(16), nullable=False),
    Column("source", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("finished_at", DateTime(timezone=True)),
    Column("target", ScrubbedText),
    Column("plan_name", String(100)),
    Column("planned_cells", Integer),
    Column("facts", ScrubbedJSON, nullable=False),
    Column("warnings", ScrubbedJSON, nullable=False),
    Column("stackbench_version", String(32), nullable=False),
    # 0005: who may see the run on a server (docs/server.md); the CLI stores runs without an owner
    Column("owner", String(32), index=True),
    Column("visibility", String(16), nullable=False, server_default="private"),
    # 0012: facts the runs list searches and counts, copied from `facts` when the run is stored
    Column("host", String(255)),
    Column("fs_type", String(64)),
    Column("device_model", String(255)),  # 0014: the first model of the target's block devices
)

fio_outputs = Table(
    "fio_outputs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("seq", Integer, nullable=False),
    Column("fio_version", String(64)),
    Column("command", ScrubbedJSON),
    Column("job_file", Text),
    Column("raw_text", Text, nullable=False),
    Column("exit_code", Integer),
    Column("source_name", ScrubbedText),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    # 0002: the outputs of one cell measured in several fio runs share a group id, ordered by segment
    Column("segment", Integer),
    Column("group_id", String(32)),
)

cells = Table(
    "cells",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("fio_output_id", String(32), ForeignKey("fio_outputs.id", ondelete="CASCADE")),
    Column("seq", Integer, nullable=False),
    Column("key", String(200), nullable=False),
    Column("pattern", String(200), nullable=False),
    Column("rw", String(16), nullable=False),
    Column("direction", String(8), nullable=False),
    Column("bs", BigInteger, nullable=False),
    Column("iodepth", Integer, nullable=False),
    Column("numjobs", Integer, nullable=False),
    Column("sync", Boolean, nullable=False),
    Column("direct", Boolean, nullable=False),
    Column("host", String(255)),
    Column("iops", Float, nullable=False),
    Column("bw_bytes", Float, nullable=False),
    Column("clat_mean_ns", Float),
    Column("clat_p50_ns", Float),
    Column("clat_p99_ns", Float),
    Column("clat_p999_ns", Float),
    Column("sync_lat_mean_ns", Float),
    Column("sync_lat_p99_ns", Float),
    Column("usr_cpu", Float),
    Column("sys_cpu", Float),
    Column("workload", JSON, nullable=False),
    Column("result", JSON, nullable=False),
    # 0002: how the cell was measured (mode, segments, seconds, why it stopped)
    Column("measurement", JSON),
)

# 0002: fio's per-second samples of each cell; ramp samples are kept but flagged
samples = Table(
    "samples",
    metadata,
    Column("cell_id", String(32), ForeignKey("cells.id", ondelete="CASCADE"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("segment", Integer, nullable=False),
    Column("t_s", Float, nullable=False),
    Column("iops", Float, nullable=False),
    Column("bw_bytes", Float),
    Column("clat_mean_ns", Float),
    Column("ramp", Boolean, nullable=False),
)

# 0012: the machine's conditions, sampled each second around each fio process of a measured run
# (probe/conditions.py): CPU/IO/memory pressure, CPU shares, clock, memory, the target's devices' diskstats,
# the ZFS ARC, scrubs; one row per fio process, on its first fio output
conditions = Table(
    "conditions",
    metadata,
    Column("fio_output_id", String(32), ForeignKey("fio_outputs.id", ondelete="CASCADE"), primary_key=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("group_id", String(32)),
    Column("seconds", JSON, nullable=False),
)

# 0003: success criteria ("seq write 1M >= 117 MB/s"), parsed into `spec`
goals = Table(
    "goals",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("text", Text, nullable=False),
    Column("spec", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# 0004: `smallblocks --db` scans. The columns are what `runs` lists and a query filters on; `document` is
# the scan's JSON exactly as `smallblocks --json` printed it (histogram, recommendation, usage estimates,
# settings), from which `show` prints it again in every format.
scans = Table(
    "scans",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("label", String(200), index=True),
    Column("status", String(16), nullable=False),  # complete | partial (interrupted)
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("paths", ScrubbedJSON, nullable=False),
    Column("files", BigInteger, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("seconds", Float, nullable=False),
    Column("files_per_s", Float, nullable=False),
    Column("special_small_blocks", BigInteger),  # the recommendation; null without --special-size
    Column("settings", ScrubbedJSON, nullable=False),
    Column("document", ScrubbedJSON, nullable=False),
    Column("stackbench_version", String(32), nullable=False),
    # 0005: who may see it on a server (docs/server.md), as on runs
    Column("owner", String(32), index=True),
    Column("visibility", String(16), nullable=False, server_default="private"),
)

# 0004: `audit --db` audits: who was audited (`subject_key`, docs/audit.md "Stored audits"), from which
# source, the facts summary, and the printed JSON document (with the changes since `previous_id`).
audits = Table(
    "audits",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("label", String(200), index=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("subject_key", String(200), index=True),  # null: the facts do not say which machine
    Column("subject_name", ScrubbedText),
    Column("source", String(16), nullable=False),  # host | guest | capture | config
    Column("source_detail", ScrubbedText),
    Column("zfs_version", String(100)),
    Column("findings_count", Integer, nullable=False),
    Column("worst_severity", String(8)),  # of the most severe finding; null: none
    Column("previous_id", String(32)),  # the stored audit of the same subject this one was compared with
    Column("facts", ScrubbedJSON, nullable=False),
    Column("document", ScrubbedJSON, nullable=False),
    Column("stackbench_version", String(32), nullable=False),
    # 0005: who may see it on a server (docs/server.md), as on runs
    Column("owner", String(32), index=True),
    Column("visibility", String(16), nullable=False, server_default="private"),
)

# 0004: one row per finding of a stored audit, in the audit's order (most severe first)
audit_findings = Table(
    "audit_findings",
    metadata,
    Column("audit_id", String(32), ForeignKey("audits.id", ondelete="CASCADE"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("rule", String(64), nullable=False, index=True),
    Column("severity", String(8), nullable=False),
    Column("subject", ScrubbedText, nullable=False),
    Column("vm", ScrubbedText),
    Column("disks", ScrubbedJSON, nullable=False),
    Column("evidence", ScrubbedText, nullable=False),
    Column("fix", ScrubbedText, nullable=False),
)

# 0015: `tune --apply` sessions, stored when they end: how (`status`), what they were on, how many knobs they
# tried and kept, and the session's JSON document as `tune --json` printed it (with the ids of its arms' runs
# in each `compare`), from which `show` prints its report again in every format.
tune_sessions = Table(
    "tune_sessions",
    metadata,
    Column("id", String(32), primary_key=True),  # the session id tune prints (its journal's name)
    Column("label", String(200), index=True),
    Column("status", String(16), nullable=False),  # completed | interrupted | failed
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("finished_at", DateTime(timezone=True)),
    Column("target", ScrubbedText),
    Column("knobs", Integer, nullable=False),  # knobs the session reported on
    Column("kept", Integer, nullable=False),  # of them, kept
    Column("document", ScrubbedJSON, nullable=False),
    Column("stackbench_version", String(32), nullable=False),
    Column("owner", String(32), index=True),  # who may see it on a server (docs/server.md), as on runs
    Column("visibility", String(16), nullable=False, server_default="private"),
)

# 0005: the tables of results that have an `owner` and a `visibility` (the migration's OWNED; 0015 adds tune_sessions)
VISIBILITIES = ("private", "team")

# 0005: accounts of `stackbench serve`; the password as an argon2id hash, never the password
accounts = Table(
    "accounts",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("password_hash", Text, nullable=False),
    Column("is_admin", Boolean, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# 0005: server-side sessions; the cookie's id is stored only as a keyed hash
sessions = Table(
    "sessions",
    metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("account_id", String(32), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("csrf_secret", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_seen_at", DateTime(timezone=True), nullable=False),
)

# 0005: read-only links to one run (kind "run") or one comparison (kind "compare": object_id is A,
# other_id B); the token is stored only as a keyed hash
share_links = Table(
    "share_links",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("object_id", String(32), nullable=False, index=True),
    Column("other_id", String(32), index=True),  # 0009: for the triggers that end links (ix_share_links_other_id)
    Column("owner", String(32), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("note", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
)

# 0005: the server's random key, generated on its first start (there is no default secret)
server_secrets = Table(
    "server_secrets",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# 0006: API tokens for `stackbench push` (scope "push") and `/metrics` (scope "metrics"); the token is
# stored only as a keyed hash; expires_at null: until revoked
TOKEN_SCOPES = ("push", "metrics")
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("owner", String(32), ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("scope", String(16), nullable=False),
    Column("note", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True)),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
)

# 0007: the runs list's order and visibility test from one index (newest first; see the migration); 0012
# added the columns a search reads, so that a searched page reads the index in its order, not the runs
Index("ix_runs_listing", runs.c.created_at.desc(), runs.c.id, runs.c.owner, runs.c.visibility, runs.c.label,
      runs.c.target, runs.c.host)
# 0012: every column the runs list's facets count, so that they read this index, not the runs (0014 added
# the device model)
Index("ix_runs_finder", runs.c.owner, runs.c.visibility, runs.c.status, runs.c.plan_name, runs.c.fs_type,
      runs.c.device_model, runs.c.created_at, runs.c.label, runs.c.host, runs.c.target)
# 0017: the list sorted by label (lower(label) descending, then its tie-breaks) read in order; NULLS LAST on
# PostgreSQL, which the migration says in SQL
Index("ix_runs_label_order", func.lower(runs.c.label).desc(), runs.c.created_at.desc(), runs.c.id, runs.c.owner,
      runs.c.visibility)
# 0018: the search's substring index, made only where the database can (PostgreSQL's GIN index of trigrams,
# `ix_runs_search`, with pg_trgm; SQLite's FTS5 table `run_search`, kept by triggers, and the tables FTS5 keeps
# beside it). Not described here: a store may lack it (a search then scans), and SQLAlchemy has no type for it.
SEARCH_INDEX_TABLES = ("run_search", *(f"run_search_{part}" for part in ("data", "idx", "content", "docsize", "config")))

# 0007: rate-limit events of `stackbench serve` (failed logins, lookups that found nothing), shared by
# all its worker processes; the key (an address, an account name) only as a keyed hash
rate_events = Table(
    "rate_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(16), nullable=False),
    Column("key_hash", String(64), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False, index=True),
    Index("ix_rate_events_key", "scope", "key_hash", "at"),
)

# 0008: how many runs each owner (or '' for none) has at each visibility, kept by triggers on `runs` (see
# the migration): the runs list's unfiltered total without counting every run
run_tallies = Table(
    "run_tallies",
    metadata,
    Column("owner", String(32), primary_key=True),
    Column("visibility", String(16), primary_key=True),
    Column("run_count", Integer, nullable=False),
)

# 0016: how many runs have each combination of the runs list's facets, kept by triggers on `runs` (see the
# migration): the facets' counts without counting every run. A missing plan, file system or device model
# is '' with its bit in `absent` (ABSENT), a run without an owner the owner ''.
run_facet_tallies = Table(
    "run_facet_tallies",
    metadata,
    Column("owner", String(32), primary_key=True),
    Column("visibility", String(16), primary_key=True),
    Column("status", String(16), primary_key=True),
    Column("plan_name", String(100), primary_key=True),
    Column("fs_type", String(64), primary_key=True),
    Column("device_model", String(255), primary_key=True),
    Column("absent", Integer, primary_key=True),
    Column("run_count", Integer, nullable=False),
)
ABSENT = {"plan_name": 1, "fs_type": 2, "device_model": 4}
