"""`stackbench crypto`: cipher throughput from `cryptsetup benchmark` and the AES-NI check (docs/method.md section 3)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from stackbench.cli.app import EXIT_FINDINGS, app, err, out
from stackbench.cli.common import FormatOption, emit, print_json
from stackbench.report.tabular import Tabular


@app.command("crypto")
def crypto_command(
    cipher: Optional[str] = typer.Option(
        None, "--cipher", "-c", help="Benchmark one cipher, as cryptsetup spells it (aes-xts-plain64). "
        "Default: cryptsetup's own list (aes, serpent, twofish in cbc and xts, and the PBKDFs)."
    ),
    key_size: Optional[int] = typer.Option(
        None, "--key-size", "-s", min=8, help="Key size in bits with --cipher (aes-xts: 256 = AES-128, 512 = AES-256). "
        "Default: cryptsetup's, 256."
    ),
    from_file: Optional[Path] = typer.Option(
        None, "--from", help="Read a saved `cryptsetup benchmark` output (- for stdin) instead of running it here."
    ),
    cpuinfo: Optional[Path] = typer.Option(
        None, "--cpuinfo", help="Judge AES-NI from a saved /proc/cpuinfo (the machine that ran the benchmark)."
    ),
    output_format: str = FormatOption,
    json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON (units in the keys)."),
) -> None:
    """Measure cipher throughput with `cryptsetup benchmark` and flag a VM whose CPU hides AES-NI.

    Runs `cryptsetup benchmark` (10-20 s; in memory, no disk I/O), or reads a saved output with --from, and
    prints encryption and decryption speed per cipher and key size in MiB/s, plus the PBKDF rows. It then reads
    /proc/cpuinfo (or --cpuinfo FILE): a guest (hypervisor flag) without the aes flag has a CPU type that hides
    AES-NI, and LUKS in it runs at a fraction of the host's speed (docs/method.md: aes-xts 266 MiB/s in a kvm64 guest
    against 3152 MiB/s on the host). With --from and no --cpuinfo the AES-NI check is skipped: this machine's
    CPU is not the one that ran the benchmark. Exit 0: done; 1: error (no cryptsetup, the kernel lacks AF_ALG,
    unreadable output); 2: bad usage; 3: the guest's CPU hides AES-NI (results are still printed).

    Examples:

        stackbench crypto

        stackbench crypto --cipher aes-xts-plain64 --key-size 512 --json

        ssh guest 'LC_ALL=C cryptsetup benchmark 2>&1' > bench.txt; ssh guest cat /proc/cpuinfo > cpuinfo.txt

        stackbench crypto --from bench.txt --cpuinfo cpuinfo.txt
    """
    from stackbench.crypto import (
        CryptsetupOutputError,
        aes_ni_status,
        parse_benchmark,
        raise_for_errors,
        run_benchmark,
        table_name,
    )
    from stackbench.errors import StackbenchError

    if key_size is not None and cipher is None:
        raise StackbenchError("--key-size needs --cipher", "Name the cipher too, e.g. --cipher aes-xts-plain64 --key-size 512")
    if key_size is not None and key_size % 8:
        raise StackbenchError(f"--key-size {key_size} is not a multiple of 8 bits", "Use e.g. 256 or 512")

    if from_file is not None:
        source = "stdin" if str(from_file) == "-" else str(from_file)
        text = sys.stdin.read() if source == "stdin" else _read(from_file, "a saved `cryptsetup benchmark` output")
        bench = parse_benchmark(text, source=source)
        raise_for_errors(bench)
        if cipher is not None:
            bench = _only(bench, table_name(cipher), key_size, source)
    else:
        bench = _run_with_progress(run_benchmark, cipher, key_size)

    if cpuinfo is not None:
        aes = aes_ni_status(_read(cpuinfo, "a saved /proc/cpuinfo"))
        if aes.state == "unknown":
            raise CryptsetupOutputError(f"{cpuinfo} has no `flags` (x86) or `Features` (arm64) line",
                                        "Pass a copy of /proc/cpuinfo from the machine that ran the benchmark")
        aes_source: str | None = str(cpuinfo)
    elif from_file is None:
        try:
            aes = aes_ni_status(Path("/proc/cpuinfo").read_text(errors="replace"))
            aes_source = "/proc/cpuinfo"
        except OSError:
            aes, aes_source = None, None
    else:
        aes, aes_source = None, None

    fmt = "json" if json_output else output_format
    if fmt == "json":
        data = bench.to_json()
        data["aes_ni"] = None if aes is None else {**aes.to_json(), "cpuinfo": aes_source}
        print_json(data)
    elif fmt == "csv":
        emit("csv", _cipher_table(bench), None)  # one CSV: the cipher rows
    else:
        for table in (_cipher_table(bench), _pbkdf_table(bench)):
            if table.rows:
                emit(fmt, table, None)
        _print_notes(bench)
        _print_verdict(aes, aes_source)
    if aes is not None and aes.flagged:
        sys.exit(EXIT_FINDINGS)


def _read(path: Path, what: str) -> str:
    from stackbench.errors import StackbenchError

    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        raise StackbenchError(f"{path} does not exist", f"Give the path of {what}") from None
    except IsADirectoryError:
        raise StackbenchError(f"{path} is a directory", f"Give the path of {what}") from None
    except OSError as error:
        raise StackbenchError(f"cannot read {path}: {error.strerror or error}", f"Give a readable copy of {what}") from None


def _only(bench: Any, name: str, key_size: int | None, source: str) -> Any:
    """The saved output, cut down to one cipher (and key size) for --from with --cipher."""
    from dataclasses import replace

    from stackbench.errors import StackbenchError

    rows = tuple(c for c in bench.ciphers if c.cipher == name and key_size in (None, c.key_bits))
    if not rows:
        have = ", ".join(sorted({f"{c.cipher} {c.key_bits}b" for c in bench.ciphers})) or "no cipher rows"
        raise StackbenchError(f"{source} has no row for {name}" + (f" with a {key_size}-bit key" if key_size else ""),
                              f"It has: {have}")
    return replace(bench, ciphers=rows, pbkdfs=())


def _run_with_progress(run: Any, cipher: str | None, key_size: int | None) -> Any:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from stackbench.crypto import benchmark_command

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                        transient=True, disable=not err.is_terminal)
    progress.add_task(f"running `{' '.join(benchmark_command(cipher, key_size))}` (10-20 s)", total=None)
    with progress:
        return run(cipher, key_size)


def _rate(value: float | None) -> str:
    return "N/A" if value is None else f"{value:,.1f}"


def _cipher_table(bench: Any) -> Tabular:
    return Tabular(
        headers=["cipher", "key (bits)", "encryption (MiB/s)", "decryption (MiB/s)"],
        rows=[[c.cipher, str(c.key_bits), _rate(c.encryption_mib_s), _rate(c.decryption_mib_s)]
              for c in bench.ciphers],
        title=f"Cipher throughput in memory, no storage I/O ({bench.source})",
        notes=["MiB/s = 2^20 bytes per second; N/A: the kernel has no implementation of that cipher"],
        right_aligned=frozenset({1, 2, 3}),
    )


def _pbkdf_table(bench: Any) -> Tabular:
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


def _print_notes(bench: Any) -> None:
    for gone in bench.unavailable:
        out.print(f"Not available in this kernel: {gone.spec} with a {gone.key_bits}-bit key")
    for note in bench.notes:
        out.print(f"Note: {note}")


def _print_verdict(aes: Any, source: str | None) -> None:
    from rich.text import Text

    if aes is None:
        out.print(Text("AES-NI: not checked (--from without --cpuinfo: this machine's CPU did not run the benchmark; "
                       "pass that machine's /proc/cpuinfo with --cpuinfo FILE)", style="dim"))
        return
    style = {"present": "green", "hidden": "bold red", "absent": "yellow"}.get(aes.state, "dim")
    out.print(Text(f"AES-NI check: {aes.summary} (read from {source}).", style=style))
    if aes.fix:
        out.print(Text(f"Fix: {aes.fix}.", style="bold"))
    if aes.why:
        out.print(Text(f"Why: {aes.why}.", style="dim"))
