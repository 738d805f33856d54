"""The host list of a fleet run: `--hosts a,b` and `--hosts-file F`, each name checked before ssh sees it.

A name goes to ssh as its destination argument, so it must be a destination and nothing else: `[user@]host`
where host is a name or an IP address. Anything ssh could read as an option (`-oProxyCommand=...`) or a
shell could expand is refused with the fix, never passed on.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from stackbench.base.credentials import scrub_text
from stackbench.base.errors import UsageError
from stackbench.base.inputs import HOSTS_FILE, InputError, read_input

_USER = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,31}"
_NAME = r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,252})"
_DESTINATION = re.compile(rf"(?:(?P<user>{_USER})@)?(?P<host>{_NAME}|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+)")
_FIX = "Give host names or addresses as ssh accepts them ([user@]host, one per line in --hosts-file); " \
       "put ports, keys and options in your ~/.ssh/config under a Host alias"
MAX_HOSTS = 256


def check_host(text: str, *, where: str = "--hosts") -> str:
    """`text` if it is an ssh destination ([user@]name or address), else a UsageError naming it."""
    shown = scrub_text(text)  # `user:password@host` is refused, and its password not printed back
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    match = _DESTINATION.fullmatch(text)
    if not text or text.startswith("-") or match is None:
        raise UsageError(f"{where}: {shown!r} is not a host name", _FIX)
    host = match["host"]
    if ":" in host:  # only an IPv6 address may contain a colon
        try:
            ipaddress.IPv6Address(host.strip("[]"))
        except ValueError:
            raise UsageError(f"{where}: {shown!r} is not a host name (a port goes in ~/.ssh/config)", _FIX) from None
    if ".." in host or host.endswith("."):
        raise UsageError(f"{where}: {shown!r} is not a host name", _FIX)
    return text


def parse_hosts(hosts: str | None, hosts_file: Path | None) -> list[str]:
    """The hosts from both options, in order, checked, each once; a UsageError for anything else."""
    names: list[tuple[str, str]] = []
    if hosts is not None:
        for part in hosts.split(","):
            names.append((part.strip(), "--hosts"))
    if hosts_file is not None:
        try:
            text = read_input(Path(hosts_file), HOSTS_FILE).decode()
        except InputError as error:
            raise UsageError(f"cannot read --hosts-file: {error.what}", error.fix) from None
        except UnicodeDecodeError:
            raise UsageError(f"cannot read --hosts-file {hosts_file}: not text",
                             "Pass a readable text file with one host per line") from None
        for number, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if line:
                names.append((line, f"--hosts-file {hosts_file} line {number}"))
    if not names:
        raise UsageError("no hosts given", "Pass --hosts h1,h2 or --hosts-file FILE")
    seen: dict[str, str] = {}
    for name, where in names:
        check_host(name, where=where)
        if name.lower() in seen:
            raise UsageError(f"{where}: host {name!r} is listed twice", "List every host once")
        seen[name.lower()] = name
    if len(seen) > MAX_HOSTS:
        raise UsageError(f"{len(seen)} hosts given; at most {MAX_HOSTS} are supported", "Split the fleet")
    return [name for name, _ in names]
