"""The Markdown report from real runs: pipe tables, fenced commands, and each chart a PNG file beside the
.md, linked by its relative name; user text escaped so it shows as typed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import cli_here
from report.documents.shared import Measured, draw_figures
from stackbench.base.output_files import Destination, write_files
from stackbench.load.report_contents import build_contents
from stackbench.report.documents.markdown import render as render_markdown
from stackbench.store import open_store

pytestmark = pytest.mark.slow  # real fio runs, once per session

PNG = b"\x89PNG\r\n\x1a\n"


def test_tables_commands_and_escaped_text(measured: Measured, tmp_path: Path) -> None:
    refs = [measured.first["run_id"], measured.second["run_id"]]
    output = tmp_path / "tuning.md"
    done = cli_here("report", *refs, "--compare", *refs, "-o", str(output), "--db", measured.db, "--json")
    assert done.returncode == 0, done.stderr
    text = output.read_text()
    reply = json.loads(done.stdout)
    assert sorted(reply["files"]) == sorted(str(p) for p in tmp_path.iterdir())  # the .md and its PNGs, nothing else
    assert len(reply["files"]) == 1 + reply["charts"] and reply["files"][0] == str(output)
    assert "| Pattern | IOPS (± 95% CI of runs) | MB/s |" in text
    assert "|:---|---:|---:|" in text
    assert "## Comparison" in text and "```sh\nstackbench run -t " in text
    assert "rw=randread" in text
    assert r"host-1 \<script\>alert(1)\</script\> \[bold\]x\[/\]" in text  # the label, escaped, in the heading
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # in a fenced block text is literal anyway
    assert "<script>" not in prose and "[bold]" not in prose


def test_each_chart_is_a_png_beside_the_file(measured: Measured, tmp_path: Path) -> None:
    refs = [measured.first["run_id"], measured.second["run_id"]]
    contents = build_contents(open_store(measured.db), refs, compare=refs, figures=draw_figures)
    stem = "my report"
    main, beside = render_markdown(contents, stem)
    write_files([(tmp_path / f"{stem}.md", main), *((tmp_path / name, data) for name, data in beside)], force=False,
                destination=Destination("-o"))
    assert [name for name, _ in beside] == ["my report-1-matrix.png", "my report-2-matrix.png", "my report-3-compare.png"]
    links = [unquote(link) for link in re.findall(r"\]\(([^)]+\.png)\)", main.decode())]
    assert links == [name for name, _ in beside]
    for name in links:
        assert (tmp_path / name).read_bytes().startswith(PNG)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"{stem}.md", *links])  # no temporary file left
