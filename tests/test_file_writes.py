"""Files reach a path through one writer (stackbench/base/output_files.py) and nowhere else.

A command that opened its output path itself would bring back what the writer prevents: a device node,
a FIFO or a symbolic link replaced or written through (`export --openmetrics /dev/stdout` as root replaced
/dev/stdout), a half-written file on a full disk, an existing file replaced without --force. This test
reads every module of the package and fails on any call that creates, writes, replaces or renames a file
outside the writer, unless the place is listed below with the reason it is not a user's output path.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "stackbench"
WRITER = "base/output_files.py"

# Calls that create, write, replace or rename a file, by the module they come from; methods by name.
MODULE_CALLS = {
    "os": {"open", "replace", "rename", "renames", "link", "symlink", "mknod", "mkfifo", "truncate"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"},
}
METHODS = {"write_text", "write_bytes", "symlink_to", "hardlink_to", "savefig"}
NAMES = {"copyfile", "copy2", "copytree", "mkstemp", "NamedTemporaryFile", "mkfifo", "mknod"}  # imported bare
PATH_MOVES = {"rename", "replace"}  # Path.rename(target) and Path.replace(target): one argument (str.replace has two)
OPENERS = {"open"}  # open(), io.open(), gzip.open(), ...: only with a mode that writes
WRITE_MODES = set("wax+")

# (module, call) -> why it is not an output path a user named, and how many such calls the module has.
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("engine/fio.py", "write_text"): (2, "the job file and its includes, in the private directory it made"),
    ("engine/fio.py", "open"): (2, "fio's stdout and stderr, in that private directory"),
    ("probe/direct_io.py", "os.open"): (2, "an O_EXCL probe file in the measured directory, removed at once"),
    ("audit/probe.py", "write_text"): (2, "captures in the private staging directory; published by the writer"),
    ("audit/probe.py", "shutil.copyfile"): (1, "config files copied into that staging directory"),
    ("audit/probe.py", "os.rename"): (1, "the staging directory becoming the new DIR (a directory, by one rename)"),
    ("audit/examples.py", "write_text"): (1, "rule examples in a TemporaryDirectory"),
    ("fleet/agent.py", "open"): (1, "the remote fio server's log in the agent's private directory"),
    ("report/charts/figure.py", "savefig"): (2, "into an in-memory buffer"),
    ("base/inputs.py", "os.open"): (1, "O_RDONLY: reading a user's file"),
    ("scan/walker.py", "os.open"): (3, "O_RDONLY | O_DIRECTORY: walking a directory, by path or (past PATH_MAX) "
                                       "one component at a time"),
    ("probe/loop.py", "os.open"): (1, "O_RDONLY: a loop device opened for its LOOP_GET_STATUS64 ioctl"),
    ("base/processes.py", "os.open"): (1, "O_RDONLY: /proc/PID/stat, read each second for the processes' CPU time"),
    ("measure/tune_journal.py", "os.open"): (3, "tune's own journals, in its state directory (O_EXCL, O_APPEND), "
                                                "and that directory opened to fsync it"),
    ("measure/tune_persist.py", "open"): (1, "the append-only log of `tune --persist --write`, beside the journals"),
    ("tune/actions.py", "os.open"): (1, "O_WRONLY without O_CREAT: a kernel setting under /sys or /proc/sys"),
    ("report/charts/files.py", "os.open"): (3, "drawn charts (the server's, reports') and their lock files, in their private "
                                          "cache directory (written whole under a temporary name), and a read"),
    ("report/charts/files.py", "os.replace"): (1, "that temporary file renamed into place"),
    ("measure/layer_plan.py", "os.open"): (1, "O_RDONLY: a block device opened to see that it can be, then closed"),
    ("base/user_commands.py", "tempfile.TemporaryFile"): (2, "a user command's stdout and stderr, unnamed files"),
}


def _call_name(node: ast.Call) -> str | None:
    """`module.function` or the method's name when the call may write a file, else None."""
    function = node.func
    if isinstance(function, ast.Name):
        return function.id if function.id in OPENERS | NAMES else None
    if not isinstance(function, ast.Attribute):
        return None
    owner = function.value.id if isinstance(function.value, ast.Name) else None
    if owner in MODULE_CALLS and function.attr in MODULE_CALLS[owner]:
        return f"{owner}.{function.attr}"
    if function.attr in METHODS or function.attr in OPENERS:
        return function.attr
    if function.attr in PATH_MOVES and len(node.args) == 1 and not node.keywords:
        return function.attr
    return None


def _mode(node: ast.Call) -> str | None:
    """The mode of an open()/gzip.open() call, "r" when not given, None when it is not a literal."""
    mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
    if mode is None:
        return "r"
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else None


def writes() -> dict[tuple[str, str], int]:
    """(module, call) -> number of calls that may write a file, for every module but the writer."""
    found: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        if module == WRITER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name is None or (name in OPENERS and not set(_mode(node) or "w") & WRITE_MODES):
                continue
            found[(module, name)] = found.get((module, name), 0) + 1
    return found


def test_nothing_but_the_writer_writes_a_file() -> None:
    unexplained = {key: count for key, count in writes().items() if ALLOWED.get(key, (0, ""))[0] != count}
    assert unexplained == {}, (
        "write files through stackbench.base.output_files (write_file, write_files, publish), or list the call in "
        "ALLOWED with the reason it is not a path a user named")


def test_the_scan_sees_a_write(tmp_path: Path, monkeypatch) -> None:
    """The scan finds the kinds of call it looks for, and not text or dataclass replaces (a scan that found
    nothing would pass the test above)."""
    (tmp_path / "sample.py").write_text(
        "open(p, 'wb'); open(p); Path(p).write_text(t); os.replace(a, b); tempfile.mkstemp(); os.open(p, 1)\n"
        "gzip.open(p, 'rt'); target.rename(other); 'x'.replace('a', 'b'); replace(cell, seq=2); copyfile(a, b)\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    assert writes() == {("sample.py", "open"): 1, ("sample.py", "write_text"): 1, ("sample.py", "os.replace"): 1,
                        ("sample.py", "tempfile.mkstemp"): 1, ("sample.py", "os.open"): 1,
                        ("sample.py", "rename"): 1, ("sample.py", "copyfile"): 1}
