"""Every file a user names, handed over as what once hung stackbench or exhausted the machine's memory: a FIFO
with no writer, a character device that never ends (a zero device node made in tmp_path, the same device as
/dev/zero), a Unix socket, a sparse file far over its cap, and an endless standard input. Each command
refuses it at once with one `Error:` line naming the file, exit 1 or 2.

All cases run in one child interpreter whose address space is capped (RLIMIT_AS) with an alarm per case: a
regression that reads such a file without bound fails here with a MemoryError (exit 70) or the alarm instead
of growing until the kernel's OOM killer ends other work on the machine (`--hosts-file /dev/zero` once
reached 23.7 GB). Nothing here reads the real /dev/zero.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA
from stackbench import inputs
from stackbench.inputs import FIO_OUTPUT, InputError, InputKind, read_input

ADDRESS_SPACE = 768 * 1024**2  # the CLI needs under 200 MiB of address space to refuse a file
ALARM_S = 20
SPARSE = 4 * 1024**3  # over every cap in stackbench.inputs.KINDS, and never written: no disk is used
BENCH = DATA / "cryptsetup" / "guest-max" / "benchmark.stdout"
FACTS = DATA / "zfs" / "openzfs-2.3.2-probe"
RUN = DATA / "fio" / "randread-psync.json"

DRIVER = r"""
import contextlib, io, json, os, resource, signal, sys, time
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from stackbench.cli import run_app

class Alarm(BaseException):
    pass

def ring(signum, frame):
    raise Alarm()

signal.signal(signal.SIGALRM, ring)
results = []
real_out = sys.stdout
for case in json.loads(sys.stdin.read()):
    err, out = io.StringIO(), io.StringIO()
    stdin = open(case["stdin"], "rb", buffering=0) if case["stdin"] else open(os.devnull, "rb")
    sys.stdin = io.TextIOWrapper(io.BufferedReader(stdin))
    started = time.monotonic()
    code = 0
    signal.alarm(int(sys.argv[2]))
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            run_app(case["argv"])
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except Alarm:
        code = "hung"
    finally:
        signal.alarm(0)
        sys.stdin.close()
    results.append({"argv": case["argv"], "code": code, "stderr": err.getvalue(),
                    "seconds": time.monotonic() - started})
real_out.write(json.dumps(results))
"""


def _hostile(root: Path) -> dict[str, Path]:
    """A FIFO, a zero device node, a socket and a sparse file over every cap, each under `root`."""
    made = {}
    os.mkfifo(root / "fifo")
    made["fifo"] = root / "fifo"
    try:
        os.mknod(root / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
        made["device"] = root / "zero"
    except PermissionError:
        pass  # not root: the FIFO, the socket and the sparse file still run
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(root / "socket"))
    made["socket"] = root / "socket"
    with open(root / "sparse", "wb") as handle:
        handle.truncate(SPARSE)
    made["oversize"] = root / "sparse"
    return made


def _cases(root: Path, hostile: dict[str, Path]) -> list[dict]:
    db = str(root / "r.db")
    cases = []
    for kind, path in hostile.items():
        facts = root / f"facts-{kind}"
        facts.mkdir()
        shutil.copy(FACTS / "meminfo.txt", facts / "meminfo.txt")
        os.symlink(path, facts / "kernel-config.txt")  # a file inside the directory the user names
        for argv in (
            ["import", str(path), "--db", db],
            ["run", "--hosts-file", str(path), "-t", "/srv/bench", "--dry-run"],
            ["push", "stored", "--to", "http://127.0.0.1:9", "--token-file", str(path), "--db", db],
            ["push", "stored", "--to", "https://127.0.0.1:9", "--ca-file", str(path), "--db", db],
            ["crypto", "--from", str(path)],
            ["crypto", "--from", str(BENCH), "--cpuinfo", str(path)],
            ["audit", "--from", str(facts)],
            ["audit", "--from", str(FACTS), "--vm-config", str(path)],
            ["audit", "--from", str(FACTS), "--storage-cfg", str(path)],
        ):
            named = facts / "kernel-config.txt" if str(facts) in argv else path
            cases.append({"kind": kind, "file": str(named), "argv": argv, "stdin": None})
    if "device" in hostile:  # standard input that never ends, where a command reads it
        for argv in (["crypto", "--from", "-"], ["user", "add", "bob", "--password-stdin", "--db", db]):
            cases.append({"kind": "stdin", "file": "standard input", "argv": argv, "stdin": str(hostile["device"])})
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    root = tmp_path_factory.mktemp("hostile")
    env = {**os.environ, "STACKBENCH_TOKEN": "sbt_" + "A" * 43, "HOME": str(root), "XDG_DATA_HOME": str(root),
           "XDG_STATE_HOME": str(root)}
    stored = subprocess.run([sys.executable, "-m", "stackbench", "import", str(RUN), "--label", "stored",
                             "--db", str(root / "r.db")], capture_output=True, text=True, env=env, timeout=120)
    assert stored.returncode == 0, stored.stderr
    cases = _cases(root, _hostile(root))
    done = subprocess.run([sys.executable, "-c", DRIVER, str(ADDRESS_SPACE), str(ALARM_S)],
                          input=json.dumps(cases), capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    return [{**case, **result} for case, result in zip(cases, results)]


def test_every_command_refuses_every_hostile_file_at_once_naming_it(outcomes: list[dict]) -> None:
    failed = []
    for case in outcomes:
        lines = [line for line in case["stderr"].splitlines() if line.strip()]
        ok = (case["code"] in (1, 2) and len(lines) == 1 and lines[0].startswith("Error: ")
              and (case["file"] in lines[0] or case["kind"] == "stdin" and "standard input" in lines[0])
              and case["seconds"] < 10)
        if not ok:
            failed.append((case["kind"], " ".join(case["argv"][:3]), case["code"], case["stderr"][-300:]))
    assert failed == []


def test_a_file_over_its_cap_names_the_cap_and_the_fix(outcomes: list[dict]) -> None:
    for case in outcomes:
        if case["kind"] == "oversize":
            assert "4.0 GiB, more than the" in case["stderr"] and "accepted for" in case["stderr"], case


SMALL = InputKind("a test input", 1000, "Pass a smaller one")


def test_the_cap_is_exact(tmp_path: Path) -> None:
    (tmp_path / "at").write_bytes(b"x" * 1000)
    (tmp_path / "over").write_bytes(b"x" * 1001)
    assert read_input(tmp_path / "at", SMALL) == b"x" * 1000
    with pytest.raises(InputError, match=r"over is 1001 B, more than the 1000 B accepted for a test input"):
        read_input(tmp_path / "over", SMALL)


def test_a_file_that_grows_after_it_was_measured_is_read_only_to_the_cap(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """fstat said 10 bytes (the file grew since): the reader still stops one byte past the cap."""
    (tmp_path / "grows").write_bytes(b"x" * 5000)
    real = os.fstat
    monkeypatch.setattr(inputs.os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 10, *real(fd)[7:])))
    with pytest.raises(InputError, match="holds more than the 1000 B accepted"):
        read_input(tmp_path / "grows", SMALL)


def test_a_path_swapped_for_a_fifo_after_the_check_does_not_block(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The race: stat saw a regular file, then the path became a FIFO with no writer. The non-blocking open
    returns at once and the open descriptor is what is refused; a blocking open would wait forever (the
    alarm turns that into a failure here)."""
    import signal

    (tmp_path / "regular").write_bytes(b"{}")
    os.mkfifo(tmp_path / "fifo")
    regular = os.stat(tmp_path / "regular")
    monkeypatch.setattr(inputs.os, "stat", lambda path: regular)

    def ring(signum: int, frame: object) -> None:
        raise TimeoutError("the open blocked on the FIFO")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(5)
    try:
        with pytest.raises(InputError, match="fifo is a pipe \\(FIFO\\), not a regular file"):
            read_input(tmp_path / "fifo", SMALL)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_memory_is_the_file_size_not_the_cap(tmp_path: Path) -> None:
    """Reading 8 MiB under the 1 GiB cap of a fio output allocates one buffer of 8 MiB, not one of the cap."""
    import tracemalloc

    (tmp_path / "out.json").write_bytes(b" " * 8 * 1024**2)
    tracemalloc.start()
    try:
        data = read_input(tmp_path / "out.json", FIO_OUTPUT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data) == 8 * 1024**2 and peak < 1.5 * len(data)


def test_security_md_lists_every_cap() -> None:
    """The bounded-input promise in SECURITY.md names each kind of input with its cap."""
    from stackbench.units import format_bytes

    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
    missing = [kind.what for kind in inputs.KINDS if f"| {kind.what} | {format_bytes(kind.limit)} |" not in text]
    assert missing == []
