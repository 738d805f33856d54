"""The web compare page shows what each layer did in both runs (report/layer_table.py's table, as the CLI
prints it), device names escaped as HTML."""

from __future__ import annotations

import html

from analysis_layers import MB, odd_mirror_run
from stored_runs import store_run
from web.site import SHARED


def test_the_compare_page_shows_both_runs_layers_with_names_escaped(fresh_site) -> None:  # noqa: ANN001
    a = odd_mirror_run("before", "a" * 32, 10 * MB, odd="<b>x")
    b = odd_mirror_run("after", "b" * 32, 20 * MB, odd="<b>x")
    with fresh_site(SHARED) as site:
        for one in (a, b):
            store_run(site.store, one)
        site.accounts.claim(site.ids["alice"], [a.id, b.id])
        page = site.login("alice").get(f"/compare/{a.id}/{b.id}").text
    assert page.index("Verdict:") < page.index("Layers during each cell, A and B")
    assert html.escape("<b>x (disk)") in page and "<b>x" not in page
    assert "no interval and no test on them" in page
