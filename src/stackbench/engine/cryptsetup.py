"""`cryptsetup benchmark`: run it and read its output into typed results.

Whether the CPU that ran it exposes AES-NI is a fact of the audit (`audit.aes_ni`, from /proc/cpuinfo), judged
by the audit rule GUEST-CPU-NOAES, so `stackbench crypto` and `stackbench audit` give one verdict.

cryptsetup prints (src/cryptsetup.c, action_benchmark; the same layout from 1.6 to 2.7, only column widths
and the PBKDF suffix changed):

    # Tests are approximate using memory only (no storage IO).
    PBKDF2-sha1      2473056 iterations per second for 256-bit key     (1.6: no " for N-bit key")
    PBKDF2-nosuchhash     N/A
    argon2id      4 iterations, 1048576 memory, 4 parallel threads (CPUs) for 256-bit key (requested 2000 ms time)
    #     Algorithm |       Key |      Encryption |      Decryption  (<2.4: "| Key |  Encryption |  Decryption")
            aes-xts        512b      2334.9 MiB/s      2329.1 MiB/s
        serpent-cbc        128b               N/A               N/A  (cipher missing from the kernel)

and on stderr, when it cannot run a cipher:

    Cipher aes-xts-plain64 (with 512 bits key) is not available.
    Required kernel crypto interface not available.
    Ensure you have algif_skcipher kernel module loaded.

The last two lines mean the kernel has no AF_ALG socket interface for ciphers (CONFIG_CRYPTO_USER_API_SKCIPHER,
module algif_skcipher): cryptsetup benchmarks ciphers through it, in memory, with the kernel's own cipher
implementations, so nothing can be measured. The parser reads stdout and stderr together (`2>&1`), one line
at a time; a line it does not know is an error that names the line.

Units are cryptsetup's: MiB/s (2^20 bytes per second) for ciphers, iterations per second for PBKDF2, and
for Argon2 the iteration count, memory in KiB and threads that cryptsetup picked for the requested time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from stackbench.base import spawn
from stackbench.base.errors import StackbenchError

__all__ = [
    "Benchmark",
    "CipherResult",
    "CryptsetupFailed",
    "CryptsetupNotFound",
    "CryptsetupOutputError",
    "KernelCryptoMissing",
    "PbkdfResult",
    "kernel_skcipher_config",
    "parse_benchmark",
    "raise_for_errors",
    "run_benchmark",
]

_OUTPUT_FIX = (
    "Pass the complete, unedited output of `cryptsetup benchmark` in English (`LC_ALL=C cryptsetup benchmark "
    "> FILE 2>&1` keeps stderr, where cryptsetup says why a cipher failed)"
)
_KERNEL_MESSAGES = (
    "Required kernel crypto interface not available.",
    "Ensure you have algif_skcipher kernel module loaded.",
)
_NUM = r"\d{1,15}(?:[.,]\d{1,6})?"


def _rate(group: str) -> str:
    return rf"(?:(?P<{group}>{_NUM})\s+MiB/s|N/A)"


_CIPHER_ROW = re.compile(
    rf"^\s*(?P<cipher>[^\s#|]{{1,128}})\s+(?P<bits>\d{{1,6}})b\s+{_rate('enc')}\s+{_rate('dec')}\s*$"
)
_HEADER = re.compile(r"^#\s*Algorithm\s*\|\s*Key\s*\|\s*Encryption\s*\|\s*Decryption\s*$")
_BANNER = "# Tests are approximate using memory only (no storage IO)."
_PBKDF2 = re.compile(
    r"^PBKDF2-(?P<hash>\S{1,64})\s+(?:(?P<iters>\d{1,15}) iterations per second(?: for (?P<bits>\d{1,6})-bit key)?"
    r"|N/A)\s*$"
)
_ARGON2 = re.compile(
    r"^(?P<kdf>argon2id?)\s+(?:(?P<iters>\d{1,15}) iterations, (?P<mem>\d{1,15}) memory, (?P<threads>\d{1,6}) "
    r"parallel threads \(CPUs\) for (?P<bits>\d{1,6})-bit key \(requested (?P<ms>\d{1,15}) ms time\)|N/A)\s*$"
)
_UNAVAILABLE = re.compile(r"^Cipher (?P<spec>\S{1,128}) \(with (?P<bits>\d{1,6}) bits key\) is not available\.$")
_NOTES = {
    "Result of benchmark is not reliable.": "cryptsetup: the result of one cipher was not reliable (too fast to "
    "time even with a 64 MiB buffer); that row is N/A",
    "Benchmark interrupted.": "cryptsetup: the benchmark was interrupted; the results are partial",
}
_BAD_SPEC = "No known cipher specification pattern detected."


class CryptsetupOutputError(StackbenchError):
    """`cryptsetup benchmark` output that cannot be read (garbage, truncated, translated, empty)."""


class CryptsetupNotFound(StackbenchError):
    """The cryptsetup binary is not in PATH."""


class CryptsetupFailed(StackbenchError):
    """cryptsetup ran but failed for a reason other than the kernel interface."""


class KernelCryptoMissing(StackbenchError):
    """The kernel has no AF_ALG cipher interface (CONFIG_CRYPTO_USER_API_SKCIPHER / algif_skcipher)."""


@dataclass(frozen=True)
class CipherResult:
    """One row of the cipher table. Rates are None when cryptsetup printed N/A (cipher not in the kernel)."""

    cipher: str  # cryptsetup's name: cipher-chainmode ("aes-xts"), the IV generator is not printed
    key_bits: int
    encryption_mib_s: float | None
    decryption_mib_s: float | None
    line: int

    @property
    def available(self) -> bool:
        return self.encryption_mib_s is not None and self.decryption_mib_s is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "cipher": self.cipher,
            "key_bits": self.key_bits,
            "encryption_mib_per_s": self.encryption_mib_s,
            "decryption_mib_per_s": self.decryption_mib_s,
            "available": self.available,
        }


@dataclass(frozen=True)
class PbkdfResult:
    """One key-derivation row. PBKDF2 gives iterations per second; Argon2 the cost cryptsetup chose for the
    requested time (iterations, memory in KiB, threads). All measured values are None on an N/A row."""

    kdf: str  # "pbkdf2", "argon2i" or "argon2id"
    hash: str | None  # PBKDF2 only
    key_bits: int | None  # None on N/A rows and before cryptsetup 1.7 (no "for N-bit key")
    iterations_per_s: int | None = None
    iterations: int | None = None
    memory_kib: int | None = None
    threads: int | None = None
    requested_ms: int | None = None
    line: int = 0

    @property
    def available(self) -> bool:
        return self.iterations_per_s is not None or self.iterations is not None

    @property
    def name(self) -> str:
        return f"PBKDF2-{self.hash}" if self.kdf == "pbkdf2" else self.kdf

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kdf": self.kdf, "key_bits": self.key_bits, "available": self.available}
        if self.kdf == "pbkdf2":
            data.update(hash=self.hash, iterations_per_s=self.iterations_per_s)
        else:
            data.update(iterations=self.iterations, memory_kib=self.memory_kib, parallel_threads=self.threads,
                        requested_time_ms=self.requested_ms)
        return data


@dataclass(frozen=True)
class Unavailable:
    """`Cipher SPEC (with N bits key) is not available.` (stderr): one cipher the kernel could not run."""

    spec: str
    key_bits: int
    line: int

    def to_json(self) -> dict[str, Any]:
        return {"cipher": self.spec, "key_bits": self.key_bits}


@dataclass(frozen=True)
class Benchmark:
    """Everything one `cryptsetup benchmark` printed, in order of appearance."""

    source: str
    ciphers: tuple[CipherResult, ...] = ()
    pbkdfs: tuple[PbkdfResult, ...] = ()
    unavailable: tuple[Unavailable, ...] = ()
    notes: tuple[str, ...] = ()
    kernel_interface_missing_line: int | None = None  # line of "Required kernel crypto interface not available."
    bad_cipher_spec_line: int | None = None  # line of "No known cipher specification pattern detected."

    def cipher(self, name: str, key_bits: int | None = None) -> CipherResult | None:
        """The first row for `name` (cryptsetup's "aes-xts" or a full spec "aes-xts-plain64") and key size."""
        wanted = table_name(name)
        return next((c for c in self.ciphers if c.cipher == wanted and key_bits in (None, c.key_bits)), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "units": {"encryption_mib_per_s": "MiB/s (2^20 bytes/s)", "iterations_per_s": "PBKDF2 iterations/s",
                      "memory_kib": "KiB"},
            "ciphers": [c.to_json() for c in self.ciphers],
            "pbkdf": [p.to_json() for p in self.pbkdfs],
            "unavailable": [u.to_json() for u in self.unavailable],
            "notes": list(self.notes),
        }


def table_name(spec: str) -> str:
    """cryptsetup's table name for a cipher spec: `aes-xts-plain64` -> `aes-xts`, `capi:xts(aes)-plain64` ->
    `capi:xts(aes)` (cryptsetup drops the IV generator, and for capi: names everything after the first '-')."""
    if spec.startswith("capi:"):
        return spec.split("-", 1)[0]
    parts = spec.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else spec


def _number(text: str) -> float:
    # cryptsetup calls setlocale(LC_ALL, ""): a German locale prints 43,9
    return float(text.replace(",", "."))


def parse_benchmark(text: str, source: str = "cryptsetup benchmark output") -> Benchmark:
    """Read what `cryptsetup benchmark` printed (stdout, or stdout and stderr together) into a `Benchmark`.

    Raises `CryptsetupOutputError` naming the line for anything that is not cryptsetup benchmark output, for a
    table header without rows, for rows before their header and for output with no result at all. The kernel
    interface message is not an error here: it is recorded (`kernel_interface_missing_line`) and
    `raise_for_errors` or `run_benchmark` turn it into `KernelCryptoMissing`.
    """
    ciphers: list[CipherResult] = []
    pbkdfs: list[PbkdfResult] = []
    unavailable: list[Unavailable] = []
    notes: list[str] = []
    kernel_line: int | None = None
    bad_spec_line: int | None = None
    header_line: int | None = None  # the last table header not yet followed by a row

    def fail(number: int, what: str) -> CryptsetupOutputError:
        return CryptsetupOutputError(f"{source} line {number}: {what}", _OUTPUT_FIX)

    seen_table = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped == _BANNER:
            continue
        if _HEADER.match(stripped):
            if header_line is not None:
                raise fail(header_line, "a cipher table header with no rows before the next header")
            header_line, seen_table = number, True
            continue
        if stripped in _KERNEL_MESSAGES:
            kernel_line = kernel_line or number
            continue
        if stripped == _BAD_SPEC:
            bad_spec_line = bad_spec_line or number
            continue
        if stripped in _NOTES:
            notes.append(_NOTES[stripped])
            continue
        if match := _CIPHER_ROW.match(line):
            if not seen_table:
                raise fail(number, f"cipher row {stripped[:60]!r} comes before the table header "
                                   "'# Algorithm | Key | Encryption | Decryption'")
            enc, dec = match["enc"], match["dec"]
            ciphers.append(CipherResult(
                cipher=match["cipher"], key_bits=int(match["bits"]),
                encryption_mib_s=_number(enc) if enc is not None else None,
                decryption_mib_s=_number(dec) if dec is not None else None, line=number,
            ))
            header_line = None
            continue
        if pbkdf := _pbkdf(stripped, number):
            pbkdfs.append(pbkdf)
            continue
        if match := _UNAVAILABLE.match(stripped):
            unavailable.append(Unavailable(spec=match["spec"], key_bits=int(match["bits"]), line=number))
            continue
        raise fail(number, f"{_show(stripped)} is not a line of `cryptsetup benchmark` output")
    if header_line is not None:
        raise fail(header_line, "the cipher table header has no rows after it: the output is cut short")
    if not (ciphers or pbkdfs or unavailable or kernel_line or bad_spec_line):
        if not text.strip():
            raise CryptsetupOutputError(f"{source} is empty", _OUTPUT_FIX)
        raise CryptsetupOutputError(
            f"{source} has no benchmark result, only cryptsetup's banner line: cryptsetup says why on stderr",
            _OUTPUT_FIX,
        )
    return Benchmark(source=source, ciphers=tuple(ciphers), pbkdfs=tuple(pbkdfs), unavailable=tuple(unavailable),
                     notes=tuple(notes), kernel_interface_missing_line=kernel_line, bad_cipher_spec_line=bad_spec_line)


def _pbkdf(stripped: str, number: int) -> PbkdfResult | None:
    """A PBKDF2 or Argon2 line (an Argon2 that the build lacks has no figures), or None for another line."""
    if match := _PBKDF2.match(stripped):
        return PbkdfResult(
            kdf="pbkdf2", hash=match["hash"], key_bits=int(match["bits"]) if match["bits"] else None,
            iterations_per_s=int(match["iters"]) if match["iters"] else None, line=number,
        )
    if match := _ARGON2.match(stripped):
        available = match["iters"] is not None
        return PbkdfResult(
            kdf=match["kdf"], hash=None, key_bits=int(match["bits"]) if available else None,
            iterations=int(match["iters"]) if available else None,
            memory_kib=int(match["mem"]) if available else None,
            threads=int(match["threads"]) if available else None,
            requested_ms=int(match["ms"]) if available else None, line=number,
        )
    return None


def _show(line: str) -> str:
    return repr(line[:80] + ("..." if len(line) > 80 else ""))


# --- the kernel side ---------------------------------------------------------------------------------------------


def kernel_skcipher_config(config_text: str | None = None) -> str | None:
    """CONFIG_CRYPTO_USER_API_SKCIPHER of the running kernel: "y", "m", "n" (not set) or None (config not
    readable). Reads /proc/config.gz, then /boot/config-$(uname -r), unless `config_text` is given."""
    if config_text is None:
        config_text = _running_kernel_config()
        if config_text is None:
            return None
    for line in config_text.splitlines():
        line = line.strip()
        if line == "# CONFIG_CRYPTO_USER_API_SKCIPHER is not set":
            return "n"
        if line.startswith("CONFIG_CRYPTO_USER_API_SKCIPHER="):
            return line.split("=", 1)[1].strip() or None
    return "n" if "CONFIG_CRYPTO_USER_API=" in config_text or "CONFIG_CRYPTO=" in config_text else None


def _running_kernel_config() -> str | None:
    import gzip

    try:
        with gzip.open("/proc/config.gz", "rt", errors="replace") as handle:
            return handle.read()
    except (OSError, EOFError):
        pass
    try:
        return Path(f"/boot/config-{os.uname().release}").read_text(errors="replace")
    except OSError:
        return None


def kernel_missing_error(where: str, config: str | None = None, release: str | None = None) -> KernelCryptoMissing:
    """The one-line error for "Required kernel crypto interface not available." `config` is the running
    kernel's CONFIG_CRYPTO_USER_API_SKCIPHER ("y"/"m"/"n"/None) when the benchmark ran here."""
    what = (
        f"{where}: the kernel has no AF_ALG interface for ciphers (CONFIG_CRYPTO_USER_API_SKCIPHER, module "
        "algif_skcipher), through which cryptsetup times ciphers; cryptsetup said \"Required kernel crypto "
        "interface not available\""
    )
    kernel = f"Kernel {release}" if release else "This kernel"
    if config == "n":
        fix = (
            f"{kernel} was built without CONFIG_CRYPTO_USER_API_SKCIPHER, so `modprobe algif_skcipher` cannot help: "
            "run on a kernel that has it (distribution kernels ship the algif_skcipher module), or run `cryptsetup "
            "benchmark` where it works and read the saved output with `stackbench crypto --from FILE`"
        )
    else:
        fix = (
            "Load the module (`modprobe algif_skcipher`), or run on a kernel built with "
            "CONFIG_CRYPTO_USER_API_SKCIPHER, or run `cryptsetup benchmark` where it works and read the saved "
            "output with `stackbench crypto --from FILE`"
        )
    return KernelCryptoMissing(what, fix)


def raise_for_errors(bench: Benchmark, config: str | None = None, release: str | None = None) -> None:
    """Raise what the output says went wrong: `KernelCryptoMissing` for the kernel interface message,
    `CryptsetupFailed` for an unknown cipher spec or when every cipher asked for was "not available".
    `config` and `release` describe the running kernel when the benchmark ran here."""
    if bench.kernel_interface_missing_line is not None:
        where = bench.source if bench.source == "cryptsetup benchmark" else (
            f"{bench.source} line {bench.kernel_interface_missing_line}")
        raise kernel_missing_error(where, config, release)
    if bench.bad_cipher_spec_line is not None:
        raise CryptsetupFailed(
            f"{bench.source}: cryptsetup did not recognise the cipher (\"No known cipher specification pattern "
            "detected\")",
            "Give the cipher as cryptsetup spells it: CIPHER-CHAINMODE-IVMODE, e.g. aes-xts-plain64 or "
            "serpent-cbc-essiv:sha256",
        )
    if bench.unavailable and not bench.ciphers and not bench.pbkdfs:
        gone = bench.unavailable[0]
        raise CryptsetupFailed(
            f"{bench.source}: the kernel cannot run {gone.spec} with a {gone.key_bits}-bit key (cryptsetup: \"Cipher "
            f"{gone.spec} (with {gone.key_bits} bits key) is not available\")",
            "Check the name and key size (/proc/crypto lists the kernel's ciphers), or load the cipher's module "
            "(e.g. `modprobe serpent_generic`)",
        )


# --- running it ---------------------------------------------------------------------------------------------------


def benchmark_command(cipher: str | None = None, key_size: int | None = None) -> list[str]:
    command = ["cryptsetup", "benchmark"]
    if cipher:
        command += ["--cipher", cipher]
    if key_size:
        command += ["--key-size", str(key_size)]
    return command


def cryptsetup_path() -> str:
    path = shutil.which("cryptsetup")
    if path is None:
        raise CryptsetupNotFound(
            "cryptsetup is not installed (no `cryptsetup` in PATH)",
            "Install it: `apt-get install cryptsetup-bin` (Debian/Ubuntu; `dnf install cryptsetup` on Fedora/RHEL). "
            "It installs to /usr/sbin: as a non-root user add /usr/sbin to PATH. Or read a saved output with --from FILE",
        )
    return path


def run_benchmark(cipher: str | None = None, key_size: int | None = None, timeout: float = 900) -> Benchmark:
    """Run `cryptsetup benchmark` here (LC_ALL=C, so messages and numbers are in the form the parser reads)."""
    if key_size is not None and (key_size <= 0 or key_size % 8):
        raise CryptsetupFailed(f"--key-size {key_size} is not a whole number of bytes",
                               "Give the key size in bits, a multiple of 8: 256 or 512 for aes-xts")
    command = benchmark_command(cipher, key_size)
    command[0] = cryptsetup_path()
    env = {**os.environ, "LC_ALL": "C"}
    try:
        done = spawn.run(command, capture_output=True, text=True, errors="replace", env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        raise CryptsetupFailed(f"`{' '.join(benchmark_command(cipher, key_size))}` did not finish in {timeout:.0f} s",
                               "Run it by hand to see where it stops") from error
    except OSError as error:
        raise CryptsetupNotFound(f"cannot run {command[0]}: {error.strerror or error}",
                                 "Reinstall it: `apt-get install --reinstall cryptsetup-bin`") from error
    shown = " ".join(benchmark_command(cipher, key_size))
    stdout = done.stdout if done.stdout.endswith("\n") or not done.stdout else done.stdout + "\n"
    try:
        bench = parse_benchmark(stdout + done.stderr, source="cryptsetup benchmark")
    except CryptsetupOutputError:
        if done.returncode != 0:
            raise _failed(shown, done) from None
        raise
    raise_for_errors(bench, kernel_skcipher_config(), os.uname().release)
    if done.returncode != 0:
        # cryptsetup returns the status of the last cipher of its list: exit 1 with nothing on stderr when that
        # row is N/A (twofish-xts missing, say), although every row was printed
        if not done.stderr.strip() and bench.ciphers and not bench.ciphers[-1].available:
            note = (f"cryptsetup exited with {done.returncode} because the last cipher of its list was N/A; "
                    "every row was printed")
            return replace(bench, notes=(*bench.notes, note))
        raise _failed(shown, done)
    return bench


def _failed(shown: str, done: subprocess.CompletedProcess[str]) -> CryptsetupFailed:
    last = next((line.strip() for line in reversed(done.stderr.splitlines()) if line.strip()), "no message")
    return CryptsetupFailed(f"`{shown}` failed with exit code {done.returncode}: {last[:200]}",
                            f"Run `{shown}` by hand to see the whole message")
