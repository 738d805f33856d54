"""Every file a user names, handed over as what once hung stackbench or exhausted the machine's memory: a FIFO
with no writer, a character device that never ends (a zero device node made in tmp_path, the same device as
/dev/zero), a Unix socket, a sparse file far over its cap, and an endless standard input. Each command
refuses it at once with one `Error:` line naming the file, exit 1 or 2.

All cases run in one child interpreter whose address space is capped, with an alarm per case (capped.py):
a regression that reads such a file without bound fails here with a MemoryError (exit 70) or the alarm
instead of growing until the kernel's OOM killer ends other work on the machine (`--hosts-file /dev/zero`
once reached 23.7 GB). Nothing here reads the real /dev/zero.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from faults.capped import CappedCli
from stackbench.base import inputs
from stackbench.base.inputs import FIO_OUTPUT, InputError, InputKind, read_input

SPARSE = 4 * 1024**3  # over every cap in stackbench.base.inputs.KINDS, and never written: no disk is used
BENCH = DATA / "cryptsetup" / "guest-max" / "benchmark.stdout"
FACTS = DATA / "zfs" / "openzfs-2.3.2-probe"
RUN = DATA / "fio" / "randread-psync.json"


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
            ["run", "--hosts", "node1", "--ssh-config", str(path), "-t", "/srv/bench", "--db", db],
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


@dataclass
class Rig:
    """The hostile files, a store holding one run (`stored`), and the capped CLI serving every case."""

    root: Path
    hostile: dict[str, Path]
    cli: CappedCli

    @property
    def db(self) -> str:
        return str(self.root / "r.db")


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    root = tmp_path_factory.mktemp("hostile")
    env = {"STACKBENCH_TOKEN": "sbt_" + "A" * 43, "HOME": str(root), "XDG_DATA_HOME": str(root),
           "XDG_STATE_HOME": str(root)}
    stored = subprocess.run([sys.executable, "-m", "stackbench", "import", str(RUN), "--label", "stored",
                             "--db", str(root / "r.db")], capture_output=True, text=True, env={**os.environ, **env},
                            timeout=120)
    assert stored.returncode == 0, stored.stderr
    cli = CappedCli(env, cwd=root)
    try:
        yield Rig(root, _hostile(root), cli)
    finally:
        cli.close()


@pytest.fixture(scope="module")
def outcomes(rig: Rig) -> list[dict]:
    return [{**case, **rig.cli.run(case["argv"], case["stdin"])} for case in _cases(rig.root, rig.hostile)]


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


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from(inputs.KINDS), extra=st.integers(1, 2**40), small=st.integers(0, 64 * 1024))
def test_any_file_over_its_cap_is_refused_by_its_size_and_any_under_it_is_read_whole(
    kind: InputKind, extra: int, small: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Oversize inputs of every kind, as sparse files (no disk is used, nothing is read): refused from their
    size with the cap named; and a file within the cap is read exactly."""
    from stackbench.base.units import format_bytes

    directory = tmp_path_factory.mktemp("caps")
    over = directory / "over"
    with open(over, "wb") as handle:
        handle.truncate(kind.limit + extra)
    with pytest.raises(InputError, match=re.escape(f"more than the {format_bytes(kind.limit)} accepted for {kind.what}")):
        read_input(over, kind)
    within = directory / "within"
    within.write_bytes(b"a" * min(small, kind.limit))
    assert read_input(within, kind) == b"a" * min(small, kind.limit)
    shutil.rmtree(directory)


def test_a_file_that_grows_after_it_was_measured_is_read_only_to_the_cap(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """stat and fstat said 10 bytes (the file grew since): the reader still stops one byte past the cap."""
    (tmp_path / "grows").write_bytes(b"x" * 5000)
    real_stat, real_fstat = os.stat, os.fstat

    def small(info: os.stat_result) -> os.stat_result:
        return os.stat_result((*info[:6], 10, *info[7:]))

    monkeypatch.setattr(inputs.os, "stat", lambda path: small(real_stat(path)))
    monkeypatch.setattr(inputs.os, "fstat", lambda fd: small(real_fstat(fd)))
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
    from stackbench.base.units import format_bytes

    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
    missing = [kind.what for kind in inputs.KINDS if f"| {kind.what} | {format_bytes(kind.limit)} |" not in text]
    assert missing == []


# -- generated combinations -------------------------------------------------------------------------------
# Every command that reads a file a user names, with its path slots ({f}: a file, {d}: a facts directory);
# Hypothesis picks what goes in each slot (a FIFO, the zero device, a socket, a file over every cap, a
# symbolic link to one of them, a facts directory with one of them under a fact's name), what standard
# input is, and whether the output is --json. Every combination must fail at once, in one line naming it.
TEMPLATES: tuple[tuple[str, ...], ...] = (
    ("import", "{f}"),
    ("import", str(RUN), "{f}"),
    ("import", "{f}", str(RUN), "{f}"),
    ("run", "--hosts-file", "{f}", "-t", "/srv/bench", "--dry-run"),
    ("run", "--hosts", "node1", "--ssh-config", "{f}", "-t", "/srv/bench"),
    ("push", "stored", "--to", "http://127.0.0.1:9", "--token-file", "{f}"),
    ("push", "stored", "--to", "https://127.0.0.1:9", "--ca-file", "{f}"),
    ("crypto", "--from", "{f}"),
    ("crypto", "--from", str(BENCH), "--cpuinfo", "{f}"),
    ("crypto", "--from", "-"),
    ("audit", "--from", "{d}"),
    ("audit", "--from", "{d}", "--vm-config", "{f}"),
    ("audit", "--from", str(FACTS), "--storage-cfg", "{f}", "--vm-config", str(DATA / "pve" / "101-good.conf")),
    ("user", "add", "bob", "--password-stdin"),
)
FACT_NAMES = ("cpuinfo.txt", "zpool-status.txt", "probe.json", "machine-id-hash.txt", "qemu-server/100.conf",
              "pve/storage.cfg", "lsblk.json")
JSON_OUTPUT = {"import", "crypto", "audit"}
_made = itertools.count()


def _facts_with(root: Path, name: str, target: Path) -> Path:
    """A new facts directory whose file `name` is `target` (a symbolic link to it)."""
    directory = root / f"generated-facts-{next(_made)}"
    (directory / name).parent.mkdir(parents=True)
    shutil.copy(FACTS / "meminfo.txt", directory / "meminfo.txt")
    os.symlink(target, directory / name)
    return directory


@pytest.mark.slow  # ~1 min on a loaded machine; the matrix above is the quick check
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_combinations_of_hostile_inputs_fail_at_once_naming_them(data: st.DataObject, rig: Rig) -> None:
    links = {}
    for name, path in rig.hostile.items():
        links[f"link-to-{name}"] = rig.root / f"link-to-{name}"
        if not links[f"link-to-{name}"].is_symlink():
            links[f"link-to-{name}"].symlink_to(path)
    files = sorted({**rig.hostile, **links}.values())
    template = data.draw(st.sampled_from(TEMPLATES))
    named: list[str] = []
    argv = []
    for word in template:
        if word == "{f}":
            word = str(data.draw(st.sampled_from(files)))
        elif word == "{d}":
            word = str(_facts_with(rig.root, data.draw(st.sampled_from(FACT_NAMES)), data.draw(st.sampled_from(files))))
        if word.startswith(str(rig.root)):
            named.append(word)
        argv.append(word)
    if template[0] in JSON_OUTPUT and data.draw(st.booleans()):
        argv.append("--json")
    if template[0] in ("import", "push", "user", "run"):
        argv += ["--db", rig.db]
    stdin = data.draw(st.sampled_from([None, *(str(p) for n, p in rig.hostile.items() if n in ("device", "oversize"))]))
    done = rig.cli.run(argv, stdin)
    lines = [line for line in done["stderr"].splitlines() if line.strip()]
    assert done["code"] in (1, 2), (argv, stdin, done)
    assert len(lines) == 1 and lines[0].startswith("Error: "), (argv, stdin, done["stderr"])
    assert not named or any(path in lines[0] for path in named), (argv, lines[0])
    assert done["seconds"] < 10, (argv, done["seconds"])
