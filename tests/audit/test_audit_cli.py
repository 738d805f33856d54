"""The audit command line: exit codes, JSON, --explain/--list-rules, bad input, and `facts save` here."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from conftest import cli_here
from mounts import unmount
from stackbench.audit.rules import REGISTRY

DATA = Path(__file__).parent.parent / "data"
CAPTURE = DATA / "zfs" / "openzfs-2.1.11-debian12"
BAD_VM, GOOD_VM = DATA / "pve" / "100-bad.conf", DATA / "pve" / "101-good.conf"


def test_audit_cli_reports_findings_with_exit_3_and_json(tmp_path: Path) -> None:
    result = cli_here("audit", "--from", str(CAPTURE), "--vm-config", str(BAD_VM), "--json")
    assert result.returncode == 3, result.stderr
    data = json.loads(result.stdout)
    rules = {f["rule"] for f in data["findings"]}
    assert {"ZP-SPECIAL-SINGLE", "DS-SYNC-DISABLED", "KVM-CACHE", "KVM-CPU-NOAES", "KVM-BUS"} <= rules
    assert data["findings"][0]["severity"] == "crit"
    clean = tmp_path / "facts"
    clean.mkdir()
    ok = cli_here("audit", "--from", str(clean), "--vm-config", str(GOOD_VM))
    assert ok.returncode == 0 and "OK! No findings" in ok.stdout


def test_audit_cli_explain_and_list_and_bad_input(tmp_path: Path) -> None:
    explained = cli_here("audit", "--explain", "zp-special-single")
    assert explained.returncode == 0 and "losing" in explained.stdout and "https://" in explained.stdout
    listed = json.loads(cli_here("audit", "--list-rules", "--json").stdout)["rules"]
    assert len(listed) == len(REGISTRY)
    unknown = cli_here("audit", "--explain", "NOPE-1")
    assert unknown.returncode == 1 and "--list-rules" in unknown.stderr
    missing = cli_here("audit", "--from", str(tmp_path / "none"))
    assert missing.returncode == 1 and "facts save" in missing.stderr


@pytest.fixture
def known_mounts(tmp_path: Path, blank_loop: Path) -> Iterator[tuple[Path, Path, Path]]:
    """A subject of the test's own on this host: ext4 on a real loop device mounted twice, with strict access
    times (MNT-STRICTATIME's finding) and with relatime (none); (device, strict, relaxed), unmounted after."""
    subprocess.run(["mkfs.ext4", "-q", "-F", str(blank_loop)], check=True, capture_output=True)
    strict, relaxed = tmp_path / "strict", tmp_path / "relaxed"
    try:
        for point, option in ((strict, "strictatime"), (relaxed, "relatime")):
            point.mkdir()
            subprocess.run(["mount", "-o", option, str(blank_loop), str(point)], check=True)
        yield blank_loop, strict, relaxed
    finally:
        for point in (strict, relaxed):
            unmount(point)  # waited for while busy; nothing where it was never mounted (tests/mounts.py)


def _audit_of_known_mounts(result, known: tuple[Path, Path, Path]) -> dict:  # noqa: ANN001 - a cli Result
    """The audit's JSON, checked for what the known subject must give: the strict mount's one finding, the
    relatime one's none. Whatever else this host has (CI's xfs target, another test's loop device with
    read-ahead off) may add findings of its own: the exit status is 3 for ours and nothing is assumed of
    the rest."""
    device, strict, relaxed = known
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    ours = [f for f in report["findings"] if str(strict) in f["subject"] or str(relaxed) in f["subject"]]
    assert [(f["rule"], f["subject"]) for f in ours] == [("MNT-STRICTATIME", str(strict))]
    assert str(device) in ours[0]["evidence"]
    return report


def test_facts_save_writes_what_this_machine_has_and_the_audit_reads_all_of_it(
        tmp_path: Path, known_mounts: tuple[Path, Path, Path]) -> None:
    """The real probe on this host (no ZFS here): ZFS commands are skipped with the reason, host facts are saved,
    the manifest records every command and exit status, and every saved file parses (no problems)."""
    result = cli_here("facts", "save", str(tmp_path / "f"), "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["meminfo.txt"] == "saved" and status["cpuinfo.txt"] == "saved"
    assert status["zpool-status.txt"].startswith("skipped: ")
    manifest = json.loads((tmp_path / "f" / "probe.json").read_text())
    assert manifest["captures"]["meminfo.txt"]["exit"] == 0
    report = _audit_of_known_mounts(cli_here("audit", "--from", str(tmp_path / "f"), "--json"), known_mounts)
    assert report["problems"] == [] and report["zfs_version"] is None
    assert not [f for f in report["findings"] if f["rule"].startswith(("ZP-", "DS-", "ARC-", "L2ARC-"))]


def test_audit_of_this_machine_without_from_runs_the_probe_in_a_temporary_directory(
        known_mounts: tuple[Path, Path, Path]) -> None:
    """The live probe's capture is audited whole, and the known subject mounted here is in it."""
    report = _audit_of_known_mounts(cli_here("audit", "--json"), known_mounts)
    assert report["problems"] == [] and "mounts.txt" in report["facts"]["files"]


def test_facts_save_on_a_full_disk_fails_in_one_line_and_keeps_nothing(tmpfs_mount) -> None:
    """A real 16 KiB tmpfs fills up mid-capture (cpuinfo alone is larger): no half capture may be left behind."""
    full = tmpfs_mount("16k")
    result = cli_here("facts", "save", str(full / "facts"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: no space left to save the facts in {full / 'facts'}; nothing was kept. Free some space there or "
        "give a directory on another file system."]
    assert list(full.iterdir()) == []


def test_facts_save_refuses_to_mix_two_captures(tmp_path: Path) -> None:
    first = cli_here("facts", "save", str(tmp_path / "f"))
    assert first.returncode == 0, first.stderr
    before = sorted(p.name for p in (tmp_path / "f").iterdir())
    again = cli_here("facts", "save", str(tmp_path / "f"))
    assert again.returncode == 1 and "already holds saved facts" in again.stderr and "audit --from" in again.stderr
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == before


@pytest.mark.slow  # over 5 s of real fio / a real interrupt: CI runs it, the quick subset does not
def test_ctrl_c_during_facts_save_leaves_a_whole_capture_or_nothing(tmp_path: Path) -> None:
    """SIGINT at a spread of moments: every outcome is either a complete capture (exit 0, probe.json present)
    or nothing at all (exit 130, no directory), never a directory of some files without its manifest."""
    import signal
    import subprocess
    import sys
    import time

    interrupted = 0
    for attempt in range(12):
        target = tmp_path / f"f{attempt}"
        process = subprocess.Popen([sys.executable, "-m", "stackbench", "facts", "save", str(target)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.2 + attempt * 0.05)  # start-up with the CLI's imports and the probe each take a few 0.1 s
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode in (0, 130, -signal.SIGINT), stderr  # -SIGINT: before or after stackbench's handler
        if target.exists():  # whole: the manifest is moved in last, after every capture
            assert (target / "probe.json").is_file(), sorted(p.name for p in target.rglob("*"))
        else:
            assert process.returncode != 0
        interrupted += process.returncode == 130 and not target.exists()
    assert interrupted, "no attempt was interrupted inside stackbench: the timing above no longer fits this machine"


def test_audit_from_an_empty_or_unrelated_directory_is_an_error_not_a_clean_bill(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    (unrelated / "holiday.jpg").write_bytes(os.urandom(4096))
    for directory in (empty, unrelated):
        done = cli_here("audit", "--from", str(directory))
        assert done.returncode == 1, done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "holds no saved facts" in lines[0] and "facts save" in lines[0]
        assert "OK" not in done.stdout


@pytest.mark.parametrize("saved", ["libvirt/disk-network-nfs.xml", "qemu-server/100.conf"])
def test_a_capture_of_vm_configs_alone_is_audited(tmp_path: Path, saved: str) -> None:
    """/etc/libvirt/qemu (or /etc/pve/qemu-server) copied on its own is facts: its VMs are judged, not refused
    as 'holds no saved facts'. The domain is libvirt's own test data (tests/data/libvirt/public)."""
    source = (DATA / "libvirt" / "public" / "libvirt" / "qemuxmlconfdata" / "disk-network-nfs.xml"
              if saved.startswith("libvirt") else DATA / "pve" / "100-bad.conf")
    (tmp_path / saved).parent.mkdir()
    (tmp_path / saved).write_bytes(source.read_bytes())
    done = cli_here("audit", "--from", str(tmp_path), "--json")
    assert done.returncode in (0, 3), done.stderr
    document = json.loads(done.stdout)
    assert document["facts"]["vms"] and "VM disks (no VM configs)" not in document["facts"].get("unchecked", [])


def test_a_partial_capture_says_what_was_not_checked(tmp_path: Path) -> None:
    (tmp_path / "meminfo.txt").write_text((DATA / "zfs" / "openzfs-2.3.2-probe" / "meminfo.txt").read_text())
    done = cli_here("audit", "--from", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Not checked, for lack of facts: ZFS pools (no zpool output)" in done.stdout
    assert "VM disks (no VM configs)" in done.stdout


def test_a_scsi_disk_on_virtio_scsi_pci_gets_single_controller_and_iothread_advice(tmp_path: Path) -> None:
    """virtio-scsi-pci (Proxmox's default before 7.3) shares one controller: no disk can have an I/O thread."""
    config = tmp_path / "103.conf"
    config.write_text(GOOD_VM.read_text().replace("scsihw: virtio-scsi-single", "scsihw: virtio-scsi-pci")
                      .replace(",iothread=1", ""))
    done = cli_here("audit", "--from", str(CAPTURE), "--vm-config", str(config), "--json")
    findings = [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "KVM-IOTHREAD-MISSING"]
    assert len(findings) == 1, done.stdout
    assert "virtio-scsi-pci" in findings[0]["evidence"]
    assert findings[0]["fix"].startswith("qm set 103 --scsihw virtio-scsi-single --scsi0 ")  # one command
    assert "iothread=1" in findings[0]["fix"]
    assert [d["disk"] for d in findings[0]["disks"]] == ["scsi0"] and findings[0]["vm"].endswith("/103.conf")
    assert not [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "KVM-IOTHREAD-IGNORED"]


def test_an_unreadable_fact_file_with_json_is_the_document_and_one_error_line(tmp_path: Path) -> None:
    """Found by the CLI fuzz test: with --json an incomplete audit exited 1 with a warning and no error line.
    The facts are a known clean subject (an empty capture and a VM config without findings), not this host,
    whose own findings (another test's loop device, CI's xfs target) would turn "no findings" into exit 3."""
    clean = tmp_path / "facts"
    clean.mkdir()
    done = cli_here("audit", "--from", str(clean), "--vm-config", str(GOOD_VM),
                    "--storage-cfg", str(DATA / "fio" / "randread-psync.json"), "--json")
    assert done.returncode == 1
    json.loads(done.stdout)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: no findings, but 1 fact file could not be read") and \
        sum(line.startswith("Error:") for line in lines) == 1, done.stderr
