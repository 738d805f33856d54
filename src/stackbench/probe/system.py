"""Facts about the machine: kernel, CPU (and whether AES-NI is visible), RAM, host or VM.

Every fact is best effort: a missing file or command gives `None` for that fact and never an exception,
because a run on an unusual system must still happen and be stored.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
from stackbench.base import spawn
from pathlib import Path
from typing import Any


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return None


def boot_time() -> float | None:
    """When this machine last booted, in seconds since the epoch (/proc/stat's btime); None where unknown.
    What was read from the kernel before it may not hold now (tune --audit refuses an audit older)."""
    for line in (_read("/proc/stat") or "").splitlines():
        if line.startswith("btime "):
            try:
                return float(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def _cpuinfo() -> dict[str, str]:
    text = _read("/proc/cpuinfo") or ""
    info: dict[str, str] = {}
    for line in text.splitlines():
        if ":" not in line:
            if info:
                break  # first processor block only
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def _meminfo_bytes(key: str) -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith(key + ":"):
            parts = line.split()
            try:
                return int(parts[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _os_name() -> str | None:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def _detect_virt(kind: str) -> str | None:
    """`systemd-detect-virt --vm` or `--container`: the technology, or "none"."""
    tool = shutil.which("systemd-detect-virt")
    if not tool:
        return None
    try:
        done = spawn.run([tool, f"--{kind}"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _virtualization(flags: set[str]) -> str | None:
    """The hypervisor we run under ("none" on bare metal); containers are reported separately."""
    answer = _detect_virt("vm")
    if answer:
        return answer
    if "hypervisor" in flags:
        product = (_read("/sys/class/dmi/id/product_name") or "").strip()
        return product.lower() or "unknown-hypervisor"
    if flags:
        return "none"
    return None


def collect_system_facts() -> dict[str, Any]:
    """Plain, JSON-serialisable facts about this machine."""
    from stackbench import __version__

    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    virt = _virtualization(flags)
    return {
        "kernel": platform.release() or None,
        "os": _os_name(),
        "hostname": socket.gethostname() or None,
        "arch": platform.machine() or None,
        "cpu_model": cpu.get("model name") or cpu.get("Processor") or None,
        "cpu_count": os.cpu_count(),
        "cpu_flags_aes": ("aes" in flags) if flags else None,
        "ram_bytes": _meminfo_bytes("MemTotal"),
        "virtualization": virt,
        "is_vm": None if virt is None else virt != "none",
        "container": _detect_virt("container"),
        "python": platform.python_version(),
        "stackbench": __version__,
    }
