"""Audit rules on facts captured from a real OpenZFS 2.1.11 pool (tests/data/zfs, made by lab/) and on
Proxmox VM configs (tests/data/pve). Every rule has a failing and a passing set of facts: where the real
capture does not show a problem, the failing set is the capture with one property changed, and the reverse."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Callable

import pytest

from conftest import run_cli
from stackbench.audit.facts import Facts, Vdev, load_facts
from stackbench.audit.vm import parse_qm_conf
from stackbench.audit.rules import BY_ID, REGISTRY

DATA = Path(__file__).parent / "data"
CAPTURE = DATA / "zfs" / "openzfs-2.1.11-debian12"
BAD_VM, GOOD_VM = DATA / "pve" / "100-bad.conf", DATA / "pve" / "101-good.conf"


def real(vm: Path | None = None) -> Facts:
    return load_facts(CAPTURE, [vm] if vm else [])


def changed(edit: Callable[[Facts], None], vm: Path | None = None) -> Facts:
    facts = copy.deepcopy(real(vm))
    edit(facts)
    return facts


def _set(dataset: str, prop: str, value: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.datasets[dataset][prop] = (value, "local")
    return edit


def _mirror_ashift(value: int) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.vdevs["tank"][0].ashift = value
    return edit


def _no_special(facts: Facts) -> None:
    facts.vdevs["tank"] = [v for v in facts.vdevs["tank"] if v.vdev_class != "special"]


def _capacity(value: str) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.pools["tank"]["capacity"] = value
    return edit


def _add_log(leaf: str, rotational: str | None = None) -> Callable[[Facts], None]:
    def edit(facts: Facts) -> None:
        facts.vdevs["tank"].append(Vdev(name=leaf, type="disk", vdev_class="logs", leaves=[leaf]))
        if rotational is not None:
            facts.block_queue[leaf] = {"rotational": rotational, "physical_block_size": "512"}
    return edit


def _weaker_special(facts: Facts) -> None:
    facts.vdevs["tank"][0].type = "raidz2"
    facts.vdevs["tank"][0].leaves = ["vdb", "vdc", "vdf", "vdg"]
    facts.vdevs["tank"][1] = Vdev(name="mirror-1", type="mirror", vdev_class="special", leaves=["vde", "vdh"])


def _vm_disk_option(key: str, option: str | None, drop: str | None = None) -> Callable[[Facts], None]:
    """Edit the first VM's config text (a user-authored file) and parse it again."""
    def edit(facts: Facts) -> None:
        vm = facts.vms[0]
        path = BAD_VM if vm.vmid == BAD_VM.stem else GOOD_VM
        lines = []
        for line in path.read_text().splitlines():
            if line.startswith(f"{key}:"):
                parts = [p for p in line.split(",") if not (drop and p.startswith(drop + "="))]
                line = ",".join(parts + ([option] if option else []))
            lines.append(line)
        facts.vms[0] = parse_qm_conf("\n".join(lines), vm.name)
    return edit


# rule id -> (facts that must produce a finding, facts that must not)
CASES: dict[str, tuple[Callable[[], Facts], Callable[[], Facts]]] = {
    "ZP-SPECIAL-SINGLE": (real, lambda: changed(_no_special)),
    "ZP-ASHIFT-LOW": (lambda: changed(_mirror_ashift(9)), real),
    "ZP-CAPACITY": (lambda: changed(_capacity("95")), real),
    "DS-SYNC-DISABLED": (real, lambda: changed(_set("tank/vm-100-disk-0", "sync", "standard"))),
    "DS-ATIME": (real, lambda: changed(lambda f: [_set(d, "relatime", "on")(f) for d in ("tank", "tank/images")])),
    "DS-COMPRESS-OFF": (real, lambda: changed(lambda f: [_set(d, "compression", "lz4")(f)
                                                         for d in ("tank/images", "tank/vm-100-disk-0")])),
    "DS-VBS-TINY": (lambda: changed(_set("tank/vm-100-disk-0", "volblocksize", "2048")), real),
    "DS-VBS-GUEST": (lambda: changed(_set("tank/vm-100-disk-0", "volblocksize", "131072")), real),
    "DS-SSB-SIZE": (lambda: changed(_set("tank/images", "special_small_blocks", "131072")), real),
    "KVM-CACHE": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "KVM-CPU-NOAES": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "KVM-BUS": (lambda: real(BAD_VM), lambda: real(GOOD_VM)),
    "ZP-SPECIAL-WEAKER": (lambda: changed(_weaker_special), real),
    "ZP-SPECIAL-FULL": (lambda: changed(lambda f: f.class_space.update({("tank", "special"): (1000, 800)})), real),
    "ZP-LOG-SINGLE": (lambda: changed(_add_log("vdf", "0")), real),
    "ZP-LOG-SLOW": (lambda: changed(_add_log("vdf", "1")), lambda: changed(_add_log("vdf", "0"))),
    "DS-SYNC-ALWAYS-HDD": (lambda: changed(_set("tank/images", "sync", "always")),
                           lambda: changed(lambda f: [_set("tank/images", "sync", "always")(f), _add_log("vdf", "0")(f)])),
    "ARC-MAX-LE-MIN": (lambda: changed(lambda f: f.module_parameters.update({"zfs_arc_max": str(f.arcstats["c_min"] - 1)})),
                       real),
    "ARC-OVERCOMMIT": (lambda: real(BAD_VM), lambda: changed(lambda f: f.meminfo.update({"MemTotal": 64 * 1024**3}), BAD_VM)),
    "HOST-INIT-ON-ALLOC": (lambda: changed(lambda f: setattr(f, "cmdline", f.cmdline + " init_on_alloc=1")), real),
    "KVM-AIO-NATIVE": (lambda: changed(_vm_disk_option("scsi0", "aio=native"), BAD_VM),
                       lambda: changed(_vm_disk_option("scsi0", "aio=native"), GOOD_VM)),
    "KVM-IOTHREAD-MISSING": (lambda: changed(_vm_disk_option("scsi0", None, drop="iothread"), GOOD_VM), lambda: real(GOOD_VM)),
    "KVM-IOTHREAD-IGNORED": (lambda: changed(_vm_disk_option("scsi0", "iothread=1"), BAD_VM), lambda: real(GOOD_VM)),
}


def test_every_rule_has_cases_docs_and_a_source() -> None:
    assert {r.id for r in REGISTRY} == set(CASES)
    for rule in REGISTRY:
        assert rule.doc.strip().startswith(rule.id), rule.id
        assert rule.source.startswith("https://"), rule.id
        assert rule.fix and rule.rationale


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.id)
def test_rule_fires_on_the_failing_facts_and_not_on_the_passing_ones(rule) -> None:
    failing, passing = CASES[rule.id]
    findings = list(rule.check(failing()))
    assert findings and all(f.rule_id == rule.id and f.evidence and f.fix for f in findings)
    assert list(rule.check(passing())) == []


def test_the_capture_is_parsed_as_the_pool_was_built() -> None:
    facts = real()
    assert facts.zfs_version.startswith("zfs-kmod-2.1.11") and facts.version == (2, 1, 11)  # the module runs the pool
    (mirror, special) = facts.vdevs["tank"]
    assert (mirror.type, mirror.vdev_class, mirror.leaves, mirror.ashift) == ("mirror", "normal", ["vdb", "vdc"], 12)
    assert (special.type, special.vdev_class, special.leaves, special.ashift) == ("disk", "special", ["vde"], 9)
    assert facts.pools["tank"]["ashift"] == "9"  # the property is only a hint: the mirror got 12
    assert facts.block_queue["vdb"]["physical_block_size"] == "4096"
    assert facts.arcstats["c_max"] > 0 and facts.meminfo["MemTotal"] > 0
    assert facts.zvols() == ["tank/vm-100-disk-0"]


@pytest.mark.parametrize("cmdline, config, dmesg, source", [
    ("", "y", None, "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y"),
    ("", None, "mem auto-init: stack:all(zero), heap alloc:on, heap free:off", "dmesg"),
    ("init_on_alloc=1", None, None, "init_on_alloc=1 in /proc/cmdline"),
    ("init_on_alloc=0 init_on_alloc=on", "y", None, "init_on_alloc=on in /proc/cmdline"),
    ("init_on_alloc=0", "y", "mem auto-init: stack:off, heap alloc:on, heap free:off", None),
    ("init_on_alloc=1 init_on_alloc=0", "y", None, None),
    ("", "y", "mem auto-init: stack:off, heap alloc:off, heap free:off", None),  # the kernel's own report wins
    ("", None, None, None),
])
def test_init_on_alloc_from_the_command_line_the_kernel_log_or_the_build_default(cmdline, config, dmesg, source) -> None:
    def edit(facts: Facts) -> None:
        facts.cmdline = f"{facts.cmdline} {cmdline}".strip()
        facts.kernel_config = {"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": config} if config else {}
        facts.mem_auto_init = dmesg
    findings = list(BY_ID["HOST-INIT-ON-ALLOC"].check(changed(edit)))
    if source is None:
        assert findings == []
    else:
        (finding,) = findings
        assert source in finding.evidence and "init_on_alloc=0" in finding.fix


def test_special_small_blocks_covers_zvols_from_2_4_only() -> None:
    def on(version, ssb):
        def edit(facts: Facts) -> None:
            facts.version = version
            _set("tank/vm-100-disk-0", "special_small_blocks", ssb)(facts)
        return list(BY_ID["DS-SSB-SIZE"].check(changed(edit)))
    assert on((2, 3, 0), "8192") == []  # zvols ignore it before 2.4
    (finding,) = on((2, 4, 0), "8192")
    assert finding.subject == "tank/vm-100-disk-0" and "volblocksize=8192" in finding.evidence
    assert "compressed" in finding.evidence and finding.severity == "warn"
    assert on((2, 4, 0), "4096") == []
    no_special = changed(lambda f: [_no_special(f), _set("tank/images", "special_small_blocks", "4096")(f)])
    assert [f.severity for f in BY_ID["DS-SSB-SIZE"].check(no_special)] == ["info"]
