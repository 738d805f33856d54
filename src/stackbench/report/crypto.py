"""What `stackbench crypto` shows: the cipher and key-derivation tables of a `cryptsetup benchmark`, and the
AES-NI verdict (the fact and, when GUEST-CPU-NOAES fires, its fix), built from results computed elsewhere.
CSV holds the cipher rows only, as `cipher_csv_table`: plain MiB/s, an empty cell where the kernel has none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stackbench.report import plain
from stackbench.report.tabular import Tabular

if TYPE_CHECKING:
    from rich.console import RenderableType

    from stackbench.audit.aes_ni import AesNi
    from stackbench.audit.rule import Finding
    from stackbench.engine.cryptsetup import Benchmark


def _rate(value: float | None) -> str:
    return "N/A" if value is None else f"{value:,.1f}"


def cipher_table(bench: Benchmark) -> Tabular:
    return Tabular(
        headers=["cipher", "key (bits)", "encryption (MiB/s)", "decryption (MiB/s)"],
        rows=[[c.cipher, str(c.key_bits), _rate(c.encryption_mib_s), _rate(c.decryption_mib_s)]
              for c in bench.ciphers],
        title=f"Cipher throughput in memory, no storage I/O ({bench.source})",
        notes=["MiB/s = 2^20 bytes per second; N/A: the kernel has no implementation of that cipher"],
        right_aligned=frozenset({1, 2, 3}),
    )


def cipher_csv_table(bench: Benchmark) -> Tabular:
    """The cipher rows for a spreadsheet: MiB/s to 0.1 as cryptsetup prints them, without a thousands
    separator; an empty cell, not "N/A", for a cipher the kernel cannot run."""
    return Tabular(
        headers=["cipher", "key (bits)", "encryption (MiB/s)", "decryption (MiB/s)"],
        rows=[[c.cipher, str(c.key_bits), plain.number(c.encryption_mib_s, 1), plain.number(c.decryption_mib_s, 1)]
              for c in bench.ciphers],
        title=f"Cipher throughput in memory ({bench.source})",
        right_aligned=frozenset({1, 2, 3}),
    )


def pbkdf_table(bench: Benchmark) -> Tabular:
    rows = []
    for p in bench.pbkdfs:
        if not p.available:
            result = "N/A"
        elif p.kdf == "pbkdf2":
            result = f"{p.iterations_per_s:,} iterations/s"
        else:
            result = (f"{p.iterations} iterations, {p.memory_kib:,} KiB memory, {p.threads} threads "
                      f"(for {p.requested_ms} ms)")
        rows.append([p.name, "" if p.key_bits is None else str(p.key_bits), result])
    return Tabular(headers=["key derivation", "key (bits)", "result"], rows=rows,
                   title="Key derivation (LUKS unlock cost)", right_aligned=frozenset({1}))


def benchmark_notes(bench: Benchmark) -> list[str]:
    """cryptsetup's own remarks, one line each: ciphers the kernel could not run, unreliable or partial rows."""
    return ([f"Not available in this kernel: {gone.spec} with a {gone.key_bits}-bit key" for gone in bench.unavailable]
            + [f"Note: {note}" for note in bench.notes])


def aes_ni_json(aes: AesNi | None, source: str | None, finding: Finding | None, why: str) -> dict[str, Any] | None:
    """The `aes_ni` object of `crypto --json`: the fact, and the rule's fix and `why` only when it fired."""
    if aes is None:
        return None
    return {**aes.to_json(), "fix": finding.fix if finding else None, "why": why if finding else None,
            "rule": finding.rule_id if finding else None, "cpuinfo": source}


def aes_ni_verdict(aes: AesNi | None, source: str | None, finding: Finding | None, why: str) -> RenderableType:
    """The closing lines of `crypto`: the AES-NI fact, then the fix and why when GUEST-CPU-NOAES fired."""
    from rich.console import Group
    from rich.text import Text

    if aes is None:
        return Text("AES-NI: not checked (--from without --cpuinfo: this machine's CPU did not run the benchmark; "
                    "pass that machine's /proc/cpuinfo with --cpuinfo FILE)", style="dim")
    style = {"present": "green", "hidden": "bold red", "absent": "yellow"}.get(aes.state, "dim")
    lines = [Text(f"AES-NI check: {aes.summary} (read from {source}).", style=style)]
    if finding is not None:
        lines += [Text(f"Fix: {finding.fix}.", style="bold"), Text(f"Why: {why}.", style="dim")]
    return Group(*lines)
