"""The HTML report from real runs: one self-contained file with every part the issue lists, user text
escaped, charts inline as SVG, nothing fetched; and in a real browser (Debian's chromium driven by
playwright): no request but the document, no sideways scrolling on a phone, a screenshot to look at."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import cli_here
from report.documents.shared import MARKUP, SCRIPT, Measured, artefacts, at_each_size, draw_figures
from stackbench.load.report_contents import build_contents
from stackbench.report.documents.html import CSP, render_html
from stackbench.store import open_store

pytestmark = pytest.mark.slow  # real fio runs, once per session


@pytest.fixture(scope="module")
def page(measured: Measured, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The command's HTML of both runs with the comparison and the layers."""
    refs = [measured.first["run_id"], measured.second["run_id"]]
    output = tmp_path_factory.mktemp("html") / "report.html"
    done = cli_here("report", *refs, "--compare", *refs, "--layers", ",".join(refs), "--names", "low,high",
                   "-o", str(output), "--db", measured.db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Wrote {output} (html; ")
    return output.read_text()


def test_it_holds_every_part_of_a_run(page: str, measured: Measured) -> None:
    for part in ("Machine", "AES-NI", "RAM", "Kernel", "fio", "File system", "Device ", "sectors 512 B logical",
                 "Goals", "PASS", "4K QD1 rnd read", "4K QD1 rnd write", "p99 clat", "To reproduce",
                 "stackbench run -t", "rw=randread", "[global]", "Comparison", "Verdict:", "Layers", "low→high"):
        assert part in page, part
    assert "--db" not in page and "results.db" not in page  # a database URL may hold a password
    for run in (measured.first, measured.second):
        assert run["run_id"] in page
        assert run["facts"]["fio_version"] in page
    # per run its cells, what its layers did (where the run sampled devices), goals and facts, and its warnings
    # if any; then the comparison, both runs' layer rows (where either sampled them), the layers and every
    # layer's run's device rows (where any sampled them)
    layered = [any(cell.get("layers") for cell in run["cells"]) for run in (measured.first, measured.second)]
    assert all(layered), "the measured runs sampled the devices under their target"
    expected = sum(3 + bool(run["warnings"]) + has for run, has in zip((measured.first, measured.second), layered))
    assert page.count("<table>") == expected + 2 + 2 * any(layered)
    assert "Layers during each cell, A and B" in page and "Layers during each cell, every run" in page


def test_user_text_is_escaped_not_interpreted(page: str) -> None:
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert SCRIPT not in page and "<script" not in page.lower()
    assert MARKUP in page


def test_it_can_fetch_nothing(page: str) -> None:
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP.replace(chr(39), "&#39;")}">' in page
    assert "default-src &#39;none&#39;" in page
    assert re.findall(r"""(?:src|href|action)\s*=\s*["'](?!#)""", page) == []  # in-page anchors only
    assert "@import" not in page
    assert re.findall(r"""url\(\s*["']?(?!#)""", page) == []  # a chart's clip path url(#id) is in the page


def test_charts_are_inline_svg_with_unique_ids(measured: Measured) -> None:
    refs = [measured.first["run_id"], measured.second["run_id"]]
    contents = build_contents(open_store(measured.db), refs, compare=refs, figures=draw_figures)
    html = render_html(contents).decode()
    assert html.count("<svg") == len(contents.figures) == 3
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for figure in contents.figures:
        assert figure.title in html or figure.title.replace("<", "&lt;").replace(">", "&gt;") in html
    assert "&lt;script&gt;" in html and "<script" not in html.lower()  # the label in a chart title too
    again = build_contents(open_store(measured.db), refs, compare=refs, figures=draw_figures)
    assert render_html(again).decode() == html  # the same runs make the same bytes: placeholders, ids, charts


def test_in_a_browser_nothing_is_fetched_a_phone_does_not_scroll_sideways_and_it_prints(
    measured: Measured, tmp_path: Path,
) -> None:
    from playwright.sync_api import sync_playwright

    refs = [measured.first["run_id"], measured.second["run_id"]]
    contents = build_contents(open_store(measured.db), refs, compare=refs, layers=refs, figures=draw_figures,
                              argv=["report", *refs])
    path = tmp_path / "report.html"
    path.write_bytes(render_html(contents))
    shots = artefacts()
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for name, page in at_each_size(browser, path):
                assert page.locator("svg").count() == 3
                shot = shots / f"report-html-{name}.png"
                page.screenshot(path=str(shot), full_page=True)
                print(f"screenshot: {shot}")
            page = browser.new_page()
            page.goto(path.as_uri())
            page.emulate_media(media="print")
            assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
            printed = shots / "report-html-print.pdf"
            page.pdf(path=str(printed), format="A4")
            assert printed.read_bytes().startswith(b"%PDF")
            print(f"printed: {printed}")
        finally:
            browser.close()
