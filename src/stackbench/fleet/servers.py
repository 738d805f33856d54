"""One ssh session per host for a whole fleet run: the checks, then fio's server and the forward to it.

Each session is one `ssh -o ControlMaster=yes -o ControlPath=OURS HOST python3 -c ...` running the agent's
`session` (fleet/agent.py): it answers the preflight, naming the directory its fio socket will have (a new
one in the host's $TMPDIR when set, else /tmp; known only there, hence the forward is added afterwards),
then waits. As that answer arrives our side asks the running connection for the forward
(`ssh -O forward -L 127.0.0.1:PORT:DIR/fio.sock`, no new handshake; it listens on our loopback towards a
socket that does not exist yet). Only when every host has passed and every forward is in place does it
send `go`, and the agent starts fio's server on that Unix socket, in its new private directory, never on a
network address; the forward, bound to loopback on our side, is the only way in, so
`fio --client=127.0.0.1,PORT` reaches it and nothing else can. One connection per host saves a round of
ssh handshakes per run; all hosts are contacted at once (the agent's program is sent from a thread, as ssh
reads it only once logged in). The session's stdin is the server's lifeline: closing it (a normal stop, another
host failing its checks), or our death (ssh dies with us), makes the agent stop fio, remove the scratch
file and the socket directory, and confirm that it did.
"""

from __future__ import annotations

import os
import queue
from collections import deque
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from stackbench.base import spawn
from stackbench.measure.abandoned import CONTROL_DIR_PREFIX
from stackbench.fleet.agent import MARK, SOCKET_FALLBACK, SOCKET_PATH_MAX
from stackbench.base.errors import FleetHostsFailed
from stackbench.fleet import timing
from stackbench.fleet.ssh import HostFailure, Ssh, answer_in, explain, payload
from stackbench.base.units import count

START_TIMEOUT_S = 60.0
LINE_BYTES = 4 * 1024**2  # the longest line read from a host: an answer with every block device is ~100 KiB
STDERR_LINES = 256  # what is kept of ssh's stderr, its last lines, for the one-line explanation
STOP_TIMEOUT_S = 10.0
FORWARD_TIMEOUT_S = 15.0


def free_port() -> int:
    """A loopback port nobody listens on now (ssh binds it a moment later, or fails and says so)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class ReadyHost:
    """A host that passed: its index in the fleet, its scratch file and its facts as the agent found them."""

    name: str
    index: int
    scratch: str
    remove_after: bool
    answer: dict[str, Any]

    @property
    def fio_version(self) -> str:
        return str(self.answer.get("fio_version"))

    def facts(self) -> dict[str, Any]:
        """What the run stores about this host (the same facts a local run stores about its machine)."""
        a = self.answer
        return {
            "fio_version": a.get("fio_version"),
            "fio_path": a.get("fio_path"),
            "python": a.get("python"),
            "system": a.get("system"),
            "target": {**(a.get("target_facts") or {}), "kind": a["target"]["kind"], "file": self.scratch},
            "direct_io": a.get("direct"),
        }


@dataclass
class HostServer:
    """One host's session as our side sees it: the local port that reaches its fio server, and its ssh."""

    name: str
    index: int
    port: int
    process: subprocess.Popen
    control_dir: str  # ours, private (0700): the connection's ControlMaster socket
    socket_dir: str | None = None  # on the host, as its agent chose it ($TMPDIR or /tmp); set by its answer
    events: "queue.Queue[dict]" = field(default_factory=queue.Queue)
    stderr: "deque[str]" = field(default_factory=lambda: deque(maxlen=STDERR_LINES))  # ssh's last words only
    host: ReadyHost | None = None  # set once its checks passed
    dead: str | None = None  # why the host dropped out, once it has
    cleaned: bool = False  # the agent confirmed, as it stopped, that fio is gone and no scratch file is left
    readers: list[threading.Thread] = field(default_factory=list)
    writer: threading.Thread | None = None  # sends the agent its program: done once the agent has read it
    forward: subprocess.Popen | None = None  # `ssh -O forward`, asked as soon as the agent named its directory
    ssh: Ssh | None = None
    opened_s: float | None = None  # when its ssh was started, on fleet/timing.py's clock (timing on only)

    def _event(self, event: dict[str, Any]) -> dict[str, Any]:
        if "died" in event and self.dead is None:
            self.dead = f"fio's server on {self.name} exited (status {event['died']})"
        if event.get("stopped") and not event.get("left"):
            self.cleaned = True
        if event.get("stopped") and "seconds" in event:
            timing.host(self.name, server_stop_s=event["seconds"])
        return event

    def poll(self) -> str | None:
        """The reason this host is gone (its fio server exited, or its ssh), else None."""
        while not self.events.empty():
            self._event(self.events.get_nowait())
        if self.dead is None and self.process.poll() is not None:
            self.dead = (f"the ssh connection to {self.name} ended: "
                         f"{explain(self.name, self.process.returncode, ''.join(self.stderr)).what}")
        return self.dead

    def wait_for(self, key: str, deadline: float, what: str) -> dict[str, Any] | HostFailure:
        """The agent's next message holding `key` (or an `error`), or why it never came."""
        while True:
            try:
                event = self._event(self.events.get(timeout=0.05))
            except queue.Empty:
                if self.process.poll() is not None:
                    for reader in self.readers:
                        reader.join(timeout=1.0)  # ssh's last words
                    return explain(self.name, self.process.returncode, "".join(self.stderr))
                if time.monotonic() > deadline:
                    return HostFailure(self.name, f"{what} did not answer within {START_TIMEOUT_S:g} s",
                                       "Check the host's load and that `ssh HOST python3 --version` answers")
                continue
            if key in event:
                if event.get("socket_dir"):
                    self.socket_dir = str(event["socket_dir"])
                return event
            if "error" in event:
                return HostFailure(self.name, str(event["error"]),
                                   str(event.get("fix") or "Run `fio --server` there by hand to see why"))


def _read_lines(stream: Any, sink: Any) -> None:
    """Each line a host sends, cut at LINE_BYTES: an endless line is read in pieces, never held whole (the
    first piece of an answer cut like that is not JSON, and is reported as such)."""
    for raw in iter(lambda: stream.readline(LINE_BYTES), b""):
        sink(raw.decode(errors="replace"))


SSH_BIND_SUFFIX = 17  # ssh binds the control socket as ControlPath + ".XXXXXXXXXXXXXXXX", then renames it


def new_control_dir() -> str:
    """A new 0700 directory (only we may use the connection) for one ssh control socket, `DIR/c`: in
    $TMPDIR, or in /tmp when $TMPDIR is so long that ssh could not bind the socket there (a Unix socket's
    path holds 107 bytes), which it would refuse with "unix_listener: path ... too long"."""
    directory = tempfile.mkdtemp(prefix=CONTROL_DIR_PREFIX)
    if len(os.fsencode(f"{directory}/c")) + SSH_BIND_SUFFIX <= SOCKET_PATH_MAX:
        return directory
    os.rmdir(directory)
    return tempfile.mkdtemp(prefix=CONTROL_DIR_PREFIX, dir=SOCKET_FALLBACK)


def open_session(ssh: Ssh, name: str, index: int, tag: str, preflight_args: dict[str, Any]) -> HostServer:
    """Start one host's session; its preflight answer arrives as an event (`HostServer.wait_for`)."""
    port = free_port()
    control = new_control_dir()
    try:
        process = spawn.popen(ssh.agent_command(name, control=f"{control}/c"), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                              death_signal=signal.SIGKILL)
    except BaseException:
        shutil.rmtree(control, ignore_errors=True)
        raise
    server = HostServer(name, index, port, process, control, opened_s=timing.since_start())

    def event(line: str) -> None:
        answer = answer_in(line)
        if answer is None and line.startswith(MARK):  # the agent's mark, but not its answer
            answer = {"error": "its agent sent an answer that is not strict JSON with 64-bit numbers",
                      "fix": "Run the same stackbench version here and there; check nothing there rewrites ssh output"}
        if answer is not None:
            if server.opened_s is not None:
                answer["received_s"] = timing.since_start()
            if answer.get("socket_dir") and server.forward is None:
                # the tunnel is asked for now, while stackbench is still starting: it only listens on our
                # loopback for a socket that does not exist yet (fio's server starts on `go`, once every host
                # has passed its checks); start_servers reads its outcome, stop_servers ends it
                server.socket_dir = str(answer["socket_dir"])
                server.forward = _ask_forward(server)
            server.events.put(answer)

    server.readers = [threading.Thread(target=_read_lines, args=(process.stdout, event), daemon=True),
                      threading.Thread(target=_read_lines, args=(process.stderr, server.stderr.append), daemon=True)]
    for reader in server.readers:
        reader.start()
    # From a thread: ssh reads its stdin only once it has logged in, and the agent is larger than a pipe
    # holds, so a plain write would wait for this host's handshake before the next host's ssh even starts.
    program = payload("session", {**preflight_args, "socket_name": f"stackbench-fleet-{tag}-h{index}"})
    server.writer = threading.Thread(target=_send, args=(server, program), daemon=True)
    server.writer.start()
    server.ssh = ssh
    return server


def _ask_forward(server: HostServer) -> subprocess.Popen | None:
    """Start `ssh -O forward` for this connection (None if it cannot start: add_forwards tries again and
    reports)."""
    assert server.ssh is not None and server.socket_dir is not None
    argv = server.ssh.forward_command(server.name, f"{server.control_dir}/c", server.port,
                                      f"{server.socket_dir}/fio.sock")
    try:
        return spawn.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           death_signal=signal.SIGKILL)
    except OSError:
        return None


def add_forwards(servers: list[HostServer]) -> list[HostFailure]:
    """Each connection's forward from 127.0.0.1:PORT on our side to fio's socket in the directory its agent
    named (a request to the running connection, not a new one, asked when its answer came); the failures."""
    started = []
    for server in servers:
        if server.forward is None:
            server.forward = _ask_forward(server)
        if server.forward is not None:
            started.append((server, server.forward))
    failures = [HostFailure(s.name, "the forward to fio's socket could not be added: ssh could not be started",
                            "Check that the OpenSSH client (ssh) is installed and runs here")
                for s in servers if s.forward is None]
    for server, process in started:
        try:
            _, err = process.communicate(timeout=FORWARD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        if process.returncode != 0:
            said = err.decode(errors="replace")
            why = explain(server.name, process.returncode, said)
            failures.append(HostFailure(server.name, f"the forward to fio's socket could not be added: {why.what}",
                                        why.fix))
    return failures


def _send(server: HostServer, data: bytes) -> None:
    if server.writer is not None and server.writer is not threading.current_thread():
        server.writer.join()  # the program first (it is read already when its answer has come)
    try:
        assert server.process.stdin is not None
        server.process.stdin.write(data)
        server.process.stdin.flush()
    except (OSError, ValueError):
        pass  # ssh already gone (reported from its exit), or its stdin closed by stop_servers


def start_servers(servers: list[HostServer]) -> None:
    """`go` to every checked host, and wait until each fio server is up; or stop all and FleetHostsFailed."""
    try:
        with timing.phase("forwards"):
            failures = add_forwards(servers)
        if failures:  # nothing started anywhere yet: every session is closed below
            raise hosts_failed(failures, f"the forward to fio's socket failed for {count(len(failures), 'host')}")
        for server in servers:
            _send(server, b"go\n")
        deadline = time.monotonic() + START_TIMEOUT_S
        with timing.phase("servers_start"):
            answers = [s.wait_for("ready", deadline, "fio's server") for s in servers]
        failures = [f for f in answers if isinstance(f, HostFailure)]
        for server, answer in zip(servers, answers):
            if not isinstance(answer, HostFailure) and "seconds" in answer:
                timing.host(server.name, server_start_s=answer["seconds"])
    except BaseException:
        stop_servers(servers)
        raise
    if failures:
        stop_servers(servers)
        raise hosts_failed(failures, f"fio's server could not be started on {count(len(failures), 'host')}")


def hosts_failed(failures: list[HostFailure], what: str) -> FleetHostsFailed:
    """One error for the failing hosts: a line per host (printed first) and the summary with the fix."""
    return FleetHostsFailed(
        f"{what} ({', '.join(f.host for f in failures)}), so nothing ran on any host",
        "Fix each host as said above and run again", [f.line() for f in failures],
    )


def stop_servers(servers: list[HostServer]) -> None:
    """Close every lifeline at once, then wait for each agent to stop fio and clean up; kill what lingers."""
    for server in servers:
        if server.writer is not None and server.writer.is_alive():
            # its agent has not read its whole program yet (a slow or dead host), so nothing runs there:
            # end the ssh, which ends the blocked write too
            server.process.kill()
            server.writer.join()
        try:
            if server.process.stdin is not None:
                server.process.stdin.close()
        except OSError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for server in servers:
        # ssh's output ends when ssh does: joining its readers wakes the moment it exits, where a wait with a
        # timeout would poll (up to 50 ms late each time)
        for reader in server.readers:
            reader.join(timeout=max(0.1, deadline - time.monotonic()))
        try:
            server.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
        for reader in server.readers:
            reader.join(timeout=1.0)
        if server.forward is not None:  # asked for by a reader, which is done now: none can start after this
            if server.forward.poll() is None:
                server.forward.kill()
            server.forward.communicate()
        server.poll()  # reads the agent's last word: whether it confirmed the cleanup
        shutil.rmtree(server.control_dir, ignore_errors=True)  # ssh removed its socket; the directory is ours
