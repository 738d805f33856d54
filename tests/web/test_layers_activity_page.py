"""The web layers page and a layers report document show what every device did during each cell in each
run (report/layer_table.py `layers_runs_table`, as `layers` prints it), device names escaped as HTML."""

from __future__ import annotations

import html

from report.test_layers_activity import three_layers
from web.site import SHARED


def test_the_layers_page_and_report_show_the_activity_with_names_escaped(fresh_site) -> None:  # noqa: ANN001
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.documents.contents import Contents
    from stackbench.report.documents.html import render_html
    from stored_runs import store_run

    runs, names = three_layers(odd="<b>vda")
    with fresh_site(SHARED) as site:
        for one in runs:
            store_run(site.store, one)
        site.accounts.claim(site.ids["alice"], [one.id for one in runs])
        page = site.login("alice").get("/layers", params={"runs": ",".join(r.id for r in runs),
                                                          "names": ",".join(names)}).text
    assert "Layers during each cell, every run" in page
    assert html.escape("<b>vda (disk)") in page and "<b>vda" not in page
    document = render_html(Contents(runs=(), layers=layer_gaps(runs, names), layer_runs=tuple(runs))).decode()
    assert document.index("Layers during each cell, every run") > document.index("Layers")
    assert html.escape("<b>vda (disk)") in document and "<b>vda" not in document
