"""Every host checked before anything starts anywhere: reachable, logged in, python3, fio of our version,
a target that passes the local run's safety rules. All hosts are asked at once, each over the session that
will later run its fio server (servers.py); any failure closes every session and stops the run with one
line per failing host (name, what, fix): nothing has run on any host."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from stackbench.fleet import timing
from stackbench.fleet.servers import HostServer, ReadyHost, hosts_failed, open_session, stop_servers
from stackbench.fleet.ssh import HostFailure, Ssh
from stackbench.base.units import count

PREFLIGHT_TIMEOUT_S = 60.0


# The numbers of an answer that a fleet run computes with: (where, lowest, highest); None means unknown.
_NUMBERS: tuple[tuple[tuple[str, str], int, int], ...] = (
    (("system", "ram_bytes"), 0, 2**64),
    (("target", "room"), 0, 2**64),
    (("direct", "alignment"), 1, 2**32),
)


def _unreadable(answer: dict[str, Any]) -> str | None:
    """What in a host's answer is not what the agent sends, or None: a size the run would compute with
    that is not a whole number in range (the JSON itself is strict: ssh.answer_in)."""
    for (part, key), low, high in _NUMBERS:
        section = answer.get(part)
        value = section.get(key) if isinstance(section, dict) else None
        if value is not None and (type(value) is not int or not low <= value <= high):
            return f"{part}.{key}={str(value)[:30]!r}"
    timing = answer.get("timing")
    if timing is not None and (not isinstance(timing, dict) or any(
            not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 for v in timing.values())):
        return "timing"
    return None


def _judge(name: str, index: int, answer: dict[str, Any], local_version: str) -> ReadyHost | HostFailure:
    odd = _unreadable(answer)
    if odd is not None:
        return HostFailure(name, f"answered the checks with {odd}, which stackbench's agent never sends",
                           "Run the same stackbench version here and there; check nothing there rewrites ssh output")
    if not answer.get("fio_path"):
        return HostFailure(name, "fio is not installed there (not on the PATH of an ssh command)",
                           f"Install fio there, the same version as here ({local_version})")
    version = answer.get("fio_version")
    if not version:
        return HostFailure(name, f"{answer['fio_path']} --version did not answer like fio",
                           f"Install fio there, the same version as here ({local_version})")
    if version != local_version:
        return HostFailure(name, f"runs {version} but this machine runs {local_version}, and fio's client/server "
                           "protocol refuses different versions",
                           f"Install {local_version} there, or run stackbench from a machine with {version}")
    if "target_error" in answer:
        return HostFailure(name, f"the target is refused: {answer['target_error']['what']}",
                           answer["target_error"]["fix"])
    target = answer["target"]
    return ReadyHost(name, index, target["file"], bool(target["remove_after"]), answer)


@dataclass
class Sessions:
    """Every host's session, opened and asked; the answers are judged by `judge` (the handshakes run
    meanwhile, so the caller can do its own start-up work in that time)."""

    scratch_id: str
    hosts: list[str]
    servers: list[HostServer]

    def close(self) -> None:
        stop_servers(self.servers)


def open_sessions(ssh: Ssh, hosts: list[str], *, target: str, size: int, scratch_id: str) -> Sessions:
    """Start a session to every host at once (nothing runs there but the checks until `go`)."""
    servers: list[HostServer] = []
    try:
        for index, name in enumerate(hosts):
            args = {"target": target, "size": size, "scratch_id": f"{scratch_id}-h{index}"}
            servers.append(open_session(ssh, name, index, scratch_id[:12], args))
    except BaseException:
        stop_servers(servers)
        raise
    return Sessions(scratch_id, hosts, servers)


def _note_timing(server: HostServer, answer: dict[str, Any]) -> None:
    """The host's side of its check, for fleet/timing.py: its agent's own steps, and the rest of the time
    from starting its ssh to its answer (the connection, the login, the remote shell)."""
    remote = {k: v for k, v in (answer.get("timing") or {}).items() if isinstance(v, (int, float))}
    if server.opened_s is None or answer.get("received_s") is None:
        return
    answered = answer["received_s"] - server.opened_s
    timing.host(server.name, answered_s=answered, ssh_s=answered - sum(remote.values()), **remote)


def judge(sessions: Sessions, local_version: str) -> list[HostServer]:
    """Every host's answer judged; the sessions (all passed), ready for `servers.start_servers`, or
    FleetHostsFailed naming each failure with every session closed."""
    failures = []
    try:
        deadline = time.monotonic() + PREFLIGHT_TIMEOUT_S
        for server in sessions.servers:
            answer = server.wait_for("python", deadline, "the check")
            if not isinstance(answer, HostFailure):
                _note_timing(server, answer)
            judged = answer if isinstance(answer, HostFailure) else _judge(server.name, server.index, answer,
                                                                           local_version)
            if isinstance(judged, HostFailure):
                failures.append(judged)
            else:
                server.host = judged
    except BaseException:
        sessions.close()
        raise
    if failures:
        sessions.close()
        raise hosts_failed(failures, f"{len(failures)} of {count(len(sessions.hosts), 'host')} failed the checks")
    return sessions.servers


def preflight(
    ssh: Ssh, hosts: list[str], *, target: str, size: int, scratch_id: str, local_version: str
) -> list[HostServer]:
    """`open_sessions` then `judge`: the checked sessions, or FleetHostsFailed with every session closed."""
    return judge(open_sessions(ssh, hosts, target=target, size=size, scratch_id=scratch_id), local_version)
