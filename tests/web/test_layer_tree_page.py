"""The web pages' layer tables in a real browser (Debian's chromium driven by Playwright): a run page's
"Layers during each cell" and the layers page's "every run" table keep the layers nested by depth indented,
as the terminal shows them (HTML collapses leading spaces unless the cell keeps them: report/tabular.py
`tree`, web/static/style.css `td.tree`)."""

from __future__ import annotations

import re

import pytest

from report.test_layers_activity import three_layers
from stored_runs import store_run
from tree_offsets import CHROMIUM, assert_depth_drawn, tree_offsets
from web.site import PASSWORD, SHARED

pytestmark = pytest.mark.slow  # a browser, a server and a login's password hash: 3-4 s


def test_run_and_layers_pages_draw_nested_layers_indented(fresh_site) -> None:  # noqa: ANN001
    from playwright.sync_api import expect, sync_playwright

    runs, names = three_layers()
    host, vm, _ = runs
    with fresh_site(SHARED) as site, sync_playwright() as driver:
        for one in runs:
            store_run(site.store, one)
        site.accounts.claim(site.ids["alice"], [one.id for one in runs])
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route(re.compile(r".*/chart\.svg.*"), lambda route: route.abort())  # charts: not tested here
            page.goto(site.base + "/login")
            page.get_by_label("Name").fill("alice")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            expect(page).to_have_url(re.compile(r"/runs$"))
            page.goto(f"{site.base}/runs/{vm.id}")
            on_run_page = tree_offsets(page.locator("table:has(caption:text-is('Layers during each cell'))"))
            page.goto(f"{site.base}/layers?runs={host.id},{vm.id}&names=host,vm")
            on_layers_page = tree_offsets(
                page.locator("table:has(caption:text-is('Layers during each cell, every run'))"))
        finally:
            browser.close()
    assert [text.strip() for text, _ in on_run_page] == ["md0 (md)", "sda (disk)", "sdb (disk)",
                                                         "bottom layers, summed"]
    assert_depth_drawn(on_run_page)
    assert "[bold]vda (disk)" in [text.strip() for text, _ in on_layers_page]
    assert_depth_drawn(on_layers_page)
