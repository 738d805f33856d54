"""Output paths that are not what they seem: every command that writes a file refuses a device node, a FIFO,
a socket, a directory and a symbolic link in one line and leaves it as it was, replaces an existing regular
file only with --force, leaves nothing on a full disk, and never replaces what was swapped in while it wrote.

Everything happens under tmp_path: device nodes are made there with os.mknod (never opened, never the real
/dev), FIFOs with mkfifo, sockets by binding one, links point at files outside the output's directory, and
the full disk is a small real tmpfs mounted under tmp_path (unmounted afterwards).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from conftest import DATA, cli_here, fill
from stackbench.base.errors import StackbenchError

CAPTURE = DATA / "fio" / "randread-psync.json"
SECRET = "precious bytes that no output may touch\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'r.db'}"
    assert cli_here("import", str(CAPTURE), "--label", "base", "--db", url).returncode == 0
    return url


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    for size in (100, 3000, 70_000):
        (root / f"f{size}").write_bytes(b"x" * size)
    return root


@dataclass(frozen=True)
class Writer:
    """A command that writes a file, as argv for an output path (`force` adds its --force)."""

    argv: Callable[[str, Path, Path], list[str]]  # (db, tree, output) -> arguments
    suffix: str
    force: bool = True  # whether the command has --force

    def run(self, db: str, tree: Path, output: Path, force: bool = False) -> object:
        return cli_here(*self.argv(db, tree, output), *(["--force"] if force else []))


WRITERS = {
    "report": Writer(lambda db, tree, out: ["report", "base", "-o", str(out), "--db", db], ".html"),
    "report markdown": Writer(lambda db, tree, out: ["report", "base", "-f", "md", "-o", str(out), "--db", db], ".md"),
    "export": Writer(lambda db, tree, out: ["export", "--openmetrics", str(out), "--db", db], ".prom"),
    "chart": Writer(lambda db, tree, out: ["chart", "base", "-o", str(out), "--db", db], ".svg"),
    "smallblocks --chart": Writer(lambda db, tree, out: ["smallblocks", str(tree), "--chart", str(out)], ".svg"),
}
# Every Path option of every command, classified: an output is in WRITERS (or its own test below), an input is
# read only. A new Path option fails test_every_path_option_is_classified until it is one or the other.
OUTPUTS = {("report", "output"): "report", ("export", "openmetrics"): "export", ("chart", "output"): "chart",
           ("smallblocks", "chart"): "smallblocks --chart", ("facts save", "directory"): "facts save (below)"}
INPUTS = {("audit", "from_dir"), ("audit", "vm_config"), ("audit", "storage_cfg"), ("crypto", "from_file"),
          ("crypto", "cpuinfo"), ("import", "files"), ("push", "token_file"), ("push", "ca_file"),
          ("run", "hosts_file"), ("tune", "knobs_file"), ("slog", "candidates"), ("stack", "host_facts"), ("slog", "pool_dataset"), ("smallblocks", "paths")}
# A directory a command keeps as its own, not a file a user names for output: made private and refused when
# it is not a directory or another user can write it, with its own tests named here.
OWN_DIRECTORIES = {("serve", "chart_cache"): "report/charts/files.py: tests/web/test_chart_cache.py, test_serve_cli.py"}


def test_every_path_option_is_classified() -> None:
    import typer.main

    from stackbench.cli import app

    def walk(command, prefix):  # noqa: ANN001, ANN202
        if hasattr(command, "commands"):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, f"{prefix} {name}".strip())
        else:
            yield prefix, command

    found = {(name, param.name) for name, command in walk(typer.main.get_command(app), "")
             for param in command.params if type(param.type).__name__.endswith("Path")}
    assert found == set(OUTPUTS) | INPUTS | set(OWN_DIRECTORIES)


# -- what is at the path -------------------------------------------------------------------------------

def _char_device(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # the numbers of /dev/null, here under tmp_path


def _block_device(path: Path) -> None:
    os.mknod(path, stat.S_IFBLK | 0o600, os.makedev(7, 250))  # a loop device's numbers; never opened


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))


def _link_to_outside(path: Path) -> None:
    outside = path.parent.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "precious.txt").write_text(SECRET)
    path.symlink_to(outside / "precious.txt")


def _dangling_link(path: Path) -> None:
    path.symlink_to(path.parent.parent / "outside" / "not-yet.txt")


def _directory(path: Path) -> None:
    path.mkdir()


HOSTILE = {"character device": _char_device, "block device": _block_device, "FIFO": _fifo, "socket": _socket,
           "link to a file outside": _link_to_outside, "dangling link": _dangling_link, "directory": _directory}
SAID = {"character device": "is a character device", "block device": "is a block device",
        "FIFO": "is a named pipe (FIFO)", "socket": "is a socket", "link to a file outside": "is a symbolic link",
        "dangling link": "is a symbolic link", "directory": "is a directory"}  # what the error line says


def _snapshot(directory: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every entry of `directory` as (inode, mode, device numbers, size): what must not change."""
    return {p.name: (s.st_ino, s.st_mode, s.st_rdev, s.st_size if not stat.S_ISDIR(s.st_mode) else 0)
            for p in directory.iterdir() for s in [p.lstat()]}


def _outside_untouched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    if outside.exists():
        assert sorted(p.name for p in outside.iterdir()) in ([], ["precious.txt"])
        if (outside / "precious.txt").exists():
            assert (outside / "precious.txt").read_text() == SECRET


def _one_error_line(result, code: int, *words: str) -> str:  # noqa: ANN001
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in result.stderr, lines
    assert all(word in lines[0] for word in words), lines[0]
    assert "wrote" not in result.stderr.lower() + result.stdout.lower()
    return lines[0]


@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_path_that_is_not_a_regular_file_is_refused_and_left_as_it_was(
    db: str, tree: Path, tmp_path: Path, writer: str, kind: str, force: bool
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / f"target{WRITERS[writer].suffix}"
    HOSTILE[kind](target)
    before = _snapshot(out_dir)
    result = WRITERS[writer].run(db, tree, target, force)
    _one_error_line(result, 2 if kind == "directory" else 1, str(target), SAID[kind])
    assert _snapshot(out_dir) == before  # the node itself, and no temporary file beside it
    _outside_untouched(tmp_path)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_an_existing_regular_file_is_replaced_only_with_force(db: str, tree: Path, tmp_path: Path, writer: str) -> None:
    target = tmp_path / f"mine{WRITERS[writer].suffix}"
    target.write_text(SECRET)
    target.chmod(0o640)
    _one_error_line(WRITERS[writer].run(db, tree, target), 1, str(target), "already exists", "--force")
    assert target.read_text() == SECRET
    done = WRITERS[writer].run(db, tree, target, force=True)
    assert done.returncode == 0, done.stderr
    assert target.read_text() != SECRET and stat.S_IMODE(target.stat().st_mode) == 0o640  # replaced, mode kept
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_full_disk_leaves_nothing_and_keeps_what_was_there(db: str, tree: Path, tmpfs_mount, writer: str) -> None:
    """A real 256 KiB tmpfs, filled: a new file is not created, an existing one (with --force) is kept whole."""
    mount = tmpfs_mount("256k")
    (mount / "kept.txt").write_text(SECRET)
    fill(mount)
    new = mount / f"new{WRITERS[writer].suffix}"
    _one_error_line(WRITERS[writer].run(db, tree, new), 1, "no space left to write", str(new), "nothing was written")
    replaced = mount / f"kept{WRITERS[writer].suffix}"
    os.rename(mount / "kept.txt", replaced)
    _one_error_line(WRITERS[writer].run(db, tree, replaced, force=True), 1, "no space left", "nothing was written")
    assert sorted(p.name for p in mount.iterdir()) == sorted(["filler", replaced.name])
    assert replaced.read_text() == SECRET


def test_a_markdown_reports_chart_file_that_is_a_fifo_stops_the_whole_report(db: str, tmp_path: Path) -> None:
    """The report and the PNG charts beside it are written together or not at all: a FIFO where a chart
    would go refuses the report too."""
    first = cli_here("report", "base", "-f", "md", "-o", str(tmp_path / "probe.md"), "--db", db)
    assert first.returncode == 0, first.stderr
    charts = sorted(p.name.removeprefix("probe") for p in tmp_path.glob("probe-*.png"))
    assert charts, "the imported run draws no chart: pick a capture that does"
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    os.mkfifo(out_dir / f"r{charts[0]}")
    before = _snapshot(out_dir)
    _one_error_line(cli_here("report", "base", "-f", "md", "-o", str(out_dir / "r.md"), "--db", db, "--force"), 1,
                    "named pipe")
    assert _snapshot(out_dir) == before


@pytest.mark.parametrize("kind", ["FIFO", "link to a file outside", "character device"])
def test_facts_save_into_an_existing_directory_replaces_nothing(tmp_path: Path, kind: str) -> None:
    """`facts save DIR` into a directory that holds a node (or a file) named like a capture: refused before
    anything moves; the node is as it was and no capture file is left in DIR."""
    directory = tmp_path / "facts"
    directory.mkdir()
    HOSTILE[kind](directory / "meminfo.txt")
    (directory / "notes.txt").write_text("mine\n")
    before = _snapshot(directory)
    result = cli_here("facts", "save", str(directory))
    _one_error_line(result, 1, str(directory / "meminfo.txt"), SAID[kind])
    assert _snapshot(directory) == before
    _outside_untouched(tmp_path)


def test_facts_save_into_an_existing_directory_keeps_a_file_of_the_same_name(tmp_path: Path) -> None:
    directory = tmp_path / "facts"
    directory.mkdir()
    (directory / "cpuinfo.txt").write_text(SECRET)
    result = cli_here("facts", "save", str(directory))
    _one_error_line(result, 1, "cpuinfo.txt already exists", "Move it away, or give `facts save` a new directory")
    assert sorted(p.name for p in directory.iterdir()) == ["cpuinfo.txt"]
    assert (directory / "cpuinfo.txt").read_text() == SECRET
    (directory / "cpuinfo.txt").unlink()
    (directory / "notes.txt").write_text(SECRET)
    saved = cli_here("facts", "save", str(directory))  # unrelated files are fine: the capture goes beside them
    assert saved.returncode == 0, saved.stderr
    assert (directory / "probe.json").is_file() and (directory / "notes.txt").read_text() == SECRET


@pytest.mark.parametrize("kind", ["FIFO", "link to a file outside", "character device", "directory"])
def test_the_fleet_timing_file_is_never_written_through_a_node(tmp_path: Path, kind: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """STACKBENCH_FLEET_TIMING (fleet/timing.py) replaces a regular file (every bench run writes it anew)
    and refuses anything else, on stderr, without failing the finished run."""
    from stackbench.fleet.timing import Timeline

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    HOSTILE[kind](out_dir / "timing.json")
    before = _snapshot(out_dir)
    Timeline(str(out_dir / "timing.json")).write()
    said = capsys.readouterr().err
    assert said.startswith("stackbench: cannot write STACKBENCH_FLEET_TIMING=") and SAID[kind] in said
    assert _snapshot(out_dir) == before
    _outside_untouched(tmp_path)
    regular = tmp_path / "timing.json"
    regular.write_text("{}")
    Timeline(str(regular)).write()
    assert '"phases"' in regular.read_text()


def test_a_recovery_file_goes_past_a_node_to_the_next_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackbench.measure import recovery

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    os.mkfifo(first / "run.json")
    monkeypatch.setattr(recovery, "recovery_dirs", lambda: [first, second])
    kept = recovery.keep('{"fio version": "fio-3.33"}', "run.json")
    assert kept == second / "run.json" and kept.read_text() == '{"fio version": "fio-3.33"}'
    assert stat.S_ISFIFO((first / "run.json").lstat().st_mode)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


# -- standard output ---------------------------------------------------------------------------------

def test_dash_is_standard_output_where_it_fits(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-` writes to standard output (a real process: its stdout is a pipe); commands whose stdout holds
    something else refuse it in one line. Nothing named '-' is created."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))  # the children run from tmp_path
    started = {"cwd": tmp_path, "capture_output": True, "timeout": 120}
    exported = subprocess.run([sys.executable, "-m", "stackbench", "export", "--openmetrics", "-", "--db", db],
                              text=True, **started)
    assert exported.returncode == 0 and exported.stdout.endswith("# EOF\n"), exported.stderr
    drawn = subprocess.run([sys.executable, "-m", "stackbench", "chart", "base", "-o", "-", "--db", db], **started)
    assert drawn.returncode == 0 and drawn.stdout.lstrip().startswith(b"<?xml") and b"</svg>" in drawn.stdout
    reported = subprocess.run([sys.executable, "-m", "stackbench", "report", "base", "-o", "-", "--db", db],
                              text=True, **started)
    assert reported.returncode == 0 and reported.stdout.startswith("<!DOCTYPE html>"), reported.stderr
    monkeypatch.chdir(tmp_path)
    _one_error_line(cli_here("report", "base", "-o", "-", "--json", "--db", db), 2, "--json and -o -")
    _one_error_line(cli_here("report", "base", "-f", "md", "-o", "-", "--db", db), 2, "charts are files beside it")
    _one_error_line(cli_here("smallblocks", str(tmp_path), "--chart", "-"), 2, "--chart cannot be - (standard output)")
    assert not (tmp_path / "-").exists()


# -- the writer itself: races and rollback -------------------------------------------------------------

def _write(files: list[tuple[Path, bytes]], *, force: bool) -> None:
    from stackbench.base.output_files import Destination, write_files

    write_files(files, force=force, destination=Destination("-o"))


def _swap_while_writing(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """Run `swap` after the data is written to its temporary file and before it is put in place: the
    moment a racing process would change the path (a deterministic stand-in for that process)."""
    from stackbench.base import output_files

    real = output_files._stage

    def stage_then_swap(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        real(*args, **kwargs)
        swap()

    monkeypatch.setattr(output_files, "_stage", stage_then_swap)


@pytest.mark.parametrize("fallback", [False, True], ids=["renameat2", "without renameat2"])
@pytest.mark.parametrize("swapped_in", ["link to a file outside", "FIFO", "character device"])
def test_a_node_swapped_in_while_writing_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         swapped_in: str, fallback: bool) -> None:
    if fallback:
        monkeypatch.setattr("stackbench.base.output_files._libc", False)  # as on a file system or libc without renameat2
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "report.html"
    target.write_text("old report\n")

    def swap() -> None:
        target.unlink()
        HOSTILE[swapped_in](target)

    _swap_while_writing(monkeypatch, swap)
    with pytest.raises(StackbenchError, match="changed while stackbench wrote it.*nothing was replaced"):
        _write([(target, b"new report\n")], force=True)
    assert not stat.S_ISREG(target.lstat().st_mode) and [p.name for p in out_dir.iterdir()] == ["report.html"]
    _outside_untouched(tmp_path)


@pytest.mark.parametrize("fallback", [False, True], ids=["renameat2", "without renameat2"])
def test_a_file_that_appears_while_writing_a_new_one_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              fallback: bool) -> None:
    if fallback:
        monkeypatch.setattr("stackbench.base.output_files._libc", False)
    target = tmp_path / "new.svg"
    _swap_while_writing(monkeypatch, lambda: target.write_text(SECRET))
    with pytest.raises(StackbenchError, match="appeared while stackbench wrote it"):
        _write([(target, b"<svg/>")], force=False)
    assert target.read_text() == SECRET and [p.name for p in tmp_path.iterdir()] == ["new.svg"]


def test_several_files_go_in_together_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The third of three files cannot go in (a FIFO swapped in at its name): the first, a replaced file,
    has its old content back, and the second, a new one, is gone."""
    replaced, new, last = tmp_path / "r.md", tmp_path / "r-1.png", tmp_path / "r-2.png"
    replaced.write_text("old\n")
    last.write_text("old chart\n")
    calls = []

    def swap() -> None:
        calls.append(1)
        if len(calls) == 3:
            last.unlink()
            os.mkfifo(last)

    _swap_while_writing(monkeypatch, swap)
    with pytest.raises(StackbenchError, match="r-2.png changed"):
        _write([(replaced, b"new\n"), (new, b"png"), (last, b"png")], force=True)
    assert replaced.read_text() == "old\n" and not new.exists() and stat.S_ISFIFO(last.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r-2.png", "r.md"]


def test_an_interrupt_while_writing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x.prom"
    target.write_text("old\n")

    def interrupt() -> None:
        raise KeyboardInterrupt

    _swap_while_writing(monkeypatch, interrupt)
    with pytest.raises(KeyboardInterrupt):
        _write([(target, b"new\n")], force=True)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["x.prom"]
