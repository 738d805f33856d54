#!/usr/bin/env python3
"""`stackbench serve` under load: the runs list, a run page and a compare page with N stored runs and C
concurrent clients (issue 14: 10,000 runs, 20 clients, goal p95 <= 100 ms per page).

The store is filled in this process through the Store API (`create_run`, `add_measurement`,
`finish_run`), not through `stackbench import`: one real fio JSON capture (tests/data/fio) is imported
once and its parsed cells and raw output are stored again N-1 times under new random ids and labels.
Importing the file 10,000 times through the CLI would cost an interpreter start each; the rows written are
the same. Every run belongs to one account (`user claim`), so the runs list pages through all N.

The server is the real `stackbench serve` in a subprocess on 127.0.0.1 (its own process: the load
generator's threads do not share its interpreter lock). The load generator is bounded: C threads, each with
its own logged-in httpx client, each sending a fixed number of requests per page, one at a time, in the
order list, run, compare, list, ... Before measuring, each page is requested once: a page draws its charts
on first view and keeps them (web/charts.py), and the measurement is of pages as users see them after that.
The chart images themselves are not requested (they are separate requests a browser makes later).

    python bench/serve_bench.py                          # 10,000 runs, 20 clients, SQLite
    python bench/serve_bench.py --runs 500 --clients 5 --requests 10   # a quick check that it works
    python bench/serve_bench.py --postgres               # the same against PostgreSQL (tests/pg_server.py)

Prints p50/p95 latency per page and whether p95 meets the goal; paste the lines into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
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
    from stackbench.importer import import_files
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
def serving(url: str, workers: int = 1) -> Iterator[str]:
    """`stackbench serve --db URL --workers N` on a free loopback port until the block ends; yields the
    base URL. Its log (an access-log line per request) goes to a file: a pipe nobody reads would fill and
    stall the server."""
    import httpx

    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen([sys.executable, "-m", "stackbench", "serve", "--db", url, "--port", str(port),
                                   "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=log, text=True)
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
            yield base
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def logged_in(base: str, name: str):  # noqa: ANN201 - an httpx.Client
    import httpx

    client = httpx.Client(base_url=base, follow_redirects=False, timeout=60)
    form = client.get("/login")
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
    answer = client.post("/login", data={"name": name, "password": PASSWORD, "login_csrf": token})
    if answer.status_code != 303:
        raise SystemExit(f"could not log in: HTTP {answer.status_code}")
    return client


def load(base: str, name: str, pages: dict[str, str], clients: int, requests: int) -> dict[str, list[float]]:
    """Each of `clients` threads requests every page `requests` times, one request at a time; the latency of
    each request in milliseconds, by page."""
    sessions = [logged_in(base, name) for _ in range(clients)]
    for path in pages.values():  # warm-up: charts drawn, caches filled
        answer = sessions[0].get(path)
        if answer.status_code != 200:
            raise SystemExit(f"{path}: HTTP {answer.status_code}")
    timings: dict[str, list[float]] = {page: [] for page in pages}
    lock = threading.Lock()
    failures: list[str] = []
    start = threading.Barrier(clients)

    def client(session) -> None:  # noqa: ANN001
        mine: dict[str, list[float]] = {page: [] for page in pages}
        start.wait()
        for _ in range(requests):
            for page, path in pages.items():
                clock = time.perf_counter()
                answer = session.get(path)
                elapsed = (time.perf_counter() - clock) * 1000
                if answer.status_code != 200:
                    failures.append(f"{path}: HTTP {answer.status_code}")
                mine[page].append(elapsed)
        with lock:
            for page, values in mine.items():
                timings[page] += values

    threads = [threading.Thread(target=client, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, the first: {failures[0]}")
    return timings


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


def bench(url: str, backend: str, args: argparse.Namespace, reuse: bool = False) -> bool:
    clock = time.monotonic()
    if reuse:
        ids, name = stored(url)
        print(f"{backend}: {len(ids):,} runs already in the store", file=sys.stderr)
    else:
        ids, name = fill(url, args.runs)
        print(f"{backend}: stored {len(ids):,} runs through the Store API in {time.monotonic() - clock:.0f} s",
              file=sys.stderr)
    from stackbench.web.settings import Settings

    middle = len(ids) // 2
    per_page = Settings().runs_per_page
    pages = {
        "runs list": "/runs",
        "runs list, a middle page": f"/runs?page_number={max(1, len(ids) // per_page // 2)}",
        "run": f"/runs/{ids[middle]}",
        "compare": f"/compare/{ids[middle]}/{ids[middle + 1]}",
    }
    with serving(url, args.workers) as base:
        timings = load(base, name, pages, args.clients, args.requests)
    met = True
    print(f"\n{backend}, {len(ids):,} runs, serve --workers {args.workers}, {args.clients} clients x "
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
