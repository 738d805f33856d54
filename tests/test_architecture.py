"""The data flows one way (docs/architecture.md): each part of the package imports only the parts below it.

The table is the architecture; a new module needs a row, and an import against the flow fails here with
the file that made it. Function-level imports count too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "stackbench"

ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "model": {"base"},
    "probe": {"base"},
    "scan": {"base"},
    "audit": {"base", "model"},
    "tune": {"base", "model", "probe"},
    "engine": {"base", "model"},
    "stack": {"base", "probe", "audit"},
    "store": {"base", "model", "engine"},
    "analysis": {"base", "model"},
    "report": {"base", "model", "engine", "analysis", "audit", "stack", "tune"},
    "measure": {"base", "model", "engine", "probe", "store", "analysis", "stack", "tune", "audit"},
    "load": {"base", "model", "engine", "store", "analysis", "report"},
    "fleet": {"base", "model", "engine", "probe", "store", "analysis", "measure"},
    "web": {"base", "model", "engine", "store", "analysis", "report", "scan", "load"},
    "cli": None,  # the top: may import anything
    "__main__": {"cli", "scan"},  # smallblocks starts its walk before the CLI loads
}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "stackbench"


def _module(path: Path) -> str:
    return ".".join(p for p in path.relative_to(PACKAGE.parent).with_suffix("").parts if p != "__init__")


def module_imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, file) for every stackbench import in the package, whatever it sits
    under (a function, `if TYPE_CHECKING:`): `from stackbench.fleet import timing` imports the module
    stackbench.fleet.timing, `from stackbench.store import Store` the package stackbench.store."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module(path) for path in paths}
    found = []
    for path in paths:
        source = _module(path)
        relative = str(path.relative_to(PACKAGE.parent).with_suffix(""))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "stackbench":
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "stackbench"]
            else:
                continue
            found += [(source, target, relative) for target in dict.fromkeys(targets)]
    return found


def imports() -> list[tuple[str, str, str]]:
    """(importing part, imported part, file) for every import of one part of the package by another."""
    return [(_part(source), _part(target), file) for source, target, file in module_imports()
            if _part(target) not in (_part(source), "stackbench")]


def test_every_part_of_the_package_has_a_row() -> None:
    parts = {_part(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)) for p in PACKAGE.glob("*.py")}
    parts |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts -= {"stackbench", "__init__"}
    assert sorted(parts ^ ALLOWED.keys()) == []  # a part without a row, or a row of a part that is gone


def test_imports_flow_one_way() -> None:
    against = sorted({f"{file}: {source} imports {target}" for source, target, file in imports()
                      if ALLOWED.get(source) is not None and target not in ALLOWED[source]})
    assert against == []


def test_the_table_has_no_cycles() -> None:
    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in ALLOWED.get(start) or ():
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert [part for part in ALLOWED if ALLOWED[part] is not None and reaches(part, part, {part})] == []


def test_the_table_is_what_the_code_imports() -> None:
    """A row lists exactly the parts its part imports: an import nothing uses any more would let one
    appear again unseen. `cli` is the top and has no list."""
    used: dict[str, set[str]] = {part: set() for part in ALLOWED}
    for source, target, _ in imports():
        used.setdefault(source, set()).add(target)
    unused = sorted(f"{part} -> {target}" for part, allowed in ALLOWED.items() if allowed is not None
                    for target in allowed - used[part])
    assert unused == [], "nothing imports these any more: take them out of ALLOWED"


def circles() -> list[list[str]]:
    """The modules that import each other in a loop (Tarjan's strongly connected components), each circle
    sorted: a file that needs another's type while that one needs its functions is one room in two files."""
    graph: dict[str, set[str]] = {}
    for source, target, _ in module_imports():
        if target != source:
            graph.setdefault(source, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for nxt in graph.get(module, ()):
            if nxt not in index:
                visit(nxt)
                low[module] = min(low[module], low[nxt])
            elif nxt in stack:
                low[module] = min(low[module], index[nxt])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_modules_import_each_other() -> None:
    """fleet/preflight.py imported fleet/servers.py and servers.py preflight's ReadyHost for a type hint:
    within a part no row forbids it, so the circle is looked for module by module, type hints included."""
    assert circles() == []


def test_the_circle_finder_sees_a_circle(tmp_path: Path, monkeypatch) -> None:
    """A circle through a type-checking import, as the preflight one was, is found (a finder that found
    nothing would pass the test above)."""
    package = tmp_path / "stackbench"
    (package / "fleet").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "fleet" / "__init__.py").write_text("")
    (package / "fleet" / "a.py").write_text("from stackbench.fleet.b import f\n")
    (package / "fleet" / "b.py").write_text("if TYPE_CHECKING:\n    from stackbench.fleet import a\n")
    (package / "fleet" / "c.py").write_text("from stackbench.fleet import a, b\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    assert circles() == [["stackbench.fleet.a", "stackbench.fleet.b"]]


# -- reading files ---------------------------------------------------------------------------------------
# A file a user names is read through `stackbench.base.inputs` (bounded, never a FIFO or a device: SECURITY.md).
# Every other read in the package is listed here with why its file is not one a user hands over; a new read
# fails `test_files_are_read_only_through_the_bounded_reader` until it goes through `inputs` or is listed.
RAW_READS: dict[str, dict[str, str]] = {
    "stackbench/measure/abandoned.py": {
        "Path('/proc/sys/kernel/random/boot_id').read_text()": "the kernel's boot id",
    },
    "stackbench/cli/crypto.py": {
        "Path('/proc/cpuinfo').read_text(errors='replace')": "this machine's CPU, when no --cpuinfo is given",
    },
    "stackbench/engine/cryptsetup.py": {
        "Path(f'/boot/config-{os.uname().release}').read_text(errors='replace')": "the running kernel's config",
        "gzip.open('/proc/config.gz', 'rt', errors='replace')": "the running kernel's config",
    },
    "stackbench/engine/fio.py": {
        "out_path.read_text(errors='replace')": "what our own fio run wrote, in our private temporary directory",
        "err_path.read_text(errors='replace')": "what our own fio run wrote, in our private temporary directory",
    },
    "stackbench/engine/fio_logs.py": {
        "path.read_text(errors='replace')": "the per-second logs our own fio run wrote, in our private directory",
    },
    "stackbench/fleet/agent.py": {
        "sys.stdin.buffer.read(65536)": "the agent's lifeline from stackbench, read and dropped in chunks",
        "sys.stdin.buffer.readline()": "the agent's `go` from stackbench",
        "(entry / 'cmdline').read_bytes()": "/proc of the host the agent runs on",
        "(directory / 'fio-server.log').read_text(errors='replace')": "the log of the fio server the agent started",
    },
    "stackbench/fleet/ssh.py": {"Path(spec.origin).read_text()": "stackbench's own source, shipped to the agent"},
    "stackbench/probe/block.py": {
        "path.read_text()": "its _read helper, given only /sys/class/block attributes",
        "Path('/proc/self/mountinfo').read_text()": "the kernel's mount table",
    },
    "stackbench/probe/loop.py": {
        "path.read_text()": "its _read helper, given only /sys/class/block attributes",
        "os.open(f'/dev/{name}', os.O_RDONLY | os.O_CLOEXEC)": "a loop device opened for its status ioctl, never read",
    },
    "stackbench/report/charts/files.py": {
        "os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)":
            "the server's own chart files, in its private directory: a regular file, bounded read, no symlink",
    },
    "stackbench/base/output_files.py": {
        "os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)": "an output's directory, opened to fsync and rename in it",
    },
    "stackbench/base/processes.py": {
        "os.open(path, os.O_RDONLY | os.O_CLOEXEC)": "its stat_fields, given only /proc/PID/stat, read once with a "
                                                     "4 KiB bound",
        "(PROC / str(pid) / 'cmdline').read_bytes()": "the kernel's view of a process",
        "(PROC / str(pid) / 'comm').read_text()": "the kernel's view of a process",
    },
    "stackbench/probe/conditions.py": {
        "open(path, errors='replace')": "its _read helper, given only /proc and /sys files",
    },
    "stackbench/probe/system.py": {
        "Path(path).read_text(errors='replace')": "its _read helper, given only /proc, /sys and /etc/os-release",
    },
    "stackbench/measure/safety.py": {
        "(node / 'size').read_text()": "a /sys/class/block attribute",
        "(SYS_BLOCK / str(name) / 'size').read_text()": "a /sys/class/block attribute",
        "Path('/proc/self/mountinfo').read_text()": "the kernel's mount table",
        "Path('/proc/swaps').read_text()": "the kernel's swap table",
    },
    "stackbench/measure/layer_plan.py": {
        "os.open(device, os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC)": "a block device opened to see that it can be, "
                                                                      "then closed unread",
    },
    "stackbench/measure/scratch_volumes.py": {"entry.read_text()": "stackbench's own scratch-volume journal"},
    "stackbench/stack/devices.py": {
        "path.read_bytes()": "its _read helper, given only /sys/class/block attributes",
    },
    "stackbench/stack/mounts.py": {"Path('/proc/self/mountinfo').read_text()": "the kernel's mount table"},
    "stackbench/stack/throttle.py": {
        "path.read_text()": "its _read helper, given only /proc/self/cgroup and the cgroup hierarchies' throttle files",
    },
    "stackbench/scan/walker.py": {
        "os.open(path, _DIR_FLAGS)": "a directory opened to list it, never read",
        "os.open(separator, _DIR_FLAGS)": "a directory opened to list it (a path past PATH_MAX, part by part)",
        "os.open(part, _DIR_FLAGS, dir_fd=fd)": "a directory opened to list it (a path past PATH_MAX, part by part)",
        "open(f'/proc/{process.pid}/schedstat')": "the kernel's view of a reader process (is it waiting?)",
    },
    "stackbench/measure/tune_journal.py": {
        "path.read_text(errors='replace')": "a tune journal stackbench wrote, in its own state directory",
        "os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)": "the journals' directory, opened to fsync it",
    },
    "stackbench/measure/tune_persist.py": {
        "target.read_bytes()": "a system file `tune --persist --write` appends to (udev rules.d, sysctl.d, "
                               "modprobe.d), read to check it first",
    },
    "stackbench/tune/actions.py": {
        "Path(_kernel_path(path)).read_text()": "a kernel setting, only under /sys or /proc/sys",
    },
    "stackbench/tune/access/mount.py": {"Path(MOUNTINFO).read_text()": "the kernel's mount table"},
    "stackbench/store/database.py": {"script.read_text(encoding='utf-8')": "stackbench's own migration scripts"},
    "stackbench/web/app.py": {
        "static.joinpath('style.css').read_text(encoding='utf-8')": "stackbench's own stylesheet",
        "static.joinpath('copy.js').read_text(encoding='utf-8')": "stackbench's own script, the copy buttons'",
    },
}
READER = "stackbench/base/inputs.py"


def _writes(call: ast.Call) -> bool:
    """Opened only to write: a literal mode (keyword, or among the first two arguments: `open(path, 'wb')`,
    `path.open('w')`) with w, a or x and no +."""
    modes = [k.value for k in call.keywords if k.arg == "mode"] + call.args[:2]
    for mode in modes:
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) <= set("rwaxbt+"):
            return bool(set(mode.value) & set("wax")) and "+" not in mode.value
    return False


def _is_read(call: ast.Call) -> bool:
    """A call that reads a file or standard input: Path.read_text/read_bytes, open() and X.open() in a read
    mode, os.open without a write flag, stdin's read methods, input(), and OpenSSL's cafile=/capath=."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ("read_text", "read_bytes"):
        return True
    if isinstance(func, ast.Attribute) and func.attr == "open" and ast.unparse(func.value) == "os":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        return not any(flag in flags for flag in ("O_WRONLY", "O_RDWR", "O_CREAT"))
    if isinstance(func, ast.Name) and func.id == "open" or isinstance(func, ast.Attribute) and func.attr == "open":
        return not _writes(call)
    if isinstance(func, ast.Attribute) and func.attr.startswith("read") and "stdin" in ast.unparse(func.value):
        return True
    if isinstance(func, ast.Name) and func.id == "input":
        return True
    return any(k.arg in ("cafile", "capath") for k in call.keywords)


def raw_reads() -> list[tuple[str, int, str]]:
    """(file, line, call) of every read of a file in the package outside the bounded reader."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE.parent))
        if relative == READER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _is_read(node):
                found.append((relative, node.lineno, ast.unparse(node)))
    return found


def test_files_are_read_only_through_the_bounded_reader() -> None:
    """`import /dev/zero` and `run --hosts-file /dev/zero` once read until the OOM killer came, and the
    module meant to prevent it was imported by nothing: a file read any other way fails here."""
    unlisted = [f"{file}:{line}: {call}" for file, line, call in raw_reads() if call not in RAW_READS.get(file, {})]
    assert unlisted == [], (
        "these read a file without stackbench.base.inputs.read_input (bounded, never a FIFO or a device): read a file "
        "a user names through it; if the file is the system's or stackbench's own, list it in RAW_READS with why"
    )


def test_every_listed_raw_read_still_exists() -> None:
    present = {(file, call) for file, _, call in raw_reads()}
    stale = [(file, call) for file, calls in RAW_READS.items() for call in calls if (file, call) not in present]
    assert stale == []


def test_the_read_detector_sees_the_reads_that_once_ran_unbounded() -> None:
    """The shapes of the reads that were the bugs, as they were written: the detector must flag each."""
    calls = ["path.read_bytes()", "Path(hosts_file).read_text()", "token_file.read_text(encoding='utf-8')",
             "sys.stdin.read()", "sys.stdin.readline()", "ssl.create_default_context(cafile=str(ca_file))",
             "open(path)", "path.open('rb')", "os.open(path, os.O_RDONLY)"]
    assert [c for c in calls if not _is_read(ast.parse(c, mode="eval").body)] == []  # type: ignore[arg-type]
    writes = ["open(path, 'wb')", "os.open(path, os.O_WRONLY | os.O_CREAT, 384)", "path.open('w')"]
    assert [c for c in writes if _is_read(ast.parse(c, mode="eval").body)] == []  # type: ignore[arg-type]


def test_the_cli_builds_no_progress_display_table_or_error_printer_of_its_own() -> None:
    """Issue 33's leftovers: spinners built by hand beside cli/progress.py (crypto, smallblocks), a second
    error printer `fail()` beside the one error path (a raised StackbenchError, printed by run_app), and
    table builders in cli/ (users, tokens) instead of report/."""
    cli = PACKAGE / "cli"
    progress, tables, printers = [], [], []
    for path in sorted(cli.rglob("*.py")):
        tree = ast.parse(path.read_text())
        name = str(path.relative_to(PACKAGE))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "rich.progress" and path.name != "progress.py":
                progress.append(name)
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Tabular":
                tables.append(name)
            if isinstance(node, ast.FunctionDef) and node.name == "fail":
                printers.append(name)
    assert (progress, tables, printers) == ([], [], [])


def test_proc_pid_stat_has_one_parser() -> None:
    """A /proc/PID/stat line is parsed by base/processes.py's stat_fields alone: the conditions sampler and
    the fleet's process age each had a copy of the cut after the command name (which may hold ')')."""
    cut = re.compile(r"""\.r?(split|partition)\(b?["']\)["']""")
    copies = [f"{path.relative_to(PACKAGE.parent)}:{number}" for path in sorted(PACKAGE.rglob("*.py"))
              for number, line in enumerate(path.read_text().splitlines(), 1) if cut.search(line)]
    assert [copy.split(":")[0] for copy in copies] == ["stackbench/base/processes.py"], copies
