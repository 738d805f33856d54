"""The web compare page of an ab session's arms: the verdict's safety marking and the rounds' order, the
words of the CLI's table (the page renders report/compare's notes)."""

from __future__ import annotations

import html

from stackbench.analysis.compare import compare_runs
from stackbench.report.compare import comparison_table
from stackbench.model.round_order import round_orders
from stored_runs import store_run
from synthetic import ab_arms
from web.site import SHARED


def test_the_compare_page_marks_a_verdict_bought_with_safety(fresh_site) -> None:  # noqa: ANN001
    a, b = ab_arms(round_orders(4), [1000.0, 1020.0, 990.0, 1005.0], [3000.0, 3050.0, 2990.0, 3010.0],
                   a_command="zfs set sync=standard tank/vm", b_command="zfs set sync=disabled tank/vm", label="sync")
    with fresh_site(SHARED) as site:
        for arm in (a, b):
            store_run(site.store, arm)
        site.accounts.claim(site.ids["alice"], [a.id, b.id])
        page = site.login("alice").get(f"/compare/{a.id}/{b.id}").text
    notes = comparison_table(compare_runs(a, b)).notes
    marking = next(note for note in notes if note.startswith("Safety: "))
    assert marking.startswith("Safety: B is faster because it is less safe: sync=disabled acknowledges fsync")
    assert html.escape(marking, quote=True) in page
    assert html.escape(next(n for n in notes if n.startswith("Round order: AB BA AB BA")), quote=True) in page
