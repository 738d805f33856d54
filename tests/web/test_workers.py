"""`stackbench serve --workers N`: several worker processes behind one listening socket, started by the
real entry point in a subprocess. What they must agree on lives in the store: a session made by one
worker is honoured by the other, and the rate limits count across them (with per-process counting each
worker would let the whole limit through on its own). Every request goes on a new connection, so the
kernel hands them to either worker."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from conftest import run_cli
from stackbench.web.settings import Settings
from web.site import PASSWORD, free_port, login



WORKERS = 2


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


@contextmanager
def serving(db: str, log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    with log.open("w") as sink:
        server = subprocess.Popen([sys.executable, "-m", "stackbench", "serve", "--db", db, "--port", str(port),
                                   "--workers", str(WORKERS)], stdout=subprocess.DEVNULL, stderr=sink)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/robots.txt", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield base, server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            server.wait(30)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = f"sqlite:///{tmp_path_factory.mktemp('workers') / 'results.db'}"
    made = run_cli("user", "add", "alice", "--password-stdin", "--db", path, input=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    return path


@pytest.mark.slow  # a server of several processes starts (~5 s)
def test_workers_share_sessions_and_the_miss_limit_and_stop_together(db: str, tmp_path: Path) -> None:
    limit = Settings().misses_per_address
    with serving(db, tmp_path / "serve.log") as (base, server):
        workers = _children(server.pid) - {p for p in _children(server.pid) if b"resource_tracker"
                                             in Path(f"/proc/{p}/cmdline").read_bytes()}
        assert len(workers) == WORKERS, (workers, (tmp_path / "serve.log").read_text())

        with httpx.Client(base_url=base) as client:
            assert login(client, "alice", PASSWORD).status_code == 303
            cookies = dict(client.cookies)
        for _ in range(10):  # a session made in one worker is known to every worker
            assert httpx.get(base + "/runs", cookies=cookies, follow_redirects=False).status_code == 200

        statuses = [httpx.get(f"{base}/runs/{secrets.token_hex(16)}").status_code for _ in range(limit + 30)]
        assert statuses[:limit] == [404] * limit and set(statuses[limit:]) == {429}, statuses

        server.send_signal(signal.SIGINT)
        assert server.wait(30) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)  # no worker outlives the supervisor
    assert "2 worker processes" in (tmp_path / "serve.log").read_text()


@pytest.mark.slow  # a server of several processes starts (~5 s)
def test_failed_logins_are_counted_across_workers(db: str, tmp_path: Path) -> None:
    limit = Settings().login_failures_per_account
    with serving(db, tmp_path / "serve.log") as (base, _server):
        statuses = []
        for _ in range(limit + 3):
            with httpx.Client(base_url=base) as client:  # a new connection, so either worker answers
                statuses.append(login(client, "alice", "not the password at all").status_code)
    assert statuses == [401] * limit + [429] * 3, statuses


@pytest.mark.slow  # an interpreter starts
def test_serve_workers_option_is_checked(db: str) -> None:
    result = run_cli("serve", "--db", db, "--workers", "0")
    assert result.returncode == 2 and "--workers" in result.stderr


def test_a_worker_runs_at_most_threads_routes_at_once() -> None:
    """`serve --threads N` is the size of the pool the synchronous routes run in (web/server.ThreadLimit),
    seen from inside a request."""
    import anyio
    import anyio.to_thread

    from stackbench.web.server import ThreadLimit

    seen = []

    async def app(scope: dict, receive, send) -> None:  # noqa: ANN001
        seen.append(anyio.to_thread.current_default_thread_limiter().total_tokens)

    async def two_requests() -> None:
        limited = ThreadLimit(app, 3)
        await limited({"type": "http"}, None, None)
        await limited({"type": "http"}, None, None)

    anyio.run(two_requests)
    assert seen == [3, 3]
