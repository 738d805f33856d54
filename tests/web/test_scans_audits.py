"""The pages of stored smallblocks scans and audits against the real server: what `show` prints, the lists
by the visibility rule, and the owner's visibility form."""

from __future__ import annotations

import html
import re

from stackbench.web.settings import Settings
from web.site import HOSTILE, Site, assert_charts_served, csrf_of


def test_the_scan_page_shows_what_show_scan_prints(web: Site, as_user: dict) -> None:
    """The histogram table cell for cell, the recommendation's lines and the special vdev chart, as
    `stackbench show SCAN` and `chart SCAN --kind special` make them; the label inert."""
    from stackbench.report.charts import scan_figures
    from stackbench.report.smallblocks import histogram_table, recommendation_text
    from stackbench.scan.document import scan_from_json

    alice = as_user["alice"]
    stored = web.store.get_scan(web.runs["scan"])
    result, recommendation, estimates = scan_from_json(stored.document)
    page = alice.get(f"/scans/{stored.id}").text
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]
    for row in histogram_table(result).rows:
        for text in row:
            assert text in cells
    for line in recommendation_text(result, recommendation, estimates).renderables:
        assert line.plain in html.unescape(page)
    expected = [f.alt for f in scan_figures(result.histogram, recommendation, source=", ".join(stored.paths))]
    assert assert_charts_served(alice, page, 1) == expected
    assert HOSTILE not in page and html.escape(HOSTILE) in page


def test_the_scan_and_audit_lists_follow_the_visibility_rule(web: Site, as_user: dict) -> None:
    alice, bob, carol = as_user["alice"], as_user["bob"], as_user["carol"]
    scans = alice.get("/scans").text
    assert f"/scans/{web.runs['scan']}" in scans and f"/scans/{web.runs['scan-team']}" in scans  # hers, bob's team
    assert alice.get(f"/scans/{web.runs['scan-team']}").status_code == 200
    assert f"/scans/{web.runs['scan']}" not in bob.get("/scans").text
    assert f"/scans/{web.runs['scan']}" not in carol.get("/scans").text  # an admin does not read private scans
    audits = alice.get("/audits").text
    assert f"/audits/{web.runs['audit-before']}" in audits and f"/audits/{web.runs['audit-unowned']}" not in audits
    assert f"/audits/{web.runs['audit-unowned']}" in carol.get("/audits").text  # unowned: admins only
    assert carol.get(f"/audits/{web.runs['audit-unowned']}").status_code == 200
    assert alice.get(f"/audits/{web.runs['audit-unowned']}").status_code == 404
    assert "No audits to show." in bob.get("/audits").text
    assert web.client().get("/scans").status_code == 303  # to the login page


def test_the_audit_page_shows_the_findings_and_what_was_fixed_since(web: Site, as_user: dict) -> None:
    """The tables `report --audit` shows (report/audit.stored_audit_tables), from the stored document: the
    findings marked new or still, and the finding the previous audit had that is gone, as fixed."""
    from stackbench.report.audit import stored_audit_tables

    alice = as_user["alice"]
    after = web.store.get_audit(web.runs["audit-after"])
    tables, _ = stored_audit_tables(after.document)
    page = alice.get(f"/audits/{after.id}").text
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]
    for table in tables:
        for row in table.rows:
            for text in row:
                assert text in cells
    fixed = after.document["changes"]["fixed"]
    assert len(fixed) == 1 and "1 fixed" in page and "<td>fixed</td>" in page
    assert f'href="/audits/{web.runs["audit-before"]}"' in page  # the previous audit, hers too
    assert HOSTILE not in page and html.escape(HOSTILE) in page
    before = alice.get(f"/audits/{web.runs['audit-before']}").text
    assert "fixed" not in re.findall(r"<td[^>]*>([^<]*)</td>", before)


def test_the_owner_makes_a_scan_team_visible_and_private_again(fresh_site) -> None:
    with fresh_site(Settings()) as site:
        alice, bob = site.login("alice"), site.login("bob")
        for kind, item in (("scans", site.runs["scan"]), ("audits", site.runs["audit-after"])):
            path = f"/{kind}/{item}"
            assert bob.get(path).status_code == 404
            assert alice.post(f"{path}/visibility", data={"csrf": csrf_of(alice), "visibility": "team"}).status_code == 303
            assert bob.get(path).status_code == 200 and "Who sees this" not in bob.get(path).text
            assert bob.post(f"{path}/visibility", data={"csrf": csrf_of(bob), "visibility": "private"}).status_code == 403
            assert alice.post(f"{path}/visibility", data={"csrf": csrf_of(alice), "visibility": "public"}).status_code == 400
            assert alice.post(f"{path}/visibility", data={"csrf": csrf_of(alice), "visibility": "private"}).status_code == 303
            assert bob.get(path).status_code == 404
