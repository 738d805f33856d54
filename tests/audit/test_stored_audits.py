"""Stored audits (`audit --db`): the record, the subject, and what a later audit of the same subject says
was fixed, is new or was not rechecked, on the real captures in tests/data and a real SQLite store."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.audit.facts import load_facts
from stackbench.audit.history import compare_audits
from stackbench.audit.subject import audit_subject, machine_key
from stackbench.report.formats import FORMATS
from stackbench.store import Store

DATA = Path(__file__).parent.parent / "data"
PROBE_23 = DATA / "zfs" / "openzfs-2.3.2-probe"  # captured in the OpenZFS 2.3.2 lab guest; host "(none)"
BAD_VM = DATA / "pve" / "100-bad.conf"
STORAGE = DATA / "pve" / "storage.cfg"
MACHINE = hashlib.sha256(b"stackbench audit subject 0123456789abcdef0123456789abcdef").hexdigest()


def _capture(tmp_path: Path, name: str = "facts", machine: str | None = MACHINE) -> Path:
    """A copy of the real capture, with the machine-id hash the probe saves today (the lab capture predates it)."""
    target = tmp_path / name
    shutil.copytree(PROBE_23, target)
    if machine:
        (target / "machine-id-hash.txt").write_text(f"{machine}  -\n")
    return target


def _set_property(capture: Path, dataset: str, prop: str, value: str, source: str = "local") -> None:
    """What `zfs set` changes, in the saved `zfs get -Hp` output."""
    path = capture / "zfs-get-Hp-all.txt"
    text, count = re.subn(rf"(?m)^{re.escape(dataset)}\t{prop}\t[^\t]*\t[^\t\n]*$", f"{dataset}\t{prop}\t{value}\t{source}",
                          path.read_text())
    assert count == 1
    path.write_text(text)


def _audit(*args: str) -> dict:
    done = cli_here("audit", *args, "--json")
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_later_audit_says_what_was_fixed_and_what_is_new(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    capture = _capture(tmp_path)
    first = _audit("--from", str(capture), "--db", db, "--label", "before")
    assert first["changes"] is None and all(f["change"] is None for f in first["findings"])
    assert first["subject"]["key"] == f"machine:{MACHINE[:16]}" and first["subject"]["source"] == "capture"
    # the admin runs `zfs set sync=standard tank/vm-100-disk-0` and, by mistake, sync=disabled on tank/swap
    _set_property(capture, "tank/vm-100-disk-0", "sync", "standard", "default")
    _set_property(capture, "tank/swap", "sync", "disabled")
    second = _audit("--from", str(capture), "--db", db)
    changes = second["changes"]
    assert changes["previous_audit_id"] == first["audit_id"]
    assert [(f["rule"], f["subject"]) for f in changes["fixed"]] == [("DS-SYNC-DISABLED", "tank/vm-100-disk-0")]
    assert [(f["rule"], f["subject"]) for f in changes["new"]] == [("DS-SYNC-DISABLED", "tank/swap")]
    assert changes["not_rechecked"] == []
    marks = {(f["rule"], f["subject"]): f["change"] for f in second["findings"]}
    assert marks[("DS-SYNC-DISABLED", "tank/swap")] == "new"
    assert set(marks.values()) == {"new", "still"}
    # the terminal and Markdown say it too, and the record holds every finding with its rule and fix
    table = cli_here("show", second["audit_id"][:12], "--db", db)
    assert table.returncode == 0
    assert "1 fixed, 1 new" in table.stdout and re.search(r"fixed +DS-SYNC-DISABLED +tank/vm-100-disk-0", table.stdout)
    assert re.search(r"crit +DS-SYNC-DISABLED NEW +tank/swap", table.stdout)
    markdown = cli_here("show", second["audit_id"], "--db", db, "-f", "markdown").stdout
    assert "| fixed | crit | DS-SYNC-DISABLED | tank/vm-100-disk-0 |" in markdown
    stored = Store(db).get_audit(second["audit_id"])
    assert stored.previous_id == first["audit_id"] and stored.source == "capture"
    assert len(stored.findings) == len(second["findings"]) and stored.worst_severity == "crit"
    assert {"rule", "severity", "subject", "vm", "disks", "evidence", "fix"} <= stored.findings[0].keys()


@pytest.mark.slow
def test_a_stored_audit_is_shown_again_byte_for_byte_in_every_format(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    capture = _capture(tmp_path)
    cli_here("audit", "--from", str(capture), "--db", db)  # a previous audit, so the changes are shown too
    _set_property(capture, "tank/images", "compression", "lz4")
    for fmt in FORMATS:
        done = cli_here("audit", "--from", str(capture), "--vm-config", str(BAD_VM), "--storage-cfg", str(STORAGE),
                       "--db", db, "-f", fmt)
        assert done.returncode == 3, done.stderr
        audit_id = Store(db).list_audits(limit=1)[0].id
        again = cli_here("show", audit_id, "--db", db, "-f", fmt)
        assert again.returncode == 0, again.stderr
        assert again.stdout == done.stdout, fmt


def test_a_finding_whose_facts_are_missing_now_is_not_called_fixed(tmp_path: Path) -> None:
    """compare_audits on the real capture's findings: removing arcstats.txt makes ARC-SMALL vanish, which is
    not a fix; removing the VM config makes its findings vanish, which is not a fix either."""
    from stackbench.audit.report import run_rules
    from stackbench.audit.rules import REGISTRY

    capture = _capture(tmp_path)
    facts = load_facts(capture, [BAD_VM], STORAGE)
    before = audit_subject(capture, facts, captured_here=False, vm_configs=[BAD_VM])
    findings = [f.to_json() for f in run_rules(facts, REGISTRY).findings]
    assert {"ARC-SMALL", "KVM-CACHE"} <= {f["rule"] for f in findings}
    (capture / "arcstats.txt").unlink()
    facts_now = load_facts(capture)
    now = audit_subject(capture, facts_now, captured_here=False)
    findings_now = [f.to_json() for f in run_rules(facts_now, REGISTRY).findings]
    changes, marks = compare_audits({"audit_id": "a" * 32, "created_at": "2026-01-01T00:00:00+00:00",
                                     "facts": before.facts}, findings, findings_now, now.facts)
    assert changes["fixed"] == []
    why = {f["rule"]: f["why"] for f in changes["not_rechecked"]}
    assert "arcstats.txt" in why["ARC-SMALL"] and set(marks) == {"still"}
    assert why["KVM-CACHE"] == "pve/100-bad.conf is not in this audit's facts"


def test_fixing_one_disk_of_a_vm_finding_reports_that_disk(tmp_path: Path) -> None:
    from stackbench.audit.report import run_rules
    from stackbench.audit.rules import REGISTRY

    empty = tmp_path / "empty"
    empty.mkdir()
    config = tmp_path / "qemu-server" / "100.conf"
    config.parent.mkdir()
    config.write_text(BAD_VM.read_text())

    def audit() -> tuple[list[dict], dict]:
        facts = load_facts(empty, [config], STORAGE)
        return ([f.to_json() for f in run_rules(facts, REGISTRY).findings],
                audit_subject(empty, facts, captured_here=False, vm_configs=[config]).facts)

    findings, facts = audit()
    assert any(f["rule"] == "KVM-DISCARD" and len(f["disks"]) == 2 for f in findings)
    config.write_text(BAD_VM.read_text().replace("size=500G", "size=500G,discard=on"))
    findings_now, facts_now = audit()
    changes, _ = compare_audits({"facts": facts}, findings, findings_now, facts_now)
    fixed = [f for f in changes["fixed"] if f["rule"] == "KVM-DISCARD"]
    assert [f["disks"] for f in fixed] == [["sata1"]] and fixed[0]["subject"].endswith("100.conf sata1")
    assert "sata1" in fixed[0]["evidence"] and "scsi0" not in fixed[0]["evidence"]


def test_the_subject_is_the_machine_and_the_vm_never_the_path(tmp_path: Path) -> None:
    one, two = _capture(tmp_path, "one"), _capture(tmp_path, "two")
    assert machine_key(one) == machine_key(two) == (f"machine:{MACHINE[:16]}", None)
    other = _capture(tmp_path, "other", machine=hashlib.sha256(b"another").hexdigest())
    assert machine_key(other)[0] != machine_key(one)[0]
    # the lab capture: no machine-id hash, and its host name is the placeholder "(none)": no subject
    assert machine_key(PROBE_23) == (None, None)
    named = _capture(tmp_path, "named", machine=None)
    manifest = json.loads((named / "probe.json").read_text())
    (named / "probe.json").write_text(json.dumps({**manifest, "host": "pve"}))
    key, host = machine_key(named)
    assert host == "pve" and key == f"host:{hashlib.sha256(b'pve').hexdigest()[:16]}"
    # a VM given with --vm-config is in the subject by its VM id and smbios uuid, wherever the file is
    moved = tmp_path / "elsewhere" / "100-old.conf"
    moved.parent.mkdir()
    shutil.copyfile(BAD_VM, moved)
    keys = {audit_subject(one, load_facts(one, [p], STORAGE), captured_here=False, vm_configs=[p]).key
            for p in (BAD_VM, moved)}
    assert keys == {f"machine:{MACHINE[:16]}+pve:100:6f2a3e10-0000-4000-8000-000000000100"}
    libvirt = DATA / "libvirt" / "zvol-tuned.xml"
    subject = audit_subject(one, load_facts(one, [libvirt]), captured_here=False, vm_configs=[libvirt])
    assert subject.key.startswith(f"machine:{MACHINE[:16]}+libvirt:") and subject.source == "capture+config"


def test_an_audit_of_an_unknown_machine_is_stored_and_compared_with_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    for _ in range(2):
        done = cli_here("audit", "--from", str(PROBE_23), "--db", db)
        assert done.returncode == 3
        assert "compared with no earlier one" in done.stderr and "Stored as audit" in done.stderr
    audits = Store(db).list_audits()
    assert len(audits) == 2 and all(a.subject_key is None and a.previous_id is None for a in audits)
    assert "Since the audit" not in done.stdout


def test_label_without_db_and_a_bad_db_fail_before_the_facts_are_read(tmp_path: Path) -> None:
    labelled = cli_here("audit", "--from", str(PROBE_23), "--label", "x")
    assert labelled.returncode != 0 and "--db" in labelled.stderr and "Traceback" not in labelled.stderr
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    bad = cli_here("audit", "--from", str(PROBE_23), "--db", str(blocker / "sub" / "r.db"))
    assert bad.returncode == 1 and "--db" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_a_damaged_stored_audit_is_one_line_and_can_be_removed(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    done = cli_here("audit", "--from", str(_capture(tmp_path)), "--db", str(db), "--json")
    audit_id = json.loads(done.stdout)["audit_id"]
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE audits SET document = ? WHERE id = ?",
                           (json.dumps({"findings": [{"rule": "X"}]}), audit_id))
    shown = cli_here("show", audit_id, "--db", str(db))
    assert shown.returncode == 1 and "damaged" in shown.stderr and "stackbench rm" in shown.stderr
    assert "Traceback" not in shown.stderr and shown.stdout == ""
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE audits SET document = 'garbage{' WHERE id = ?", (audit_id,))
    garbage = cli_here("show", audit_id[:8], "--db", str(db))
    assert garbage.returncode == 1 and "damaged" in garbage.stderr and "Traceback" not in garbage.stderr
    listed = cli_here("runs", "--db", str(db), "--json")
    assert [a["audit_id"] for a in json.loads(listed.stdout)["audits"]] == [audit_id]
    removed = cli_here("rm", audit_id[:8], "--db", str(db), "--yes", "--json")
    assert json.loads(removed.stdout) == {"deleted": [audit_id]}
    assert Store(str(db)).list_audits() == []


@pytest.mark.slow
def test_two_audits_of_this_machine_are_the_same_subject_by_its_machine_id(tmp_path: Path) -> None:
    """The probe saves machine-id-hash.txt (never the id), so a second audit of this machine finds the first."""
    machine_file = Path("/etc/machine-id")
    if not machine_file.is_file() or not machine_file.read_text().strip():
        pytest.skip("this machine has no /etc/machine-id")  # containers may lack one; the probe then saves none
    db = str(tmp_path / "r.db")
    first, second = (_audit("--db", db) for _ in range(2))
    assert first["subject"]["key"] == second["subject"]["key"]
    machine_id = Path("/etc/machine-id").read_text().strip()
    expected = hashlib.sha256(f"stackbench audit subject {machine_id}".encode()).hexdigest()[:16]
    assert first["subject"]["key"] == f"machine:{expected}" and machine_id not in json.dumps(first)
    assert first["subject"]["source"] in ("host", "guest") and first["changes"] is None
    assert second["changes"]["previous_audit_id"] == first["audit_id"]
    assert second["changes"]["fixed"] == [] and second["changes"]["new"] == []


def test_min_severity_filters_what_is_shown_and_the_record_keeps_every_finding(tmp_path: Path) -> None:
    """A `--min-severity warn` audit after an `info` one: the info findings are neither shown nor called fixed."""
    db = str(tmp_path / "r.db")
    capture = _capture(tmp_path)
    first = _audit("--from", str(capture), "--db", db)
    assert any(f["severity"] == "info" for f in first["findings"])
    second = _audit("--from", str(capture), "--db", db, "--min-severity", "warn")
    assert {f["severity"] for f in second["findings"]} <= {"crit", "err", "warn"}
    assert second["changes"]["fixed"] == [] and second["changes"]["new"] == []
    assert {f["change"] for f in second["findings"]} == {"still"}
    assert len(Store(db).get_audit(second["audit_id"]).findings) == len(first["findings"])


def test_a_second_audit_of_a_clean_machine_says_what_changed_once_and_prints_no_empty_table(tmp_path: Path) -> None:
    """Issue 33: the second `audit --db` of a machine without findings printed an empty findings table, an
    empty table of changes and the "Since the audit" line twice (as that table's title, then as a line)."""
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "machine-id-hash.txt").write_text(f"{MACHINE}  -\n")  # a subject, and nothing to find
    db = str(tmp_path / "r.db")
    first = cli_here("audit", "--from", str(facts), "--db", db)
    assert first.returncode == 0 and "Since the audit" not in first.stdout, first.stderr
    for fmt in ("table", "markdown"):
        second = cli_here("audit", "--from", str(facts), "--db", db, "-f", fmt)
        assert second.returncode == 0, second.stderr
        assert second.stdout.count("Since the audit") == 1, second.stdout
        assert "OK! No findings from" in second.stdout
        assert not any(mark in second.stdout for mark in ("┏", "|---", "| severity", "0 findings")), second.stdout
