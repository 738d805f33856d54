"""The CLI in a child interpreter whose address space is capped, for tests that hand it hostile files.

A test that gives stackbench a FIFO, a device node or an endless standard input must not be able to hang
the test run or grow until the kernel's OOM killer ends other work on the machine (`--hosts-file
/dev/zero` once reached 23.7 GB). The child caps its address space (RLIMIT_AS), so an unbounded read
fails there with a MemoryError (exit 70), and an alarm turns a blocked open or read into a `hung` result.
It serves many commands, one JSON line each way, so that hundreds of generated examples cost one
interpreter start.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

ADDRESS_SPACE = 768 * 1024**2  # the CLI needs under 200 MiB of address space to refuse a file
ALARM_S = 30  # per command: a refusal takes milliseconds, a live audit probe a few seconds

WORKER = r"""
import contextlib, io, json, os, resource, signal, sys, time
limit, alarm = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import stackbench.web.server
stackbench.web.server.serve = lambda config: None  # `serve` checks everything, then returns instead of serving
from stackbench.cli import run_app

class Alarm(BaseException):
    pass

def ring(signum, frame):
    raise Alarm()

signal.signal(signal.SIGALRM, ring)
answers = os.fdopen(os.dup(1), "w")
for line in sys.stdin:
    case = json.loads(line)
    err, out = io.StringIO(), io.StringIO()
    real_stdin = sys.stdin
    given = open(case["stdin"] or os.devnull, "rb", buffering=0)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(given))
    started, code = time.monotonic(), 0
    signal.alarm(alarm)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            run_app(case["argv"])
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Alarm:
        code = "hung"
    finally:
        signal.alarm(0)
        sys.stdin.close()
        sys.stdin = real_stdin
    answers.write(json.dumps({"code": code, "stderr": err.getvalue()[-4000:], "stdout": out.getvalue()[-4000:],
                              "seconds": time.monotonic() - started}) + "\n")
    answers.flush()
"""


class CappedCli:
    """One capped child serving `run(argv, stdin)`; `close()` ends it."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        # In a directory of the test's own: a generated relative path (`facts save 64G`, `-o x`) lands there,
        # never in the checkout the suite runs from.
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, str(ADDRESS_SPACE), str(ALARM_S)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, **env}, cwd=cwd)

    def run(self, argv: list[str], stdin: str | None = None) -> dict[str, Any]:
        """The command's exit code (or "hung"), its stderr and stdout (their ends) and how long it took."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"argv": argv, "stdin": stdin}) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], ALARM_S + 30)
        line = self.process.stdout.readline() if ready else ""
        if not line:  # the alarm did not end it, or the child died: nothing more can run in it
            self.process.kill()
            raise AssertionError(f"the capped CLI did not answer for {argv}: {self.process.stderr.read()[-2000:]}")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
