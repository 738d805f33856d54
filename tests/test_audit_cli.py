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


def test_facts_save_writes_what_this_machine_has(tmp_path: Path) -> None:
    """No ZFS on this host: zpool/zfs are skipped, the kernel facts are saved and audit reads them cleanly."""
    result = run_cli("facts", "save", str(tmp_path / "f"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "f" / "meminfo.txt").is_file() and (tmp_path / "f" / "cpuinfo.txt").is_file()
    audited = run_cli("audit", "--from", str(tmp_path / "f"), "--json")
    assert audited.returncode == 0 and json.loads(audited.stdout)["findings"] == []
