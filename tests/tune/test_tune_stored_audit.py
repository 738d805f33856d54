"""`stackbench tune -t DIR --audit ID`: the knobs that answer a stored audit's findings, where that audit is of
this machine, made on it live since it booted, and its findings still hold. Every audit here is made by the real
`stackbench audit --db` into a real SQLite store in tmp_path, on a real loop device with ext4 whose read-ahead
and mount options each test sets (never a host-wide setting); where a test changes a stored audit's row
afterwards, its docstring says why no real audit can have what it needs."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, update

from conftest import cli_here
from stackbench.probe.system import boot_time
from stackbench.store import schema
from tune.test_tune_session import PLAN, QUICK, device_of, read_ahead_file

FIX = "Audit this machine now with `stackbench audit --db URL`"
VM_CONFIG = Path(__file__).parent.parent / "data" / "pve" / "corpus" / "118-cache-writeback-zfspool.conf"


def stored_audit(db: Path, *args: str) -> dict:
    """A real `audit --db` of this machine (or of what `args` say): its document, its id in it."""
    done = cli_here("audit", "--db", str(db), "--json", *args)
    assert done.returncode in (0, 3), done.stderr
    return json.loads(done.stdout)


def tune(target: Path, db: Path, *args: str):  # noqa: ANN201 - conftest's Result
    return cli_here("tune", "-t", str(target), "--db", str(db), *args)


def refused(done, *words: str) -> str:  # noqa: ANN001
    """The one error line of a refusal (exit 1), which says what to do."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("Error: ") and all(word in line for word in words), line
    return line


def test_a_stored_audit_of_this_machine_proposes_the_knobs_of_its_findings_and_says_which(planted: Path, state,
                                                                                           tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    audit = stored_audit(db, "--label", "before")
    device = device_of(planted.parent)
    done = tune(planted, db, "--audit", audit["audit_id"][:8], "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["audit"]["audit_id"] == audit["audit_id"] and plan["audit"]["label"] == "before"
    assert plan["audit"]["created_at"] == audit["created_at"] and plan["dry_run"] is True
    [knob] = plan["knobs"]
    assert (knob["knob"], knob["from"], knob["to"]) == ("blockdev.read_ahead_kb", "0", "128")
    assert [(w["rule"], w["subject"]) for w in knob["why"]] == [("BLK-READAHEAD-OFF", device)]
    [atime] = [n for n in plan["not_proposed"] if n["what"] == "mount.atime"]
    assert atime["why"] == "a semantic knob: add --allow semantic to try it"

    shown = tune(planted, db, "--audit", "before")  # by its label, on the terminal
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    when = datetime.fromisoformat(audit["created_at"]).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    assert (f"tune plan for {planted.parent} (ext4 on {device}) from audit {audit['audit_id'][:12]} (before) of "
            f"{when} UTC") in text
    assert "BLK-READAHEAD-OFF on" in text and "dry run: nothing was changed" in text
    assert read_ahead_file(planted.parent).read_text().strip() == "0" and not state.exists()  # nothing changed


def test_a_finding_fixed_since_the_audit_is_not_proposed_and_one_new_since_is_only_counted(
        ext4_loop: Path, state, tmp_path: Path) -> None:
    """The audit sees read-ahead 0; then read-ahead is set to the 128 its fix names and the mount is made
    strictatime: the first is "already fixed since the audit", the second is not the stored audit's."""
    db = tmp_path / "s.db"
    read_ahead_file(ext4_loop).write_text("0")
    audit = stored_audit(db)
    read_ahead_file(ext4_loop).write_text("128")
    subprocess.run(["mount", "-o", "remount,strictatime", str(ext4_loop)], check=True)
    done = tune(ext4_loop, db, "--audit", audit["audit_id"], "--allow", "semantic", "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["knobs"] == [] and f"audit {audit['audit_id'][:12]} of " in plan["said"]
    assert "that still holds" in plan["said"]
    [fixed] = [n for n in plan["not_proposed"] if n["what"] == "blockdev.read_ahead_kb"]
    assert fixed["why"].startswith("already fixed since the audit")
    device = device_of(ext4_loop)
    assert [(f["rule"], f["subject"], f["evidence"]) for f in fixed["findings"]] == [
        ("BLK-READAHEAD-OFF", device, f"/sys/block/{device}/queue/read_ahead_kb = 0 (block queue)")]  # as seen then
    assert not [n for n in plan["not_proposed"] if n["what"] in ("mount.atime", "MNT-STRICTATIME")]
    assert ("MNT-STRICTATIME", str(ext4_loop)) in [(f["rule"], f["subject"]) for f in plan["audit"]["new_since"]]
    assert read_ahead_file(ext4_loop).read_text().strip() == "128" and not state.exists()

    live = json.loads(cli_here("tune", "-t", str(ext4_loop), "--allow", "semantic", "--json").stdout)
    assert [k["knob"] for k in live["knobs"]] == ["mount.atime"] and live["audit"] is None  # without --audit


def test_an_audit_with_vm_configs_is_of_the_machine_before_its_first_plus(planted: Path, state,
                                                                          tmp_path: Path) -> None:
    """`audit --vm-config` makes the subject `machine:...+pve:118:...`: the machine is the part before the `+`."""
    db = tmp_path / "s.db"
    audit = stored_audit(db, "--vm-config", str(VM_CONFIG))
    assert audit["subject"]["key"].startswith("machine:") and "+pve:118" in audit["subject"]["key"]
    done = tune(planted, db, "--audit", audit["audit_id"], "--json")
    assert done.returncode == 0, done.stderr
    assert [k["knob"] for k in json.loads(done.stdout)["knobs"]] == ["blockdev.read_ahead_kb"]


def test_an_audit_of_saved_facts_is_refused_even_of_this_machine(planted: Path, state, tmp_path: Path) -> None:
    db, facts = tmp_path / "s.db", tmp_path / "facts"
    assert cli_here("facts", "save", str(facts)).returncode == 0
    captured = stored_audit(db, "--from", str(facts))
    here = stored_audit(db)
    assert captured["subject"]["key"] == here["subject"]["key"]  # the same machine: refused for being a capture
    line = refused(tune(planted, db, "--audit", captured["audit_id"]), f"audit {captured['audit_id'][:12]}",
                   f"saved facts (--from {facts})", FIX)
    assert "not this machine's live settings" in line and not state.exists()


def test_an_audit_of_another_machine_is_refused(planted: Path, state, tmp_path: Path) -> None:
    """The other machine is this one with another /etc/machine-id, bind-mounted over it in a mount namespace of
    the audit's own (`unshare --mount`: the host's file is untouched): the real audit, run as it would run there."""
    db, other_id = tmp_path / "s.db", tmp_path / "machine-id"
    other_id.write_text("0123456789abcdef0123456789abcdef\n")
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         'mount --bind "$1" /etc/machine-id && exec "$2" -m stackbench audit --db "$3" --json',
         "sh", str(other_id), sys.executable, str(db)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 3), done.stderr
    other = json.loads(done.stdout)
    here = stored_audit(db)
    assert other["subject"]["key"] != here["subject"]["key"] and other["subject"]["source"] == here["subject"]["source"]
    refused(tune(planted, db, "--audit", other["audit_id"]), f"audit {other['audit_id'][:12]} is of another machine",
            FIX)
    assert tune(planted, db, "--audit", here["audit_id"]).returncode == 0
    assert not state.exists()


def test_an_audit_older_than_this_boot_is_refused(planted: Path, state, tmp_path: Path) -> None:
    """No test can audit before the machine booted, so a real audit's time is moved to an hour before the boot
    in its row: everything else of it is as `audit` stored it."""
    db = tmp_path / "s.db"
    audit = stored_audit(db)
    booted = boot_time()
    assert booted is not None
    assert tune(planted, db, "--audit", audit["audit_id"]).returncode == 0  # made since the boot: taken
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as connection:
        connection.execute(update(schema.audits).where(schema.audits.c.id == audit["audit_id"])
                           .values(created_at=datetime.fromtimestamp(booted, timezone.utc) - timedelta(hours=1)))
    engine.dispose()
    refused(tune(planted, db, "--audit", audit["audit_id"]), "before this machine last booted", FIX)
    assert not state.exists()


def test_an_id_that_names_no_audit_is_one_line_with_the_fix(planted: Path, state, tmp_path: Path) -> None:
    """Unknown, deleted, a run's, and a prefix of two audits. Ids are random, so two audits that share a prefix
    are made by giving two real audits' rows ids that start alike (the chance of it otherwise: 1 in 65536)."""
    db = tmp_path / "s.db"
    refused(tune(planted, db, "--audit", "feedbeef"), "no audit with id or label 'feedbeef'", "stackbench runs")
    gone = stored_audit(db)["audit_id"]
    assert cli_here("rm", gone[:12], "--yes", "--db", str(db)).returncode == 0
    refused(tune(planted, db, "--audit", gone[:12]), f"no audit with id or label '{gone[:12]}'")

    run = cli_here("run", "-t", str(planted), *PLAN, "--runs", "1", "--db", str(db), "--label", "a-run", "--json")
    assert run.returncode == 0, run.stderr
    run_id = json.loads(run.stdout)["run_id"]
    for ref in (run_id[:8], "a-run"):
        refused(tune(planted, db, "--audit", ref), f"'{ref}' is a run ({run_id[:12]}), not an audit",
                "`stackbench runs --kind audit` lists them")

    first, second = stored_audit(db)["audit_id"], stored_audit(db)["audit_id"]
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as connection:
        for old in (first, second):
            new = "abcd" + old[4:]
            connection.execute(update(schema.audit_findings).where(schema.audit_findings.c.audit_id == old)
                               .values(audit_id=new))
            connection.execute(update(schema.audits).where(schema.audits.c.id == old).values(id=new))
    engine.dispose()
    refused(tune(planted, db, "--audit", "abcd"), "id prefix 'abcd' matches several audits", "more characters")
    assert read_ahead_file(planted.parent).read_text().strip() == "0" and not state.exists()


def test_audit_and_knob_together_are_bad_usage(planted: Path, state, tmp_path: Path) -> None:
    done = tune(planted, tmp_path / "s.db", "--audit", "x", "--knob", "blockdev.read_ahead_kb=128")
    assert done.returncode == 2
    assert done.stderr.strip() == ("Error: --audit and --knob cannot be combined: --audit chooses the knobs from its "
                                   "findings. Give --audit ID for the knobs that answer that audit, or --knob "
                                   "ID[=VALUE] for your own.")
    assert not (tmp_path / "s.db").exists()


@pytest.mark.slow
def test_apply_measures_the_stored_audits_knobs_and_the_session_names_the_audit(planted: Path, state,
                                                                                tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    audit = stored_audit(db)
    done = tune(planted, db, "--audit", audit["audit_id"][:12], "--apply", "--json", *QUICK, "--rounds", "2",
                "--looks", "2", "--no-confirm")
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)
    assert session["audit"]["audit_id"] == audit["audit_id"]
    assert [(k["knob"], k["from"], k["to"]) for k in session["knobs"]] == [("blockdev.read_ahead_kb", "0", "128")]
    shown = cli_here("show", session["session"][:12], "--db", str(db))
    assert f"the knobs answer the findings of audit {audit['audit_id'][:12]} of" in " ".join(shown.stdout.split())
    refused(tune(planted, db, "--audit", session["session"][:12]), "is a tune session", "not an audit")
    assert cli_here("tune", "--rollback", session["session"][:12]).returncode == 0
    assert read_ahead_file(planted.parent).read_text().strip() == "0"
