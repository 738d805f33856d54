"""The tables of the server's accounts and API tokens (`user list`, `token list`): built here beside every
other table, so the commands only fetch and print.

The store's `Account` and `Token` are read by their fields (report/ sits below store/ and does not import it).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from stackbench.report.tabular import Tabular

TOKEN_HEADERS = ["Id", "Account", "Scope", "Note", "Created (UTC)", "Expires (UTC)", "Last used (UTC)",
                 "Revoked (UTC)"]


def accounts_table(accounts: Sequence[Any]) -> Tabular:
    return Tabular(["Name", "Admin", "Created (UTC)"],
                   [[a.name, "yes" if a.is_admin else "no", a.created_at.strftime("%Y-%m-%d %H:%M")] for a in accounts])


def tokens_tables(tokens: Sequence[Any], names: Mapping[str, str]) -> tuple[Tabular, Tabular]:
    """The terminal's table (`-` for a moment that has not come, `never` for no expiry) and the CSV's: a
    spreadsheet reads a date or nothing, so no `-` or `never` in a date column there (an empty Expires: never).
    `names` maps an account id to its name."""

    def row(t: Any, missing: str, never: str) -> list[str]:
        def when(moment: Any) -> str:
            return moment.strftime("%Y-%m-%d %H:%M") if moment else missing

        return [t.id[:12], names.get(t.owner, "?"), t.scope, t.note, when(t.created_at),
                when(t.expires_at) if t.expires_at else never, when(t.last_used_at), when(t.revoked_at)]

    return (Tabular(TOKEN_HEADERS, [row(t, "-", "never") for t in tokens]),
            Tabular(TOKEN_HEADERS, [row(t, "", "") for t in tokens]))
