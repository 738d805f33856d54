"""API tokens of `stackbench serve` (docs/server.md, "API tokens").

A token lets a script act for one account with one scope: `push` (upload runs to POST /api/runs) or
`metrics` (read GET /metrics). Tokens reach this module only as keyed hashes (the web layer and the CLI
make them with the server's key, as for share links); the token itself is shown once and never stored.
Tokens are made and revoked only with the CLI on the server's machine: no route accepts a token (or a
session) for managing tokens, so a leaked token can never mint another.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from stackbench.base.errors import StoreError
from stackbench.model.results import new_id
from stackbench.store import schema
from stackbench.store.accounts import Account, _account, now
from stackbench.store.database import guard_public_methods
from stackbench.store.repository import Store
from stackbench.store.rows import aware
from stackbench.base.usertext import check


@dataclass(frozen=True)
class ApiToken:
    id: str
    owner: str
    scope: str  # push | metrics
    note: str
    created_at: datetime
    expires_at: datetime | None  # None: until revoked
    revoked_at: datetime | None
    last_used_at: datetime | None

    def live(self, moment: datetime) -> bool:
        """Neither revoked nor expired."""
        return self.revoked_at is None and (self.expires_at is None or moment < self.expires_at)


@guard_public_methods  # a database failure is one line, as for every Store method
class Tokens:
    """The `api_tokens` table of a results store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine
        self.reader = store.reader  # reads outside a transaction on PostgreSQL (database._reader)
        self.where = store.where  # how `guarded` names the store in a one-line error

    def add(self, *, token_hash: str, owner: str, scope: str, note: str, expires_at: datetime | None) -> ApiToken:
        if scope not in schema.TOKEN_SCOPES:
            raise StoreError(f"unknown token scope {scope!r}", f"Use one of {', '.join(schema.TOKEN_SCOPES)}")
        check("a note", note)
        token = ApiToken(id=new_id(), owner=owner, scope=scope, note=note, created_at=now(), expires_at=expires_at,
                         revoked_at=None, last_used_at=None)
        with self.engine.begin() as connection:
            connection.execute(insert(schema.api_tokens).values(
                id=token.id, token_hash=token_hash, owner=owner, scope=scope, note=note,
                created_at=token.created_at, expires_at=expires_at,
            ))
        return token

    def by_hash(self, token_hash: str) -> ApiToken | None:
        return self._one(schema.api_tokens.c.token_hash == token_hash)

    def holder(self, token_hash: str) -> tuple[ApiToken, Account] | None:
        """The token with this hash and the account it acts for (revoked and expired ones too: the caller
        checks `live`), or None."""
        t, a = schema.api_tokens, schema.accounts
        with self.reader.connect() as connection:
            row = connection.execute(
                select(t, a.c.name, a.c.is_admin, a.c.created_at.label("account_created_at"))
                .join(a, a.c.id == t.c.owner).where(t.c.token_hash == token_hash)
            ).mappings().first()
        if row is None:
            return None
        account = _account({"id": row["owner"], "name": row["name"], "is_admin": row["is_admin"],
                            "created_at": row["account_created_at"]})
        return _token(row), account

    def list(self, owner: str | None = None) -> list[ApiToken]:
        """Every token (of `owner` when given), newest first, revoked and expired included."""
        table = schema.api_tokens
        query = select(table).order_by(table.c.created_at.desc(), table.c.id)
        if owner is not None:
            query = query.where(table.c.owner == owner)
        with self.reader.connect() as connection:
            return [_token(row) for row in connection.execute(query).mappings().all()]

    def revoke(self, token_id: str) -> ApiToken:
        """Revoke a token by its id (or a unique prefix of at least 6 characters); revoking twice is harmless."""
        table = schema.api_tokens
        if len(token_id) < 6:
            raise StoreError(f"token id {token_id!r} is too short", "Give at least 6 characters of the id")
        with self.engine.begin() as connection:
            rows = connection.execute(select(table).where(table.c.id.startswith(token_id, autoescape=True))
                                      ).mappings().all()
            if len(rows) != 1:
                raise StoreError(f"{'no' if not rows else 'more than one'} token with id {token_id!r}",
                                 "List the tokens with `stackbench token list`")
            connection.execute(update(table).where(table.c.id == rows[0]["id"], table.c.revoked_at.is_(None))
                               .values(revoked_at=now()))
        found = self.by_id(rows[0]["id"])
        assert found is not None
        return found

    def by_id(self, token_id: str) -> ApiToken | None:
        return self._one(schema.api_tokens.c.id == token_id)

    def _one(self, condition: Any) -> ApiToken | None:
        with self.reader.connect() as connection:
            row = connection.execute(select(schema.api_tokens).where(condition)).mappings().first()
        return None if row is None else _token(row)

    def touch(self, token_id: str, moment: datetime) -> None:
        with self.engine.begin() as connection:
            connection.execute(update(schema.api_tokens).where(schema.api_tokens.c.id == token_id)
                               .values(last_used_at=moment))


def _token(row: Any) -> ApiToken:
    return ApiToken(
        id=row["id"], owner=row["owner"], scope=row["scope"], note=row["note"], created_at=aware(row["created_at"]),
        expires_at=aware(row["expires_at"]), revoked_at=aware(row["revoked_at"]),
        last_used_at=aware(row["last_used_at"]),
    )
