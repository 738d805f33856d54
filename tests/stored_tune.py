"""A realistic stored tune session, as `tune --apply --db` stores one, for the tests that look at how its
report and its web page read: five knobs (a recordsize race won on a child dataset, compression, a module
parameter with a long name, the coupled vm.dirty, a user knob), arms labelled as tune labels them
(`tune-SESSION-KNOB-a`), four cells each, and each knob's `compare` made by compare from the stored runs.

The runs are synthetic (tests/synthetic.py): a real session is many minutes of fio on a ZFS pool, and what a
report or a page shows is the stored document and runs, not the measuring."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from synthetic import cell, run
from stored_runs import store_run
from stackbench.model.results import new_id

WHEN = datetime(2026, 11, 28, 13, 56, tzinfo=timezone.utc)
CELLS = (("randread", 4096, 1, 9300.0), ("randwrite", 4096, 32, 41000.0), ("read", 1 << 20, 4, 2100.0),
         ("write", 128 << 10, 8, 5200.0))
CHILD = "tank/bench/stackbench-tune-5e55a0b1c2d3"
# knob, subjects, from, to, rounds, B / A per cell, log sd of a round (1.0: too noisy to tell), decision, why
KNOBS = (
    ("zfs.recordsize", [CHILD], "128K", "1M", 8, (0.97, 1.04, 1.38, 1.21), 0.01, "kept", "significantly better"),
    ("zfs.compression", [CHILD], "off", "lz4", 12, (1.0, 1.01, 0.99, 1.0), 0.01, "undone", "compare says same"),
    ("zfs.module.zfs_dirty_data_max", ["tank"], "4294967296", "8589934592", 6, (1.0, 1.3, 1.0, 1.4), 1.0,
     "undone", "no evidence"),
    ("vm.dirty", ["host"], "20%/10%", "268435456/67108864", 4, (1.0, 1.12, 1.0, 1.09), 0.02, "kept",
     "significantly better"),
    ("mydb.wal_sync_method", ["host"], "fdatasync", "open_datasync", 4, (1.0, 1.02, 1.0, 0.96), 0.03, "undone",
     "no evidence"),
)


def _arm(session: str, name: str, arm: str, rounds: int, factors: tuple[float, ...], sd: float) -> Any:
    """One arm's run: each cell's IOPS in each round, around its centre times `factors`, the rounds' spread
    by `sd` (a fixed wave, not random: the same report every time)."""
    orders = ["AB", "BA", "BA", "AB"] * (rounds // 4) + ["AB", "BA"] * (rounds % 4 // 2)
    phase = 0.0 if arm == "a" else 1.3
    cells = [cell(rw=rw, bs=bs, qd=qd, rounds=list(range(rounds)),
                  runs=[iops * factor * math.exp(sd * math.sin(2.1 * i + phase + k)) for i in range(rounds)])
             for k, ((rw, bs, qd, iops), factor) in enumerate(zip(CELLS, factors))]
    facts = {"fio_version": "fio-3.33", "ab": {"session": f"{session}:{name}", "arm": arm.upper(), "command": "true",
                                               "prepare": None, "rounds": rounds, "orders": orders}}
    made = run(cells, label=f"tune-{session[:8]}-{name}-{arm}", facts=facts, run_id=new_id())
    return replace(made, target="/tank/bench", created_at=WHEN, finished_at=WHEN + timedelta(minutes=2))


def _compared(store: Any, session: str, name: str, rounds: int, factors: tuple[float, ...], sd: float,
              alpha: float) -> dict[str, Any]:
    """compare's JSON of one knob's two stored arms, as the session stores it."""
    from stackbench.analysis.compare import compare_runs

    arms = [_arm(session, name, arm, rounds, factors if arm == "b" else (1.0,) * 4, sd) for arm in ("a", "b")]
    for made in arms:
        store_run(store, made)
    base, other = (store.get_run(made.id) for made in arms)
    return compare_runs(base, other, alpha=alpha, min_effect=0.05).to_json()


def _session(store: Any, session: str) -> dict[str, Any]:
    """The session's document as `tune --apply --json` prints it."""
    knobs = []
    for name, subjects, before, after, rounds, factors, sd, decision, why in KNOBS:
        compare = _compared(store, session, name, rounds, factors, sd, 0.0108)
        knobs.append({"knob": name, "subjects": subjects, "from": before, "to": after, "safety": "safe",
                      "cost": "instant", "apply": [f"set {name}={after}"], "undo": [f"set {name}={before}"],
                      "decision": decision, "why": why, "rounds": rounds, "orders": [], "compare": compare,
                      "stop": f"decided at look 2 of 4 (round {rounds}) at alpha 0.0108"})
    knobs[0]["race"] = {"original": "128K", "candidates": ["16K", "64K", "1M"], "rounds": 6,
                        "orders": [], "alpha_looks": [0.0049, 0.0451], "looks": [], "winner": "1M",
                        "not_raced": [], "ratios": {"16K": 0.81, "64K": 1.06, "1M": 1.19},
                        "dropped": [{"value": "16K", "round": 4, "behind": "1M", "ratio": 0.81,
                                     "why": "significantly worse than 1M at look 1"}],
                        "stop": "one candidate ahead of every other at look 2"}
    confirmation = _compared(store, session, "confirmation", 8, (0.98, 1.15, 1.37, 1.3), 0.01, 0.0108)
    return {"session": session, "status": "completed", "error": None, "created_at": WHEN.isoformat(),
            "finished_at": (WHEN + timedelta(minutes=23)).isoformat(), "journal": f"/var/lib/stackbench/{session}.jsonl",
            "target": "/tank/bench (zfs tank/bench on sda, sdb)", "audit": None,
            "where": f"dataset knobs measured on the throwaway child dataset {CHILD}",
            "child": {"dataset": CHILD, "parent": "tank/bench", "created_at": WHEN.isoformat(),
                      "destroyed_at": (WHEN + timedelta(minutes=22)).isoformat(),
                      "applied_to_parent": ["zfs set recordsize=1M tank/bench"],
                      "applied_to_parent_at": (WHEN + timedelta(minutes=22)).isoformat(), "left_alone": []},
            "calibration": {"said": "noise 1.2% per round (4 A/A rounds): changes of 3% or more can be proven "
                                    "in 12 rounds"},
            "confirmation": {"rounds": 8, "decision": "kept", "why": "proven better than the original",
                             "stop": "decided at look 3 of 4 (round 8) at alpha 0.0108", "compare": confirmation},
            "knobs": knobs,
            "now_set": ["zfs set recordsize=1M tank/bench",
                        "echo 268435456 > /proc/sys/vm/dirty_bytes; echo 67108864 > /proc/sys/vm/dirty_background_bytes"],
            "persist": ["/etc/sysctl.d/60-stackbench-tune.conf: vm.dirty_bytes = 268435456, "
                        "vm.dirty_background_bytes = 67108864"],
            "undo": f"stackbench tune --rollback {session}"}



def store_wide_session(store: Any, label: str = "tank-bench") -> tuple[str, dict[str, Any], list[str]]:
    """Store the session and its arms' runs in `store`: (session id, its document, the arms' run ids)."""
    session = new_id()
    document = _session(store, session)
    store.add_tune_session(session_id=session, label=label, status="completed", created_at=WHEN,
                           finished_at=WHEN + timedelta(minutes=23), document=document)
    compared = [k["compare"] for k in document["knobs"]] + [document["confirmation"]["compare"]]
    return session, document, [c[side]["run_id"] for c in compared for side in ("base", "other")]
