"""`stackbench token`, `stackbench push` and `stackbench export --openmetrics` (docs/server.md).

Tokens are made on the server's machine, against the server's store, and shown once; `push` sends runs
from any machine's store to a server over HTTP(S) with a `push` token; `export` writes the OpenMetrics
text of a store for node_exporter's textfile collector.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Optional

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import (
    DbOption, FormatOption, IntBetween, JsonOption, JsonReplyOption, chosen_format, emit, open_store_from,
    print_json,
)
from stackbench.base.errors import StackbenchError, UsageError
from stackbench.base.usertext import check

token_app = typer.Typer(help="API tokens of the web server, for push and /metrics.", no_args_is_help=True)
app.add_typer(token_app, name="token")

TOKEN_PREFIX = "sbt_"  # tells a stackbench API token apart in a secrets scanner or a config file


class PushError(StackbenchError):
    """A push the server or the network refused."""


@token_app.command("create")
def token_create(
    scope: str = typer.Option(..., "--scope", help="push: upload runs (stackbench push); metrics: read /metrics.",
                              show_default=False),
    user: str = typer.Option(..., "--user", help="The account the token acts for: runs pushed with it are its.",
                             show_default=False),
    note: str = typer.Option("", "--note", help="What the token is for (shown by `token list`, at most 500 characters)."),
    expires: Optional[int] = typer.Option(
        None, "--expires", click_type=IntBetween(1, 3650), metavar="DAYS",
        help="Days (1-3650) until the token stops working. Default: until revoked.",
        show_default=False),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Create an API token and print it once: it is stored only as a keyed hash and cannot be shown again.
    Run this on the server's machine, against the server's store. A token can never create tokens.

    Example:

        stackbench token create --scope push --user alice --note "lab box 3" --expires 90
    """
    import secrets
    from datetime import timedelta

    from stackbench.store.accounts import Accounts, now
    from stackbench.store.schema import TOKEN_SCOPES
    from stackbench.store.tokens import Tokens
    from stackbench.web.context import keyed_digest

    if scope not in TOKEN_SCOPES:
        raise UsageError(f"unknown scope {scope!r}", f"Use --scope {' or --scope '.join(TOKEN_SCOPES)}")
    if len(note) > 500:
        raise UsageError("the note is longer than 500 characters", "Shorten --note")
    check("the note", note, "Type --note without them")
    store = open_store_from(db)
    accounts = Accounts(store)
    account = accounts.account_named(user)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = Tokens(store).add(token_hash=keyed_digest(accounts.server_secret(), secret), owner=account.id,
                              scope=scope, note=note, expires_at=now() + timedelta(days=expires) if expires else None)
    if json_output:
        print_json({"token": secret, **_token_json(token, account.name)})
        return
    out.print(f"Token {token.id[:12]} ({scope}) for {account.name}"
              + (f", expires {token.expires_at:%Y-%m-%d %H:%M} UTC" if token.expires_at else ", until revoked")
              + ". It is shown only now; keep it in a file only you can read:", markup=False, highlight=False)
    out.print(secret, markup=False, highlight=False, soft_wrap=True)


@token_app.command("list")
def token_list(
    user: Optional[str] = typer.Option(None, "--user", help="Only this account's tokens. Default: every account's.",
                                       show_default=False),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """List API tokens (never the tokens themselves): id, account, scope, note, created, expires, last used,
    revoked.

    Example:

        stackbench token list --user alice
    """
    from stackbench.report.accounts import tokens_tables
    from stackbench.store.accounts import Accounts
    from stackbench.store.tokens import Tokens

    store = open_store_from(db)
    accounts = Accounts(store)
    names = {a.id: a.name for a in accounts.list_accounts()}
    tokens = Tokens(store).list(accounts.account_named(user).id if user else None)
    table, plain = tokens_tables(tokens, names)
    emit(chosen_format(output_format, json_output), table,
         {"tokens": [_token_json(t, names.get(t.owner, "")) for t in tokens]}, csv=plain)


@token_app.command("revoke")
def token_revoke(
    token_id: str = typer.Argument(..., help="The token's id as `token list` shows it (at least 6 characters).",
                                   show_default=False),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Revoke an API token: it stops working at once (the next request with it gets 401).

    Example:

        stackbench token revoke 3f9a1c2b7d4e
    """
    from stackbench.store.tokens import Tokens

    token = Tokens(open_store_from(db)).revoke(token_id)
    if json_output:
        print_json({"revoked": token.id})
    else:
        out.print(f"Revoked token {token.id[:12]} ({token.scope}).", markup=False, highlight=False)


def _token_json(token: Any, account: str) -> dict[str, Any]:
    def iso(moment: Any) -> str | None:
        return moment.isoformat() if moment else None

    return {"id": token.id, "account": account, "scope": token.scope, "note": token.note,
            "created_at": iso(token.created_at), "expires_at": iso(token.expires_at),
            "last_used_at": iso(token.last_used_at), "revoked_at": iso(token.revoked_at)}


# -- push --------------------------------------------------------------------------------------------

PushUrlHelp = "The server's base URL, e.g. https://bench.example.org (https unless the server is on this machine)."


def read_token(token_file: Optional[Path]) -> str:
    """The push token: from --token-file (first line), else $STACKBENCH_TOKEN."""
    if token_file is not None:
        from stackbench.base.inputs import TOKEN_FILE, InputError, read_input

        try:
            text = read_input(token_file, TOKEN_FILE).decode("utf-8").strip()
        except InputError as error:
            raise UsageError(f"cannot read the token file: {error.what}", error.fix) from None
        except UnicodeDecodeError:
            raise UsageError(f"cannot read the token file {token_file}: not text",
                             "Check --token-file names the file holding the token") from None
    else:
        text = os.environ.get("STACKBENCH_TOKEN", "").strip()
    if not text:
        raise UsageError("no API token", "Pass --token-file FILE or set STACKBENCH_TOKEN "
                         "(make one on the server: stackbench token create --scope push --user NAME)")
    return text.splitlines()[0].strip()


def push_runs(store: Any, refs: list[str], url: str, token: str, ca_file: Optional[Path] = None) -> list[dict[str, Any]]:
    """Push each run to the server; the server's answers ({id, url, created}), each checked (`_answer`).
    Stops at the first failure with one line naming the fix (runs pushed before it stay pushed; pushing
    them again is harmless)."""
    import json

    import httpx

    from stackbench.store.uploads import run_document

    base = base_url(url)
    documents = []
    for ref in refs:
        document = run_document(store, ref)
        if document["run"]["status"] == "running":
            raise UsageError(f"run {document['run']['id'][:12]} is still running",
                             "Push it when it has finished (or was marked abandoned)")
        documents.append(document)
    answers = []
    verify = _tls_context(ca_file)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept-Encoding": "identity"}  # an answer is read as sent: no decompression to bound
    with httpx.Client(base_url=base, timeout=120, verify=verify, follow_redirects=False) as client:
        for document in documents:
            body = json.dumps(document, separators=(",", ":"), allow_nan=False).encode()  # the server's JSON is strict
            for attempt in range(BUSY_RETRIES + 1):
                try:
                    with client.stream("POST", "/api/runs", content=body, headers=headers) as response:
                        status, answer_headers = response.status_code, response.headers
                        answer = _read_answer(base, response)
                except httpx.ConnectError as error:
                    raise _connect_error(base, error) from None
                except httpx.TimeoutException:
                    raise PushError(f"{base} did not answer in 120 s", "Check the server is up and reachable") from None
                except httpx.HTTPError as error:
                    raise PushError(f"pushing to {base} failed: {printable(str(error))}",
                                    "Check the URL and the network") from None
                if status != 503 or attempt == BUSY_RETRIES:
                    break
                wait = answer_headers.get("retry-after", "")  # the server is reading other uploads
                time.sleep(min(30, int(wait)) if wait.isdigit() else 5)
            answers.append(_answer(base, status, answer_headers, answer, document["run"]["id"]))
    return answers


def _tls_context(ca_file: Optional[Path]) -> Any:
    """Verification against the system's trusted CAs (not a bundle of httpx's own), or `ca_file`'s."""
    import ssl

    from stackbench.base.inputs import CA_FILE, InputError, read_input

    try:
        # Read here, bounded, and handed over as text: OpenSSL would open a FIFO and wait for a writer.
        pem = read_input(ca_file, CA_FILE).decode("ascii", errors="replace") if ca_file else None
    except InputError as error:
        raise UsageError(f"--ca-file: {error.what}, so it cannot be used as a CA certificate", error.fix) from None
    if pem is not None and not pem.strip():  # an empty cadata would mean the system's CAs instead
        raise UsageError(f"{ca_file} is empty", "Give --ca-file a PEM file with the CA that signed the server's "
                         "certificate")
    try:
        return ssl.create_default_context(cadata=pem)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise UsageError(f"cannot use {ca_file} as a CA certificate: {getattr(error, 'strerror', None) or error}",
                         "Give --ca-file a PEM file with the CA that signed the server's certificate") from None


def base_url(url: str) -> str:
    """The server's base URL, refused before the token goes anywhere if it could leak the token or carry
    what stackbench does not send: plain http to another machine (the token would cross the network in
    clear), a user or password (stackbench authenticates with the token; an http client would send them
    instead), a query or fragment (the API's paths are added to the base)."""
    from urllib.parse import urlsplit

    from stackbench.base.credentials import scrub_text

    shown = printable(scrub_text(url))
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts, host = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise UsageError(f"{shown!r} is not an http(s) URL", "Give the server's base URL, e.g. https://bench.example.org")
    if parts.username is not None or parts.password is not None:
        raise UsageError(f"{shown!r} holds a user name or password",
                         "Leave them out: stackbench authenticates with its token (--token-file or STACKBENCH_TOKEN)")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise UsageError(f"{shown!r} has a query or fragment", "Give the server's base URL, e.g. https://bench.example.org")
    if parts.scheme == "http" and not _loopback(host):
        raise UsageError(f"{shown!r} is plain http to another machine: the token would cross the network in clear",
                         "Push to the server's https:// URL (a TLS proxy in front of it, docs/server.md), or through "
                         "an ssh tunnel (ssh -L 8080:127.0.0.1:8080 HOST) to http://127.0.0.1:8080")
    return url.rstrip("/")


def _loopback(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def printable(text: str, limit: int = 200) -> str:
    """Text from the server or the network as data: control and formatting characters (a terminal's escape
    sequences, a bidi override, a line break) written as escapes, and at most `limit` characters."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return shown + ("..." if len(text) > limit else "")


def _connect_error(base: str, error: Exception) -> PushError:
    text = printable(str(error).splitlines()[0] if str(error) else "")
    if "CERTIFICATE" in text.upper() or "SSL" in text.upper() or "TLS" in text.upper():
        return PushError(f"TLS with {base} failed: {text}",
                         "Give the proxy a certificate this machine trusts, or pass --ca-file with its CA")
    return PushError(f"cannot connect to {base}: {text or 'refused'}",
                     "Check the URL and that `stackbench serve` (or its proxy) listens there")


# What an HTTP status from the server means for the user, and the fix: (what, fix); {reason} is the server's.
_REFUSALS = {
    401: ("refused the token (unknown, revoked or expired)",
          "Create a new one on the server: stackbench token create --scope push --user NAME"),
    403: ("refused the token: {reason}", "Use a token made with --scope push"),
    413: ("refused the run: {reason}", "Push runs with fewer cells"),
    409: ("refused the run: {reason}", "Push it with the account that stored it"),
    400: ("refused the run: {reason}", "Use the same stackbench version here and on the server"),
    404: ("has no /api/runs", "Check the URL names a stackbench server of this version"),
    503: ("is busy storing other uploads: {reason}", "Push again later"),
}
BUSY_RETRIES = 3  # a 503 (the server reads as many uploads as it may at once) is retried after Retry-After
# The server's answer is a small JSON object: anything longer, or slower to arrive once the server has
# started answering, is not a stackbench server's answer and is not read further.
ANSWER_BYTES = 64 * 1024
ANSWER_SECONDS = 30.0
_RUN_ID = re.compile(r"[0-9a-f]{32}")
_NOT_A_SERVER = "Check that the URL names a stackbench server (or its proxy) of this version"


def _read_answer(base: str, response: Any) -> bytes:
    """The answer's body, at most ANSWER_BYTES and within ANSWER_SECONDS, else a PushError: a hostile or
    broken server cannot make the push hold its body in memory or wait for it forever."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > ANSWER_BYTES:
        raise PushError(f"{base} answered {int(declared):,} bytes, more than a stackbench server's answer "
                        f"({ANSWER_BYTES // 1024} KiB at most)", _NOT_A_SERVER)
    deadline = time.monotonic() + ANSWER_SECONDS
    body = bytearray()
    for chunk in response.iter_raw():
        body += chunk
        if len(body) > ANSWER_BYTES:
            raise PushError(f"{base} answered more than a stackbench server's answer ({ANSWER_BYTES // 1024} KiB "
                            "at most)", _NOT_A_SERVER)
        if time.monotonic() > deadline:
            raise PushError(f"{base} sent its answer too slowly (not complete after {ANSWER_SECONDS:g} s)",
                            _NOT_A_SERVER)
    return bytes(body)


def _answer(base: str, status: int, headers: Any, body: bytes, run_id: str) -> dict[str, Any]:
    """The server's answer for the pushed run `run_id`, checked: {id, url, created} with the run's own id,
    a URL on the server pushed to that ends in /runs/ID, and a boolean; otherwise, or for a refusal, a
    PushError whose text shows the server's words only as data."""
    import json
    from urllib.parse import urlsplit

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    try:
        data = json.loads(body.decode("utf-8"), parse_constant=refuse) if body else None
    except (ValueError, RecursionError):
        data = None
    reason = printable(data["error"]) if isinstance(data, dict) and isinstance(data.get("error"), str) else None
    if status in (200, 201):
        if not isinstance(data, dict):
            raise PushError(f"{base} answered HTTP {status} without a JSON object", _NOT_A_SERVER)
        answer_id, url, created = data.get("id"), data.get("url"), data.get("created")
        if not isinstance(answer_id, str) or not _RUN_ID.fullmatch(answer_id) or answer_id != run_id:
            raise PushError(f"{base} answered the id {printable(repr(answer_id), 60)} for run {run_id[:12]}",
                            _NOT_A_SERVER)
        if not isinstance(created, bool):
            raise PushError(f"{base} answered a 'created' that is not true or false for run {run_id[:12]}",
                            _NOT_A_SERVER)
        parts = urlsplit(url) if isinstance(url, str) and len(url) <= 2048 and url.isprintable() else None
        try:
            host = parts.hostname if parts else None
        except ValueError:
            host = None
        if (parts is None or parts.scheme not in ("http", "https") or host is None
                or host != urlsplit(base).hostname or not parts.path.endswith(f"/runs/{run_id}")
                or parts.query or parts.fragment or parts.username is not None or " " in url):
            raise PushError(f"run {run_id[:12]} was stored, and {base} answered an unexpected page URL "
                            f"{printable(repr(url), 120)}",
                            f"Open it on the server as {base}/runs/{run_id}; check the proxy passes the Host header "
                            "(docs/server.md)")
        return {"id": answer_id, "url": url, "created": created}
    if status == 429:
        wait = headers.get("retry-after", "")
        raise PushError(f"{base} is throttling this address", f"Wait {wait if wait.isdigit() else '60'} s "
                        "and check the token: wrong tokens count against the limit")
    if status in _REFUSALS:
        what, fix = _REFUSALS[status]
        raise PushError(f"{base} {what.format(reason=reason or 'no reason given')}", fix)
    raise PushError(f"{base} answered HTTP {status}{': ' + reason if reason else ''}", "See the server's log")


@app.command("push")
def push_command(
    runs: list[str] = typer.Argument(..., help="Runs to push: ids, unique id prefixes or labels.", show_default=False),
    to: str = typer.Option(..., "--to", help=PushUrlHelp, show_default=False),
    token_file: Optional[Path] = typer.Option(
        None, "--token-file", help="File whose first line is a push token. Default: $STACKBENCH_TOKEN.",
        show_default=False),
    ca_file: Optional[Path] = typer.Option(
        None, "--ca-file", help="CA certificate (PEM) to verify the server's TLS certificate with. "
        "Default: the system's trusted CAs.", show_default=False),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Upload runs to a `stackbench serve` server with an API token of scope push. The server checks every
    field again, stores each run with its raw fio output under the token's account, private, and answers
    its URL. Pushing a run again is harmless: the server answers the URL it already has.

    Examples:

        STACKBENCH_TOKEN=$(cat ~/.config/stackbench/token) stackbench push baseline --to https://bench.example.org

        stackbench push 3f9a1c2b lz4-off --to https://bench.example.org --token-file ~/.config/stackbench/token
    """
    token = read_token(token_file)
    answers = push_runs(open_store_from(db), runs, to, token, ca_file)
    if json_output:
        print_json({"pushed": answers})
        return
    for answer in answers:
        verb = "Pushed" if answer.get("created") else "Already on the server:"
        out.print(f"{verb} {answer['id'][:12]} {answer['url']}", markup=False, highlight=False, soft_wrap=True)


# -- export ------------------------------------------------------------------------------------------

@app.command("export")
def export_command(
    openmetrics: Path = typer.Option(
        ..., "--openmetrics", help="File to write the OpenMetrics text to (a new or regular file, written whole: a "
        "temporary file, then a rename), e.g. in node_exporter's --collector.textfile.directory; use a name ending "
        "in .prom. - for standard output.", show_default=False),
    force: bool = typer.Option(False, "--force", help="Replace the file if it exists (as every later export does)."),
    db: Optional[str] = DbOption,
) -> None:
    """Write the latest complete run of each host, target and preset as OpenMetrics text, for
    node_exporter's textfile collector (the same text as the server's /metrics). An existing file is
    replaced only with --force, and only if it is a regular file.

    Example:

        stackbench export --openmetrics /var/lib/node_exporter/textfile/stackbench.prom --force
    """
    from stackbench.base.output_files import Destination, check, write_file
    from stackbench.report.openmetrics import latest_complete, openmetrics_text

    destination = Destination("--openmetrics", stdout=True)
    check([openmetrics], force=force, destination=destination)
    store = open_store_from(db)
    chosen = latest_complete(run for run, _ in store.list_runs())
    text = openmetrics_text(store.get_run(run.id) for run in chosen)
    write_file(openmetrics, text.encode(), force=force, destination=destination)
