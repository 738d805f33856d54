"""Run several stackbench command lines in ONE process and print their exit codes and outputs as JSON.

Used by test_report_snapshots.py: the real entry point (`run_app`, as `python -m stackbench` runs it) with
the real environment of a subprocess, paid for once instead of once per command line.

    python snapshot_runner.py '[["show", "baseline", "--db", "sqlite:///..."], ...]'
"""

from __future__ import annotations

import contextlib
import io
import json
import sys


def main() -> None:
    from stackbench.cli import run_app

    results = []
    for argv in json.loads(sys.argv[1]):
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                run_app(argv)
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else 1
        results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
