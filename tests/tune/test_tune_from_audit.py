"""`stackbench tune -t DIR` without `--knob`: the machine probed as `audit` does, and the knobs that answer the
findings about the target's stack proposed. Real loop devices with ext4 (the read-ahead and the mount options
of a device each test creates; never a host-wide setting), the real audit probe and rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.audit.rule import Finding
from stackbench.measure.tune_from_audit import propose
from stackbench.tune.subjects import TargetInfo
from tune.test_tune_session import QUICK, device_of, read_ahead_file


def test_the_dry_run_proposes_the_knobs_that_answer_the_findings_and_says_what_it_leaves_out(planted, state) -> None:
    done = cli_here("tune", "-t", str(planted), "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    device = device_of(planted.parent)
    [knob] = plan["knobs"]
    assert (knob["knob"], knob["from"], knob["to"], knob["value_from"]) == (
        "blockdev.read_ahead_kb", "0", "128", "the fix of BLK-READAHEAD-OFF")
    assert knob["candidates"] == ["128", "512", "2048", "8192"] and knob["safety"] == "safe"
    assert [(w["rule"], w["subject"]) for w in knob["why"]] == [("BLK-READAHEAD-OFF", device)]
    assert knob["apply"] == [f"echo 128 > /sys/block/{device}/queue/read_ahead_kb"]
    [atime] = [n for n in plan["not_proposed"] if n["what"] == "mount.atime"]
    assert atime["why"] == "a semantic knob: add --allow semantic to try it"
    assert [(f["rule"], f["subject"]) for f in atime["findings"]] == [("MNT-STRICTATIME", str(planted.parent))]
    assert read_ahead_file(planted.parent).read_text().strip() == "0" and not state.exists()  # nothing changed

    allowed = cli_here("tune", "-t", str(planted), "--allow", "semantic")
    assert allowed.returncode == 0, allowed.stderr
    text = " ".join(allowed.stdout.split())
    assert "mount.atime" in text and "MNT-STRICTATIME on" in text and "BLK-READAHEAD-OFF on" in text
    assert "strictatime" in text and "relatime" in text and "dry run: nothing was changed" in text


def test_a_target_without_findings_says_there_is_nothing_to_tune(ext4_loop: Path, state: Path) -> None:
    read_ahead_file(ext4_loop).write_text("128")
    done = cli_here("tune", "-t", str(ext4_loop))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert f"nothing to tune on {ext4_loop} (ext4 on {device_of(ext4_loop)})" in said
    assert "--knob ID[=VALUE] tries a knob anyway" in said
    data = json.loads(cli_here("tune", "-t", str(ext4_loop), "--json").stdout)
    assert data["knobs"] == [] and "nothing to tune" in data["said"]
    assert not state.exists()


def test_a_finding_only_a_forbidden_setting_answers_and_one_about_another_dataset() -> None:
    info = TargetInfo(path="/tank/vm", fs_type="zfs", mount_point="/tank/vm", dataset="tank/vm", pool="tank")
    findings = [Finding("DS-SYNC-DISABLED", "crit", "tank/vm", "sync=disabled (local)", "zfs inherit sync tank/vm"),
                Finding("DS-COMPRESS-OFF", "warn", "tank/other", "compression=off", "zfs set compression=lz4 tank/other")]
    found = propose(info, findings, frozenset(), knobs=())
    [left] = found.not_proposed
    assert left.what == "DS-SYNC-DISABLED" and "zfs.sync, a setting tune never tries" in left.why
    assert found.proposed == [] and found.findings == 2


@pytest.mark.slow
def test_apply_runs_the_proposed_knobs_as_if_given_by_knob(planted: Path, state: Path) -> None:
    done = cli_here("tune", "-t", str(planted), "--apply", "--json", "--db", str(planted.parent.parent / "s.db"),
                    *QUICK, "--rounds", "2", "--looks", "2", "--no-confirm")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(k["knob"], k["from"], k["to"], k["rounds"]) for k in result["knobs"]] == [
        ("blockdev.read_ahead_kb", "0", "128", 2)]
    cli_here("tune", "--rollback", result["session"][:8])
    assert read_ahead_file(planted.parent).read_text().strip() == "0"


def test_a_finding_whose_fix_names_no_candidate_races_them_all(planted: Path) -> None:
    """Read-ahead off, with a fix that names no value: every candidate is proposed, raced (no first one
    chosen by its place in the list), and the plan says so."""
    from stackbench.tune.knobs import BY_ID
    from stackbench.tune.subjects import target_info

    device = device_of(planted.parent)
    finding = Finding("BLK-READAHEAD-OFF", "warn", device, "read_ahead_kb = 0", "raise the read-ahead")
    [proposal] = propose(target_info(planted), [finding], frozenset(), knobs=(BY_ID["blockdev.read_ahead_kb"],)).proposed
    assert [p.value for p in proposal.planned.race] == ["128", "512", "2048", "8192"]
    assert proposal.chosen == "the knob's candidates, raced"
    assert proposal.planned.to_json()["to"] == "race: 128, 512, 2048, 8192"
