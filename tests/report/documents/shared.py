"""What the report document tests share. The real runs: small fio runs (1-2 s each) in a store, made by
the real `stackbench` entry point (in process, conftest.cli_here: the run records the command line a user
would have typed), once per session (conftest.py).

`first` measures a directory under `.../home/<user>/bench` with a label holding this machine's host name and
text that looks like HTML and Rich markup; `second` measures with 2 s runs so that it has per-second samples,
and is labelled with the host name too. Their facts carry this machine's real host name, boot id and, where
the disk reports them, its serial number: what the redaction tests look for.
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from conftest import cli_here

ROOT = Path(__file__).resolve().parents[3]
HOST = socket.gethostname()
USER = "alice-rpt"
SCRIPT = "<script>alert(1)</script>"
MARKUP = "[bold]x[/]"


@dataclass(frozen=True)
class Measured:
    db: str
    first: dict  # the run's `show --json`
    second: dict
    target: Path

    @property
    def identifiers(self) -> list[str]:
        """Every identifier the facts and labels carry that a redacted report must not show."""
        found = {HOST, USER, str(self.target)}
        for run in (self.first, self.second):
            facts = run["facts"]
            found.add(facts["system"]["hostname"])
            found.add(facts["process"]["host"])
            found.add(facts["process"]["boot_id"])
            for device in facts["target"]["block_devices"]:
                if device.get("serial"):
                    found.add(device["serial"])
        return sorted(v for v in found if v)


def artefacts() -> Path:
    """Where tests leave files for people to look at: $STACKBENCH_ARTEFACTS, else test-artefacts/ in the repo
    (git-ignored)."""
    path = Path(os.environ.get("STACKBENCH_ARTEFACTS") or ROOT / "test-artefacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def leaks(text: str, identifiers: list[str]) -> list[str]:
    """The identifiers that appear in `text` as a word (any case)."""
    return [v for v in identifiers if re.search(rf"(?<![A-Za-z0-9]){re.escape(v)}(?![A-Za-z0-9])", text, re.IGNORECASE)]


def _run(db: str, target: Path, label: str, *args: str) -> dict:
    done = cli_here("run", "-t", str(target), "--db", db, "--label", label, "--ramp", "0", "--size", "8M", "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def make_measured(base: Path) -> Measured:
    target = base / "home" / USER / "bench"
    target.mkdir(parents=True)
    db = f"sqlite:///{base / 'results.db'}"
    first = _run(db, target, f"{HOST} {SCRIPT} {MARKUP}", "--bs", "4k", "--rw", "randread,randwrite", "--qd", "1",
                 "--runs", "2", "--runtime", "1")
    second = _run(db, target, f"tuned {HOST}", "--bs", "4k", "--rw", "randread,randwrite", "--qd", "1",
                  "--runs", "2", "--runtime", "2")
    done = cli_here("goal", "add", "4K QD1 rnd read >= 1 IOPS", "--db", db)
    assert done.returncode == 0, done.stderr
    return Measured(db, first, second, target)


def draw_figures(runs, comparison, gaps) -> list:
    """Real charts drawn with matplotlib's object API from what the report hands its chart function: a bar
    chart of IOPS per cell per run with the run's label, target and host in its texts, so a test can see
    that a chart only ever gets placeholders."""
    from matplotlib.figure import Figure as Drawing

    from stackbench.report.charts.figure import Figure

    figures = []
    for run in runs:
        drawing = Drawing(figsize=(8, 4))
        axes = drawing.subplots()
        axes.barh([cell.pattern for cell in run.cells], [cell.result.iops for cell in run.cells], color="#0072b2")
        axes.set_xlabel("IOPS")
        axes.set_ylabel("cell")
        axes.set_title(f"{run.label} on {run.target}")
        host = (run.facts.get("system") or {}).get("hostname")
        drawing.text(0.01, 0.01, f"host {host}; {run.facts.get('fio_version')}", fontsize=8)
        drawing.tight_layout()
        figures.append(Figure("matrix", f"IOPS per cell of {run.label}", f"IOPS of each cell of {run.label} on "
                              f"{run.target}, as horizontal bars.", drawing))
    if comparison is not None:
        drawing = Drawing(figsize=(8, 3))
        axes = drawing.subplots()
        axes.barh([row.pattern for row in comparison.rows], [(row.ratio - 1) * 100 for row in comparison.rows])
        axes.set_xlabel("change (%)")
        axes.set_title(f"{comparison.other.label} vs {comparison.base.label}")
        drawing.tight_layout()
        figures.append(Figure("compare", "Change per cell", "The change of each cell in %.", drawing))
    return figures


VIEWPORTS = (("desktop", {"width": 1280, "height": 900}), ("phone", {"width": 390, "height": 844}))


def at_each_size(browser: Any, path: Path) -> Iterator[tuple[str, Any]]:
    """An HTML report opened in a playwright `browser` at a desktop's and a phone's size: (name, page) once
    loaded, checked to have fetched nothing but the document and not to scroll sideways."""
    for name, viewport in VIEWPORTS:
        page = browser.new_page(viewport=viewport)
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert requests == [path.as_uri()], requests
        widths = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth, innerWidth]")
        assert max(widths[:2]) <= widths[2], (name, widths)
        yield name, page
        page.close()
