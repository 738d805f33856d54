"""Every line the server logs is one line (web/logs.py): a request cannot forge log lines or drive the
terminal of whoever reads the log. A path is percent-decoded before it is logged, so `%0d%0a` is a real
carriage return and newline, `%00` a NUL, `%1b` an ESC, `%e2%80%ae` a right-to-left override."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from stackbench.web.logs import ACCESS_LOGGER, OneLineFormatter
from web.site import PASSWORD, SERVER_LOG, Site, first_answer, free_port

# One request whose path, decoded, holds a forged access-log line, NUL, a terminal escape (clear the
# screen), a bidi override, and the quote and backslash of the log's quoted field.
FORGED = "/nothing%0d%0a2026-01-01 00:00:00,000 203.0.113.9 %22GET /admin%22 200%00%1b[2J%e2%80%ae%5c"
RAW = ("\r", "\n", "\x00", "\x1b", "\u202e")


def _assert_one_escaped_line(log: str) -> None:
    lines = [line for line in log.split("\n") if "nothing" in line or "/admin" in line]
    assert len(lines) == 1, log  # the forged line is not a line of its own
    line = lines[0]
    assert not any(char in line for char in RAW), repr(line)
    for escaped in ("\\x0d\\x0a", "\\x00", "\\x1b[2J", "\\u202e", "\\x22GET /admin\\x22", "\\x5c"):
        assert escaped in line, (escaped, line)
    assert line.endswith('" 404')


def _new_log(start: int, wanted: str) -> str:
    """What the in-process servers logged since `start`, once it holds `wanted` (the access log is written
    when the response has been sent, so it may come a moment after the client has its answer)."""
    deadline = time.monotonic() + 10
    while wanted not in SERVER_LOG.getvalue()[start:] and time.monotonic() < deadline:
        time.sleep(0.01)
    return SERVER_LOG.getvalue()[start:]


def test_the_access_log_escapes_what_a_path_carries(web: Site) -> None:
    start = len(SERVER_LOG.getvalue())
    assert web.client().get(FORGED).status_code == 404
    _assert_one_escaped_line(_new_log(start, "/admin"))


def test_every_log_of_the_server_writes_one_line_per_record(web: Site) -> None:
    """The mechanism: every handler on the server's loggers (as uvicorn_config sets them up, here pointed
    at the test's buffer) formats with OneLineFormatter, and so does the last-resort handler that writes
    the warnings of loggers nobody configured. A record with control characters in its message, its
    arguments and its traceback stays one line through each."""
    handlers = {handler for name in ("uvicorn", "uvicorn.error", "uvicorn.access", ACCESS_LOGGER)
                for handler in logging.getLogger(name).handlers if not type(handler).__name__ == "LogCaptureHandler"}
    assert handlers and all(isinstance(h.formatter, OneLineFormatter) for h in handlers), handlers
    assert isinstance(logging.lastResort.formatter, OneLineFormatter)
    try:
        raise ValueError("bad\r\nvalue\x1b[2J")
    except ValueError:
        start = len(SERVER_LOG.getvalue())
        logging.getLogger("uvicorn.error").error("refused %s\n%s", "a\u202eb", "FAKE LINE", exc_info=True)
        record = logging.LogRecord("some.library", logging.WARNING, __file__, 1, "x\n%s", ("\x00y",), sys.exc_info())
    written = SERVER_LOG.getvalue()[start:]
    assert written.count("\n") == 1 and written.endswith("\n"), written
    assert "\\x0a" in written and "\\u202e" in written and "Traceback" in written and "\\x1b[2J" in written
    assert not any(char in written[:-1] for char in RAW)
    last_resort = logging.lastResort.format(record)
    assert "\n" not in last_resort and "\\x00y" in last_resort and "\\x0a" in last_resort


@pytest.mark.slow  # starts `stackbench serve` (and two worker processes)
@pytest.mark.parametrize("workers", [1, 2])
def test_the_servers_stderr_escapes_a_forged_path(tmp_path: Path, workers: int) -> None:
    """The real command, its real stderr: one process, and the worker processes of `--workers 2`, which
    configure their logging anew."""
    db = str(tmp_path / "r.db")
    assert run_cli("user", "add", "alice", "--password-stdin", "--db", db, input=PASSWORD + "\n").returncode == 0
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "stackbench", "serve", "--port", str(port), "--db", db,
                               "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert first_answer(f"http://127.0.0.1:{port}{FORGED}", server).status_code == 404
        time.sleep(0.5)  # the access log line follows the response
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    _assert_one_escaped_line(stderr)
    assert not any(char in stderr for char in RAW if char != "\n"), stderr
