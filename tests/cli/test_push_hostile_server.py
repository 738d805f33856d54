"""`stackbench push` against a server that answers hostile things: a real HTTP server on 127.0.0.1 (the
standard library's, in a thread) whose answer each test scripts: control characters, wrong types, another
run's id, a huge body, a slow body. Each is one line naming the fix and exit 1, nothing the server sent
reaches the terminal as control characters, and the push neither holds a huge answer nor waits forever.
URLs that would leak the token are refused (exit 2) before anything is sent."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import DATA, cli_here

TOKEN = "sbt_" + "T" * 43
Respond = Callable[[BaseHTTPRequestHandler, str], None]


class Hostile:
    """The server: `respond(handler, run_id)` writes the raw answer; `requests` counts what arrived and
    `sent` how many body bytes the last answer got out before the client hung up."""

    def __init__(self) -> None:
        self.respond: Respond = lambda handler, run_id: None
        self.requests: list[dict[str, str]] = []
        self.sent = 0
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                hostile.requests.append(dict(self.headers))
                try:
                    hostile.respond(self, json.loads(body)["run"]["id"])
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile()
    yield server
    server.close()


@pytest.fixture
def local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    db = str(tmp_path / "local.db")
    assert cli_here("import", str(DATA / "fio" / "randread-psync.json"), "--label", "one", "--db", db).returncode == 0
    monkeypatch.setenv("STACKBENCH_TOKEN", TOKEN)
    return db


def _answer(status: str, body: bytes, content_type: str = "application/json") -> Respond:
    def respond(handler: BaseHTTPRequestHandler, run_id: str) -> None:
        handler.wfile.write(f"HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\n\r\n".encode()
                            + body.replace(b"RUN_ID", run_id.encode()))
    return respond


def _json(status: str, data: object) -> Respond:
    return _answer(status, json.dumps(data).encode())


def _push(db: str, url: str, *extra: str):  # noqa: ANN202
    done = cli_here("push", "one", "--to", url, "--db", db, *extra)
    for text in (done.stdout, done.stderr):
        assert not any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in text), repr(text)
        assert TOKEN not in text
    return done


def _one_line(done, code: int, *words: str) -> str:  # noqa: ANN001
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code and len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_good_answer_is_printed(hostile: Hostile, local: str) -> None:
    """The scripted server answering as stackbench serve does: the push prints the run's page."""
    hostile.respond = _json("201 Created", {"id": "RUN_ID", "url": f"{hostile.base}/runs/RUN_ID", "created": True})
    done = _push(local, hostile.base)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Pushed ") and f"{hostile.base}/runs/" in done.stdout
    assert hostile.requests[0]["Authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("answer, words", [
    ({"id": 5, "url": "x", "created": True}, ["answered the id 5"]),
    ({"id": "\x1b]0;pwned\x07" + "0" * 20, "url": "x", "created": True}, ["answered the id", "\\x1b"]),
    ({"id": "0" * 32, "url": "x", "created": True}, ["answered the id '000"]),  # another run's id
    ({"id": "RUN_ID", "url": "{base}/runs/RUN_ID", "created": "yes"}, ["'created'"]),
    ({"id": "RUN_ID", "url": "{base}/runs/RUN_ID\x1b[2J\x1b[31m", "created": True}, ["unexpected page URL", "\\x1b"]),
    ({"id": "RUN_ID", "url": "https://evil.example/runs/RUN_ID", "created": True}, ["unexpected page URL", "/runs/"]),
    ({"id": "RUN_ID", "url": "javascript:alert(1)//runs/RUN_ID", "created": True}, ["unexpected page URL"]),
    ({"id": "RUN_ID", "url": ["{base}/runs/RUN_ID"], "created": True}, ["unexpected page URL"]),
    ([1, 2, 3], ["without a JSON object"]),
])
def test_an_answer_of_the_wrong_shape_is_one_line_not_a_crash(hostile: Hostile, local: str, answer: object,
                                                              words: list[str]) -> None:
    hostile.respond = _answer("201 Created", json.dumps(answer).replace("{base}", hostile.base).encode())
    _one_line(_push(local, hostile.base), 1, *words)


@pytest.mark.parametrize("status, body, words", [
    ("403 Forbidden", json.dumps({"error": "\x1b[2J\x1b]8;;http://evil\x07click\u202e"}).encode(), ["\\x1b[2J", "\\u202e"]),
    ("500 Oops", b"\x1b[31m<html>not json", ["HTTP 500"]),
    ("201 Created", b"[" * 60_000, ["without a JSON object"]),  # deeper than the JSON reader goes
    ("201 Created", b'{"id": NaN}', ["without a JSON object"]),
    ("201 Created", b"\xff\xfe garbage", ["without a JSON object"]),
])
def test_control_characters_and_garbage_from_the_server_are_shown_as_data(hostile: Hostile, local: str, status: str,
                                                                          body: bytes, words: list[str]) -> None:
    hostile.respond = _answer(status, body)
    _one_line(_push(local, hostile.base), 1, *words)


def test_a_huge_answer_is_not_read_whole(hostile: Hostile, local: str) -> None:
    """300 MB without a length: the push stops after 64 KiB, so the server gets out only what the sockets'
    buffers hold before the client hangs up."""
    def respond(handler: BaseHTTPRequestHandler, run_id: str) -> None:
        handler.wfile.write(b"HTTP/1.0 201 Created\r\nContent-Type: application/json\r\n\r\n")
        chunk = b" " * 65536
        for _ in range(300 * 16):
            handler.wfile.write(chunk)
            hostile.sent += len(chunk)

    hostile.respond = respond
    started = time.monotonic()
    _one_line(_push(local, hostile.base), 1, "64 KiB at most")
    assert time.monotonic() - started < 30 and hostile.sent < 32 * 1024**2


def test_a_declared_huge_answer_is_refused_before_reading(hostile: Hostile, local: str) -> None:
    def respond(handler: BaseHTTPRequestHandler, run_id: str) -> None:
        handler.wfile.write(b"HTTP/1.0 201 Created\r\nContent-Length: 314572800\r\n\r\n{")

    hostile.respond = respond
    _one_line(_push(local, hostile.base), 1, "314,572,800 bytes", "64 KiB at most")


def test_a_slow_answer_is_given_up(hostile: Hostile, local: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte every 0.1 s, for ever: the push gives up when the answer is not complete in ANSWER_SECONDS
    (1 s here instead of 30, so that the test is quick)."""
    from stackbench.cli import push

    monkeypatch.setattr(push, "ANSWER_SECONDS", 1.0)

    def respond(handler: BaseHTTPRequestHandler, run_id: str) -> None:
        handler.wfile.write(b"HTTP/1.0 201 Created\r\nContent-Type: application/json\r\n\r\n")
        for _ in range(600):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.1)

    hostile.respond = respond
    started = time.monotonic()
    _one_line(_push(local, hostile.base), 1, "too slowly")
    assert time.monotonic() - started < 10


# Names and addresses that are not loopback to the check and yet reach only this machine, so that even a
# push that failed to refuse them would send nothing off it: the machine's own name (from /etc/hosts) and
# 0.0.0.0. The hostile server stands for the rest.
@pytest.mark.parametrize("url, words", [
    (f"http://{socket.gethostname()}:PORT", ["plain http to another machine", "https://", "ssh -L"]),
    ("http://0.0.0.0:PORT", ["plain http to another machine"]),
    ("http://bob:s3cret@127.0.0.1:PORT", ["user name or password", "token"]),
    ("http://127.0.0.1:PORT/?token=s3cret", ["query or fragment"]),
])
def test_a_url_that_would_leak_the_token_is_refused_before_anything_is_sent(hostile: Hostile, local: str, url: str,
                                                                             words: list[str]) -> None:
    line = _one_line(_push(local, url.replace("PORT", hostile.base.rsplit(":", 1)[1])), 2, *words)
    assert "s3cret" not in line and hostile.requests == []


def test_run_push_refuses_plain_http_before_measuring(hostile: Hostile, local: str, scratch_dir: Path) -> None:
    done = cli_here("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", "--runtime", "1",
                    "--size", "1M", "--runs", "1", "--push", f"http://0.0.0.0:{hostile.base.rsplit(':', 1)[1]}",
                    "--db", local)
    _one_line(done, 2, "plain http to another machine")
    from stackbench.store import open_store

    store = open_store(local)
    assert hostile.requests == [] and [run.label for run, _ in store.list_runs()] == ["one"]  # nothing measured
    store.dispose()
