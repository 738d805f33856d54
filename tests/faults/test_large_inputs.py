"""A large valid fio output is imported in memory proportional to it, not ten times it.

A 330 MB json+ output took 3.2 GB to import: every document of a --status-interval log was kept parsed, and
json+ latency buckets were dicts of about five times the bytes of their text. Now the peak is the text once,
the parsed results, and what the store needs to write the text (about 3x the file). Each import runs in its
own interpreter, which reports its peak RSS after the import and the RSS it had before it. The peak is the
kernel's VmHWM: ru_maxrss would include the RSS of the test process the interpreter was forked from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA

JSONPLUS = DATA / "fio" / "seqwrite-posixaio.jsonplus.json"  # real fio 3.33 json+ output, 367 buckets
MiB = 1024**2
MOST = 4.0  # the peak's growth over the RSS before the import, in file sizes (before the fix 7.0 and 6.0; now 3.3, 3.7)

MEASURE = r"""
import resource, sys
from stackbench.cli import app  # every module the import needs, loaded before the baseline
import stackbench.load.importer, stackbench.store, stackbench.report.run_json
import numpy, scipy.stats  # what the statistics of the printed runs load: a constant, not the file's
before = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize()
from stackbench.cli import run_app
try:
    run_app(["import", sys.argv[1], "--db", sys.argv[2], "--json"])
except SystemExit as done:
    assert not done.code, done.code
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
sys.stderr.write(f"{before} {peak}\n")
"""


def _peak_growth(path: Path, tmp_path: Path) -> float:
    """(peak RSS - RSS before the import) / file size, for `stackbench import path`."""
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), f"sqlite:///{tmp_path / 'r.db'}"],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "XDG_STATE_HOME": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    before, peak = map(int, done.stderr.strip().splitlines()[-1].split())
    return (peak - before) / path.stat().st_size


@pytest.mark.slow  # imports about 90 MB: ~30 s on a loaded machine
def test_a_large_status_interval_log_is_imported_in_memory_proportional_to_it(tmp_path: Path) -> None:
    """3000 json+ documents (48 MB), as `--status-interval` writes them: only the last is the result."""
    log = tmp_path / "status.json"
    log.write_text((JSONPLUS.read_text() + "\n") * 3000)
    growth = _peak_growth(log, tmp_path)
    assert growth < MOST, f"the import took {growth:.2f}x the file's size"


@pytest.mark.slow
def test_a_large_json_plus_document_is_imported_in_memory_proportional_to_it(tmp_path: Path) -> None:
    """One json+ document of 1000 jobs of 1500 buckets each (43 MB, indented as fio writes it)."""
    document = json.loads(JSONPLUS.read_text())
    job = document["jobs"][0]
    job["write"]["clat_ns"]["bins"] = {str(1000 + 16 * n): 1 + n % 7 for n in range(1500)}  # fio has up to 1856
    document["jobs"] = [{**job, "jobname": f"job{n}"} for n in range(1000)]
    big = tmp_path / "big.json"
    big.write_text(json.dumps(document, indent=2, separators=(",", " : ")))
    growth = _peak_growth(big, tmp_path)
    assert growth < MOST, f"the import took {growth:.2f}x the file's size"
