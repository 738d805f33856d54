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


def test_the_compare_page_of_separate_sessions_names_its_design_and_what_differed(fresh_site) -> None:  # noqa: ANN001
    """Two separate runs whose CPU pressure differed: the page says the design, the weak verdict and the
    CONDITIONS_DIFFER warning, in the CLI's words."""
    from dataclasses import replace

    from synthetic import cell, run

    def session(run_id: str, label: str, runs: list[float], cpu: float):  # noqa: ANN202 - a synthetic run
        measured = cell(runs=runs)
        replicates = [{**r, "conditions": {"pressure": {"cpu": cpu}}} for r in measured.measurement["replicates"]]
        return run([replace(measured, measurement={**measured.measurement, "replicates": replicates})],
                   label=label, run_id=run_id)

    a = session("a" * 32, "before", [1000.0, 1020.0, 990.0, 1005.0, 1001.0], 2.0)
    b = session("b" * 32, "after", [3000.0, 3050.0, 2990.0, 3010.0, 3003.0], 60.0)
    with fresh_site(SHARED) as site:
        for one in (a, b):
            store_run(site.store, one)
        site.accounts.claim(site.ids["alice"], [a.id, b.id])
        page = site.login("alice").get(f"/compare/{a.id}/{b.id}").text
    result = compare_runs(a, b)
    notes = comparison_table(result).notes
    assert html.escape("Design: separate sessions: drift between them is not controlled", quote=True) in page
    assert html.escape(next(n for n in notes if n.startswith("Verdict: KEEP")), quote=True) in page
    assert "WEAK: the separate sessions differed" in page
    assert html.escape(str(result.drift[0]), quote=True).replace("&#x27;", "&#39;") in page  # Jinja's escape
