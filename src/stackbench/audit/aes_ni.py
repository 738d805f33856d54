"""AES-NI as a fact: what /proc/cpuinfo says about AES instructions and whether the CPU is a guest's.

This is only the fact. Whether it is a problem is the audit rule GUEST-CPU-NOAES, which both `stackbench
audit` (from the saved cpuinfo.txt) and `stackbench crypto` (from the cpuinfo of the machine that ran the
benchmark) evaluate, so there is one verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

@dataclass(frozen=True)
class AesNi:
    """state: "present" (every processor has the aes flag), "hidden" (a guest — hypervisor flag — without aes:
    the VM's CPU type hides it), "absent" (no aes and not a VM: the CPU has none), "unknown" (no flags line).
    `virtual` is None where cpuinfo cannot say (arm64 has no guest flag)."""

    state: str
    virtual: bool | None
    cpu_model: str | None
    summary: str  # the state in a sentence, with the flags it was read from
    flags_seen: tuple[str, ...] = field(default=(), repr=False)  # of aes and hypervisor, the ones present

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "virtual_machine": self.virtual, "cpu_model": self.cpu_model,
                "summary": self.summary}


def _cpuinfo_values(cpuinfo_text: str, keys: Iterable[str]) -> list[str]:
    wanted = {k.lower() for k in keys}
    values = []
    for line in cpuinfo_text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in wanted:
            values.append(value.strip())
    return values


def parse_aes_ni(cpuinfo_text: str) -> AesNi:
    """Read /proc/cpuinfo text: whether the CPU has AES instructions and whether it is a guest.

    x86: the `flags` lines (`aes`, `hypervisor`); every processor must have `aes`. arm64: the `Features`
    lines (`aes`: the ARMv8 Crypto Extensions); there is no portable guest flag there, so `virtual` is None.
    """
    x86 = _cpuinfo_values(cpuinfo_text, ["flags"])
    arm = _cpuinfo_values(cpuinfo_text, ["Features"])
    models = _cpuinfo_values(cpuinfo_text, ["model name", "CPU part", "cpu model"])
    model = models[0] if models else None
    if x86:
        sets = [set(line.split()) for line in x86]
        aes = all("aes" in s for s in sets)
        virtual = any("hypervisor" in s for s in sets)
        flags = tuple(sorted({"aes", "hypervisor"} & set().union(*sets)))
        named = f" ({model})" if model else ""
        if aes and virtual:
            return AesNi("present", True, model, f"AES-NI is visible to this guest: cpuinfo has the aes flag{named}",
                         flags_seen=flags)
        if aes:
            return AesNi("present", False, model, f"AES-NI is present: cpuinfo has the aes flag{named}",
                         flags_seen=flags)
        if virtual:
            return AesNi(
                "hidden", True, model,
                f"this guest's CPU hides AES-NI: /proc/cpuinfo has the hypervisor flag but no aes flag{named}, so "
                "dm-crypt/LUKS encrypts with the kernel's table-driven software AES",
                flags_seen=flags,
            )
        return AesNi(
            "absent", False, model,
            f"this CPU has no AES-NI: /proc/cpuinfo has no aes flag and no hypervisor flag{named}, so AES runs in "
            "software; compare the ciphers in the table (serpent or twofish may be faster here)",
            flags_seen=flags,
        )
    if arm:
        aes = all("aes" in line.split() for line in arm)
        if aes:
            return AesNi("present", None, model, "AES instructions are present: cpuinfo Features have aes "
                         "(ARMv8 Crypto Extensions)", flags_seen=("aes",))
        return AesNi("absent", None, model, "this CPU has no AES instructions: cpuinfo Features lack aes (no ARMv8 "
                     "Crypto Extensions, or a VM that hides them), so AES runs in software")
    return AesNi("unknown", None, model, "AES-NI: not known: the cpuinfo text has no `flags` (x86) or `Features` "
                 "(arm64) line")
