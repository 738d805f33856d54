"""fio's servers on the hosts and the SSH forwards that reach them, started together and always stopped.

One ssh per host runs the agent's `serve` (fleet/agent.py): fio's server on a Unix socket in a private
directory on that host, never on a network address. The same ssh forwards 127.0.0.1:PORT on our side to
that socket (`-L`, bound to loopback, ExitOnForwardFailure), so `fio --client=127.0.0.1,PORT` reaches it
and nothing else can. The ssh's stdin is the server's lifeline: closing it (a normal stop), or our death
(ssh dies with us), makes the agent stop fio and remove the scratch files there.
"""

from __future__ import annotations

import queue
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field

from stackbench import spawn
from stackbench.engine.fio import die_with_parent
from stackbench.errors import FleetHostsFailed
from stackbench.fleet.preflight import ReadyHost
from stackbench.fleet.ssh import HostFailure, Ssh, answer_in, explain, payload

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


def free_port() -> int:
    """A loopback port nobody listens on now (ssh binds it a moment later; a lost race is retried)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HostServer:
    """One host's running fio server as our side sees it: the local port that reaches it and its ssh."""

    host: ReadyHost
    port: int
    process: subprocess.Popen
    events: "queue.Queue[dict]" = field(default_factory=queue.Queue)
    stderr: list[str] = field(default_factory=list)
    dead: str | None = None  # why the host dropped out, once it has
    cleaned: bool = False  # the agent confirmed, as it stopped, that fio is gone and no scratch file is left
    readers: list[threading.Thread] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.host.name

    def poll(self) -> str | None:
        """The reason this host is gone (its fio server exited, or its ssh), else None."""
        while not self.events.empty():
            event = self.events.get_nowait()
            if "died" in event and self.dead is None:
                self.dead = f"fio's server on {self.name} exited (status {event['died']})"
            if event.get("stopped") and not event.get("left"):
                self.cleaned = True
        if self.dead is None and self.process.poll() is not None:
            self.dead = f"the ssh connection to {self.name} ended: {explain(self.name, self.process.returncode, ''.join(self.stderr)).what}"
        return self.dead


def _read_lines(stream, sink) -> None:  # type: ignore[no-untyped-def]
    for raw in iter(stream.readline, b""):
        sink(raw.decode(errors="replace"))


def _launch(ssh: Ssh, host: ReadyHost, socket_dir: str) -> HostServer:
    port = free_port()
    argv = ssh.agent_command(host.name, forward=(port, f"{socket_dir}/fio.sock"))
    process = spawn.popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True, child_setup=die_with_parent)
    server = HostServer(host, port, process)

    def event(line: str) -> None:
        answer = answer_in(line)
        if answer is not None:
            server.events.put(answer)

    server.readers = [threading.Thread(target=_read_lines, args=(process.stdout, event), daemon=True),
                      threading.Thread(target=_read_lines, args=(process.stderr, server.stderr.append), daemon=True)]
    for reader in server.readers:
        reader.start()
    args = {"socket_dir": socket_dir, "fio_path": host.answer["fio_path"],
            "scratch": [host.scratch] if host.remove_after else []}
    try:
        assert process.stdin is not None
        process.stdin.write(payload("serve", args))
        process.stdin.flush()
    except OSError:
        pass  # ssh already gone: reported below from its exit
    return server


def _wait_ready(server: HostServer, deadline: float) -> HostFailure | None:
    while True:
        try:
            event = server.events.get(timeout=0.05)
        except queue.Empty:
            if server.process.poll() is not None:
                time.sleep(0.1)  # let the stderr reader catch ssh's last words
                return explain(server.name, server.process.returncode, "".join(server.stderr))
            if time.monotonic() > deadline:
                return HostFailure(server.name, f"fio's server did not start within {START_TIMEOUT_S:g} s",
                                   "Check the host's load and that `fio --server` runs there")
            continue
        if "ready" in event:
            return None
        if "error" in event:
            return HostFailure(server.name, str(event["error"]), "Run `fio --server` there by hand to see why")


def start_servers(ssh: Ssh, hosts: list[ReadyHost], run_tag: str) -> list[HostServer]:
    """A fio server and its forward for every host, all ready; or every one stopped and FleetHostsFailed."""
    servers: list[HostServer] = []
    try:
        for host in hosts:
            servers.append(_launch(ssh, host, f"{host.tmp.rstrip('/')}/stackbench-fleet-{run_tag}-h{host.index}"))
        deadline = time.monotonic() + START_TIMEOUT_S
        failures = [f for f in (_wait_ready(s, deadline) for s in servers) if f is not None]
    except BaseException:
        stop_servers(servers)
        raise
    if failures:
        stop_servers(servers)
        raise FleetHostsFailed(
            f"fio's server could not be started on {len(failures)} host(s) "
            f"({', '.join(f.host for f in failures)}), so nothing ran on any host",
            "Fix each host as said above and run again", [f.line() for f in failures],
        )
    return servers


def stop_servers(servers: list[HostServer]) -> None:
    """Close every lifeline at once, then wait for each agent to stop fio and clean up; kill what lingers."""
    for server in servers:
        try:
            if server.process.stdin is not None:
                server.process.stdin.close()
        except OSError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for server in servers:
        try:
            server.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
        for reader in server.readers:
            reader.join(timeout=1.0)
        server.poll()  # reads the agent's last word: whether it confirmed the cleanup
