"""Options and helpers shared by several commands."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import typer

from stackbench.cli.app import out

DbOption = typer.Option(
    None,
    "--db",
    envvar="STACKBENCH_DB",
    help="Results database: an SQLAlchemy URL (sqlite:///PATH, postgresql://USER@HOST/DB) or a file path. "
    "Default: ~/.local/share/stackbench/results.db (XDG_DATA_HOME honoured).",
    show_default=False,
)
JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON on stdout instead of tables.")


def split_list(values: Optional[list[str]]) -> list[str] | None:
    """Accept both `--bs 4k,64k` and `--bs 4k --bs 64k`."""
    if not values:
        return None
    items = [item.strip() for value in values for item in value.split(",") if item.strip()]
    return items or None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def open_store_from(db: str | None):  # noqa: ANN201 - returns Store, imported lazily for fast --help
    from stackbench.store import open_store

    return open_store(db)


__all__ = ["DbOption", "JsonOption", "split_list", "print_json", "open_store_from", "out"]
