"""Real hosts for the fleet tests: network namespaces, each with its own address and its own OpenSSH sshd.

Each host is a network namespace (`ip netns`) joined to the root namespace by its own veth pair
(10.<n>.<i>.1 on our side, 10.<n>.<i>.2 inside), with loopback up, running Debian's /usr/sbin/sshd with a
per-host config, its own ed25519 host key in a temporary directory, key-only login for root with a fresh
ed25519 client key, and an ssh config file that the tests pass with -F (through STACKBENCH_SSH_CONFIG), so
the user's real ~/.ssh is never read or written. Known host keys are written up front (StrictHostKeyChecking
yes), exactly as a careful user's config would have them.

What a namespace does not separate, and how the rig makes it separate anyway:
- The file system is shared. Each sshd runs in its own mount namespace where the host's own scratch
  directory is bind-mounted over one common path (`HostRig.target`), so `--target <that path>` lands in a
  different directory on every host, as it would on separate machines.
- node1's sshd also sets TMPDIR (SetEnv) to a directory of its own, so fio's socket directory goes there.
- fio and python3 are the same binaries everywhere. Each sshd sets PATH (sshd_config SetEnv) to the host's
  own bin directory holding links to python3 and fio; a test may remove a host's fio link ("fio is not
  installed there") or replace it with a wrapper script that reports another version. Those two are the
  only fakes, and the tests that use them say so.

Everything is removed on exit, failure included: sshd and any process left in a namespace (only processes
this rig's sessions started run there), the namespaces (which deletes their veth pairs) and the files.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

SSHD = "/usr/sbin/sshd"


@dataclass
class HostRig:
    name: str  # the ssh alias in the rig's config file
    namespace: str
    address: str
    scratch: Path  # what the host sees at `target`
    bin_dir: Path  # the host's PATH
    target: Path
    link: str = ""  # our end of its veth pair: down = the host is cut off the network
    tmpdir: Path | None = None  # the TMPDIR its sshd sets (node1 only; the others have none: /tmp)
    sshd: subprocess.Popen | None = None

    def network(self, up: bool) -> None:
        _run("ip", "link", "set", self.link, "up" if up else "down")

    def namespace_pids(self) -> list[int]:
        done = subprocess.run(["ip", "netns", "pids", self.namespace], capture_output=True, text=True)
        return [int(p) for p in done.stdout.split()]

    def processes(self, command: str) -> list[int]:
        """Pids of processes named `command` running in this host's namespace."""
        found = []
        for pid in self.namespace_pids():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == command:
                    found.append(pid)
            except OSError:
                pass
        return found

    def listening(self) -> list[str]:
        """`ss -ltnp` inside the namespace: every listening TCP socket with its process."""
        done = subprocess.run(["ip", "netns", "exec", self.namespace, "ss", "-Hltnp"], capture_output=True, text=True,
                              check=True)
        return [line for line in done.stdout.splitlines() if line.strip()]

    def use_fio(self, path: str | None) -> None:
        """Point the host's `fio` at `path` (a wrapper), or remove it (None): the rig's only fake."""
        link = self.bin_dir / "fio"
        if link.is_symlink() or link.exists():
            link.unlink()
        if path is not None:
            link.symlink_to(path)


@dataclass
class FleetRig:
    base: Path
    ssh_config: Path
    hosts: list[HostRig] = field(default_factory=list)  # node1..nodeN, as any good host
    extra: list[HostRig] = field(default_factory=list)  # noforward: an sshd that refuses port forwarding

    @property
    def every_host(self) -> list[HostRig]:
        return [*self.hosts, *self.extra]

    @property
    def names(self) -> list[str]:
        return [h.name for h in self.hosts]

    def env(self) -> dict[str, str]:
        return {"STACKBENCH_SSH_CONFIG": str(self.ssh_config)}

    def host(self, name: str) -> HostRig:
        return next(h for h in self.every_host if h.name == name)

    def reset(self) -> None:
        """Every host back to its real fio, with an empty scratch directory and no fio running (a test that
        left one has failed already; the next one starts clean)."""
        for host in self.every_host:
            for pid in host.processes("fio"):
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            host.use_fio(shutil.which("fio"))
            for child in host.scratch.iterdir():
                child.unlink()


def _run(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, text=True)


def _wait_for_port(address: str, port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd on {address}:{port} did not come up") from None
            time.sleep(0.05)


def _public_key(path: Path) -> str:
    return Path(f"{path}.pub").read_text().split()[1]


@contextmanager
def fleet_rig(base: Path, count: int = 3) -> Iterator[FleetRig]:
    """`count` hosts named node1..nodeN, one more named noforward whose sshd refuses port forwarding, and
    aliases for the failure cases (see the ssh config below)."""
    tag = f"sbf{os.getpid()}"
    net = f"10.{100 + os.getpid() % 100}"
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o700)
    target = base / "target"  # empty in the root namespace; each host sees its scratch directory here
    target.mkdir()
    client_key = base / "client_key"
    other_key = base / "unauthorised_key"
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "stackbench-fleet-test", "-f", str(client_key))
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "not-authorised", "-f", str(other_key))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    rig = FleetRig(base, base / "ssh_config")
    namespaces: list[str] = []
    routes: list[str] = []
    try:
        known = []
        for index in range(1, count + 2):  # the last one is "noforward": its sshd refuses forwarding
            restricted = index == count + 1
            ns, outside, inside = f"{tag}n{index}", f"{tag}h{index}", f"{tag}g{index}"
            address = f"{net}.{index}.2"
            home = base / f"node{index}"
            bin_dir, scratch = home / "bin", home / "scratch"
            bin_dir.mkdir(parents=True)
            (home / "home").mkdir()
            scratch.mkdir()
            (bin_dir / "python3").symlink_to(shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3")
            _run("ip", "netns", "add", ns)
            namespaces.append(ns)
            _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            _run("ip", "link", "set", inside, "netns", ns)
            _run("ip", "addr", "add", f"{net}.{index}.1/30", "dev", outside)
            _run("ip", "link", "set", outside, "up")
            _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{address}/30", "dev", inside)
            _run("ip", "netns", "exec", ns, "ip", "link", "set", inside, "up")
            _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            host_key = home / "host_key"
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key))
            (home / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
            config = home / "sshd_config"
            config.write_text("\n".join([
                f"ListenAddress {address}:22",
                f"HostKey {host_key}",
                f"PidFile {home / 'sshd.pid'}",
                f"AuthorizedKeysFile {home / 'authorized_keys'}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password",
                "StrictModes no",  # the keys live under /tmp, which is world-writable
                "UsePAM no",
                "AllowTcpForwarding yes",
                f"AllowStreamLocalForwarding {'no' if restricted else 'yes'}",
                # the user's real ~/.bashrc (which bash reads for ssh commands) must not re-add /usr/bin;
                # node1 has its own TMPDIR (a per-user temporary directory, as pam_tmpdir makes one)
                f"SetEnv PATH={bin_dir} HOME={home / 'home'}" + (f" TMPDIR={home / 'tmp'}" if index == 1 else ""),
                "LogLevel ERROR",
                "",
            ]))
            host = HostRig("noforward" if restricted else f"node{index}", ns, address, scratch, bin_dir, target,
                           outside)
            host.use_fio(shutil.which("fio"))
            if index == 1:
                host.tmpdir = home / "tmp"
                host.tmpdir.mkdir(mode=0o700)
            with open(home / "sshd.log", "wb") as log:
                host.sshd = subprocess.Popen(
                    ["ip", "netns", "exec", ns, "unshare", "--mount", "--propagation", "private", "sh", "-c",
                     'mount --bind "$1" "$2" && exec "$3" -D -e -f "$4"', "sh", str(scratch), str(target), SSHD,
                     str(config)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                )
            (rig.extra if restricted else rig.hosts).append(host)
            known.append(f"{host.name},{address} ssh-ed25519 {_public_key(host_key)}")
        # packets to {net}.250.2 go into node1's namespace, which does not forward them: silently dropped,
        # so a connection there times out, like a host that is down behind a firewall
        _run("ip", "route", "add", f"{net}.250.0/24", "via", rig.hosts[0].address)
        routes.append(f"{net}.250.0/24")
        for host in rig.every_host:
            _wait_for_port(host.address, 22)
        (base / "known_hosts").write_text("\n".join(known) + "\n")
        common = [
            "  User root",
            f"  IdentityFile {client_key}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {base / 'known_hosts'}",
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  LogLevel ERROR",
        ]
        entries = []
        for host in rig.every_host:
            entries += [f"Host {host.name}", f"  HostName {host.address}", *common]
        first = rig.hosts[0]
        entries += [
            # sshd is there but does not know this key: the login fails
            "Host badkey", f"  HostName {first.address}", f"  HostKeyAlias {first.name}", "  User root",
            f"  IdentityFile {other_key}", "  IdentitiesOnly yes", f"  UserKnownHostsFile {base / 'known_hosts'}",
            "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking yes", "  LogLevel ERROR",
            # an address where nothing listens: the connection is refused
            "Host refused", "  HostName 127.0.0.1", "  Port 9", *common,
            # an address whose packets are dropped: the connection times out
            "Host blackhole", f"  HostName {net}.250.2", *common,
        ]
        rig.ssh_config.write_text("\n".join(entries) + "\n")
        yield rig
    finally:
        for host in rig.every_host:
            if host.sshd is not None and host.sshd.poll() is None:
                host.sshd.terminate()
                try:
                    host.sshd.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    host.sshd.kill()
                    host.sshd.wait()
        for host in rig.every_host:  # anything our sessions left in a namespace (a fio server, the agent)
            for pid in host.namespace_pids():
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
        for route in routes:
            subprocess.run(["ip", "route", "del", route], capture_output=True)
        for ns in namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
