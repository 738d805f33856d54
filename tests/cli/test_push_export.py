"""`stackbench export --openmetrics FILE`: node_exporter's textfile collector format, checked with the
real OpenMetrics parser of prometheus_client; which runs are exported; the file is replaced atomically, and only
with --force (tests/faults/test_output_targets.py holds what it refuses)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from conftest import DATA, cli_here
from stackbench.store import open_store

HOSTILE = 'lab "A"\\B {x="y"}'  # the CLI refuses newlines in labels; tests/web/test_api.py pushes one


def _families(path: Path) -> dict:
    return {family.name: family for family in text_string_to_metric_families(path.read_text())}


def test_export_writes_parseable_openmetrics_of_the_latest_complete_run_per_series(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for label in ("older", HOSTILE):  # the same series (no host, no target, preset import): the newest wins
        assert cli_here("import", str(DATA / "fio" / "randrw-bs-seq-rand.json"), "--label", label,
                        "--db", db).returncode == 0
    store = open_store(db)
    newest = store.list_runs()[0][0]
    out = tmp_path / "stackbench.prom"
    out.write_text("old content")
    kept = cli_here("export", "--openmetrics", str(out), "--db", db)  # an existing file is replaced only with --force
    assert kept.returncode == 1 and "already exists. Pass --force" in kept.stderr and out.read_text() == "old content"
    result = cli_here("export", "--openmetrics", str(out), "--force", "--db", db)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db", "stackbench.prom"]  # no temp file left
    assert out.read_text().endswith("# EOF\n")
    families = _families(out)
    info = families["stackbench_run"].samples
    assert [(s.labels["run_id"], s.labels["label"]) for s in info] == [(newest.id, HOSTILE)]
    run = store.get_run(newest.id)
    iops = {(s.labels["rw"], s.labels["bs"], s.labels["direction"]): s.value
            for s in families["stackbench_result_iops"].samples}
    assert iops == {(c.workload.rw, str(c.workload.bs), c.result.direction): c.result.iops for c in run.cells}
    bandwidth = sorted(s.value for s in families["stackbench_result_bytes_per_second"].samples)
    assert bandwidth == sorted(c.result.bw_bytes for c in run.cells)
    stamp = families["stackbench_run_last_success_timestamp_seconds"]
    assert stamp.unit == "seconds" and [s.value for s in stamp.samples] == [run.finished_at.timestamp()]
    store.dispose()


def test_export_of_an_empty_store_is_still_a_valid_exposition(tmp_path: Path) -> None:
    out = tmp_path / "empty.prom"
    result = cli_here("export", "--openmetrics", str(out), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode == 0, result.stderr
    assert all(not family.samples for family in _families(out).values())


def test_export_into_a_missing_directory_fails_in_one_line(tmp_path: Path) -> None:
    result = cli_here("export", "--openmetrics", str(tmp_path / "no" / "x.prom"), "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert result.returncode != 0 and "does not exist" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
