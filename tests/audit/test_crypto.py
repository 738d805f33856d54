"""`stackbench crypto`: the `cryptsetup benchmark` parser, the AES-NI verdict and the command, on real captures.

Inputs are real outputs only (tests/data/cryptsetup/README.md says where and how each was captured):
- tests/data/zfs/openzfs-2.1.11-debian12/: the teammates' OpenZFS guest (cryptsetup 2.6.1, one cipher);
- tests/data/zfs/openzfs-*-probe/: their probe guests (full benchmark; cpuinfo with and without aes);
- tests/data/cryptsetup/host-*/: this CI machine, whose kernel has no AF_ALG (capture-host.sh);
- tests/data/cryptsetup/guest-*/: QEMU guests with CPU models kvm64, kvm64,+aes, max, and max with the serpent and
  twofish modules blacklisted (capture-guest.sh): full tables, single ciphers, N/A rows, cpuinfo of each model.
Truncations and mutations are cut from those captures, never typed in.
"""

from __future__ import annotations

import errno
import json
import re
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, cli_here, run_cli
from stackbench.audit.aes_ni import AesNi, parse_aes_ni
from stackbench.audit.facts import Facts, load_facts
from stackbench.audit.rule import Finding
from stackbench.audit.rules import guest_cpu_noaes
from stackbench.audit.rules.guest_cpu_noaes import MEASURED_COST
from stackbench.engine.cryptsetup import (
    Benchmark,
    CryptsetupOutputError,
    KernelCryptoMissing,
    kernel_skcipher_config,
    parse_benchmark,
    raise_for_errors,
    table_name,
)

CS = DATA / "cryptsetup"
ZFS_GUEST = DATA / "zfs" / "openzfs-2.1.11-debian12"
HOSTS = sorted(CS.glob("host-*"))
GUESTS = sorted(p for p in CS.glob("guest-*") if p.is_dir())
HOST = HOSTS[0]
# the teammates' OpenZFS probe guests (QEMU TCG): 2.1.11 with -cpu max, 2.3.2 with -cpu qemu64 (no aes)
PROBES = sorted((DATA / "zfs").glob("openzfs-*-probe"))

# cryptsetup 2.6.1's default list (src/cryptsetup.c, bciphers[]), in the order it prints it
DEFAULT_TABLE = [
    ("aes-cbc", 128), ("serpent-cbc", 128), ("twofish-cbc", 128), ("aes-cbc", 256), ("serpent-cbc", 256),
    ("twofish-cbc", 256), ("aes-xts", 256), ("serpent-xts", 256), ("twofish-xts", 256), ("aes-xts", 512),
    ("serpent-xts", 512), ("twofish-xts", 512),
]
DEFAULT_KDFS = ["PBKDF2-sha1", "PBKDF2-sha256", "PBKDF2-sha512", "PBKDF2-ripemd160", "PBKDF2-whirlpool", "argon2i",
                "argon2id"]


def capture(directory: Path, name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of one captured command."""
    return ((directory / f"{name}.stdout").read_text(), (directory / f"{name}.stderr").read_text(),
            int((directory / f"{name}.rc").read_text()))


def merged(directory: Path, name: str) -> str:
    """stdout then stderr, as `cmd > FILE 2>&1` saves them when the program writes one then the other."""
    stdout, stderr, _ = capture(directory, name)
    return stdout + stderr


def benchmark_captures() -> list[tuple[Path, str]]:
    return [(d, f.name.removesuffix(".stdout")) for d in [*HOSTS, *GUESTS]
            for f in sorted(d.glob("benchmark*.stdout"))]


def guest(name: str) -> Path:
    path = CS / f"guest-{name}"
    if not path.is_dir():
        pytest.fail(f"{path} missing: run tests/data/cryptsetup/capture-guest.sh")
    return path


def rows_by_hand(text: str) -> list[tuple[str, int, float | None, float | None]]:
    """The cipher rows, read independently of the parser: whitespace split of every line ending in MiB/s or N/A
    that is not a PBKDF line."""
    rows = []
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 4 and words[1].endswith("b") and words[1][:-1].isdigit():
            rest = words[2:]
            values = []
            while rest:
                if rest[0] == "N/A":
                    values.append(None)
                    rest = rest[1:]
                else:
                    assert rest[1] == "MiB/s", line
                    values.append(float(rest[0]))
                    rest = rest[2:]
            rows.append((words[0], int(words[1][:-1]), values[0], values[1]))
    return rows


# --- real outputs --------------------------------------------------------------------------------------------------


def test_the_captures_are_there() -> None:
    assert len(HOSTS) == 1, "one capture of this machine (capture-host.sh)"
    assert {p.name for p in GUESTS} >= {"guest-kvm64", "guest-kvm64-aes", "guest-kvm64-no-hypervisor", "guest-max",
                                        "guest-max-no-serpent-twofish"}


def test_openzfs_guest_single_cipher() -> None:
    """The OpenZFS 2.1.11 guest: `cryptsetup benchmark -c aes-xts-plain64 -s 512` (commands.txt)."""
    text = (ZFS_GUEST / "cryptsetup-benchmark.txt").read_text()
    assert "cryptsetup benchmark -c aes-xts-plain64 -s 512" in (ZFS_GUEST / "commands.txt").read_text()
    bench = parse_benchmark(text, source="cryptsetup-benchmark.txt")
    assert [(c.cipher, c.key_bits, c.encryption_mib_s, c.decryption_mib_s, c.line) for c in bench.ciphers] == [
        ("aes-xts", 512, 43.9, 53.2, 3)
    ]
    assert bench.pbkdfs == () and bench.unavailable == () and bench.kernel_interface_missing_line is None
    assert bench.cipher("aes-xts-plain64", 512) is bench.ciphers[0]
    assert bench.cipher("aes-xts-plain64", 256) is None


@pytest.mark.parametrize("directory,name", benchmark_captures(), ids=lambda v: getattr(v, "name", v))
def test_every_capture_parses_and_rows_match_the_text(directory: Path, name: str) -> None:
    """Every real capture, stdout and stderr together: each cipher row equals a plain split of its line."""
    text = merged(directory, name)
    bench = parse_benchmark(text, source=name)
    got = [(c.cipher, c.key_bits, c.encryption_mib_s, c.decryption_mib_s) for c in bench.ciphers]
    assert got == rows_by_hand(text)
    for c in bench.ciphers:
        assert text.splitlines()[c.line - 1].split()[0] == c.cipher
    _, _, rc = capture(directory, name)
    if rc == 0:
        assert bench.kernel_interface_missing_line is None and bench.unavailable == ()
        assert bench.ciphers or bench.pbkdfs


@pytest.mark.parametrize("scenario", ["kvm64", "kvm64-no-hypervisor", "max"])
def test_guest_full_table(scenario: str) -> None:
    stdout, stderr, rc = capture(guest(scenario), "benchmark")
    assert rc == 0 and stderr == ""
    bench = parse_benchmark(stdout)
    assert [(c.cipher, c.key_bits) for c in bench.ciphers] == DEFAULT_TABLE
    assert all(c.available and c.encryption_mib_s > 0 and c.decryption_mib_s > 0 for c in bench.ciphers)
    assert [p.name for p in bench.pbkdfs] == DEFAULT_KDFS
    for p in bench.pbkdfs:
        if p.kdf == "pbkdf2" and p.available:
            assert p.key_bits == 256 and p.iterations_per_s > 0
        elif p.kdf != "pbkdf2":
            assert p.available and p.key_bits == 256 and p.requested_ms == 2000 and p.iterations >= 1
            assert p.memory_kib > 0 and p.threads >= 1


def test_guest_kvm64_plus_aes_lost_aes_xts() -> None:
    """-cpu kvm64,+aes under TCG: aesni_intel's self-test hit pshufb (SSSE3, which kvm64 does not advertise and TCG
    enforces), oopsed, and xts(aes) never registered: aes-xts rows are N/A while aes-cbc is measured."""
    directory = guest("kvm64-aes")
    stdout, stderr, rc = capture(directory, "benchmark")
    bench = parse_benchmark(stdout + stderr)
    assert [(c.cipher, c.key_bits) for c in bench.ciphers] == DEFAULT_TABLE
    assert [(c.cipher, c.key_bits) for c in bench.ciphers if not c.available] == [("aes-xts", 256), ("aes-xts", 512)]
    assert "RIP: 0010:aesni_" in (directory / "console.log").read_text(errors="replace")
    assert "<66> 0f 38 00" in (directory / "console.log").read_text(errors="replace")  # faulting pshufb


def test_guest_pbkdf2_na_row() -> None:
    """In the initramfs guests OpenSSL 3's legacy provider (whirlpool) is missing: cryptsetup prints N/A."""
    bench = parse_benchmark(merged(guest("kvm64"), "benchmark"))
    whirlpool = next(p for p in bench.pbkdfs if p.hash == "whirlpool")
    assert not whirlpool.available and whirlpool.iterations_per_s is None and whirlpool.key_bits is None
    assert whirlpool.to_json() == {"kdf": "pbkdf2", "key_bits": None, "available": False, "hash": "whirlpool",
                                   "iterations_per_s": None}


def test_guest_na_cipher_rows() -> None:
    """serpent and twofish modules blacklisted: their rows are N/A, aes still measured, exit 0."""
    stdout, stderr, rc = capture(guest("max-no-serpent-twofish"), "benchmark")
    bench = parse_benchmark(stdout + stderr)
    assert [(c.cipher, c.key_bits) for c in bench.ciphers] == DEFAULT_TABLE
    for c in bench.ciphers:
        assert c.available == c.cipher.startswith("aes-"), c
        if not c.available:
            assert c.encryption_mib_s is None and c.decryption_mib_s is None
            assert c.to_json()["encryption_mib_per_s"] is None and c.to_json()["available"] is False


def test_guest_single_cipher_not_available() -> None:
    """A single cipher the kernel cannot load: stderr 'Cipher ... is not available.', exit 1, no kernel line."""
    stdout, stderr, rc = capture(guest("max-no-serpent-twofish"), "benchmark-serpent-xts-plain64-512")
    assert rc == 1
    bench = parse_benchmark(stdout + stderr)
    assert [(u.spec, u.key_bits) for u in bench.unavailable] == [("serpent-xts-plain64", 512)]
    assert bench.ciphers == () and bench.kernel_interface_missing_line is None


def test_guest_single_cipher_widths() -> None:
    """cryptsetup pads the single-cipher header to the name: 'aes-xts' is indented, 'serpent-xts' is not."""
    for name, want in [("benchmark-aes-xts-plain64-512", ("aes-xts", 512)),
                       ("benchmark-aes-xts-plain64-256", ("aes-xts", 256)),
                       ("benchmark-serpent-xts-plain64-512", ("serpent-xts", 512))]:
        bench = parse_benchmark(merged(guest("kvm64"), name))
        assert [(c.cipher, c.key_bits) for c in bench.ciphers] == [want]


def test_host_full_benchmark_is_the_kernel_interface_error() -> None:
    """This machine: PBKDF rows, then 'Required kernel crypto interface not available.' on stderr, exit 1."""
    stdout, stderr, rc = capture(HOST, "benchmark")
    assert rc == 1
    assert stderr == "Required kernel crypto interface not available.\nEnsure you have algif_skcipher kernel module loaded.\n"
    bench = parse_benchmark(stdout + stderr, source="saved.txt")
    assert [p.name for p in bench.pbkdfs] == DEFAULT_KDFS and bench.ciphers == ()
    assert bench.kernel_interface_missing_line == len(stdout.splitlines()) + 1
    with pytest.raises(KernelCryptoMissing) as caught:
        raise_for_errors(bench)
    line = caught.value.one_line()
    assert line.startswith(f"saved.txt line {bench.kernel_interface_missing_line}: the kernel has no AF_ALG")
    for needed in ["CONFIG_CRYPTO_USER_API_SKCIPHER", "algif_skcipher", "modprobe algif_skcipher", "--from FILE"]:
        assert needed in line
    assert "\n" not in line


@pytest.mark.parametrize("key", [256, 512])
def test_host_single_cipher(key: int) -> None:
    stdout, stderr, rc = capture(HOST, f"benchmark-aes-xts-plain64-{key}")
    assert rc == 1 and stdout == "# Tests are approximate using memory only (no storage IO).\n"
    # stdout alone is just the banner: cryptsetup says why on stderr
    with pytest.raises(CryptsetupOutputError, match="no benchmark result, only cryptsetup's banner"):
        parse_benchmark(stdout, source="out.txt")
    bench = parse_benchmark(stdout + stderr)
    assert [(u.spec, u.key_bits, u.line) for u in bench.unavailable] == [("aes-xts-plain64", key, 2)]
    assert bench.kernel_interface_missing_line == 3
    with pytest.raises(KernelCryptoMissing):
        raise_for_errors(bench)


def test_host_pbkdf_rows() -> None:
    sha256 = parse_benchmark(merged(HOST, "benchmark-pbkdf2-sha256")).pbkdfs
    assert len(sha256) == 1 and sha256[0].kdf == "pbkdf2" and sha256[0].hash == "sha256"
    assert sha256[0].key_bits == 256 and sha256[0].iterations_per_s == int(
        re.search(r"(\d+) iterations", (HOST / "benchmark-pbkdf2-sha256.stdout").read_text())[1])
    missing = parse_benchmark(merged(HOST, "benchmark-pbkdf2-nosuchhash")).pbkdfs
    assert [(p.name, p.available) for p in missing] == [("PBKDF2-nosuchhash", False)]
    argon = parse_benchmark(merged(HOST, "benchmark-argon2id")).pbkdfs[0]
    text = (HOST / "benchmark-argon2id.stdout").read_text()
    want = re.search(r"(\d+) iterations, (\d+) memory, (\d+) parallel", text)
    assert (argon.kdf, argon.iterations, argon.memory_kib, argon.threads, argon.key_bits, argon.requested_ms) == (
        "argon2id", int(want[1]), int(want[2]), int(want[3]), 256, 2000)


def test_host_kernel_config_capture() -> None:
    """The captured config lines of this machine's kernel: CONFIG_CRYPTO_USER_API_SKCIPHER is not set."""
    config = (HOST / "kernel-config-crypto.stdout").read_text()
    assert kernel_skcipher_config(config) == "n"
    assert kernel_skcipher_config("CONFIG_CRYPTO=y\nCONFIG_CRYPTO_USER_API_SKCIPHER=m\n") == "m"


def test_table_name() -> None:
    assert table_name("aes-xts-plain64") == "aes-xts"
    assert table_name("serpent-cbc-essiv:sha256") == "serpent-cbc"
    assert table_name("capi:xts(aes)-plain64") == "capi:xts(aes)"
    assert table_name("aes-xts") == "aes-xts"


# --- bad input -------------------------------------------------------------------------------------------------------


def test_empty() -> None:
    for text in ["", "\n\n", "   \n"]:
        with pytest.raises(CryptsetupOutputError, match="saved.txt is empty"):
            parse_benchmark(text, source="saved.txt")


@pytest.mark.parametrize("path", [
    ZFS_GUEST / "cpuinfo.txt", ZFS_GUEST / "zpool-status.txt", ZFS_GUEST / "commands.txt",
    DATA / "fio" / "defaults-only.json",
])
def test_garbage_names_the_line(path: Path) -> None:
    """Real files that are not cryptsetup output: the error names the first line that is not."""
    text = path.read_text()
    first = next(n for n, line in enumerate(text.splitlines(), 1) if line.strip())
    with pytest.raises(CryptsetupOutputError) as caught:
        parse_benchmark(text, source=path.name)
    assert caught.value.one_line().startswith(f"{path.name} line {first}: ")
    assert "is not a line of `cryptsetup benchmark` output" in caught.value.one_line()


def test_usage_error_output_is_not_benchmark_output() -> None:
    """cryptsetup's own usage error (real, this machine: --key-size 123) saved instead of a benchmark."""
    stdout, stderr, rc = capture(HOST, "usage-bad-key-size")
    assert rc == 1 and stdout == "" and stderr.endswith("cryptsetup: Key size must be a multiple of 8 bits\n")
    with pytest.raises(CryptsetupOutputError, match=r"^x line 1: 'Usage: cryptsetup \[-\?VqrvyN\]"):
        parse_benchmark(stdout + stderr, source="x")


def test_header_without_rows_is_truncated() -> None:
    text = merged(guest("kvm64"), "benchmark")
    cut = text[: text.index("#     Algorithm")] + text.splitlines(keepends=True)[8]
    assert cut.splitlines()[-1].startswith("#     Algorithm")
    with pytest.raises(CryptsetupOutputError, match=r"line 9: the cipher table header has no rows after it"):
        parse_benchmark(cut, source="cut.txt")


def test_translated_output_is_refused_with_the_fix() -> None:
    """A line cryptsetup prints in English is refused when it is not: the fix says LC_ALL=C."""
    text = merged(guest("kvm64"), "benchmark").replace("iterations per second", "Iterationen pro Sekunde", 1)
    with pytest.raises(CryptsetupOutputError) as caught:
        parse_benchmark(text, source="de.txt")
    assert caught.value.one_line().startswith("de.txt line 2: ") and "LC_ALL=C" in caught.value.one_line()


def test_every_truncation_of_a_real_output() -> None:
    """Cut the full guest output at every character: either a CryptsetupOutputError or a prefix of the rows."""
    text = merged(guest("max-no-serpent-twofish"), "benchmark")
    full = parse_benchmark(text)
    for end in range(len(text) + 1):
        try:
            part = parse_benchmark(text[:end])
        except CryptsetupOutputError:
            continue
        assert list(part.ciphers) == list(full.ciphers[: len(part.ciphers)])
        whole = list(part.pbkdfs[:-1])
        assert whole == list(full.pbkdfs[: len(whole)])
        if part.pbkdfs:  # the last one may be cut right after "per second": cryptsetup 1.6's form
            last, want = part.pbkdfs[-1], full.pbkdfs[len(part.pbkdfs) - 1]
            assert (last.name, last.iterations_per_s, last.iterations) == (want.name, want.iterations_per_s,
                                                                        want.iterations)


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_result(bench: Benchmark) -> None:
    for c in bench.ciphers:
        assert isinstance(c.key_bits, int) and c.key_bits >= 0 and c.cipher and " " not in c.cipher
        assert c.encryption_mib_s is None or c.encryption_mib_s >= 0
        json.dumps(c.to_json())
    for p in bench.pbkdfs:
        json.dumps(p.to_json())
    json.dumps(bench.to_json())


@FUZZ
@given(st.text())
def test_fuzz_any_text(text: str) -> None:
    try:
        _check_result(parse_benchmark(text))
    except CryptsetupOutputError:
        pass


def _real_lines() -> list[str]:
    lines: list[str] = []
    for directory, name in benchmark_captures():
        lines += merged(directory, name).splitlines()
    return lines + (ZFS_GUEST / "cryptsetup-benchmark.txt").read_text().splitlines()


REAL_LINES = _real_lines()


@FUZZ
@given(st.data())
def test_fuzz_mutated_real_lines(data: st.DataObject) -> None:
    """Real lines shuffled, duplicated, cut, with characters replaced or inserted."""
    lines = data.draw(st.lists(st.sampled_from(REAL_LINES), max_size=30))
    out = []
    for line in lines:
        action = data.draw(st.sampled_from(["keep", "cut", "replace", "insert", "upper"]))
        if line and action == "cut":
            line = line[: data.draw(st.integers(0, len(line)))]
        elif line and action == "replace":
            at = data.draw(st.integers(0, len(line) - 1))
            line = line[:at] + data.draw(st.characters()) + line[at + 1:]
        elif action == "insert":
            at = data.draw(st.integers(0, len(line)))
            line = line[:at] + data.draw(st.text(max_size=5)) + line[at:]
        elif action == "upper":
            line = line.upper()
        out.append(line)
    try:
        _check_result(parse_benchmark("\n".join(out)))
    except CryptsetupOutputError:
        pass


# --- AES-NI from real /proc/cpuinfo ---------------------------------------------------------------------------------
# The fact is audit.aes_ni; the verdict is the audit rule GUEST-CPU-NOAES on that fact alone, as `crypto` runs it.


def verdict(aes: AesNi) -> list[Finding]:
    return list(guest_cpu_noaes.RULE.check(Facts(aes_ni=aes)))


def test_aes_ni_tcg_guest_with_cpu_max() -> None:
    """The OpenZFS guest (QEMU TCG, -cpu max): a VM that sees aes."""
    aes = parse_aes_ni((ZFS_GUEST / "cpuinfo.txt").read_text())
    assert (aes.state, aes.virtual, aes.cpu_model, bool(verdict(aes))) == ("present", True, "QEMU TCG CPU version 2.5+", False)
    assert aes.summary.startswith("AES-NI is visible to this guest") and verdict(aes) == []


def test_aes_ni_this_machine() -> None:
    """This CI machine (captured /proc/cpuinfo): itself a VM (hypervisor flag) that sees aes."""
    aes = parse_aes_ni((HOST / "cpuinfo.stdout").read_text())
    assert (aes.state, aes.virtual, aes.cpu_model, bool(verdict(aes))) == ("present", True, "AMD EPYC", False)


def test_aes_ni_hidden_in_a_kvm64_guest() -> None:
    """QEMU CPU model kvm64 (Proxmox's old default): hypervisor flag, no aes: flagged, with fix and METHOD's why."""
    cpuinfo = capture(guest("kvm64"), "cpuinfo")[0]
    assert "hypervisor" in cpuinfo and " aes " not in cpuinfo
    aes = parse_aes_ni(cpuinfo)
    assert (aes.state, aes.virtual, aes.cpu_model, bool(verdict(aes))) == ("hidden", True, "Common KVM processor", True)
    assert aes.summary.startswith("this guest's CPU hides AES-NI")
    (finding,) = verdict(aes)
    for fix in ["cpu: host", "x86-64-v2-AES", "flags=+aes", "<cpu mode='host-passthrough'/>"]:
        assert fix in finding.fix
    assert "266 MiB/s" in MEASURED_COST and "3152 MiB/s" in MEASURED_COST
    # the kernel in that guest indeed used software AES (cat /proc/crypto in the same boot)
    assert "xts(ecb(aes-generic))" in capture(guest("kvm64"), "proc-crypto")[0]


def test_aes_ni_kvm64_with_flag_aes() -> None:
    """Proxmox's `flags=+aes` on kvm64 (QEMU -cpu kvm64,+aes): aes visible."""
    aes = parse_aes_ni(capture(guest("kvm64-aes"), "cpuinfo")[0])
    assert (aes.state, aes.virtual, aes.cpu_model) == ("present", True, "Common KVM processor")


def test_aes_ni_no_hypervisor_flag_no_aes() -> None:
    """QEMU -cpu kvm64,-hypervisor: a CPU without aes that does not say it is virtual, as an old host CPU."""
    aes = parse_aes_ni(capture(guest("kvm64-no-hypervisor"), "cpuinfo")[0])
    assert (aes.state, aes.virtual, bool(verdict(aes))) == ("absent", False, False)
    assert aes.summary.startswith("this CPU has no AES-NI")


def test_the_probe_captures_are_there() -> None:
    assert {p.name for p in PROBES} >= {"openzfs-2.1.11-probe", "openzfs-2.3.2-probe"}


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_probe_guest_full_benchmark(probe: Path) -> None:
    """The probe guests' `cryptsetup benchmark` (raw/commands.txt: exit 0): the whole default list, nothing N/A."""
    assert "cryptsetup-benchmark.txt\ttimeout 300 cryptsetup benchmark\t0" in (probe / "raw" / "commands.txt").read_text()
    text = (probe / "raw" / "cryptsetup-benchmark.txt").read_text()
    bench = parse_benchmark(text, source=probe.name)
    assert [(c.cipher, c.key_bits) for c in bench.ciphers] == DEFAULT_TABLE
    assert [(c.cipher, c.key_bits, c.encryption_mib_s, c.decryption_mib_s) for c in bench.ciphers] == rows_by_hand(text)
    assert all(c.available for c in bench.ciphers) and all(p.available for p in bench.pbkdfs)
    assert [p.name for p in bench.pbkdfs] == DEFAULT_KDFS


def test_aes_ni_probe_guests() -> None:
    """2.1.11's -cpu max sees aes; 2.3.2's -cpu qemu64 ("QEMU Virtual CPU version 2.5+") hides it."""
    present = parse_aes_ni((DATA / "zfs" / "openzfs-2.1.11-probe" / "cpuinfo.txt").read_text())
    assert (present.state, present.virtual, bool(verdict(present))) == ("present", True, False)
    hidden = parse_aes_ni((DATA / "zfs" / "openzfs-2.3.2-probe" / "cpuinfo.txt").read_text())
    assert (hidden.state, hidden.virtual, hidden.cpu_model, bool(verdict(hidden))) == (
        "hidden", True, "QEMU Virtual CPU version 2.5+", True)
    (finding,) = verdict(hidden)
    assert "x86-64-v2-AES" in finding.fix and finding.rule_id == "GUEST-CPU-NOAES"


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_aes_ni_agrees_with_the_flags_of_every_probe(probe: Path) -> None:
    text = (probe / "cpuinfo.txt").read_text()
    flags = set(next(line for line in text.splitlines() if line.startswith("flags")).split(":", 1)[1].split())
    want = "present" if "aes" in flags else ("hidden" if "hypervisor" in flags else "absent")
    assert parse_aes_ni(text).state == want


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_crypto_and_the_audit_give_one_verdict(probe: Path) -> None:
    """The audit of the probe's saved facts and `crypto --cpuinfo` on the same cpuinfo: the same finding or none."""
    audited = list(guest_cpu_noaes.RULE.check(load_facts(probe)))
    assert audited == verdict(parse_aes_ni((probe / "cpuinfo.txt").read_text()))
    result = cli_here("crypto", "--from", str(probe / "raw" / "cryptsetup-benchmark.txt"), "--cpuinfo",
                     str(probe / "cpuinfo.txt"), "--json")
    assert result.returncode == (3 if audited else 0), result.stderr
    aes_ni = json.loads(result.stdout)["aes_ni"]
    assert (aes_ni["rule"], aes_ni["fix"]) == ((audited[0].rule_id, audited[0].fix) if audited else (None, None))


def test_cli_probe_guest_without_aes() -> None:
    """The qemu64 probe guest's saved benchmark and cpuinfo: printed, flagged, exit 3."""
    probe = DATA / "zfs" / "openzfs-2.3.2-probe"
    result = cli_here("crypto", "--from", str(probe / "raw" / "cryptsetup-benchmark.txt"), "--cpuinfo",
                     str(probe / "cpuinfo.txt"), "--json")
    assert result.returncode == 3, result.stderr
    data = json.loads(result.stdout)
    assert data["aes_ni"]["state"] == "hidden" and len(data["ciphers"]) == 12
    assert data["aes_ni"]["why"] == MEASURED_COST and data["aes_ni"]["rule"] == "GUEST-CPU-NOAES"


def test_aes_ni_unknown_on_text_without_flags() -> None:
    aes = parse_aes_ni((ZFS_GUEST / "meminfo.txt").read_text())
    assert aes.state == "unknown" and not verdict(aes)


# --- the command -----------------------------------------------------------------------------------------------------


def _skcipher_works() -> bool:
    """Whether this kernel's AF_ALG can open an skcipher (what cryptsetup benchmark needs)."""
    try:
        with socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0) as alg:
            alg.bind(("skcipher", "cbc(aes)"))
        return True
    except OSError as error:
        assert error.errno in (errno.EAFNOSUPPORT, errno.ENOENT), error
        return False


@pytest.fixture(scope="module")
def cryptsetup_installed() -> None:
    import shutil

    if shutil.which("cryptsetup") is None:
        pytest.fail("cryptsetup is not installed: run scripts/test, which installs it (apt-get install cryptsetup-bin)")


@pytest.mark.slow
def test_cli_here(cryptsetup_installed: None) -> None:
    """Really run `stackbench crypto` here. On this CI machine the kernel has no AF_ALG: one line, exit 1."""
    result = run_cli("crypto", timeout=600)
    if _skcipher_works():
        assert result.returncode in (0, 2), result.stderr
        assert "aes-xts" in result.stdout and "AES-NI" in result.stdout
        return
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: cryptsetup benchmark: the kernel has no AF_ALG interface for ciphers "
                               "(CONFIG_CRYPTO_USER_API_SKCIPHER, module algif_skcipher)")
    assert 'cryptsetup said "Required kernel crypto interface not available"' in lines[0]
    assert "--from FILE" in lines[0]
    if kernel_skcipher_config() == "n":
        assert "was built without CONFIG_CRYPTO_USER_API_SKCIPHER, so `modprobe algif_skcipher` cannot help" in lines[0]
    else:
        assert "Load the module (`modprobe algif_skcipher`)" in lines[0]


def test_cli_here_one_cipher(cryptsetup_installed: None) -> None:
    result = run_cli("crypto", "--cipher", "aes-xts-plain64", "--key-size", "512", "--json", timeout=600)
    if _skcipher_works():
        assert result.returncode in (0, 2), result.stderr
        data = json.loads(result.stdout)
        assert [(c["cipher"], c["key_bits"]) for c in data["ciphers"]] == [("aes-xts", 512)]
        return
    assert result.returncode == 1 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert "no AF_ALG interface" in result.stderr


def test_cli_missing_cryptsetup(tmp_path: Path) -> None:
    result = run_cli("crypto", env={"PATH": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("Error: cryptsetup is not installed (no `cryptsetup` in PATH). Install it: "
                                    "`apt-get install cryptsetup-bin`")


def test_cli_from_guest_with_its_cpuinfo_flags_hidden_aes() -> None:
    """The kvm64 guest's saved output and cpuinfo: the table, the verdict, exit 3."""
    directory = guest("kvm64")
    result = cli_here("crypto", "--from", str(directory / "benchmark.stdout"), "--cpuinfo",
                     str(directory / "cpuinfo.stdout"))
    assert result.returncode == 3, result.stderr
    text = " ".join(result.stdout.split())
    assert "encryption (MiB/s)" in text and "decryption (MiB/s)" in text and "key (bits)" in text
    assert "this guest's CPU hides AES-NI" in text and "cpu: host" in text and "266 MiB/s" in text
    assert "twofish-xts" in text and "PBKDF2-whirlpool" in text and "N/A" in text


def test_cli_from_json_units_in_keys() -> None:
    directory = guest("max-no-serpent-twofish")
    result = cli_here("crypto", "--from", str(directory / "benchmark.stdout"), "--cpuinfo",
                     str(directory / "cpuinfo.stdout"), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    want = parse_benchmark((directory / "benchmark.stdout").read_text())
    assert data["ciphers"] == [c.to_json() for c in want.ciphers]
    assert set(data["ciphers"][0]) == {"cipher", "key_bits", "encryption_mib_per_s", "decryption_mib_per_s",
                                       "available"}
    assert data["aes_ni"]["state"] == "present" and data["aes_ni"]["cpuinfo"] == str(directory / "cpuinfo.stdout")


def test_cli_from_without_cpuinfo_skips_the_check() -> None:
    result = cli_here("crypto", "--from", str(ZFS_GUEST / "cryptsetup-benchmark.txt"), "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["aes_ni"] is None
    result = cli_here("crypto", "--from", str(ZFS_GUEST / "cryptsetup-benchmark.txt"))
    assert "AES-NI: not checked" in " ".join(result.stdout.split())


def test_cli_from_stdin_and_one_cipher() -> None:
    text = (guest("kvm64") / "benchmark.stdout").read_text()
    result = run_cli("crypto", "--from", "-", "--cipher", "aes-xts-plain64", "--key-size", "512", "--json", input=text)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(c["cipher"], c["key_bits"]) for c in data["ciphers"]] == [("aes-xts", 512)] and data["pbkdf"] == []
    result = run_cli("crypto", "--from", "-", "--cipher", "camellia-xts-plain64", input=text)
    assert result.returncode == 1 and result.stderr.startswith("Error: stdin has no row for camellia-xts. It has: ")


def test_cli_from_the_host_capture_is_the_kernel_error(tmp_path: Path) -> None:
    saved = tmp_path / "bench.txt"
    saved.write_text(merged(HOST, "benchmark"))
    result = cli_here("crypto", "--from", str(saved))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Error: {saved} line 9: the kernel has no AF_ALG interface for ciphers")
    assert len(result.stderr.splitlines()) == 1


def test_cli_bad_inputs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for args, message in [
        (["--from", str(empty)], f"Error: {empty} is empty."),
        (["--from", str(tmp_path / "nope.txt")], f"Error: {tmp_path / 'nope.txt'} does not exist."),
        (["--from", str(ZFS_GUEST / "cpuinfo.txt")], f"Error: {ZFS_GUEST / 'cpuinfo.txt'} line 1: "),
        (["--from", str(ZFS_GUEST / "cryptsetup-benchmark.txt"), "--cpuinfo", str(ZFS_GUEST / "meminfo.txt")],
         f"Error: {ZFS_GUEST / 'meminfo.txt'} has no `flags`"),
        (["--key-size", "512"], "Error: --key-size needs --cipher."),
        (["--cipher", "aes-xts-plain64", "--key-size", "500"], "Error: --key-size 500 is not a multiple of 8 bits."),
    ]:
        result = cli_here("crypto", *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert result.stderr.startswith(message), (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1


# --- the run path on real captures replayed ------------------------------------------------------------------------
# A stand-in `cryptsetup` first in PATH that prints a real capture's stdout and stderr and exits with its code, so
# the command's handling of cryptsetup's exit codes is checked on what cryptsetup really did in those guests.


def replay(tmp_path: Path, directory: Path, name: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "cryptsetup"
    stub.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" > "{tmp_path}/args"\n'
        f'cat "{directory}/{name}.stdout"; cat "{directory}/{name}.stderr" >&2\n'
        f'exit $(cat "{directory}/{name}.rc")\n'
    )
    stub.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_run_full_list_with_na_rows_exits_1_but_is_a_result(tmp_path: Path) -> None:
    """cryptsetup exits 1 when the last cipher of its list (twofish-xts 512) is N/A, with nothing on stderr."""
    directory = guest("max-no-serpent-twofish")
    assert capture(directory, "benchmark")[1:] == ("", 1)
    result = run_cli("crypto", "--json", env=replay(tmp_path, directory, "benchmark"))
    assert result.returncode in (0, 2), result.stderr
    assert (tmp_path / "args").read_text() == "benchmark\n"
    data = json.loads(result.stdout)
    assert data["source"] == "cryptsetup benchmark" and len(data["ciphers"]) == 12
    assert data["notes"] == ["cryptsetup exited with 1 because the last cipher of its list was N/A; every row was "
                             "printed"]
    assert data["aes_ni"]["cpuinfo"] == "/proc/cpuinfo"


def test_run_one_cipher_the_kernel_lacks(tmp_path: Path) -> None:
    directory = guest("max-no-serpent-twofish")
    result = run_cli("crypto", "--cipher", "serpent-xts-plain64", "--key-size", "512",
                     env=replay(tmp_path, directory, "benchmark-serpent-xts-plain64-512"))
    assert (tmp_path / "args").read_text() == "benchmark --cipher serpent-xts-plain64 --key-size 512\n"
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: cryptsetup benchmark: the kernel cannot run serpent-xts-plain64 with a "
                                    "512-bit key")
    assert len(result.stderr.splitlines()) == 1


def test_run_one_cipher(tmp_path: Path) -> None:
    directory = guest("kvm64")
    result = run_cli("crypto", "-c", "aes-xts-plain64", "-s", "256", "--json",
                     env=replay(tmp_path, directory, "benchmark-aes-xts-plain64-256"))
    assert result.returncode in (0, 2), result.stderr
    assert [(c["cipher"], c["key_bits"]) for c in json.loads(result.stdout)["ciphers"]] == [("aes-xts", 256)]


def test_run_usage_error_is_one_line(tmp_path: Path) -> None:
    """Whatever cryptsetup rejects (here its real usage error) ends as one line with its last message."""
    result = run_cli("crypto", env=replay(tmp_path, HOST, "usage-bad-key-size"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("Error: `cryptsetup benchmark` failed with exit code 1: cryptsetup: Key size must be a "
                             "multiple of 8 bits. Run `cryptsetup benchmark` by hand to see the whole message.\n")


def test_cli_markdown_and_csv_from_a_saved_guest_output() -> None:
    guest = CS / "guest-kvm64"
    markdown = cli_here("crypto", "--from", str(guest / "benchmark.stdout"), "--cpuinfo", str(guest / "cpuinfo.stdout"),
                       "--format", "markdown")
    assert markdown.returncode == 3, markdown.stderr
    assert "| aes-xts | 256 |" in markdown.stdout and "| argon2id | 256 |" in markdown.stdout
    assert "AES-NI check: this guest's CPU hides AES-NI" in markdown.stdout
    csv_out = cli_here("crypto", "--from", str(guest / "benchmark.stdout"), "--format", "csv")
    assert csv_out.returncode == 0, csv_out.stderr
    assert csv_out.stdout.splitlines()[0] == "cipher,key (bits),encryption (MiB/s),decryption (MiB/s)"
