"""`stackbench chart --kind hosts` on a fleet run stored as the fleet runner stores one (per-host cells and the
total's cells of one group per cell through `Store.add_replicate`, the run's facts with `fleet` and `hosts`).

The values are synthetic, chosen so each cell has a different slowest host: the chart must name the one the
"Across hosts" table names, draw one bar series per host and the total, and carry units on its axes. The
real fleet runs (3 network-namespace hosts) are tested in tests/fleet; this keeps the chart's test fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from report.charts.conftest import Store, chart, cli_here, ids, svg_tree, texts
from stackbench.model.fio_result import DirectionResult, Latency
from stackbench.model.plan import Workload
from stackbench.model.results import TOTAL_HOST, new_id
from stackbench.store import Store as Repository
from stackbench.store.repository import CellRecord, OutputRecord

HOSTS = ("node1", "node2", "node3")
# cell -> per-host IOPS: node2 is the slowest in the read, node3 in the write.
CELLS = {
    "randread": {"node1": 9865.0, "node2": 9100.0, "node3": 10484.0},
    "randwrite": {"node1": 5200.0, "node2": 5350.0, "node3": 4100.0},
}


def _result(rw: str, host: str, iops: float) -> DirectionResult:
    return DirectionResult(
        job_name=host, direction="read" if "read" in rw else "write", rw=rw, bs=4096, iodepth=1, numjobs=1,
        iops=iops, bw_bytes=iops * 4096, io_bytes=int(iops * 4096), total_ios=int(iops), runtime_ms=1000,
        usr_cpu=None, sys_cpu=None, clat=Latency(mean_ns=90_000.0, p50_ns=80_000.0, p99_ns=200_000.0), host=host,
    )


def _store_fleet_run(url: str) -> str:
    store = Repository(url)
    facts = {"fio_version": "fio-3.33", "fleet": {"hosts": list(HOSTS), "total_host": TOTAL_HOST},
             "hosts": {h: {"fio_version": "fio-3.33"} for h in HOSTS}}
    run_id = store.create_run(source="measured", label="rack4", target="node1,node2,node3:/srv/bench",
                              plan_name="custom", planned_cells=len(CELLS), facts=facts)
    for rw, per_host in CELLS.items():
        workload = Workload(rw=rw, bs=4096, iodepth=1, size=8 * 1024**2, runtime=1.0)
        records = [CellRecord(workload, _result(rw, h, iops), (), {"runs": 1}) for h, iops in per_host.items()]
        records.append(CellRecord(workload, _result(rw, TOTAL_HOST, sum(per_host.values())), (),
                                  {"runs": 1, "total_of": list(HOSTS)}))
        store.add_replicate(run_id, new_id(), OutputRecord(raw_text="{}", fio_version="fio-3.33"), records)
    store.finish_run(run_id, "complete", [])
    return run_id


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Store:
    url = f"sqlite:///{tmp_path_factory.mktemp('fleet') / 'results.db'}"
    return Store(url, {"rack4": _store_fleet_run(url)})


def test_hosts_chart_draws_every_host_the_total_and_names_the_slowest(fleet: Store, tmp_path: Path) -> None:
    out = tmp_path / "hosts.svg"
    result = chart(fleet, out, "rack4", "--kind", "hosts", "--keep-identifiers")
    assert result.returncode == 0, result.stderr
    root = svg_tree(out)
    words = texts(root)
    assert len(ids(root, "series-")) == len(HOSTS)  # one bar series per host
    assert len(ids(root, "total-")) == 1
    assert [h for h in HOSTS if h in words] == list(HOSTS)  # the legend names every host
    slowest = [" ".join(texts(group)) for group in root.iter() if group.get("id", "").startswith("slowest-")]
    assert slowest == ["slowest: node2, spread 13.2 %", "slowest: node3, spread 23.4 %"]
    assert words.count("IOPS (I/O per second)") == 2  # both panels carry the unit
    assert "29,449 IOPS" in words  # the read cell's total, with its unit
    footer = next(t for t in words if "stackbench" in t and "run " in t)
    assert "fio-3.33" in footer and "rack4" in footer and "node1, node2, node3" in footer
    assert list(tmp_path.iterdir()) == [out]


def test_a_chart_is_redacted_as_a_report_is_unless_identifiers_are_kept(fleet: Store, tmp_path: Path) -> None:
    """The host names of the bars, the legend, the slowest host and the footer become the placeholders a
    report of the run shows (report/redact.py), and the fleet's total stays the total."""
    out = tmp_path / "hosts.svg"
    result = chart(fleet, out, "rack4", "--kind", "hosts")
    assert result.returncode == 0, result.stderr
    root = svg_tree(out)
    words = " ".join(texts(root))
    assert not [h for h in HOSTS if h in words]
    assert len(ids(root, "series-")) == len(HOSTS) and len(ids(root, "total-")) == 1
    slowest = [" ".join(texts(group)) for group in root.iter() if group.get("id", "").startswith("slowest-")]
    assert slowest == ["slowest: host-2, spread 13.2 %", "slowest: host-3, spread 23.4 %"]
    assert "host-1, host-2, host-3" in words


def test_hosts_chart_in_mb_s(fleet: Store, tmp_path: Path) -> None:
    out = tmp_path / "hosts.svg"
    assert chart(fleet, out, "rack4", "-k", "hosts", "--metric", "mb_s").returncode == 0
    words = texts(svg_tree(out))
    assert words.count("MB/s (10^6 bytes per second)") == 2
    assert f"{29449 * 4096 / 1e6:,.0f} MB/s" in words


def test_hosts_chart_of_a_one_machine_run_is_refused_in_one_line(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "hosts.svg"
    result = chart(imported, out, "jsonplus", "--kind", "hosts")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "is not a fleet run" in result.stderr and "--kind matrix" in result.stderr
    assert not out.exists()


def test_the_reports_of_a_fleet_run_include_the_hosts_chart(fleet: Store, tmp_path: Path) -> None:
    """`stackbench report` places the run's figures: for a fleet run the hosts chart is among them."""
    out = tmp_path / "r.md"
    result = cli_here("report", "rack4", "-o", str(out), "--db", fleet.url)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "per host and the total" in text
    images = sorted(p.name for p in tmp_path.rglob("*.svg")) + sorted(p.name for p in tmp_path.rglob("*.png"))
    assert any("hosts" in name for name in images), images


def test_run_figures_of_a_fleet_run_end_with_the_hosts_chart(fleet: Store) -> None:
    from stackbench.report.charts import run_figures

    run = Repository(fleet.url).get_run(fleet.runs["rack4"])
    kinds = [f.kind for f in run_figures(run)]
    assert kinds[-1] == "hosts" and kinds.count("hosts") == 1
