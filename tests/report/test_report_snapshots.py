"""Exact output, byte for byte, of the commands that print results, in every format, on synthetic stored runs
(tests/stored_runs.py) and saved outputs (tests/data): a change to a table, a unit, a column or the JSON shows
up here as a diff. `run`, `import` and fleet runs print a run as `show` does, `ab` a comparison as `compare`,
`smallblocks` and `audit` what `show` prints of their stored results (print_run, emit with the same builders,
print_audit): their output is these snapshots' (issue 33: Markdown with units and goals, CSV with plain
numbers, in every command).

The real CLI runs in a subprocess at a fixed width (COLUMNS=100), without colour and in UTC, from the
checkout (the saved outputs are named relative to it), so the bytes do not depend on the machine; one subprocess runs every command line of this module (snapshot_runner.py). The expected output is in tests/report/snapshots/<command>.<format>. After an intended
change, rewrite them with

    STACKBENCH_UPDATE_SNAPSHOTS=1 pytest tests/report/test_report_snapshots.py

and read every rewritten file before committing it (the run reports them as skipped, to be reviewed).
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.report.formats import FORMATS
from stored_runs import CACHE, build_store

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("STACKBENCH_UPDATE_SNAPSHOTS") == "1"
COMMANDS = {
    "show": ["show", "baseline"],
    "runs": ["runs"],
    "compare": ["compare", "baseline", "lz4"],
    "layers": ["layers", "baseline", "vm", "vm-luks", "--names", "host,vm,vm+luks"],
    "show-scan": ["show", "tank-files"],
    "show-audit": ["show", "pve-vm100"],
    "show-per-run": ["show", "baseline", "--per-run"],
    "goal-list": ["goal", "list"],
    "slog": ["slog", "--run", "optane", "--run", "sata-ssd"],
    "user-list": ["user", "list"],
    "crypto": ["crypto", "--from", "tests/data/cryptsetup/guest-kvm64/benchmark.stdout",
               "--cpuinfo", "tests/data/cryptsetup/guest-kvm64/cpuinfo.stdout"],
}
ROOT = Path(__file__).parents[2]
EXIT = {"crypto": 3}  # done, and the guest's CPU hides AES-NI (README, "Exit status")
# Whatever the machine running the tests has set, the output is plain text for a 100-column reader in UTC.
ENVIRONMENT = {"COLUMNS": "100", "TZ": "UTC", "PYTHONIOENCODING": "utf-8"}
DROPPED = {"FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "LINES", "STACKBENCH_DB", "STACKBENCH_DEBUG"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('snapshots') / 'runs.db'}"
    build_store(url)
    return url


def _argv(args: list[str], db: str) -> list[str]:
    return args if args[0] == "crypto" else [*args, "--db", db]  # crypto reads no store


@pytest.fixture(scope="module")
def outputs(db: str) -> dict[tuple[str, ...], dict[str, object]]:
    """Every command line this module checks, run once, in one subprocess."""
    lines = [[*COMMANDS[command], "--format", fmt] for command in COMMANDS for fmt in FORMATS]
    lines += [[*COMMANDS[command], "--json"] for command in ("show", "runs")]
    env = {key: value for key, value in os.environ.items() if key not in DROPPED} | ENVIRONMENT
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("snapshot_runner.py")),
         json.dumps([_argv(line, db) for line in lines])],
        capture_output=True, env=env, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr.decode()
    return {tuple(line): result for line, result in zip(lines, json.loads(done.stdout))}


def _output(args: list[str], outputs: dict[tuple[str, ...], dict[str, object]], stderr: str = "",
            code: int = 0) -> str:
    result = outputs[tuple(args)]
    assert result["code"] == code, result["stderr"]
    assert result["stderr"] == stderr
    return str(result["stdout"])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_output_is_exactly_the_snapshot(command: str, fmt: str, outputs: dict) -> None:
    # The terminal table of `show` is followed on stderr by the run's warnings; no other output has any.
    stderr = f"Warning: {CACHE}\n" if (command, fmt) == ("show", "table") else ""
    actual = _output([*COMMANDS[command], "--format", fmt], outputs, stderr, EXIT.get(command, 0))
    path = SNAPSHOTS / f"{command}.{fmt}"
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    if actual == expected:
        return
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        pytest.skip(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}: review it")
    if expected is None:
        pytest.fail(f"no snapshot {path}: create it with STACKBENCH_UPDATE_SNAPSHOTS=1, then review it")
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile=f"{path} (expected)", tofile=f"stackbench {' '.join(COMMANDS[command])} --format {fmt}",
    )
    pytest.fail("output differs from the snapshot (trailing spaces count):\n" + "".join(diff), pytrace=False)


@pytest.mark.parametrize("command", ["show", "runs"])
def test_the_json_flag_prints_the_json_format(command: str, outputs: dict) -> None:
    assert _output([*COMMANDS[command], "--json"], outputs) == (SNAPSHOTS / f"{command}.json").read_text(encoding="utf-8")
