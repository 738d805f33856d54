"""`stackbench crypto`: cipher throughput from `cryptsetup benchmark` and the AES-NI check (docs/method.md section 3)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from stackbench.cli.app import EXIT_FINDINGS, app, out
from stackbench.cli.common import FormatOption, IntBetween, JsonOption, chosen_format, emit, emit_report, print_json

if TYPE_CHECKING:
    from stackbench.audit.aes_ni import AesNi
    from stackbench.audit.rule import Finding


@app.command("crypto")
def crypto_command(
    cipher: Optional[str] = typer.Option(
        None, "--cipher", "-c", help="Benchmark one cipher, as cryptsetup spells it (aes-xts-plain64). "
        "Default: cryptsetup's own list (aes, serpent, twofish in cbc and xts, and the PBKDFs)."
    ),
    key_size: Optional[int] = typer.Option(
        None, "--key-size", "-s", click_type=IntBetween(8), metavar="BITS",
        help="Key size in bits (8 or more) with --cipher (aes-xts: 256 = AES-128, 512 = AES-256). "
        "Default: cryptsetup's, 256."
    ),
    from_file: Optional[Path] = typer.Option(
        None, "--from", help="Read a saved `cryptsetup benchmark` output (- for stdin) instead of running it here."
    ),
    cpuinfo: Optional[Path] = typer.Option(
        None, "--cpuinfo", help="Judge AES-NI from a saved /proc/cpuinfo (the machine that ran the benchmark)."
    ),
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Measure cipher throughput with `cryptsetup benchmark` and flag a VM whose CPU hides AES-NI.

    Runs `cryptsetup benchmark` (10-20 s; in memory, no disk I/O), or reads a saved output with --from, and
    prints encryption and decryption speed per cipher and key size in MiB/s, plus the PBKDF rows. It then reads
    /proc/cpuinfo (or --cpuinfo FILE): a guest (hypervisor flag) without the aes flag has a CPU type that hides
    AES-NI, and LUKS in it runs at a fraction of the host's speed (docs/method.md: aes-xts 266 MiB/s in a kvm64 guest
    against 3152 MiB/s on the host); the verdict is the audit rule GUEST-CPU-NOAES, the same `stackbench audit`
    reports. With --from and no --cpuinfo the AES-NI check is skipped: this machine's
    CPU is not the one that ran the benchmark. Exit 0: done; 1: error (no cryptsetup, the kernel lacks AF_ALG,
    unreadable output); 2: bad usage; 3: the guest's CPU hides AES-NI (results are still printed).

    Examples:

        stackbench crypto

        stackbench crypto --cipher aes-xts-plain64 --key-size 512 --json

        ssh guest 'LC_ALL=C cryptsetup benchmark 2>&1' > bench.txt; ssh guest cat /proc/cpuinfo > cpuinfo.txt

        stackbench crypto --from bench.txt --cpuinfo cpuinfo.txt
    """
    from stackbench.base.errors import StackbenchError
    from stackbench.base.inputs import CRYPTSETUP_OUTPUT, read_input_or_stdin
    from stackbench.engine.cryptsetup import parse_benchmark, raise_for_errors, run_benchmark, table_name

    if key_size is not None and cipher is None:
        raise StackbenchError("--key-size needs --cipher", "Name the cipher too, e.g. --cipher aes-xts-plain64 --key-size 512")
    if key_size is not None and key_size % 8:
        raise StackbenchError(f"--key-size {key_size} is not a multiple of 8 bits", "Use e.g. 256 or 512")

    if from_file is not None:
        data, source = read_input_or_stdin(from_file, CRYPTSETUP_OUTPUT)
        text = data.decode("utf-8", errors="replace")
        bench = parse_benchmark(text, source=source)
        raise_for_errors(bench)
        if cipher is not None:
            bench = _only(bench, table_name(cipher), key_size, source)
    else:
        bench = _run_with_progress(run_benchmark, cipher, key_size)

    aes, aes_source = _aes_ni(cpuinfo, saved=from_file is not None)
    _print(bench, aes, aes_source, chosen_format(output_format, json_output))


def _aes_ni(cpuinfo: Optional[Path], *, saved: bool) -> "tuple[AesNi | None, str | None]":
    """AES-NI from --cpuinfo, or from this machine's /proc/cpuinfo when the benchmark ran here; with a saved
    benchmark and no --cpuinfo, not checked (this CPU did not run it)."""
    from stackbench.audit.aes_ni import parse_aes_ni
    from stackbench.base.inputs import CPUINFO, read_input_text
    from stackbench.engine.cryptsetup import CryptsetupOutputError

    if cpuinfo is not None:
        aes = parse_aes_ni(read_input_text(cpuinfo, CPUINFO))
        if aes.state == "unknown":
            raise CryptsetupOutputError(f"{cpuinfo} has no `flags` (x86) or `Features` (arm64) line",
                                        "Pass a copy of /proc/cpuinfo from the machine that ran the benchmark")
        return aes, str(cpuinfo)
    if saved:
        return None, None
    try:
        return parse_aes_ni(Path("/proc/cpuinfo").read_text(errors="replace")), "/proc/cpuinfo"
    except OSError:
        return None, None


def _print(bench: Any, aes: "AesNi | None", aes_source: str | None, fmt: str) -> None:
    """The tables in one report (Markdown: a blank line between them), then cryptsetup's notes and the AES-NI
    verdict, each one line, so that pasted Markdown keeps its paragraphs; exit 3 when the CPU hides AES-NI."""
    from stackbench.audit.rules.guest_cpu_noaes import MEASURED_COST
    from stackbench.report.crypto import (
        aes_ni_json, aes_ni_verdict, benchmark_notes, cipher_csv_table, cipher_table, pbkdf_table,
    )
    from stackbench.report.document import Report

    finding = _guest_cpu_noaes(aes)
    if fmt == "json":
        data = bench.to_json()
        data["aes_ni"] = aes_ni_json(aes, aes_source, finding, MEASURED_COST)
        print_json(data)
    elif fmt == "csv":
        emit("csv", cipher_csv_table(bench), None)  # one CSV: the cipher rows, plain numbers
    else:
        emit_report(fmt, Report(tables=tuple(t for t in (cipher_table(bench), pbkdf_table(bench)) if t.rows)))
        verdict = aes_ni_verdict(aes, aes_source, finding, MEASURED_COST)
        if fmt != "markdown":
            for note in benchmark_notes(bench):
                out.print(note)
            out.print(verdict)
        else:  # a paragraph each, escaped as the tables are: the path read from is the user's
            from stackbench.report.formats.markdown import escape

            for line in [*benchmark_notes(bench), *(part.plain for part in getattr(verdict, "renderables", [verdict]))]:
                out.print(f"\n{escape(line)}", soft_wrap=True)
    if finding is not None:
        sys.exit(EXIT_FINDINGS)


def _guest_cpu_noaes(aes: AesNi | None) -> Finding | None:
    """The audit's GUEST-CPU-NOAES finding on this cpuinfo alone, or None: `crypto` and `audit` share one verdict."""
    from stackbench.audit.facts import Facts
    from stackbench.audit.rules.guest_cpu_noaes import RULE

    return None if aes is None else next(iter(RULE.check(Facts(aes_ni=aes))), None)


def _only(bench: Any, name: str, key_size: int | None, source: str) -> Any:
    """The saved output, cut down to one cipher (and key size) for --from with --cipher."""
    from dataclasses import replace

    from stackbench.base.errors import StackbenchError

    rows = tuple(c for c in bench.ciphers if c.cipher == name and key_size in (None, c.key_bits))
    if not rows:
        have = ", ".join(sorted({f"{c.cipher} {c.key_bits}b" for c in bench.ciphers})) or "no cipher rows"
        raise StackbenchError(f"{source} has no row for {name}" + (f" with a {key_size}-bit key" if key_size else ""),
                              f"It has: {have}")
    return replace(bench, ciphers=rows, pbkdfs=())


def _run_with_progress(run: Any, cipher: str | None, key_size: int | None) -> Any:
    from stackbench.cli.progress import spinner
    from stackbench.engine.cryptsetup import benchmark_command

    with spinner(f"running `{' '.join(benchmark_command(cipher, key_size))}` (10-20 s)"):
        return run(cipher, key_size)
