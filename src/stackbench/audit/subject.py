"""Which machine (and which VMs) an audit is about, so that a stored audit can be compared with the last one
of the same subject (docs/audit.md, "Stored audits").

The subject key is built from what identifies a machine and a VM, never from the path the facts were read
from (one capture directory is reused for many machines, and one machine is captured into many
directories):

- the machine: `machine:` and the first 16 hex digits of `machine-id-hash.txt` (the probe's SHA-256 of
  /etc/machine-id with a fixed prefix; the id itself is never saved), else `host:` and a SHA-256 of the host
  name the probe recorded in probe.json (host names repeat across machines, "pve" most of all, so it is the
  weaker fallback). Placeholder names (`(none)`, `localhost`) identify nothing.
- each VM config given with --vm-config (the configs inside a capture belong to its machine): Proxmox
  `pve:VMID:UUID` from the file name and its `smbios1: uuid=`, libvirt `libvirt:UUID` from the domain's
  <uuid> (its name when there is none).

Without a machine and without --vm-config configs there is no subject: the audit is stored, and not
compared with anything.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackbench.audit.facts import FACT_FILES, Facts
from stackbench.audit.vm import Vm
from stackbench.base.inputs import FACTS_FILE, read_optional_text

MACHINE_ID_FILE = "machine-id-hash.txt"
PLACEHOLDER_HOSTS = frozenset({"", "(none)", "localhost", "localhost.localdomain"})


@dataclass(frozen=True)
class AuditSubject:
    key: str | None  # None: the facts do not say which machine; such an audit is compared with nothing
    name: str  # how it is shown: the host name, or "unknown machine", with the --vm-config VMs
    source: str  # host | guest | capture, then +config when --vm-config configs were given
    detail: str  # where the facts came from, in words (the capture directory, the config files)
    facts: dict[str, Any] = field(default_factory=dict)  # the summary stored with the audit


def machine_key(directory: Path) -> tuple[str | None, str | None]:
    """(key, host name) of the machine a facts directory was captured on; None for what it does not say."""
    host = None
    try:
        manifest = json.loads(read_optional_text(directory / "probe.json", FACTS_FILE) or "null")
        name = manifest.get("host") if isinstance(manifest, dict) else None
        host = name.strip() if isinstance(name, str) and name.strip() not in PLACEHOLDER_HOSTS else None
    except (ValueError, RecursionError):
        pass
    try:
        digest = (read_optional_text(directory / MACHINE_ID_FILE, FACTS_FILE) or "").split()[0].lower()
    except IndexError:
        digest = ""
    if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest):
        return f"machine:{digest[:16]}", host
    if host:
        return f"host:{hashlib.sha256(host.encode()).hexdigest()[:16]}", host
    return None, host


def vm_key(vm: Vm) -> str:
    if vm.kind == "proxmox":
        return f"pve:{vm.vmid}" + (f":{vm.uuid}" if vm.uuid else "")
    return f"libvirt:{vm.uuid or vm.vmid}"


def fact_files_present(directory: Path) -> list[str]:
    """The saved fact files the loader reads that hold something: what this audit could check."""
    names = {row.file for row in FACT_FILES if (directory / row.file).is_file()
             and (row.empty_is_known or (directory / row.file).stat().st_size)}
    names |= {f"{p.parent.name}/{p.name}" for pattern in ("qemu-server/*.conf", "libvirt/*.xml", "pve/storage.cfg")
              for p in directory.glob(pattern)}
    return sorted(names)


def audit_subject(
    directory: Path, facts: Facts, *, captured_here: bool, vm_configs: list[Path] | None = None,
    unchecked: list[str] | None = None,
) -> AuditSubject:
    """The subject of an audit of the facts in `directory` (plus `vm_configs`); `captured_here` when the facts
    were captured by this audit on this machine rather than read with --from."""
    machine, host = machine_key(directory)
    config_names = {f"{p.absolute().parent.name}/{p.name}" for p in vm_configs or []}
    extra = list({vm.name: vm for vm in facts.vms if vm.name in config_names}.values())  # once, if in the capture too
    parts = ([machine] if machine else []) + sorted({vm_key(vm) for vm in extra})
    key = "+".join(parts) if machine or extra else None
    name = host or ("unknown machine" if machine is None else f"machine {machine.split(':', 1)[1][:8]}")
    if extra:
        name += " + " + ", ".join(f"VM {vm.vmid}" for vm in extra)
    source = ("guest" if facts.is_vm else "host") if captured_here else "capture"
    detail = "captured on this machine" if captured_here else f"--from {directory}"
    if extra:
        source += "+config"
        detail += "; --vm-config " + ", ".join(sorted(config_names))
    summary = {
        "machine": machine,
        "host": host,
        "zfs_version": facts.zfs_version,
        "virt": facts.virt,
        "is_vm": facts.is_vm,
        "ram_bytes": facts.meminfo.get("MemTotal"),
        "pools": sorted(facts.pools),
        "datasets": len(facts.filesystems()),
        "zvols": len(facts.zvols()),
        "vms": sorted(vm.name for vm in facts.vms),
        "vm_keys": {vm.name: vm_key(vm) for vm in facts.vms},
        "files": fact_files_present(directory) + sorted(f"--vm-config {n}" for n in config_names),
        "unchecked": list(unchecked or []),
    }
    return AuditSubject(key, name, source, detail, summary)
