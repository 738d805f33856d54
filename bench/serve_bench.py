#!/usr/bin/env python3
"""`stackbench serve` under load: the runs list, a run page and a compare page with N stored runs and C
concurrent clients (issue 14: 10,000 runs, 20 clients, goal p95 <= 100 ms per page).

The store is filled in this process through the Store API (`create_run`, `add_measurement`,
`finish_run`), not through `stackbench import`: one real fio JSON capture (tests/data/fio) is imported
once and its parsed cells and raw output are stored again N-1 times under new random ids and labels.
Importing the file 10,000 times through the CLI would cost an interpreter start each; the rows written are
the same. Every run belongs to one account (`user claim`), so the runs list pages through all N.

The server is the real `stackbench serve` in a subprocess on 127.0.0.1 (its own process: the load
generator does not share its interpreter lock). The load generator is bounded: C clients (asyncio tasks in
one thread), each logged in through the real form and then on its own keep-alive connection, each sending a fixed number of requests per page,
one at a time, in the order of the pages (the runs list; its middle page by its number, as a
typed URL skips to it; the same page by the Older link of the page before, as paging reaches it; a
search by a word of a label, which reads every run's label, target and host; the list sorted by label;
a run; a compare), ... Before measuring, each client requests each page once: a page draws its charts
on first view and keeps them (web/charts.py), and the measurement is of pages as users see them after that.
The chart images themselves are not requested (they are separate requests a browser makes later).

Before that, the first view of a run page (issue 34, goal p95 <= 100 ms): the newest --first-views runs,
each page opened once by one client, against a server that draws the charts on that view (`--warm-runs 0`)
and against one that drew them when the runs were stored (its warmer, web/chart_warmer.py, done before the
first request), in the same session.

    python bench/serve_bench.py                          # 10,000 runs, 20 clients, SQLite
    python bench/serve_bench.py --runs 500 --clients 5 --requests 10   # a quick check that it works
    python bench/serve_bench.py --postgres               # the same against PostgreSQL (tests/pg_server.py)

Prints p50/p95 latency per page and whether p95 meets the goal, and the CPU time the server (and PostgreSQL)
spent per request while measured (on a shared machine the fairer number for comparing two versions of the
server); paste the lines into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "data" / "fio" / "randread-psync.json"
PASSWORD = "bench passphrase for serve"
GOAL_MS = 100.0


def fill(url: str, runs: int) -> tuple[list[str], str]:
    """N runs owned by the account `bench` in the store at `url`; (their ids, newest last; the account name)."""
    from stackbench.load.importer import import_files
    from stackbench.store import open_store
    from stackbench.store.accounts import Accounts
    from stackbench.store.repository import CellRecord, OutputRecord
    from stackbench.web.passwords import hash_password

    store = open_store(url)
    accounts = Accounts(store)
    account = accounts.add_account("bench", hash_password(PASSWORD), admin=False)
    first = import_files(store, [CAPTURE], label="bench-0")[0]
    raw = CAPTURE.read_text()
    ids = [first.id]
    clock = time.monotonic()
    for index in range(1, runs):
        run_id = store.create_run(source=first.source, label=f"bench-{index}", target=first.target,
                                  plan_name=first.plan_name, planned_cells=first.planned_cells, facts=first.facts,
                                  warnings=first.warnings)
        store.add_measurement(run_id, [OutputRecord(raw_text=raw, fio_version=first.facts.get("fio_version"))],
                              [CellRecord(c.workload, c.result, c.samples, c.measurement) for c in first.cells])
        store.finish_run(run_id, "complete")
        ids.append(run_id)
        if index % 1000 == 0:
            print(f"  stored {index:,} runs ({time.monotonic() - clock:.0f} s)", file=sys.stderr)
    accounts.claim(account.id, ids)
    store.dispose()
    return ids, account.name


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(url: str, workers: int = 1, threads: int = 2, warm_runs: int = 0) -> Iterator[tuple[str, int]]:
    """`stackbench serve --db URL --workers N` on a free loopback port until the block ends; yields the
    base URL and the server's process id. Its log (an access-log line per request) goes to a file: a pipe nobody reads would fill and
    stall the server. Its chart directory is a new empty one; with `warm_runs`, the block starts once the
    server has drawn the charts of that many newest runs (`serve --warm-runs`, web/chart_warmer.py)."""
    import httpx

    port = free_port()
    with tempfile.TemporaryFile("w+") as log, tempfile.TemporaryDirectory(prefix="serve-bench-charts-") as charts:
        server = subprocess.Popen([sys.executable, "-m", "stackbench", "serve", "--db", url, "--port", str(port),
                                   "--workers", str(workers), "--threads", str(threads), "--chart-cache", charts,
                                   "--warm-runs", str(warm_runs)],
                                  stdout=subprocess.DEVNULL, stderr=log, text=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(base + "/robots.txt", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"stackbench serve did not start: {log.read()}")
                time.sleep(0.2)
            clock = time.monotonic()
            while len(list(Path(charts).glob("*.json"))) < warm_runs:
                if server.poll() is not None or time.monotonic() > clock + 60 + 5 * warm_runs:
                    raise SystemExit(f"stackbench serve did not draw {warm_runs} runs' charts")
                time.sleep(0.2)
            if warm_runs:
                print(f"  the server drew {warm_runs} runs' charts in {time.monotonic() - clock:.1f} s",
                      file=sys.stderr)
            yield base, server.pid
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def session_cookie(base: str, name: str) -> str:
    """Log in as `name` (the real form, with its CSRF token) and answer the session's Cookie header."""
    import httpx

    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        form = client.get("/login")
        token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
        answer = client.post("/login", data={"name": name, "password": PASSWORD, "login_csrf": token},
                             headers={"Origin": base})  # as the login page's form sends it
        if answer.status_code != 303:
            raise SystemExit(f"could not log in: HTTP {answer.status_code}")
        return "; ".join(f"{k}={v}" for k, v in client.cookies.items())


class Connection:
    """One keep-alive HTTP/1.1 connection that sends GETs and reads each answer whole (by its
    Content-Length, which the server always sends): the load generator's client.

    The generator shares the machine's cores with the server, so it should spend as little CPU as it
    can: no HTTP library, one thread, a few string operations per request. Its own CPU time is printed
    with the results (`load` measures it), so that what it took from the server can be judged."""

    def __init__(self, base: str, cookie: str) -> None:
        self.host, _, port = base.removeprefix("http://").partition(":")
        self.port, self.cookie = int(port), cookie
        self.reader = self.writer = None

    async def get(self, path: str) -> int:
        import asyncio

        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nCookie: {self.cookie}\r\n\r\n"
                          .encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        if length is None:
            raise SystemExit(f"{path}: HTTP {status} without Content-Length")
        await self.reader.readexactly(int(length.group(1)))
        if re.search(rb"(?im)^connection:\s*close", head):
            self.writer.close()
            self.writer = None
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def cpu_seconds(roots: dict[str, int]) -> dict[str, float]:
    """CPU time (user + system, seconds) used so far by each named process and all its descendants, read
    from /proc: the server's worker processes are children of `stackbench serve`, PostgreSQL's backends
    children of its postmaster."""
    import os

    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    totals = {}
    for name, root in roots.items():
        tree, grown = {root}, True
        while grown:
            more = {pid for pid, parent in parents.items() if parent in tree} - tree
            tree |= more
            grown = bool(more)
        totals[name] = sum(used.get(pid, 0.0) for pid in tree)
    return totals


def postmaster(url: str) -> int | None:
    """The process id of the PostgreSQL server listening on `url`'s port on this machine (None if it is
    not found here)."""
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if args and args[0].endswith(b"postgres") and any(a == b"-p" and b == port.encode() for a, b in zip(args, args[1:])):
            return int(entry.name)
    return None


def load(base: str, name: str, pages: dict[str, str], clients: int, requests: int,
         watched: dict[str, int]) -> dict[str, list[float]]:
    """Each of `clients` clients requests every page `requests` times, one request at a time; the latency
    of each request in milliseconds, by page. The clients are asyncio tasks in one thread, each with its
    own logged-in session and connection (see `Connection` for why not a full HTTP library).

    Also prints the CPU time the `watched` processes (the server, PostgreSQL) spent per request while
    measured: on a machine shared with other work the latencies follow its load, the CPU time per request
    much less, so it is the fairer number to compare two versions of the server by."""
    import asyncio

    cookies = [session_cookie(base, name) for _ in range(clients)]

    async def run() -> dict[str, list[float]]:
        connections = [Connection(base, cookie) for cookie in cookies]
        for connection in connections:  # warm-up on every connection, so every worker has drawn the charts
            for path in pages.values():
                if (status := await connection.get(path)) != 200:
                    raise SystemExit(f"{path}: HTTP {status}")
        timings: dict[str, list[float]] = {page: [] for page in pages}
        failures: list[str] = []

        async def client(connection: Connection) -> None:
            for _ in range(requests):
                for page, path in pages.items():
                    clock = time.perf_counter()
                    status = await connection.get(path)
                    timings[page].append((time.perf_counter() - clock) * 1000)
                    if status != 200:
                        failures.append(f"{path}: HTTP {status}")

        import resource

        clock, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        served_before = cpu_seconds(watched)
        await asyncio.gather(*(client(connection) for connection in connections))
        served = {k: v - served_before[k] for k, v in cpu_seconds(watched).items()}
        after = resource.getrusage(resource.RUSAGE_SELF)
        spent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(f"load generator: {spent:.1f} s of CPU in {time.perf_counter() - clock:.1f} s "
              f"({spent / max(1, clients * requests * len(pages)) * 1000:.2f} ms a request)", file=sys.stderr)
        print("server CPU per request: " + ", ".join(
            f"{k} {v / (clients * requests * len(pages)) * 1000:.2f} ms" for k, v in served.items()), file=sys.stderr)
        for connection in connections:
            connection.close()
        if failures:
            raise SystemExit(f"{len(failures)} requests failed, the first: {failures[0]}")
        return timings

    return asyncio.run(run())


def older_link(base: str, name: str, page_number: int) -> str:
    """The runs list's Older link on page `page_number`: the next page as a user reaches it by paging
    (anchored at the last run shown), not by typing its number."""
    import html

    import httpx

    with httpx.Client(base_url=base, headers={"Cookie": session_cookie(base, name)}, timeout=60) as client:
        listing = client.get("/runs", params={"page_number": page_number}).text
    return html.unescape(re.search(r'href="([^"]+)" rel="next"', listing).group(1))


def first_views(url: str, ids: list[str], name: str, count: int) -> bool:
    """Issue 34: the first view of a run page, each of `count` runs opened once by one client (no page or
    image requested before), with the charts drawn on that view (`--warm-runs 0`, as before) and drawn when
    stored (the server's warmer has drawn the newest runs; the goal, p95 <= 100 ms), one after the other in
    the same session."""
    import asyncio

    newest = ids[::-1][:count]
    results = {}
    for label, warm in (("charts drawn on the first view (--warm-runs 0)", 0),
                        (f"charts drawn when stored (--warm-runs {count})", count)):
        with serving(url, 1, 2, warm_runs=warm) as (base, _):
            connection = Connection(base, session_cookie(base, name))

            async def views() -> list[float]:
                await connection.get("/robots.txt")  # the connection opened, as a browser's is
                times = []
                for run_id in newest:
                    clock = time.perf_counter()
                    status = await connection.get(f"/runs/{run_id}")
                    times.append((time.perf_counter() - clock) * 1000)
                    if status != 200:
                        raise SystemExit(f"/runs/{run_id}: HTTP {status}")
                connection.close()
                return times

            results[label] = asyncio.run(views())
    print(f"\nFirst view of a run page: {count} runs, each opened once, one client, serve --workers 1 "
          f"(goal: p95 <= {GOAL_MS:.0f} ms)")
    print("| charts | views | p50 (ms) | p95 (ms) | max (ms) | goal |")
    print("|---|---:|---:|---:|---:|---|")
    met = True
    for label, values in results.items():
        p95 = percentile(values, 95)
        met = p95 <= GOAL_MS
        print(f"| {label} | {len(values)} | {statistics.median(values):.1f} | {p95:.1f} | {max(values):.1f} | "
              f"{'met' if met else 'MISSED'} |")
    return met  # the goal is the second's, drawn when stored


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def stored(url: str) -> tuple[list[str], str]:
    """The runs of a store `fill` made before (--store), oldest first, and the account name."""
    from sqlalchemy import select

    from stackbench.store import open_store, schema

    store = open_store(url)
    with store.engine.connect() as connection:
        ids = list(connection.execute(select(schema.runs.c.id).order_by(schema.runs.c.created_at)).scalars())
    store.dispose()
    return ids, "bench"


def settle(url: str) -> None:
    """VACUUM ANALYZE, as autovacuum does on a store in use: right after a bulk load of 10,000 runs the
    planner has no statistics and the visibility map is empty, so an index-only scan of ix_runs_listing
    would fetch every row from the table, which a server that has been running for a minute never does."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text("VACUUM ANALYZE"))
    engine.dispose()


def bench(url: str, backend: str, args: argparse.Namespace, reuse: bool = False) -> bool:
    clock = time.monotonic()
    if reuse:
        ids, name = stored(url)
        print(f"{backend}: {len(ids):,} runs already in the store", file=sys.stderr)
    else:
        ids, name = fill(url, args.runs)
        print(f"{backend}: stored {len(ids):,} runs through the Store API in {time.monotonic() - clock:.0f} s",
              file=sys.stderr)
        if backend == "PostgreSQL":
            settle(url)
    from stackbench.web.settings import Settings

    middle = len(ids) // 2
    per_page = Settings().runs_per_page
    middle_page = max(1, len(ids) // per_page // 2)
    pages = {
        "runs list": "/runs",
        "runs list, a middle page by its number": f"/runs?page_number={middle_page}",
        "runs list, a middle page by Older": "",  # the link the page before shows (below)
        "runs list, a search by a word of a label": "/runs?q=BENCH-77",  # a LIKE over every run, and its facets
        "runs list, sorted by label": "/runs?sort=-label",
        "run": f"/runs/{ids[middle]}",
        "compare": f"/compare/{ids[middle]}/{ids[middle + 1]}",
    }
    first_met = first_views(url, ids, name, min(args.first_views, len(ids)))
    with serving(url, args.workers, args.threads) as (base, server):
        pages["runs list, a middle page by Older"] = older_link(base, name, middle_page - 1)
        watched = {"stackbench serve": server}
        if backend == "PostgreSQL" and (database := postmaster(url)) is not None:
            watched["PostgreSQL"] = database
        timings = load(base, name, pages, args.clients, args.requests, watched)
    met = first_met
    print(f"\n{backend}, {len(ids):,} runs, serve --workers {args.workers} --threads {args.threads}, {args.clients} clients x "
          f"{args.requests} requests per page (goal: p95 <= {GOAL_MS:.0f} ms)")
    print("| page | requests | p50 (ms) | p95 (ms) | max (ms) | goal |")
    print("|---|---:|---:|---:|---:|---|")
    for page, values in timings.items():
        p95 = percentile(values, 95)
        ok = p95 <= GOAL_MS
        met &= ok
        print(f"| {page} | {len(values)} | {statistics.median(values):.1f} | {p95:.1f} | {max(values):.1f} | "
              f"{'met' if ok else 'MISSED'} |")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="runs in the store (default 10000)")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (default 20)")
    parser.add_argument("--requests", type=int, default=25, help="requests per page per client (default 25)")
    parser.add_argument("--workers", type=int, default=2,
                        help="`stackbench serve --workers` (default 2: this machine's cores)")
    parser.add_argument("--threads", type=int, default=2, help="`stackbench serve --threads` (default 2)")
    parser.add_argument("--first-views", type=int, default=40,
                        help="runs whose page is opened once for the first-view measurement (default 40)")
    parser.add_argument("--store", type=Path, default=None,
                        help="a SQLite file to keep: filled with --runs runs if it does not exist, reused if it "
                        "does (filling 10,000 runs takes minutes)")
    parser.add_argument("--postgres", action="store_true",
                        help="also against a throw-away PostgreSQL server (tests/pg_server.py)")
    args = parser.parse_args()
    if args.runs < 2 or args.clients < 1 or args.requests < 1:
        parser.error("--runs needs at least 2, --clients and --requests at least 1")
    met = True
    if args.store is not None:  # kept between runs: filled once, measured as often as asked
        met &= bench(f"sqlite:///{args.store.resolve()}", "SQLite", args, reuse=args.store.exists())
    else:
        with tempfile.TemporaryDirectory() as directory:
            met &= bench(f"sqlite:///{Path(directory) / 'bench.db'}", "SQLite", args)
    if args.postgres:
        sys.path.insert(0, str(ROOT / "tests"))
        from pg_server import postgres_server

        with postgres_server() as url:
            met &= bench(url, "PostgreSQL", args)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
