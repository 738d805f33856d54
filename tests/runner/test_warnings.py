"""Warnings are a closed set of codes (stackbench/model/warning.py): made by the situation each names, stored and
read back with their code, filtered by code, and every code documented in docs/json.md."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pytest
from sqlalchemy import insert

from conftest import DATA, cli_here
from stackbench.measure.abandoned import process_record, reap
from stackbench.analysis.compare import compare_runs
from stackbench.analysis.stability import run_warnings
from stackbench.cli.synclat import warnings_to_print
from stackbench.model.plan import Plan, Workload
from stackbench.report.run_json import run_json
from stackbench.measure.preparation import SilentObserver, _settle_direct
from stackbench.measure.safety import Target, cache_warning
from stackbench.store import Store, schema
from stackbench.model.warning import Warning, WarningCode
from synthetic import ab_arms, cell, run

DOCS = Path(__file__).parent.parent.parent / "docs" / "json.md"
RUNS = [1000.0, 1010.0, 995.0, 1005.0, 1002.0]
STEADY = [1000.0 + i % 3 for i in range(12)]
SMALL_RAM = {"ram_bytes": 8 * 1024**3}

ONE_RUN = Warning(
    WarningCode.TOO_FEW_RUNS, "4K QD1 rnd write dsync",
    "measured in one fio run, so there is no interval and no verdict can use it",
    "use --runs 3 or more (5 before comparing runs)",
)


# -- each code from the situation it names ------------------------------------------------------------


def _direct_io_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Warning]:
    monkeypatch.setattr("stackbench.probe.direct_io.honours_o_direct", lambda directory: (False, "EINVAL on open"))
    plan = Plan(name="quick", workloads=(Workload(rw="randread", bs=4096, iodepth=1),), direct_auto=True)
    target = Target("directory", str(tmp_path / "f.scratch"), True, tmp_path)
    warnings: list[Warning] = []
    settled = _settle_direct(plan, target, warnings, SilentObserver())
    assert not settled.workloads[0].direct
    return warnings


def _adaptive_out_of_reach() -> list[Warning]:
    noisy = cell(runs=[1000.0, 1400.0] * 5)
    reason = "target ±5% out of reach on this machine: 10 runs reached with ±9.0%; runs differed by 20% (sd)"
    return run_warnings([replace(noisy, measurement={**noisy.measurement, "mode": "adaptive", "stop_reason": reason})])


def _row_warnings(base_cell, other_cell) -> list[Warning]:  # noqa: ANN001 - synthetic cells
    (row,) = compare_runs(run([base_cell]), run([other_cell], run_id="1" * 32)).rows
    return list(row.warnings)


def _abandoned(tmp_path: Path) -> list[Warning]:
    store = Store(f"sqlite:///{tmp_path / 'abandoned.db'}")
    gone = subprocess.Popen(["true"])  # a process that has exited: its pid names nothing that runs
    gone.wait()
    record = {**process_record(workdir=tmp_path / "none", scratch=None), "pid": gone.pid, "start_ticks": 1}
    run_id = store.create_run(source="measured", label="dead", target="/x", plan_name="quick", planned_cells=1,
                              facts={"process": record})
    notes = reap(store)
    assert store.get_run(run_id).status == "abandoned"
    assert list(store.get_run(run_id).warnings) == notes  # stored with its code, read back the same
    return notes


def _scratch_left() -> list[Warning]:
    from stackbench.fleet.servers import ReadyHost
    from stackbench.fleet.run import cleanup_pass
    from stackbench.fleet.ssh import Ssh

    gone = Ssh(binary="/nonexistent/ssh")  # the cleanup pass cannot reach the host
    return cleanup_pass(gone, [ReadyHost("node1", 0, "/srv/stackbench-x-h0.scratch", True, {})], {})


def _less_safe() -> list[Warning]:
    def on(options: str, runs: list[float], run_id: str):  # noqa: ANN202 - a synthetic run
        return run([cell(runs=runs)], run_id=run_id,
                   facts={"fio_version": "fio-3.33", "target": {"fs_type": "ext4", "mount_options": options}})

    return list(compare_runs(on("rw,relatime", RUNS, "0" * 32), on("rw,nobarrier", [v * 3 for v in RUNS], "1" * 32)).warnings)


def _order_effect() -> list[Warning]:
    from stackbench.model.round_order import AB, round_orders

    orders = round_orders(6)  # the same configuration twice; the arm measured second does 5 % more
    levels = [*RUNS, 1000.0]
    a, b = ab_arms(orders, [v * (1.0 if o == AB else 1.05) for v, o in zip(levels, orders)],
                   [v * (1.05 if o == AB else 1.0) for v, o in zip(levels, orders)])
    return list(compare_runs(a, b).warnings)


def _host_dropped() -> list[Warning]:
    from stackbench.fleet.run import host_dropped

    return [host_dropped("node2", 1, "4K QD1 rnd read", "fio's server on node2 exited (status -9)")]


def _sync_noise() -> list[Warning]:
    from stackbench.analysis.synclat import sweep_noise, sweep_sizes

    noisy = cell(bs=4096, qd=1, runs=[1000.0, 1400.0, 900.0])  # a synclat size whose runs differ by ~25 %
    found = sweep_noise(sweep_sizes(run([noisy])))
    return [found] if found else []


def _disturbed() -> list[Warning]:
    """A cell one of whose runs saw CPU pressure (tests/runner/test_conditions.py makes it with a real hog)."""
    measured = cell(runs=RUNS)
    replicates = [{**r, "conditions": {"pressure": {"cpu": 60.0 if r["index"] == 1 else 1.0}}}
                  for r in measured.measurement["replicates"]]
    return run_warnings([replace(measured, measurement={**measured.measurement, "replicates": replicates})])


def _drift(**facts: object) -> list[Warning]:
    """Two separate sessions (tests/analysis/test_drift.py tells them apart from an ab session's arms)."""
    def session(run_id: str, cpu: float, **changed: object):  # noqa: ANN202 - a synthetic run
        measured = cell(runs=RUNS)
        replicates = [{**r, "conditions": {"pressure": {"cpu": cpu}}} for r in measured.measurement["replicates"]]
        return run([replace(measured, measurement={**measured.measurement, "replicates": replicates})],
                   run_id=run_id, facts={"fio_version": "fio-3.33", **changed})

    if facts:
        return list(compare_runs(session("0" * 32, 1.0, system={"kernel": "6.1.0"}),
                                 session("1" * 32, 1.0, **facts)).warnings)
    return list(compare_runs(session("0" * 32, 1.0), session("1" * 32, 50.0)).warnings)


SITUATIONS: dict[WarningCode, Callable[[pytest.MonkeyPatch, Path], list[Warning]]] = {
    WarningCode.PAGE_CACHE: lambda mp, tmp: [cache_warning(SMALL_RAM, 1024**3, True, "ext4")],
    WarningCode.TMPFS_TARGET: lambda mp, tmp: [cache_warning(SMALL_RAM, 64 * 1024**3, False, "tmpfs")],
    WarningCode.DIRECT_IO_UNAVAILABLE: _direct_io_unavailable,
    WarningCode.TOO_FEW_RUNS: lambda mp, tmp: run_warnings([cell(runs=[1000.0])]),
    WarningCode.FEW_RUNS_LOW_POWER: lambda mp, tmp: _row_warnings(cell(runs=[1000.0, 1010.0]),
                                                                  cell(runs=[1500.0, 1490.0])),
    WarningCode.CI_ABOVE_TARGET: lambda mp, tmp: _adaptive_out_of_reach(),
    WarningCode.HIGH_SPREAD: lambda mp, tmp: run_warnings([cell(runs=[1000.0, 1400.0, 900.0, 1300.0, 1000.0])]),
    WarningCode.HIGH_CV: lambda mp, tmp: run_warnings([cell(runs=RUNS, samples=[1000.0, 2000.0] * 6)]),
    WarningCode.NO_SAMPLES: lambda mp, tmp: _row_warnings(cell(samples=None, iops=100), cell(runs=RUNS)),
    WarningCode.WEAK_REPLICATES: lambda mp, tmp: _row_warnings(cell(samples=STEADY), cell(samples=STEADY)),
    WarningCode.ABANDONED: lambda mp, tmp: _abandoned(tmp),
    WarningCode.HOST_DROPPED: lambda mp, tmp: _host_dropped(),
    WarningCode.SCRATCH_LEFT: lambda mp, tmp: _scratch_left(),
    WarningCode.LESS_SAFE: lambda mp, tmp: _less_safe(),
    WarningCode.ORDER_EFFECT: lambda mp, tmp: _order_effect(),
    WarningCode.SYNC_NOISE: lambda mp, tmp: _sync_noise(),
    WarningCode.DISTURBED: lambda mp, tmp: _disturbed(),
    WarningCode.CONDITIONS_DIFFER: lambda mp, tmp: _drift(),
    WarningCode.SETUP_DIFFERS: lambda mp, tmp: _drift(system={"kernel": "6.8.0"}),
    WarningCode.LEGACY: lambda mp, tmp: [Warning.from_json("a warning from before codes")],
    WarningCode.IMPORT_UNKNOWN: lambda mp, tmp: _imported("old/3.1-randrw-terse.txt", derived=()),
    WarningCode.IMPORT_DERIVED: lambda mp, tmp: _imported("public/fio-plot/example_data/randread-01.json"),
    WarningCode.NO_LATENCY: lambda mp, tmp: _imported("old/3.1-gtod-reduce.json"),
}


def test_every_code_has_its_situation_here() -> None:
    assert set(SITUATIONS) == set(WarningCode)

def _imported(name: str, **changed: tuple[str, ...]) -> list[Warning]:
    """What `import` says of a real fio output (tests/data/fio): `changed` narrows it to one situation (a terse
    output whose counts were not derived says only what it does not say)."""
    from stackbench.load.importer import import_warnings, read_fio_file, workload_of

    result = read_fio_file(DATA / "fio" / name)[0]
    directions = [replace(d, **changed) for d in result.directions]
    return list(import_warnings([(workload_of(d), d) for d in directions]))



@pytest.mark.parametrize("code", list(SITUATIONS))
def test_each_situation_gives_its_code_and_only_that(code: WarningCode, monkeypatch, tmp_path: Path) -> None:
    warnings = SITUATIONS[code](monkeypatch, tmp_path)
    assert [w.code for w in warnings] == [code], warnings
    assert warnings[0].text and str(warnings[0])


def test_a_cell_written_once_by_design_is_not_told_to_use_more_runs() -> None:
    """cache-exhaustion is one run on purpose (a second run starts with a full cache): its warning said
    'use --runs 3 or more', advice against the preset's method."""
    written_once = cell(rw="write", bs=1024**2, qd=8, runs=[2000.0])
    written_once = replace(written_once, workload=replace(written_once.workload, time_based=False))
    once, plain = run_warnings([written_once, cell(runs=[1000.0])])
    assert once.code == plain.code == WarningCode.TOO_FEW_RUNS
    assert once.subject == "1M QD8 seq write" and "written once by design" in once.text
    assert "--runs" not in str(once) and "--kind cache" in once.fix
    assert plain.subject == "4K QD4 rnd write" and plain.fix == "use --runs 3 or more (5 before comparing runs)"


def test_cells_and_rows_are_the_subject_and_the_line_reads_as_before() -> None:
    (one,) = run_warnings([cell(runs=[1000.0]), cell(rw="randread", runs=[3000.0])])
    assert one.subject == "4K QD4 rnd write, 4K QD4 rnd read"
    assert str(one) == (
        "4K QD4 rnd write, 4K QD4 rnd read: measured in one fio run, so there is no interval and no verdict can "
        "use it; use --runs 3 or more (5 before comparing runs)"
    )
    (row,) = _row_warnings(cell(runs=[1000.0]), cell(runs=[3000.0]))
    assert row.subject == "4K QD4 rnd write" and row.code == WarningCode.TOO_FEW_RUNS
    assert str(row) == (
        "4K QD4 rnd write: 1 run on one side: a verdict needs at least 2 separate runs per side (5 recommended); "
        "rerun each side with `stackbench run --runs 5`, or use `stackbench ab --rounds 5`"
    )
    cached = cache_warning(SMALL_RAM, 1024**3, True, "ext4")
    assert cached is not None and cached.subject == "" and str(cached).startswith("read results are cache-dominated")
    assert cached.fix.startswith("use --size of at least 16.0 GiB (2x RAM)")


# -- the Warning itself -------------------------------------------------------------------------------


def test_a_code_outside_the_set_cannot_be_made() -> None:
    with pytest.raises(ValueError):
        Warning("CACHE", "", "text")  # type: ignore[arg-type]
    assert Warning("HIGH_CV", "s", "t").code is WarningCode.HIGH_CV  # type: ignore[arg-type]


def test_the_line_leaves_out_an_empty_subject_and_fix() -> None:
    assert str(Warning(WarningCode.HIGH_CV, "4K", "it swings", "run longer")) == "4K: it swings; run longer"
    assert str(Warning(WarningCode.TMPFS_TARGET, "", "it is RAM")) == "it is RAM"


def test_json_round_trip_and_what_older_or_newer_versions_stored() -> None:
    assert Warning.from_json(ONE_RUN.to_json()) == ONE_RUN
    assert ONE_RUN.to_json() == {"code": "TOO_FEW_RUNS", "subject": ONE_RUN.subject, "text": ONE_RUN.text,
                                 "fix": ONE_RUN.fix}
    assert Warning.from_json("old text") == Warning(WarningCode.LEGACY, "", "old text", "")
    newer = Warning.from_json({"code": "FROM_THE_FUTURE", "subject": "s", "text": "t", "fix": "f"})
    assert newer == Warning(WarningCode.LEGACY, "s", "t", "f")


# -- stored and shown -----------------------------------------------------------------------------------


def test_the_store_keeps_the_codes(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    first = cache_warning(SMALL_RAM, 1024**3, True, "zfs")
    assert first is not None
    run_id = store.create_run(source="measured", label="w", target="/x", plan_name="quick", planned_cells=1,
                              facts={}, warnings=[first])
    assert store.get_run(run_id).warnings == (first,)
    later = run_warnings([cell(runs=[1000.0]), cell(runs=[1000.0, 1400.0, 900.0, 1300.0, 1000.0])])
    store.finish_run(run_id, "complete", [first, *later])
    again = Store(f"sqlite:///{tmp_path / 'r.db'}").get_run(run_id)
    assert again.warnings == (first, *later)
    assert [w.code for w in again.warnings] == ["PAGE_CACHE", "TOO_FEW_RUNS", "HIGH_SPREAD"]


def test_a_run_stored_with_plain_string_warnings_reads_back_as_legacy_and_shows(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = Store(db)
    with store.engine.begin() as connection:  # as a stackbench before codes wrote it
        connection.execute(insert(schema.runs).values(
            id="ab" * 16, label="old", status="complete", source="measured",
            created_at=datetime(2026, 1, 2, tzinfo=timezone.utc), finished_at=None, target="/x", plan_name="quick",
            planned_cells=0, facts={}, warnings=["read results are cache-dominated: old words"],
            stackbench_version="0.9",
        ))
    assert store.get_run("old").warnings == (
        Warning(WarningCode.LEGACY, "", "read results are cache-dominated: old words"),
    )
    shown = cli_here("show", "old", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert "Warning: read results are cache-dominated: old words" in shown.stderr
    data = json.loads(cli_here("show", "old", "--db", db, "--json").stdout)
    assert data["warnings"] == [
        {"code": "LEGACY", "subject": "", "text": "read results are cache-dominated: old words", "fix": ""}
    ]


def test_run_and_compare_json_carry_the_objects() -> None:
    one = run([cell(runs=[1000.0])])
    stored = replace(one, warnings=tuple(run_warnings(list(one.cells))))
    assert run_json(stored)["warnings"] == [w.to_json() for w in stored.warnings]
    assert run_json(stored)["warnings"][0]["code"] == "TOO_FEW_RUNS"
    rows = compare_runs(one, run([cell(runs=[3000.0])], run_id="1" * 32)).to_json()["rows"]
    assert rows[0]["warnings"][0]["code"] == "TOO_FEW_RUNS"
    assert rows[0]["warnings"][0]["subject"] == rows[0]["pattern"]


# -- filtered by code -----------------------------------------------------------------------------------


def test_synclat_drops_the_one_run_warning_by_its_code_not_its_words() -> None:
    # Another code whose text holds the very words of the dropped one: a filter on the text would drop it too.
    same_words = Warning(WarningCode.HIGH_CV, "8K QD1 rnd write dsync", f"{ONE_RUN.text}; per-second samples")
    reworded = Warning(WarningCode.TOO_FEW_RUNS, "16K QD1 rnd write dsync", "a single run, reworded", "")
    assert warnings_to_print([ONE_RUN, same_words, reworded], shown=set()) == [same_words]


def test_synclat_prints_a_warning_only_once() -> None:
    cache = Warning(WarningCode.PAGE_CACHE, "", "read results are cache-dominated", "use --size")
    assert warnings_to_print([cache], shown={cache}) == []


# -- documented -----------------------------------------------------------------------------------------


def test_docs_json_lists_exactly_the_codes() -> None:
    text = DOCS.read_text()
    section = text[text.index("\n## Warnings\n"):]
    section = section[:section.index("\n## ", 1)]
    documented = re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE)
    assert len(documented) == len(set(documented)), "a code is listed twice"
    assert set(documented) == {code.value for code in WarningCode}
