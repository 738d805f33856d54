"""The remote half of a fleet run: what each host's python3 runs, standard library only.

Nothing is installed on a host. `ssh HOST python3 -c BOOTSTRAP` reads one length-prefixed JSON payload from
stdin: this module's source, the sources of the stackbench modules it reuses (safety, probe: the same code
a local run uses to approve a target and gather facts, served from memory by an import hook), the command
and its arguments. No user text is ever on the remote command line. The commands:

- `preflight`: python and fio (path, version), the target checked by the local run's safety rules (plus
  "no block devices in fleet mode"), the host's facts, O_DIRECT support. One JSON line on stdout.
- `session`: `preflight`, then wait for `go` on stdin and `serve`: one connection per host for a whole run.
- `serve`: start `fio --server=sock:DIR/fio.sock` (a Unix socket in a new 0700 directory in the user's
  $TMPDIR, else /tmp, whose path the preflight answer gives (`socket_dir`): fio never
  listens on a network address, not even loopback TCP that other local users could reach), say READY, then
  wait for stdin to close (our side ends the run, or the connection or stackbench dies) and stop fio, remove
  the scratch files and the socket directory. DIED is printed if fio's server exits first.
- `cleanup`: remove the scratch files (the pass after a run, whatever the server did).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MARK = "STACKBENCH-AGENT "
OLD_PYTHON = "stackbench: the python3 here is older than 3.8"
BOOTSTRAP = (
    f"import sys,json;sys.version_info<(3,8) and sys.exit('{OLD_PYTHON}');"
    "b=sys.stdin.buffer;p=json.loads(b.read(int(b.readline())));"
    "exec(compile(p['agent'],'stackbench-agent','exec'),{'__name__':'stackbench_agent','PAYLOAD':p})"
)


def _say(**message: Any) -> None:
    sys.stdout.write(MARK + json.dumps(message) + "\n")
    sys.stdout.flush()


def _install(sources: dict[str, str], packages: list[str]) -> None:
    """Serve the shipped stackbench modules from memory, ahead of anything installed on the host."""
    import enum
    import importlib.abc
    import importlib.util

    if not hasattr(enum, "StrEnum"):  # python < 3.11: warning.py's WarningCode needs it

        class StrEnum(str, enum.Enum):
            def __str__(self) -> str:
                return str(self.value)

        enum.StrEnum = StrEnum  # type: ignore[attr-defined]

    class Shipped(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name in sources:
                return importlib.util.spec_from_loader(name, self, is_package=name in packages)
            return None

        def create_module(self, spec: Any) -> None:
            return None

        def exec_module(self, module: Any) -> None:
            if module.__name__ in packages:
                module.__path__ = []
            exec(compile(sources[module.__name__], f"<stackbench {module.__name__}>", "exec"), module.__dict__)

    sys.meta_path.insert(0, Shipped())


def _fio_version(fio: str) -> str | None:
    try:
        done = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def preflight(args: dict[str, Any]) -> dict[str, Any]:
    from stackbench.base.errors import StackbenchError
    from stackbench.probe.block import collect_target_facts
    from stackbench.probe.direct_io import direct_io_alignment, honours_o_direct
    from stackbench.probe.system import collect_system_facts
    from stackbench.fleet.timing import process_age
    from stackbench.measure.safety import resolve_target, room_for

    timing = {"python_s": process_age()}  # python's start, the payload read, the imports above
    clock = time.monotonic()

    def step(name: str) -> None:
        nonlocal clock
        timing[f"{name}_s"], clock = time.monotonic() - clock, time.monotonic()

    answer: dict[str, Any] = {"python": platform.python_version(), "tmp": tempfile.gettempdir(), "timing": timing}
    if args.get("socket_name"):
        answer["socket_dir"] = socket_dir(str(args["socket_name"]))
    fio = shutil.which("fio")
    answer["fio_path"] = fio
    answer["fio_version"] = _fio_version(fio) if fio else None
    step("fio_version")
    path = Path(args["target"])
    try:
        try:
            is_device = stat.S_ISBLK(os.stat(path).st_mode)
        except OSError:
            is_device = False
        if is_device:
            raise StackbenchError(f"{path} is a block device, and fleet runs never write to block devices",
                                  "Pass a directory (a scratch file is created there) as --target")
        room, _ = room_for(path, destroy_data=False)  # before the scratch file exists: what a size may take
        target = resolve_target(path, size=int(args["size"]), destroy_data=False, run_id=args["scratch_id"])
        answer["target"] = {"kind": target.kind, "file": target.fio_filename, "remove_after": target.remove_after,
                            "dir": str(target.space_dir), "room": room}
        step("target_check")
        answer["target_facts"] = collect_target_facts(target.space_dir)
        step("target_facts")
        ok, why = honours_o_direct(target.space_dir)
        answer["direct"] = {"ok": ok, "why": why, "alignment": direct_io_alignment(target.space_dir)}
        step("direct_io")
    except StackbenchError as error:
        answer["target_error"] = {"what": error.what, "fix": error.fix}
    answer["system"] = collect_system_facts()
    step("system_facts")
    _say(**answer)
    return answer


SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the terminating NUL
SOCKET_FALLBACK = "/tmp"


def socket_dir(name: str) -> str:
    """Where fio's socket goes: a new directory `name` in the user's $TMPDIR when it is set (a per-user
    temporary directory, pam_tmpdir and the like), else in /tmp; /tmp too when $TMPDIR is not an absolute
    directory or would make the socket's path longer than a Unix socket's path can be."""
    root = os.environ.get("TMPDIR") or ""
    if not (os.path.isabs(root) and os.path.isdir(root)) or len(f"{root}/{name}/fio.sock") > SOCKET_PATH_MAX:
        root = SOCKET_FALLBACK
    return os.path.join(root, name)


def session(args: dict[str, Any]) -> None:
    """A whole run's connection: the preflight answer, then, on `go`, fio's server until stdin closes.

    Anything but `go` (another host failed its checks; our side closed the connection) ends it with nothing
    started and nothing written."""
    answer = preflight(args)
    if sys.stdin.buffer.readline().strip() != b"go" or "target_error" in answer or not answer.get("fio_path"):
        return
    target = answer["target"]
    serve({"socket_dir": answer["socket_dir"], "fio_path": answer["fio_path"],
           "scratch": [target["file"]] if target["remove_after"] else []})


def _remove(paths: list[str]) -> list[str]:
    removed = []
    for name in paths:  # only the files preflight approved as new (remove_after): never anything else
        try:
            if not stat.S_ISREG(os.lstat(name).st_mode):
                continue
            os.unlink(name)
            removed.append(name)
        except FileNotFoundError:
            pass
        except OSError:
            pass
    return removed


def _server_processes(socket_path: Path) -> list[int]:
    """Every process of the fio server on `socket_path`: the server, its per-connection backends and their
    job processes (which call setsid, so no one process group holds them all; orphans keep the argv)."""
    mark = f" --server=sock:{socket_path} ".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = b" " + (entry / "cmdline").read_bytes().replace(b"\0", b" ") + b" "
            if entry.stat().st_uid == os.getuid() and mark in argv:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def _stop_server(socket_path: Path, grace: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after `grace` seconds, to every process of that fio server; whether any ran."""
    pids = _server_processes(socket_path)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _server_processes(socket_path):
            time.sleep(0.01)  # fio ends within milliseconds of SIGTERM: a coarse poll only adds wall time
        if not _server_processes(socket_path):
            break
    return bool(pids)


def cleanup(args: dict[str, Any]) -> None:
    """After a run whose session to this host was lost: stop its fio server if one is still there, remove
    the scratch file and the socket directory."""
    directory = Path(args.get("socket_dir") or "/nonexistent")
    stopped = _stop_server(directory / "fio.sock") if directory.name.startswith("stackbench-fleet-") else False
    removed = _remove(list(args["scratch"]))
    if directory.name.startswith("stackbench-fleet-"):
        shutil.rmtree(directory, ignore_errors=True)
    _say(removed=removed, stopped_server=stopped)


def serve(args: dict[str, Any]) -> None:
    """fio's server on a private Unix socket for as long as our side keeps stdin open."""
    directory = Path(args["socket_dir"])
    socket_path = directory / "fio.sock"
    stop = threading.Event()

    def ended(_signum: int, _frame: Any) -> None:
        # Only the first signal ends the serving: sshd may send SIGHUP and SIGTERM back to back when the
        # connection drops, and a second SystemExit raised inside the cleanup below would cut it short
        # (a fio left running after stackbench was SIGKILLed, seen in CI).
        if not stop.is_set():
            stop.set()
            raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, ended)
    began = time.monotonic()
    os.mkdir(directory, 0o700)  # fails if it exists: never reuse what someone else made
    server = None
    try:
        log = open(directory / "fio-server.log", "wb")
        server = subprocess.Popen([args["fio_path"], f"--server=sock:{socket_path}"], stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 15
        while not socket_path.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                text = (directory / "fio-server.log").read_text(errors="replace").strip()[-300:]
                _say(error=f"fio --server did not start: {text or 'no output'}")
                return
            time.sleep(0.005)
        _say(ready=str(socket_path), pid=server.pid, seconds=time.monotonic() - began)

        def watch() -> None:
            server.wait()
            if not stop.is_set():  # not ended by us: fio's server died on its own
                try:
                    _say(died=server.returncode)
                except OSError:  # our side is gone too
                    pass
                os.kill(os.getpid(), signal.SIGTERM)  # nothing left to serve: clean up and end now

        threading.Thread(target=watch, daemon=True).start()
        while sys.stdin.buffer.read(65536):  # until EOF: the run ended, or the connection or stackbench died
            pass
    finally:
        stop.set()
        stopping = time.monotonic()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):  # a second signal must not cut the cleanup
            signal.signal(sig, signal.SIG_IGN)
        if server is not None:
            _stop_server(socket_path)
            server.poll()
        scratch = list(args.get("scratch", ()))
        _remove(scratch)
        shutil.rmtree(directory, ignore_errors=True)
        left = [name for name in scratch if os.path.lexists(name)]
        try:  # our side skips its own cleanup pass for a host that confirms this
            _say(stopped=True, left=left, seconds=time.monotonic() - stopping)
        except OSError:
            pass


COMMANDS = {"preflight": preflight, "session": session, "serve": serve, "cleanup": cleanup}


def main(payload: dict[str, Any]) -> None:
    _install(payload["sources"], payload["packages"])
    COMMANDS[payload["command"]](payload["args"])
    # Done, and every answer written and flushed as it was said: end now. The interpreter's own finalisation
    # would take tens of milliseconds more, which our side waits through before the connection closes.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "stackbench_agent":
    main(globals()["PAYLOAD"])  # given by BOOTSTRAP
