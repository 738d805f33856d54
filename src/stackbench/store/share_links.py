"""Share links: a run or a comparison made readable, read only, to whoever holds the link's token (docs/server.md,
"Share links"). The token reaches the store only as its keyed hash (the web layer makes both); a link
expires and can be revoked. `Accounts` (store/accounts.py) has these methods: who may make a link and see
what it names is decided there and in web/access.py, not here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

from sqlalchemy import bindparam, insert, select, update

from stackbench.base.errors import StoreError
from stackbench.base.usertext import check
from stackbench.model.results import new_id
from stackbench.store import schema
from stackbench.store.rows import aware

SHARE_KINDS = ("run", "compare")


def now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class ShareLink:
    id: str
    kind: str
    object_id: str
    other_id: str | None
    owner: str
    note: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The runs this link lets its holder see: one run, or A and B of a comparison."""
        return (self.object_id,) if self.other_id is None else (self.object_id, self.other_id)

    def live(self, now: datetime) -> bool:
        """Neither revoked nor expired."""
        return self.revoked_at is None and now < self.expires_at


def _links_of(kind: str) -> Any:
    """`share_links_of`'s statement for one kind of link, with the owner and the run ids bound."""
    links = schema.share_links
    other = links.c.other_id.is_(None) if kind == "run" else links.c.other_id == bindparam("other_id")
    return (select(links).where(links.c.owner == bindparam("owner"), links.c.kind == kind,
                                links.c.object_id == bindparam("object_id"), other)
            .order_by(links.c.created_at.desc()))


_LINKS_OF = {kind: _links_of(kind) for kind in SHARE_KINDS}
# a share link by id (its owner's page) or by its token's hash (every view of a shared page)
_LINK_BY = {column: select(schema.share_links).where(schema.share_links.c[column] == bindparam("value"))
            for column in ("id", "token_hash")}


class ShareLinks:
    """The share-link methods of `Accounts`, which provides `engine` and `reader` (and guards them)."""

    engine: Any
    reader: Any

    def add_share_link(
        self, *, token_hash: str, kind: str, run_ids: Sequence[str], owner: str, note: str, expires_at: datetime
    ) -> ShareLink:
        if kind not in SHARE_KINDS or len(run_ids) != (1 if kind == "run" else 2):
            raise StoreError(f"a {kind!r} share link cannot name {len(run_ids)} run(s)", "This is a bug")
        check("a note", note)
        link = ShareLink(
            id=new_id(), kind=kind, object_id=run_ids[0], other_id=run_ids[1] if kind == "compare" else None,
            owner=owner, note=note, created_at=now(), expires_at=expires_at, revoked_at=None, last_used_at=None,
        )
        with self.engine.begin() as connection:
            connection.execute(insert(schema.share_links).values(
                id=link.id, token_hash=token_hash, kind=kind, object_id=link.object_id, other_id=link.other_id,
                owner=owner, note=note, created_at=link.created_at, expires_at=expires_at,
            ))
        return link

    def share_link(self, link_id: str) -> ShareLink | None:
        return self._one_link("id", link_id)

    def share_link_by_hash(self, token_hash: str) -> ShareLink | None:
        return self._one_link("token_hash", token_hash)

    def share_links_of(self, owner: str, kind: str, run_ids: Sequence[str]) -> list[ShareLink]:
        """The owner's links to one run or one comparison, newest first (revoked and expired included)."""
        params = {"owner": owner, "object_id": run_ids[0], **({"other_id": run_ids[1]} if kind == "compare" else {})}
        with self.reader.connect() as connection:
            rows = connection.execute(_LINKS_OF[kind], params).mappings().all()
        return [_link(row) for row in rows]

    def revoke_share_link(self, link_id: str) -> None:
        links = schema.share_links
        with self.engine.begin() as connection:
            connection.execute(update(links).where(links.c.id == link_id, links.c.revoked_at.is_(None))
                               .values(revoked_at=now()))

    def touch_share_link(self, link_id: str, moment: datetime) -> None:
        with self.engine.begin() as connection:
            connection.execute(update(schema.share_links).where(schema.share_links.c.id == link_id)
                               .values(last_used_at=moment))

    def _one_link(self, column: str, value: str) -> ShareLink | None:
        """The link whose `column` (id or token_hash, both unique) is `value`."""
        with self.reader.connect() as connection:
            row = connection.execute(_LINK_BY[column], {"value": value}).mappings().first()
        return None if row is None else _link(row)


def _link(row: Any) -> ShareLink:
    return ShareLink(
        id=row["id"], kind=row["kind"], object_id=row["object_id"], other_id=row["other_id"], owner=row["owner"],
        note=row["note"], created_at=aware(row["created_at"]), expires_at=aware(row["expires_at"]),
        revoked_at=aware(row["revoked_at"]), last_used_at=aware(row["last_used_at"]),
    )


