"""`stackbench user add|passwd|list|remove|claim`: the accounts of `stackbench serve` (docs/server.md)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from stackbench.base.units import count
from stackbench.cli.app import app, out
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, JsonReplyOption, chosen_format, emit, open_store_from, print_json,
)

user_app = typer.Typer(help="Accounts of the web server (stackbench serve).", no_args_is_help=True)
app.add_typer(user_app, name="user")


def _read_password(from_stdin: bool) -> str:
    """The new password: one line from stdin with --password-stdin, else typed twice without echo."""
    from stackbench.base.errors import UsageError

    if from_stdin:
        from stackbench.base.inputs import PASSWORD, read_stdin_line

        try:
            password = read_stdin_line(PASSWORD)
        except (OSError, ValueError, UnicodeDecodeError) as error:  # closed, unreadable or not text
            raise UsageError(f"cannot read the password from standard input ({error})",
                             "Pipe the password in: printf %s \"$PW\" | ...") from None
        if not password:
            raise UsageError("no password on standard input", "Pipe the password in: printf %s \"$PW\" | ...")
        return password
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the password on", "Pass --password-stdin and pipe it in")
    import getpass

    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        raise UsageError("the two passwords differ", "Run the command again and type the same password twice")
    return first


@user_app.command("add")
def user_add(
    name: str = typer.Argument(..., help="Account name (1-64 letters, digits, . _ -).", show_default=False),
    admin: bool = typer.Option(False, "--admin", help="An admin also sees runs that have no owner yet."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from the first line of standard input (for scripts)."
    ),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Create an account. The password (at least 12 characters) is asked twice, or read from stdin with
    --password-stdin; it is stored only as an argon2id hash. There is no default account.

    Example:

        stackbench user add alice --admin
    """
    import re

    from stackbench.base.errors import UsageError
    from stackbench.store.accounts import Accounts
    from stackbench.web.passwords import check_policy, hash_password

    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
        raise UsageError(f"{name!r} is not an account name", "Use 1-64 letters, digits, dots, dashes or underscores")
    accounts = Accounts(open_store_from(db))
    password = _read_password(password_stdin)
    check_policy(password)
    account = accounts.add_account(name, hash_password(password), admin=admin)
    if json_output:
        print_json({"account": {"id": account.id, "name": account.name, "admin": account.is_admin}})
    else:
        out.print(f"Created account {name}{' (admin)' if admin else ''}.")


@user_app.command("passwd")
def user_passwd(
    name: str = typer.Argument(..., help="Account name.", show_default=False),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the new password from the first line of standard input."
    ),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Set a new password for an account; every session of the account ends (logged out everywhere).

    Example:

        stackbench user passwd alice
    """
    from stackbench.store.accounts import Accounts
    from stackbench.web.passwords import check_policy, hash_password

    accounts = Accounts(open_store_from(db))
    account = accounts.account_named(name)
    password = _read_password(password_stdin)
    check_policy(password)
    accounts.set_password_hash(account.id, hash_password(password), end_sessions=True)
    if json_output:
        print_json({"account": account.name, "sessions_ended": True})
    else:
        out.print(f"New password for {account.name}; its sessions have ended.")


@user_app.command("list")
def user_list(db: Optional[str] = DbOption, output_format: str = FormatOption, json_output: bool = JsonOption) -> None:
    """List the accounts: name, admin or not, when created.

    Example:

        stackbench user list
    """
    from stackbench.report.accounts import accounts_table
    from stackbench.store.accounts import Accounts

    accounts = Accounts(open_store_from(db)).list_accounts()
    table = accounts_table(accounts)
    data = {"accounts": [{"id": a.id, "name": a.name, "admin": a.is_admin, "created_at": a.created_at.isoformat()}
                         for a in accounts]}
    emit(chosen_format(output_format, json_output), table, data)


@user_app.command("remove")
def user_remove(
    name: str = typer.Argument(..., help="Account name.", show_default=False),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Remove an account: its sessions end, its share links stop working, and its runs, scans and audits
    lose their owner (admins see them then, until someone claims them).

    Example:

        stackbench user remove bob
    """
    from stackbench.store.accounts import Accounts

    account, owned = Accounts(open_store_from(db)).remove_account(name)
    if json_output:
        print_json({"removed": account.name, "runs_unowned": owned["run"], "scans_unowned": owned["scan"],
                    "audits_unowned": owned["audit"], "tunes_unowned": owned["tune"]})
    else:
        out.print(f"Removed account {account.name}; {count(owned['run'], 'run')}, {count(owned['scan'], 'scan')}, "
                  f"{count(owned['audit'], 'audit')} and {count(owned['tune'], 'tune session')} it owned now have no "
                  "owner.")


@user_app.command("claim")
def user_claim(
    name: str = typer.Argument(..., help="Account that becomes the owner.", show_default=False),
    runs: Optional[list[str]] = typer.Argument(
        None, help="Runs, smallblocks scans, audits or tune sessions: ids, unique id prefixes or labels.",
        show_default=False
    ),
    unowned: bool = typer.Option(False, "--all-unowned", help="Claim every run, scan, audit and tune session that has no owner."),
    take: bool = typer.Option(False, "--take", help="Also move items that another account owns."),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Give runs, scans and audits an owner. Those stored by the CLI have none, and a server shows them to
    admins only until they are claimed; a claimed item is private to its owner until the owner makes it
    team-visible. All the named items are claimed, or none.

    Example:

        stackbench user claim alice baseline lz4-off

        stackbench user claim alice --all-unowned
    """
    from stackbench.base.errors import UsageError
    from stackbench.store.accounts import Accounts

    store = open_store_from(db)
    accounts = Accounts(store)
    account = accounts.account_named(name)
    if bool(runs) == unowned:
        raise UsageError("name the runs to claim, or pass --all-unowned (not both)", "See 'stackbench user claim --help'")
    items = accounts.unowned_items() if unowned else [store.resolve_any(ref) for ref in runs or []]
    claimed = accounts.claim_items(account.id, items, take=take) if items else 0
    if json_output:
        print_json({"owner": account.name, "claimed": [i for _, i in items],
                    "kinds": {kind: [i for k, i in items if k == kind] for kind in ("run", "scan", "audit", "tune")}})
    else:
        out.print(f"{account.name} now owns {count(claimed, 'more item')} (runs, scans, audits).")
