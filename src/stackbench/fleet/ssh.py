"""Every ssh command of a fleet run: OpenSSH only, the user's own config and keys, never a password prompt.

Commands are argument lists started through spawn.py. The destination comes after `--`, so even a name
that slipped past hosts.check_host could not become an option. BatchMode=yes makes a missing key a failure
instead of a prompt; ConnectTimeout bounds a dead host. `STACKBENCH_SSH_CONFIG` (or --ssh-config) is
passed as `-F`: the tests use it so that the user's real ~/.ssh is never read or written.

The remote side runs `python3 -c BOOTSTRAP` with the agent and its arguments on stdin (fleet/agent.py), so
no user text is ever on the remote command line, which the remote shell would parse.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackbench.base import spawn
from stackbench.fleet.agent import BOOTSTRAP, MARK, OLD_PYTHON

SSH_CONFIG_ENV = "STACKBENCH_SSH_CONFIG"
# The stackbench modules the agent reuses (all standard library underneath), shipped with it.
SHIPPED = (
    "stackbench", "stackbench.base", "stackbench.base.errors", "stackbench.base.units", "stackbench.base.usertext",
    "stackbench.base.spawn", "stackbench.base.processes", "stackbench.model", "stackbench.model.warning",
    "stackbench.engine", "stackbench.engine.jobtext", "stackbench.probe", "stackbench.probe.block",
    "stackbench.probe.loop", "stackbench.probe.system", "stackbench.probe.direct_io", "stackbench.measure",
    "stackbench.measure.safety", "stackbench.fleet", "stackbench.fleet.timing",
)
PACKAGES = ("stackbench", "stackbench.base", "stackbench.model", "stackbench.engine", "stackbench.probe",
            "stackbench.measure", "stackbench.fleet")


@dataclass(frozen=True)
class HostFailure:
    """Why one host cannot take part, and what its owner should do."""

    host: str
    what: str
    fix: str

    def line(self) -> str:
        return f"{self.host}: {self.what}; {self.fix}"


class AgentFailed(Exception):
    def __init__(self, failure: HostFailure) -> None:
        super().__init__(failure.line())
        self.failure = failure


def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"cannot find the source of {module}")
    return Path(spec.origin).read_text()


def payload(command: str, args: dict[str, Any]) -> bytes:
    """The bytes the bootstrap reads: a length line, then the agent, the shipped modules and the command."""
    body = json.dumps({
        "agent": _source("stackbench.fleet.agent"),
        "sources": {name: _source(name) for name in SHIPPED},
        "packages": list(PACKAGES),
        "command": command,
        "args": args,
    }).encode()
    return f"{len(body)}\n".encode() + body


@dataclass(frozen=True)
class Ssh:
    """How to reach the hosts: ssh's binary, an optional -F config file, the connect timeout in seconds."""

    config: str | None = None
    connect_timeout: int = 10
    binary: str = "ssh"
    # The most one `call`'s answer may bring (stdout or stderr): its answers are a few lines (a run's own
    # traffic goes through the session's line reader, servers.py, bounded per line); a bound on what a
    # broken or hostile host can make us hold.
    max_answer_bytes: int = 16 * 2**20

    @classmethod
    def from_environment(cls, config: str | None = None, connect_timeout: int = 10) -> "Ssh":
        return cls(config or os.environ.get(SSH_CONFIG_ENV) or None, connect_timeout)

    def options(self) -> list[str]:
        argv = [self.binary]
        if self.config:
            argv += ["-F", self.config]
        return argv + [
            "-o", "BatchMode=yes", "-o", f"ConnectTimeout={self.connect_timeout}",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-T",
            "-o", "LogLevel=INFO",  # ssh's default; its messages are read to explain a failure, never shown raw
        ]

    def agent_command(self, host: str, control: str | None = None) -> list[str]:
        """ssh running the agent on `host`; with `control` (a socket path in a private directory of ours),
        the connection is also a ControlMaster there, so `forward_command` can add the tunnel to fio's socket
        once the agent has said where that socket will be (in the host's $TMPDIR, known only then)."""
        argv = self.options()
        if control is not None:
            argv += ["-o", "ControlMaster=yes", "-o", f"ControlPath={control}", "-o", "ControlPersist=no"]
        return argv + ["--", host, "python3 -c " + shlex.quote(BOOTSTRAP)]

    def forward_command(self, host: str, control: str, port: int, socket_path: str) -> list[str]:
        """Ask the running connection (its ControlMaster at `control`) to forward 127.0.0.1:`port` on our side
        to the Unix socket `socket_path` on the host (OpenSSH's `ssh -O forward`, no new connection)."""
        argv = [self.binary, *(["-F", self.config] if self.config else []), "-o", f"ControlPath={control}",
                "-o", "BatchMode=yes", "-O", "forward", "-L", f"127.0.0.1:{port}:{socket_path}"]
        return argv + ["--", host]

    def call(self, host: str, command: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Run one agent command on `host` and return its answer; AgentFailed with the fix otherwise."""
        try:
            done = spawn.run(self.agent_command(host), input=payload(command, args), capture_output=True,
                             timeout=timeout, max_output=self.max_answer_bytes)
        except spawn.OutputTooLarge as too_large:
            raise AgentFailed(HostFailure(host, f"answered more than {too_large.limit // 2**20} MiB, which no "
                                          "stackbench agent sends",
                                          "Check what the host runs for `python3` and its login scripts' output")) from None
        except subprocess.TimeoutExpired:
            raise AgentFailed(HostFailure(host, f"did not answer within {timeout:g} s",
                                          "Check that the host is up and reachable over ssh")) from None
        except OSError as error:
            raise AgentFailed(HostFailure(host, f"cannot run {self.binary}: {error.strerror}",
                                          "Install the OpenSSH client (apt-get install openssh-client)")) from None
        answer = answer_in(done.stdout.decode(errors="replace"))
        if answer is None:
            raise AgentFailed(explain(host, done.returncode, done.stderr.decode(errors="replace")))
        return answer


def answer_in(text: str) -> dict[str, Any] | None:
    """The agent's first answer line in its output (anything a login script printed is skipped); None
    when there is none, or it is not strict JSON whose numbers fit 64 bits (no NaN, no 1e999: the agent
    never sends them, and a host's answer is data from elsewhere like any file)."""
    for line in text.splitlines():
        if line.startswith(MARK):
            try:
                value = json.loads(line[len(MARK):], parse_constant=_refuse, parse_float=_finite, parse_int=_bounded)
            except (ValueError, RecursionError):
                return None
            return value if isinstance(value, dict) else None
    return None


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:30]} is not a finite number")
    return value


def _bounded(text: str) -> int:
    if len(text.lstrip("-")) > 20 or abs(int(text)) > 2**64:
        raise ValueError(f"{text[:30]} does not fit 64 bits")
    return int(text)


def explain(host: str, exit_code: int | None, stderr: str) -> HostFailure:
    """One line for a failed ssh: what happened on `host` and the fix, from ssh's own words."""
    text = " ".join(stderr.split())
    lowered = text.lower()
    cases = (
        ("could not resolve hostname", "the name is unknown (ssh could not resolve it)",
         "Check the spelling, or add a Host entry with HostName to ~/.ssh/config"),
        ("connection refused", "the connection was refused (no sshd on that address and port)",
         "Start sshd there, or set the right Port in ~/.ssh/config"),
        ("timed out", "the connection timed out", "Check that the host is up and that no firewall drops ssh"),
        ("no route to host", "there is no route to the host", "Check that the host is up and its address"),
        ("network is unreachable", "the network is unreachable", "Check the address and this machine's network"),
        ("host key verification failed", "its host key is not known or has changed",
         f"Connect once with `ssh {host}` and check the key it shows"),
        ("administratively prohibited", "its ssh server refuses the port forward to fio's socket",
         "Allow it in that host's sshd_config (AllowStreamLocalForwarding yes, and not DisableForwarding)"),
        ("open failed", "its ssh server could not open the forward to fio's socket (forwarding to a Unix socket "
         "is refused there, or fio's server is gone)",
         "Allow it in that host's sshd_config (AllowStreamLocalForwarding yes), and check that fio --server runs"),
        ("address already in use", "the local port for its forward was taken at the same moment",
         "Run again (the port is chosen afresh)"),
        ("permission denied", "the login failed (stackbench uses your ssh keys and never asks for a password)",
         f"Install your public key there (ssh-copy-id {host}) or name the key in ~/.ssh/config"),
    )
    for needle, what, fix in cases:
        if needle in lowered:
            return HostFailure(host, what, fix)
    if OLD_PYTHON in text:
        return HostFailure(host, "its python3 is older than 3.8", "Install python3 3.8 or later on that host")
    if exit_code == 127 or "python3: command not found" in lowered or "python3: not found" in lowered:
        return HostFailure(host, "python3 is not installed there (the probe runs on the host's own python3)",
                           "Install python3 on that host (apt-get install python3)")
    last = text[-200:] if text else "no message"
    return HostFailure(host, f"ssh failed (exit {exit_code}): {last}",
                       f"Check that `ssh {host} python3 --version` works without a prompt")
