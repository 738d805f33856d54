"""Redaction: identifiers in runs become stable placeholders before a report is made, because a report is
made to be shared (docs/reports.md, "Redaction").

What counts as an identifier, and where it is found:

- host names: the facts `system.hostname` and `process.host`, a cell's fio client/server `host`, and any
  `hostname`/`host`/`nodename` value in the facts; a dotted name also hides its first label (`db1` of
  `db1.example.com`). Placeholder `host-1`, `host-2`, ...
- disk serial numbers: `serial`, `serial_number` and diskinfo's `ident` in the facts, and
  `/dev/disk/by-id/` names that do not already hold a known serial. Placeholder `disk-A`, `disk-B`, ...
- WWNs (`0x5000c500...`, `wwn-0x...`, `naa.`, `eui.`) and `wwn`/`wwid` values: `wwn-1`, ...
- MAC addresses (`00:1a:2b:3c:4d:5e`, dashes too): `mac-1`, ...
- user names in paths: `/home/NAME`, `/Users/NAME`, `/var/home/NAME`, `C:\\Users\\NAME`, and the two sides of
  `user@host` (an `ssh` in an ab command, an e-mail address): `user-1`, ... and `host-1`, ...
- UUIDs (the boot id, file system and partition UUIDs): `id-1`, ...
- IPv4 and IPv6 addresses (with a zone, `fe80::1%eth0`, or in brackets): `ip-1`, ...
- the server of a network file system's source, `nfs1.lan:/export/vm` (a mount's source, an fstab line):
  `host-1`, ... (an address there: `ip-1`, ...)

Every value learned anywhere is then replaced wherever it appears as a word in any string of the report:
labels, targets, facts, warnings, goal texts, layer names, fio command lines and job files. A word is
delimited by anything but a letter or digit, so the host `vm` is replaced in `vm-bench` but not in `kvm`;
case is ignored. The same value gets the same placeholder within one report, and placeholders are numbered
in a fixed order (the runs as given, then each run's facts, then the rest), so the same report is made the
same way twice. Dictionary keys are structure, not data, and stay; numbers stay; run ids stay (random, and
what `stackbench show` needs).

Redaction works on copies of the domain objects (`Run`, `Cell`, facts, goals) before any analysis, table
or chart sees them, so every format and every chart gets only placeholders. Limits: a host name that is a
common word is replaced wherever that word appears; an identifier that appears only in free text and
matches none of the patterns above (a name typed into a label, say) cannot be recognised.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable

from stackbench.model.results import TOTAL_HOST, Cell, Run

_HOST_KEYS = frozenset({"hostname", "host", "nodename", "fqdn"})
_SERIAL_KEYS = frozenset({"serial", "serial_number", "ident"})
_WWN_KEYS = frozenset({"wwn", "wwid"})
_WORD = r"(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"

# Patterns found in any string; group 1 (or the whole match) is the identifier.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("user", re.compile(r"(?:/home|/Users|/var/home|/export/home)/([^/\\\s'\"`:;,=]+)")),
    ("user", re.compile(r"[A-Za-z]:[\\/]+Users[\\/]+([^\\/\s'\"`:;,=]+)", re.IGNORECASE)),
    ("disk", re.compile(r"/dev/disk/by-id/([^/\s'\"`:;,=]+)")),
    # user@host, as in `ssh alice@pve1 zfs set ...` (an ab command) or an e-mail address
    ("user@host", re.compile(r"(?<![\w.+-])([A-Za-z_][\w.+-]{0,31})@([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)")),
    ("wwn", re.compile(_WORD.format(r"(?:wwn-)?0x[0-9a-f]{16}(?:[0-9a-f]{16})?"), re.IGNORECASE)),
    ("wwn", re.compile(_WORD.format(r"(?:naa|eui)\.[0-9a-f]{16,32}"), re.IGNORECASE)),
    ("mac", re.compile(_WORD.format(r"[0-9a-f]{2}(?:([:-])[0-9a-f]{2})(?:\1[0-9a-f]{2}){4}"), re.IGNORECASE)),
    ("id", re.compile(_WORD.format(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), re.IGNORECASE)),
    ("ip", re.compile(_WORD.format(r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)"))),
    # IPv6, with a zone (fe80::1%eth0) or an embedded IPv4: candidates of hex groups and colons, checked by
    # the ipaddress module (`_ipv6`), so that MAC addresses and times are not taken for addresses
    ("ipv6", re.compile(r"(?<![\w:.%])(?:[0-9a-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{1,4})?(?:%[\w.-]+)?"
                        r"(?![\w:]|\.\d)", re.IGNORECASE)),
    # the server of a network file system's source, `server:/export` (NFS; also [IPv6]:/export)
    ("server", re.compile(r"(?<![\w./\\-])([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.%\w-]+\]):(?=/(?!/))")),
)
_KINDS = ("host", "disk", "wwn", "mac", "user", "id", "ip")


def _letters(n: int) -> str:
    """A, B, ..., Z, AA, AB, ...: disks are lettered like drive bays."""
    text = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        text = chr(ord("A") + rest) + text
    return text


class Redactor:
    """Learns identifiers, then replaces them in any string or JSON value with their placeholders.

    `learn_run` (and `learn_text` for strings outside runs) first, for every run of the report in the order
    given; then `run`, `text` and `value` make redacted copies. A value first met while replacing is learned
    then, so nothing matching a pattern passes through unreplaced.
    """

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}  # lower-case value -> placeholder
        self._counts: dict[str, int] = {kind: 0 for kind in _KINDS}
        self._literal: re.Pattern[str] | None = None

    # -- learning -------------------------------------------------------------------------------

    def learn(self, kind: str, value: Any) -> None:
        """Register one identifier of `kind` (host, disk, wwn, mac, user, id, ip)."""
        if not isinstance(value, str):
            return
        value = value.strip()
        if len(value) < 2 or value.lower() in self._placeholders or value.lower() in _NOT_IDENTIFIERS:
            return
        number = self._counts[kind]
        self._counts[kind] = number + 1
        self._placeholders[value.lower()] = f"disk-{_letters(number)}" if kind == "disk" else f"{kind}-{number + 1}"
        self._literal = None
        if kind == "host" and "." in value and not _IPV4.fullmatch(value):
            self.learn("host", value.split(".", 1)[0])

    def learn_run(self, run: Run, texts: Iterable[str] = ()) -> None:
        """Learn from a run's facts (known fields first, in a fixed order), its cells, and then patterns in
        every string of the run and in `texts` (its fio command lines and job files)."""
        facts = run.facts or {}
        system, process = facts.get("system") or {}, facts.get("process") or {}
        self.learn("host", system.get("hostname"))
        self.learn("host", process.get("host"))
        for cell in run.cells:
            if cell.result.host != TOTAL_HOST:  # the fleet's total is a name of stackbench's, not a machine
                self.learn("host", cell.result.host)
        self._learn_keys(facts)
        for text in [*_strings(run), *texts]:
            self.learn_text(text)

    def learn_text(self, text: str) -> None:
        """Learn every identifier a pattern finds in `text`, numbered in the order they appear."""
        matches = []
        for kind, pattern in _PATTERNS:
            for match in pattern.finditer(text):
                if kind == "user@host":
                    matches += [(match.start(1), "user", match.group(1)), (match.start(2), "host", match.group(2))]
                elif kind == "ipv6":
                    if _ipv6(match.group(0)):
                        matches.append((match.start(), "ip", match.group(0)))
                elif kind == "server":
                    name = match.group(1).strip("[]")
                    if _IPV4.fullmatch(name) or _ipv6(name):
                        matches.append((match.start(1), "ip", name))
                    else:
                        matches.append((match.start(1), "host", name))
                else:
                    group = 1 if kind in ("user", "disk") else 0
                    matches.append((match.start(group), kind, match.group(group)))
        for _, kind, found in sorted(matches, key=lambda m: m[0]):
            if kind == "disk" and any(v in found.lower() for v, p in self._placeholders.items() if p.startswith("disk-")):
                continue  # a by-id name holding a known serial: the serial alone is replaced, the model stays
            self.learn(kind, found)

    def _learn_keys(self, value: Any) -> None:
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                item = value[key]
                name = str(key).lower()
                if name in _HOST_KEYS:
                    self.learn("host", item)
                elif name in _SERIAL_KEYS:
                    self.learn("disk", item)
                elif name in _WWN_KEYS:
                    self.learn("wwn", item)
                self._learn_keys(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self._learn_keys(item)

    # -- replacing ------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """`text` with every known identifier, and anything a pattern recognises, replaced."""
        if not isinstance(text, str) or not text:
            return text
        self.learn_text(text)
        if not self._placeholders:
            return text
        if self._literal is None:
            alternatives = sorted(self._placeholders, key=lambda v: (-len(v), v))
            self._literal = re.compile(_WORD.format("(?:" + "|".join(map(re.escape, alternatives)) + ")"), re.IGNORECASE)
        return self._literal.sub(lambda m: self._placeholders[m.group(0).lower()], text)

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string redacted; keys and numbers stay."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.value(item) for item in value)
        return value

    def run(self, run: Run) -> Run:
        """A redacted copy of `run`: label, target, facts, warnings and cells."""
        return replace(
            run,
            label=self.text(run.label) if run.label is not None else None,
            target=self.text(run.target) if run.target is not None else None,
            facts=self.value(run.facts),
            warnings=tuple(
                replace(w, subject=self.text(w.subject), text=self.text(w.text), fix=self.text(w.fix))
                for w in run.warnings
            ),
            cells=tuple(self.cell(cell) for cell in run.cells),
        )

    def cell(self, cell: Cell) -> Cell:
        result = cell.result
        return replace(
            cell,
            result=replace(
                result,
                job_name=self.text(result.job_name),
                host=self.text(result.host) if result.host is not None else None,
                options={key: self.text(str(item)) for key, item in result.options.items()},
            ),
            measurement=self.value(cell.measurement),
        )

    def summary(self) -> dict[str, int]:
        """How many identifiers of each kind were replaced: what a report says (never the values)."""
        return {kind: count for kind, count in self._counts.items() if count}


class KeepIdentifiers(Redactor):
    """`--keep-identifiers`: the same interface, nothing replaced."""

    def learn(self, kind: str, value: Any) -> None:
        return None

    def text(self, text: str) -> str:
        return text


def redactor(keep_identifiers: bool = False) -> Redactor:
    return KeepIdentifiers() if keep_identifiers else Redactor()


def describe(summary: dict[str, int]) -> str:
    """`2 host names, 1 disk serial number and 1 user name replaced by placeholders`."""
    if not summary:
        return "no identifiers found to replace"
    parts = [f"{count} {_NAMES[kind][count != 1]}" for kind, count in summary.items()]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{listed} replaced by placeholders"


_NAMES = {
    "host": ("host name", "host names"),
    "disk": ("disk serial number", "disk serial numbers"),
    "wwn": ("WWN", "WWNs"),
    "mac": ("MAC address", "MAC addresses"),
    "user": ("user name", "user names"),
    "id": ("UUID", "UUIDs"),
    "ip": ("IP address", "IP addresses"),
}
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")


def _ipv6(text: str) -> bool:
    """Whether `text` is an IPv6 address (a zone after % allowed)."""
    import ipaddress

    try:
        ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True
# Values that sit in identifier fields but identify nothing: replacing them would only garble the text.
_NOT_IDENTIFIERS = frozenset({"localhost", "none", "null", "unknown", "n/a", "default", "shared", "public", "root"})


def strings_of(value: Any) -> list[str]:
    """Every string in a JSON-like value, in a fixed order (dicts by sorted key), for learning patterns."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key in sorted(value, key=str) for text in strings_of(value[key])]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in strings_of(item)]
    return []


def _strings(run: Run) -> list[str]:
    """Every string of a run, in a fixed order (facts by sorted key), for learning patterns."""
    found = strings_of([run.label or "", run.target or ""]) + strings_of(run.facts)
    for warning in run.warnings:
        found += strings_of([warning.subject, warning.text, warning.fix])
    for cell in run.cells:
        found += strings_of([cell.result.job_name, cell.result.host or "", dict(cell.result.options),
                             cell.measurement or {}])
    return found
