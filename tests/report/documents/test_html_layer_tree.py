"""The HTML report's layer table in a real browser (Debian's chromium driven by Playwright): the layers
nested by depth stay indented, as the terminal shows them. HTML collapses a cell's leading spaces, which
drew every disk at the root of its tree; the tree column now keeps them (report/tabular.py `tree`)."""

from __future__ import annotations

from pathlib import Path

from report.test_layers_activity import three_layers
from stackbench.load.report_contents import build_contents
from stackbench.report.documents.html import render_html
from stackbench.store import open_store
from stored_runs import store_run
from tree_offsets import CHROMIUM, assert_depth_drawn, tree_offsets


def test_the_report_draws_nested_layers_indented_in_a_browser(tmp_path: Path) -> None:
    """The vm run: md0 over sda and sdb (synthetic counts, tests/report/test_layers_activity.py); no chart
    is drawn (the report's charts are not what is tested, and they cost seconds)."""
    from playwright.sync_api import sync_playwright

    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    (_, vm, _), _ = three_layers()
    store_run(store, vm)
    contents = build_contents(store, [vm.id], figures=lambda *_: [])
    store.dispose()
    path = tmp_path / "report.html"
    path.write_bytes(render_html(contents))
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.as_uri())
            table = page.locator("p.caption:text-is('Layers during each cell') + div table")
            offsets = tree_offsets(table)
        finally:
            browser.close()
    assert [text.strip() for text, _ in offsets] == ["md0 (md)", "sda (disk)", "sdb (disk)", "bottom layers, summed"]
    assert_depth_drawn(offsets)
