"""compare, layers and the spread table on fleet runs: rows per host and on the total, never mixed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stackbench.analysis.compare import compare_runs
from stackbench.analysis.fleet import host_spread
from stackbench.analysis.layers import layer_gaps
from stackbench.base.errors import StackbenchError
from stackbench.report.fleet import spread_table
from stackbench.model.results import TOTAL_HOST

from synthetic import cell, run


def _fleet(values: dict[str, list[float]], run_id: str) -> object:
    cells = []
    for host, runs in values.items():
        base = cell(runs=runs)
        cells.append(replace(base, id=f"{run_id}{host}", result=replace(base.result, host=host)))
    return run(cells, run_id=run_id * 32, label=run_id)


A = {"node1": [100, 101, 99, 100, 100], "node2": [50, 51, 49, 50, 50], TOTAL_HOST: [150, 152, 148, 150, 150]}
B = {"node1": [100, 101, 99, 100, 100], "node2": [80, 81, 79, 80, 80], TOTAL_HOST: [180, 182, 178, 180, 180]}


def test_compare_matches_each_host_and_the_total_with_its_own() -> None:
    result = compare_runs(_fleet(A, "a"), _fleet(B, "b"))
    rows = {row.pattern.rsplit("@", 1)[1]: row for row in result.rows}
    assert set(rows) == {"node1", "node2", TOTAL_HOST}
    assert rows["node1"].verdict == "same"
    assert rows["node2"].verdict == "keep" and rows["node2"].ratio == pytest.approx(1.6, rel=0.01)
    assert rows[TOTAL_HOST].ratio == pytest.approx(1.2, rel=0.01)


def test_a_fleet_run_and_a_one_machine_run_are_not_mixed() -> None:
    local = run([cell(runs=[100, 101, 99, 100, 100])], run_id="c" * 32)
    with pytest.raises(StackbenchError, match="different hosts.*never mixed"):
        compare_runs(_fleet(A, "a"), local)
    with pytest.raises(StackbenchError, match="different hosts"):
        layer_gaps([_fleet(A, "a"), local])


def test_fleets_of_different_hosts_differ_in_a_key_fact() -> None:
    other = {"node1": A["node1"], "node3": A["node2"], TOTAL_HOST: A[TOTAL_HOST]}
    with pytest.raises(StackbenchError, match="hosts: \\['node1', 'node2'\\] vs \\['node1', 'node3'\\]"):
        compare_runs(_fleet(A, "a"), _fleet(other, "b"))


def test_layers_per_host() -> None:
    gaps = layer_gaps([_fleet(B, "b"), _fleet(A, "a")])
    factors = {row.pattern.rsplit("@", 1)[1]: row.factors[0] for row in gaps.rows}
    assert factors["node2"] == pytest.approx(1.6, rel=0.01) and factors["node1"] == pytest.approx(1.0)


def test_the_spread_names_the_slowest_host() -> None:
    [spread] = host_spread(_fleet(A, "a"))
    assert spread.slowest.result.host == "node2" and spread.fastest.result.host == "node1"
    assert spread.spread == pytest.approx(0.5, rel=0.02)
    assert spread.total is not None
    table = spread_table([spread])
    assert table.rows[0][3].startswith("node2 ") and table.rows[0][3].endswith(" IOPS")
    assert table.rows[0][5].endswith(" %")


def test_cache_warnings_are_judged_per_host_and_shared() -> None:
    from stackbench.fleet.servers import ReadyHost
    from stackbench.fleet.run import cache_warnings
    from stackbench.model.plan import Plan, Workload

    def host(name: str, ram: int, fs: str) -> ReadyHost:
        return ReadyHost(name, 0, f"/x/{name}", True, {"system": {"ram_bytes": ram}, "target_facts": {"fs_type": fs}})

    plan = Plan(name="p", workloads=(Workload(rw="randread", bs=4096, iodepth=1, size=1024**3),))
    notes = cache_warnings(plan, [host("a", 8 * 1024**3, "ext4"), host("b", 64 * 1024**2, "ext4"),
                                  host("c", 8 * 1024**3, "ext4"), host("d", 8 * 1024**3, "tmpfs")])
    assert sorted((n.code.value, n.subject) for n in notes) == [("PAGE_CACHE", "a, c"), ("TMPFS_TARGET", "d")]
