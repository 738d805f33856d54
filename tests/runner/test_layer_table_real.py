"""The layer table of a real run: ext4 on a loop device over a file, O_DIRECT writes measured by fio, and the
table `stackbench show` prints from what the run stored (analysis/layer_activity.py, report/layer_table.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.measure.runner import RunRequest, execute_run
from stackbench.model.plan import Plan, Workload
from stackbench.store import Store

MiB = 1024 * 1024


def _show(run_id: str, db: str, *args: str) -> str:
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run([sys.executable, "-m", "stackbench", "show", run_id, "--db", db, *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_loop_device_under_ext4_writes_what_fio_wrote(tmp_path: Path, ext4_loop: Path) -> None:
    """O_DIRECT overwrites of a laid-out file: the loop device under ext4 counts fio's bytes one for one
    (amplification 1.00 within 5 %, the journal's few blocks aside); `show` names it in its layer table."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = Store(db)
    plan = Plan("custom", (Workload(rw="randwrite", bs=4096, iodepth=4, size=16 * MiB, runtime=3, direct=True),),
                runs=2)
    run = execute_run(store, RunRequest(target=ext4_loop, plan=plan))
    [layers] = [c["layers"] for c in json.loads(_show(run.id, db, "--json"))["cells"]]
    loop = layers["layers"][0]
    assert loop["device"].startswith("loop") and loop["kind"] == "loop" and loop["depth"] == 0
    assert layers["runs"] == 2 and layers["fio_write_bytes"] > 0 and layers["fio_read_bytes"] == 0
    assert loop["write_amplification"] == pytest.approx(1.0, abs=0.05), loop
    assert loop["avg_request_bytes"] == pytest.approx(4096, rel=0.05) and loop["await_ms"] > 0
    assert loop["iops"] > 0 and 0 < loop["util_pct"] <= 100 and loop["read_amplification"] is None
    assert layers["not_recorded"] == []
    # the layers under the loop device's backing file follow it, deeper in the stack
    assert len(layers["layers"]) >= 2 and all(layer["depth"] >= 1 for layer in layers["layers"][1:])
    text = _show(run.id, db)
    assert "Layers during each cell" in text and f"{loop['device']} (loop)" in text
    assert max(len(line) for line in text.splitlines()) <= 80
