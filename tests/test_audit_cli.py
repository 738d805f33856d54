"""The audit command line: exit codes, JSON, --explain/--list-rules, bad input, and `facts save` here."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from stackbench.audit.rules import REGISTRY

DATA = Path(__file__).parent / "data"
CAPTURE = DATA / "zfs" / "openzfs-2.1.11-debian12"
BAD_VM, GOOD_VM = DATA / "pve" / "100-bad.conf", DATA / "pve" / "101-good.conf"


def test_audit_cli_reports_findings_with_exit_2_and_json(tmp_path: Path) -> None:
    result = run_cli("audit", "--from", str(CAPTURE), "--vm-config", str(BAD_VM), "--json")
    assert result.returncode == 2, result.stderr
    data = json.loads(result.stdout)
    rules = {f["rule"] for f in data["findings"]}
    assert {"ZP-SPECIAL-SINGLE", "DS-SYNC-DISABLED", "KVM-CACHE", "KVM-CPU-NOAES", "KVM-BUS"} <= rules
    assert data["findings"][0]["severity"] == "crit"
    clean = tmp_path / "facts"
    clean.mkdir()
    ok = run_cli("audit", "--from", str(clean), "--vm-config", str(GOOD_VM))
    assert ok.returncode == 0 and "OK! No findings" in ok.stdout


def test_audit_cli_explain_and_list_and_bad_input(tmp_path: Path) -> None:
    explained = run_cli("audit", "--explain", "zp-special-single")
    assert explained.returncode == 0 and "losing" in explained.stdout and "https://" in explained.stdout
    listed = json.loads(run_cli("audit", "--list-rules", "--json").stdout)["rules"]
    assert len(listed) == len(REGISTRY)
    unknown = run_cli("audit", "--explain", "NOPE-1")
    assert unknown.returncode == 1 and "--list-rules" in unknown.stderr
    missing = run_cli("audit", "--from", str(tmp_path / "none"))
    assert missing.returncode == 1 and "facts save" in missing.stderr


def test_facts_save_writes_what_this_machine_has_and_the_audit_reads_all_of_it(tmp_path: Path) -> None:
    """The real probe on this host (no ZFS here): ZFS commands are skipped with the reason, host facts are saved,
    the manifest records every command and exit status, and every saved file parses (no problems)."""
    result = run_cli("facts", "save", str(tmp_path / "f"), "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["meminfo.txt"] == "saved" and status["cpuinfo.txt"] == "saved"
    assert status["zpool-status.txt"].startswith("skipped: ")
    manifest = json.loads((tmp_path / "f" / "probe.json").read_text())
    assert manifest["captures"]["meminfo.txt"]["exit"] == 0
    audited = run_cli("audit", "--from", str(tmp_path / "f"), "--json")
    assert audited.returncode in (0, 2), audited.stderr
    report = json.loads(audited.stdout)
    assert report["problems"] == [] and report["zfs_version"] is None
    assert not [f for f in report["findings"] if f["rule"].startswith(("ZP-", "DS-", "ARC-", "L2ARC-"))]


def test_audit_of_this_machine_without_from_runs_the_probe_in_a_temporary_directory() -> None:
    result = run_cli("audit", "--json")
    assert result.returncode in (0, 2), result.stderr
    assert json.loads(result.stdout)["problems"] == []
