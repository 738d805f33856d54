"""A real `stackbench serve` on 127.0.0.1 for the web tests: uvicorn in a thread with the configuration
the CLI uses (`web.server.uvicorn_config`), a store of real imported fio outputs, accounts, and helpers
that log in over HTTP as a browser would."""

from __future__ import annotations

import functools
import html
import io
import logging
import json
import re
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx
from fastapi import params
from fastapi.routing import APIRoute

from stackbench.analysis.goals import parse_goal
from stackbench.load.importer import import_files
from stackbench.store import open_store
from stackbench.store.accounts import Accounts
from stackbench.web.app import create_app
from stackbench.web.passwords import hash_password
from stackbench.web.server import uvicorn_config
from stackbench.web.settings import Settings

FIO = Path(__file__).resolve().parent.parent / "data" / "fio"
DISKINFO = FIO.parent / "diskinfo"  # diskinfo -wS outputs: sync-write sweeps that cost no fio time
PASSWORD = "correct horse battery staple"
HOSTILE = "<script>alert(1)</script>"
# The shared server's limits, raised so that the suite's many requests from 127.0.0.1 are not throttled;
# two runs a page so that paging is exercised with few runs.
SHARED = Settings(misses_per_address=100_000, login_failures_per_address=10_000, login_failures_per_account=10_000,
                  runs_per_page=2)


@dataclass
class Site:
    base: str
    app: object
    store: object
    accounts: Accounts
    runs: dict[str, str] = field(default_factory=dict)  # name -> run id
    ids: dict[str, str] = field(default_factory=dict)  # account name -> id

    def client(self) -> httpx.Client:
        """A client that sends its forms as a browser sends them from the server's own pages (`Origin`)."""
        return httpx.Client(base_url=self.base, follow_redirects=False, timeout=30, headers={"Origin": self.base})

    def login(self, name: str, password: str = PASSWORD) -> httpx.Client:
        client = self.client()
        response = login(client, name, password)
        assert response.status_code == 303, response.text
        return client


@dataclass(frozen=True)
class Route:
    """A route of the app as the tests that walk the route table see it (the access matrix, the hostile
    parameters, the security headers, the Origin check): its path, its methods, and every parameter it
    reads, its dependencies' included, as (name, where): where is path, query, header, cookie, form or body."""

    path: str
    methods: frozenset[str]
    parameters: tuple[tuple[str, str], ...]

    def named(self, *where: str) -> list[str]:
        return [name for name, found in self.parameters if found in where]


def app_routes(app: object) -> list[Route]:
    """Every route of the app, those of its included routers (every page group's, web/pages/, and the API's)
    in place. FastAPI 0.137 and later keep an included router behind one entry of `app.routes`, which
    `iter_route_contexts` opens (with the router's prefix on the path); before, the routes were copied into
    `app.routes`."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before 0.137.2
        found = [(route.path, route) for route in app.routes if isinstance(route, APIRoute)]  # type: ignore[attr-defined]
    else:
        found = [(context.path, context.original_route) for context in iter_route_contexts(app.routes)  # type: ignore[attr-defined]
                 if isinstance(context.original_route, APIRoute)]
    return [Route(path, frozenset(route.methods), tuple(dict.fromkeys(_parameters(route.dependant))))
            for path, route in found]


def _parameters(dependant: object) -> list[tuple[str, str]]:
    """(name, where) of what a route or a dependency reads from the request, then its dependencies'."""
    found = [(p.name, where) for where in ("path", "query", "header", "cookie")
             for p in getattr(dependant, f"{where}_params")]
    found += [(p.name, "form" if isinstance(p.field_info, params.Form) else "body") for p in dependant.body_params]
    for dependency in dependant.dependencies:
        found += _parameters(dependency)
    return found


def login(client: httpx.Client, name: str, password: str) -> httpx.Response:
    """Log in as a browser does from the login page (its form, its cookie, the page's Origin)."""
    form = client.get("/login")
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
    origin = str(client.base_url).rstrip("/")
    return client.post("/login", data={"name": name, "password": password, "login_csrf": token},
                       headers={"Origin": client.headers.get("Origin", origin)})


def csrf_of(client: httpx.Client, path: str = "/runs") -> str:
    """The session's CSRF token, as a page's forms carry it."""
    return re.search(r'name="csrf" value="([^"]+)"', client.get(path).text).group(1)


def first_answer(url: str, server: "subprocess.Popen", within_s: float = 60) -> httpx.Response:
    """GET `url` from a `stackbench serve` just started: tried again until it listens, a failure if the
    process ended first or `within_s` passed."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
            time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SERVER_LOG = io.StringIO()  # what the in-process servers log (see `server_log_to_buffer`)


def server_log_to_buffer() -> None:
    """Point the server's stderr log handlers (web/logs.py, configured by `uvicorn_config`) at SERVER_LOG,
    with their formatters and filters: the lines are the CLI's, but a server running in the test process
    does not write into the stderr of a CLI command the test runs in the same process."""
    from stackbench.web.logs import ACCESS_LOGGER, CurrentStderr

    moved: dict[int, logging.Handler] = {}
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", ACCESS_LOGGER):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if isinstance(handler, CurrentStderr):
                if id(handler) not in moved:
                    moved[id(handler)] = logging.StreamHandler(SERVER_LOG)
                    moved[id(handler)].setFormatter(handler.formatter)
                    moved[id(handler)].filters = list(handler.filters)
                logger.removeHandler(handler)
                logger.addHandler(moved[id(handler)])


@contextmanager
def running(app: object, forwarded_allow_ips: str | None = None) -> Iterator[str]:
    """Serve `app` with uvicorn on a free loopback port until the block ends; yields the base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, forwarded_allow_ips))
    server_log_to_buffer()
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def chart_images(page: str) -> list[tuple[str, str]]:
    """(src, alt) of every chart image on a page."""
    return [(html.unescape(src), html.unescape(alt))
            for src, alt in re.findall(r'<img src="([^"]+)" alt="([^"]*)"', page)]


def assert_charts_served(client: httpx.Client, page: str, kinds_at_least: int) -> list[str]:
    """Every chart image of `page` answers SVG to `client`; returns their alt texts."""
    charts = chart_images(page)
    assert len(charts) >= kinds_at_least, charts
    for src, alt in charts:
        assert alt.strip(), src
        image = client.get(src)
        assert image.status_code == 200 and image.headers["content-type"].startswith("image/svg+xml"), src
        assert image.text.lstrip().startswith("<?xml") and "<svg" in image.text and "<script" not in image.text
    return [alt for _, alt in charts]


def first_table(page: str) -> list[list[str]]:
    """The rows of the page's first table (the ranking), cells as text."""
    body = re.search(r"<table>.*?</table>", page, re.S).group(0)
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S) if "<td" in row]


def markdown_rows(text: str) -> list[list[str]]:
    """The rows of the first pipe table of Markdown that stackbench printed (report/formats/markdown.py),
    header and alignment row left out, each cell unescaped back to its text."""
    table = re.search(r"(^\|.*\|$\n?)+", text, re.M).group(0).splitlines()
    return [[re.sub(r"\\(.)", r"\1", cell.strip()) for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in table[2:]]


def assert_slog_page_is_the_clis(client: httpx.Client, db_url: str, ids: list[str]) -> str:
    """/slog?runs=IDS shows `stackbench slog --run ID...`'s table cell for cell (its Markdown output, the
    text a reader is shown; its CSV holds plain numbers instead) in the order of its --json ranking, its
    notes (what the ranking proves) and the warnings it prints (what more runs would decide); returns the
    page."""
    from conftest import cli_here

    answer = client.get("/slog", params={"runs": ids})
    assert answer.status_code == 200, answer.text
    refs = [arg for run_id in ids for arg in ("--run", run_id)]
    as_markdown = cli_here("slog", *refs, "--db", db_url, "--format", "markdown")
    as_json = cli_here("slog", *refs, "--db", db_url, "--json")
    assert as_markdown.returncode == 0 and as_json.returncode == 0, as_markdown.stderr + as_json.stderr
    cli_rows = markdown_rows(as_markdown.stdout)
    page_rows = first_table(answer.text)
    assert page_rows == cli_rows
    ranked = json.loads(as_json.stdout)["candidates"]
    assert [(r[0], r[-1]) for r in page_rows] == [(c["candidate"], c["verdict"]) for c in ranked]
    page_text = html.unescape(re.sub(r"\s+", " ", answer.text))
    notes = [line.rstrip() for line in as_markdown.stdout.split("\n\n", 2)[-1].splitlines() if line.strip()]
    for note in notes:
        assert re.sub(r"\\(.)", r"\1", note.rstrip()) in page_text
    warnings = [line for line in as_json.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [f"Warning: {w['subject']}: {w['text']}; {w['fix']}"
                        for w in json.loads(as_json.stdout)["warnings"]]
    for warning in warnings:
        assert warning in page_text
    return answer.text


@functools.cache
def _password_hash() -> str:
    return hash_password(PASSWORD)  # one argon2 hash for every test account: each costs a tenth of a second


def populate(db_url: str) -> tuple[object, Accounts, dict[str, str], dict[str, str]]:
    """A store with real imported fio outputs and three accounts:

    alice owns `a` (labelled with a script tag) and `b`, both private; bob owns `bob` (private) and `team`
    (team-visible); `unowned` has no owner; carol is an admin."""
    store = open_store(db_url)
    accounts = Accounts(store)
    ids = {}
    for name, admin in (("alice", False), ("bob", False), ("carol", True)):
        ids[name] = accounts.add_account(name, _password_hash(), admin=admin).id
    runs = {}
    for name, label, owner in (("a", HOSTILE, "alice"), ("b", "alice-b", "alice"), ("bob", "bob-private", "bob"),
                               ("team", "bob-team", "bob"), ("unowned", "from-the-cli", None)):
        run = import_files(store, [FIO / "randread-psync.json"], label=label)[0]
        runs[name] = run.id
        if owner:
            accounts.claim(ids[owner], [run.id])
    accounts.set_visibility(runs["team"], "team")
    _add_scans_and_audits(store, accounts, ids, runs)
    _add_tune_session(store, accounts, ids, runs)
    for goal in ("rnd read 4K >= 10000 IOPS", "p99 <= 50 us"):  # one passes, one fails on this output
        store.add_goal(parse_goal(goal))
    return store, accounts, runs, ids


def _add_scans_and_audits(store, accounts: Accounts, ids: dict[str, str], items: dict[str, str]) -> None:  # noqa: ANN001
    """Stored smallblocks scans and audits, as `smallblocks --db` and `audit --db` store them (their
    documents built by the same code, tests/stored_runs.py): alice's scan (labelled with a script tag) and
    her two audits of one machine, the second with its first finding fixed (audit/history.compare_audits);
    bob's team scan; an unowned audit. Their ids go into `items` as scan, scan-team, audit-before,
    audit-after and audit-unowned."""
    from datetime import datetime, timedelta, timezone

    from stackbench.audit.history import compare_audits
    from stackbench.model.results import new_id
    from stored_runs import audit_document, scan_document

    when = datetime.now(timezone.utc) - timedelta(hours=1)
    for name, label, owner in (("scan", HOSTILE, "alice"), ("scan-team", "bob-team-scan", "bob")):
        items[name] = store.add_scan(scan_id=new_id(), label=label, created_at=when, status="complete",
                                     document=scan_document())
        accounts.claim_items(ids[owner], [("scan", items[name])])
    accounts.set_visibility(items["scan-team"], "team", kind="scan")
    document, findings = audit_document()
    subject = document["subject"]

    def add(name: str, label: str, at: datetime, document: dict, findings: list, previous: str | None) -> None:
        items[name] = store.add_audit(
            audit_id=new_id(), label=label, created_at=at, subject_key=subject["key"], subject_name=subject["name"],
            source=subject["source"], source_detail=subject["detail"], zfs_version=None, previous_id=previous,
            facts=document["facts"], document=document, findings=findings)

    add("audit-before", "before", when, document, findings, None)
    fixed, *kept = findings
    changes, marks = compare_audits({"audit_id": items["audit-before"], "created_at": when.isoformat(),
                                     "facts": document["facts"]}, findings, kept, document["facts"])
    after = {**document, "findings": [{**f, "change": m} for f, m in zip(document["findings"][1:], marks)],
             "changes": changes}
    add("audit-after", f"after {HOSTILE}", when + timedelta(minutes=5), after, kept, items["audit-before"])
    accounts.claim_items(ids["alice"], [("audit", items["audit-before"]), ("audit", items["audit-after"])])
    add("audit-unowned", "from-the-cli-audit", when, document, findings, None)


def _add_tune_session(store, accounts: Accounts, ids: dict[str, str], items: dict[str, str]) -> None:  # noqa: ANN001
    """alice's tune session (private), stored as `tune --apply --db` stores one: its knob compared her runs `a`
    and `b`; its confirmation her `b` and bob's private `bob`, a comparison she may not see. Its id goes into
    `items` as tune."""
    from datetime import datetime, timedelta, timezone

    from stackbench.model.results import new_id
    from store.test_tune_sessions_store import session_document

    session_id = new_id()
    document = session_document(session_id)
    knob = document["knobs"][0]
    knob["compare"] = {**knob["compare"], "base": {"run_id": items["a"]}, "other": {"run_id": items["b"]}}
    document["confirmation"] = {"rounds": 4, "decision": "kept", "why": "the kept set is better", "stop": "",
                                "compare": {**knob["compare"], "base": {"run_id": items["b"]},
                                            "other": {"run_id": items["bob"]}}}
    when = datetime.now(timezone.utc) - timedelta(minutes=30)
    items["tune"] = store.add_tune_session(session_id=session_id, label="alice-tune", status="completed",
                                           created_at=when, finished_at=when + timedelta(seconds=76),
                                           document=document)
    accounts.claim_items(ids["alice"], [("tune", session_id)])


@contextmanager
def site(db_url: str, settings: Settings | None = None) -> Iterator[Site]:
    """A populated store served with `settings`."""
    store, accounts, runs, ids = populate(db_url)
    with serving(store, accounts, runs, ids, settings) as running:
        yield running


@contextmanager
def serving(store, accounts, runs, ids, settings, forwarded_allow_ips=None) -> Iterator[Site]:  # noqa: ANN001
    app = create_app(store, settings)
    with running(app, forwarded_allow_ips) as base:
        yield Site(base=base, app=app, store=store, accounts=accounts, runs=runs, ids=ids)
    store.dispose()


class Template:
    """A populated SQLite store made once and copied for each server of its own (migrating and importing
    anew would cost a second per test)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "template.db"
        store, _, self.runs, self.ids = populate(f"sqlite:///{self.path}")
        store.dispose()
        self.copies = 0

    @contextmanager
    def site(self, settings: Settings, forwarded_allow_ips: str | None = None) -> Iterator[Site]:
        from stackbench.store import open_store

        self.copies += 1
        path = self.directory / f"copy-{self.copies}.db"
        shutil.copyfile(self.path, path)
        store = open_store(f"sqlite:///{path}")
        with serving(store, Accounts(store), dict(self.runs), dict(self.ids), settings, forwarded_allow_ips) as running:
            yield running
