"""Turning database failures into one line that says what happened to the store and what to do.

SQLAlchemy reports a full disk, a locked or read-only file and a file that is not a database all as
`OperationalError`/`DatabaseError` with the SQL statement and its parameters attached: useful to us, noise
to a user who only needs to know that their results file is full. The driver's own message is matched
(SQLite's texts are stable across releases; PostgreSQL's SQLSTATE classes likewise) and everything else is
reported with the driver's first line, never the statement. A stored row that cannot be read is one line
too (`damage_reported`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy.exc import SQLAlchemyError

from stackbench.base.errors import StoreError

# (text in SQLite's or PostgreSQL's message, what happened, fix)
_KNOWN: tuple[tuple[str, str, str], ...] = (
    ("database or disk is full", "the file system under the results database {where} is full",
     "Free space there, or pass another --db"),
    ("no space left on device", "the file system under the results database {where} is full",
     "Free space there, or pass another --db"),
    ("disk i/o error", "the results database {where} could not be written (disk I/O error; often a full disk)",
     "Free space there or check the disk, or pass another --db"),
    ("file is not a database", "{where} is not an SQLite database",
     "Pass another --db, or move that file away if it is not yours to keep"),
    ("file is encrypted or is not a database", "{where} is not an SQLite database",
     "Pass another --db, or move that file away if it is not yours to keep"),
    ("database disk image is malformed", "the results database {where} is damaged",
     "Restore it from a backup or pass another --db (sqlite3 FILE .recover can rescue rows)"),
    ("readonly database", "the results database {where} is read-only",
     "Make it writable (check its permissions and those of its directory), or pass another --db"),
    ("database is locked", "the results database {where} is locked by another process (waited 5 s)",
     "Wait for the other stackbench (or sqlite3 session) to finish, or pass another --db"),
    ("unable to open database file", "the results database {where} cannot be opened",
     "Check that its directory exists and is writable, or pass another --db"),
    ("could not connect", "cannot connect to the results database {where}",
     "Check that the server runs and the URL, user and password are right"),
    ("connection refused", "cannot connect to the results database {where}",
     "Check that the server runs and the URL, user and password are right"),
    ("password authentication failed", "the results database {where} refused the login",
     "Check the user and password in the --db URL"),
)


def describe(error: SQLAlchemyError, where: str) -> StoreError:
    """The user's one-line StoreError for a database failure at `where` (a path or a redacted URL)."""
    original = getattr(error, "orig", None) or error
    message = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
    lowered = message.lower()
    for needle, what, fix in _KNOWN:
        if needle in lowered:
            return StoreError(what.format(where=where), fix)
    return StoreError(f"the results database {where} failed: {message[:200]}", "Check it, or pass another --db")


@contextmanager
def damage_reported(kind: str, item_id: str | None) -> Iterator[None]:
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
