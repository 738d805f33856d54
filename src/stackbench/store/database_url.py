"""Where the results store is, as a user gives it (`--db`, `STACKBENCH_DB`): checked before anything connects.

A mistake here is one line that names the fix (README, "Exit status"): bad usage (2) for a value that cannot
name a store (not a URL, a port that is not a number, a database stackbench does not support, an unknown
driver, a parameter its driver refuses, a directory, an in-memory SQLite database, which would keep nothing
after the command ends), an error (1) for a driver that is not installed. It is never a traceback, exit 70,
or a store that silently keeps nothing. Every URL in a message has its credentials masked
(credentials.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from stackbench.base.credentials import scrub_text
from stackbench.base.errors import StoreError, UsageError

SUPPORTED = ("sqlite", "postgresql")
FORMS = ("Use a file path, sqlite:///PATH (four slashes for an absolute path) or postgresql://USER@HOST/DB "
         "(pip install 'stackbench[postgres]')")
# Drivers that are not installed, and how to install them: psycopg comes with stackbench[postgres].
_PACKAGES = {"psycopg": "Install it: pip install 'stackbench[postgres]'",
             "psycopg2": "Install it (pip install psycopg2-binary), or write postgresql:// for psycopg 3 "
                         "(pip install 'stackbench[postgres]')"}
# `sqlite:/x` or `postgresql:x`, a URL with its slashes missing: taken as a file path it would make a
# directory called `sqlite:` in the current one.
_SLASHLESS = re.compile(r"(?:sqlite|postgres|postgresql|file|[a-z][a-z0-9]*\+[a-z0-9_]+):(?!//)", re.IGNORECASE)


def database_url(text: str) -> str:
    """The SQLAlchemy URL of the store `text` names (a file path or a URL): `postgresql://` gets the
    psycopg 3 driver, a path becomes `sqlite:///ABSOLUTE-PATH`. A UsageError or StoreError with the fix
    for anything that cannot be a store."""
    shown = scrub_text(text)
    if "://" not in text:
        if _SLASHLESS.match(text):
            raise UsageError(f"--db {shown!r} is neither a file path nor a URL (a URL has :// after its scheme)",
                             FORMS)
        if text.strip() == ":memory:":
            raise _in_memory(shown)
        path = Path(text).expanduser().resolve()
        _not_a_directory(path, shown)
        return f"sqlite:///{path}"
    if text.startswith(("postgresql://", "postgres://")):
        text = "postgresql+psycopg://" + text.split("://", 1)[1]
    url = _parsed(text, shown)
    dialect = _dialect(url, shown)
    try:
        arguments = dialect().create_connect_args(url)
    except (ArgumentError, ValueError, TypeError) as error:  # a query parameter the driver cannot take
        raise UsageError(f"--db {shown!r} has a parameter its driver cannot use ({error})", FORMS) from None
    if url.get_backend_name() == "sqlite":
        filename = str(arguments[0][0]) if arguments[0] else ":memory:"
        if filename in ("", ":memory:") or url.query.get("mode") == "memory" or filename.startswith("file::memory:"):
            raise _in_memory(shown)
        _not_a_directory(Path(filename), shown)
    return text


def _parsed(text: str, shown: str) -> Any:
    try:
        url = make_url(text)
    except ArgumentError:
        raise UsageError(f"--db {shown!r} is not a database URL", FORMS) from None
    except ValueError:  # SQLAlchemy reads the port with int()
        raise UsageError(f"--db {shown!r} has a host and port that cannot be read (a port is a number, an IPv6 "
                         "address is written in [brackets])", FORMS) from None
    if url.host and ("[" in url.host or "]" in url.host):
        raise UsageError(f"--db {shown!r} has a host that is neither a name nor an [IPv6] address", FORMS)
    if url.get_backend_name() not in SUPPORTED:
        raise UsageError(f"--db {shown!r}: stackbench stores into SQLite or PostgreSQL, not "
                         f"{url.get_backend_name() or 'an unnamed database'}", FORMS)
    return url


def _dialect(url: Any, shown: str) -> Any:
    """The URL's SQLAlchemy dialect with its driver imported: an unknown driver is a usage error, a known
    one that is not installed an error that says how to install it."""
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        raise UsageError(f"--db {shown!r} names a driver SQLAlchemy does not know ({url.get_driver_name()})",
                         FORMS) from None
    try:
        dialect.import_dbapi()
    except ImportError:
        driver = url.get_driver_name()
        raise StoreError(f"the database driver {driver} that --db {shown!r} needs is not installed",
                         _PACKAGES.get(driver, f"Install the Python package {driver}, or use postgresql:// "
                                               "(pip install 'stackbench[postgres]')")) from None
    return dialect


def _in_memory(shown: str) -> UsageError:
    return UsageError(f"--db {shown!r} is an in-memory SQLite database, which keeps nothing after the command ends",
                      "Give a file: a path, or sqlite:///PATH")


def _not_a_directory(path: Path, shown: str) -> None:
    if path.is_dir():
        raise UsageError(f"--db {shown!r} is a directory, not a database file",
                         f"Name a file in it, e.g. {path / 'results.db'}")


__all__ = ["database_url"]
