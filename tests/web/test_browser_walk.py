"""The dashboard in a real browser (Debian's chromium driven by Playwright) at a desk's size and a phone's
(docs/server.md, "What the server promises"): a first-time user's walk, from the login to a shared
comparison, in under 10 clicks; every page no wider than a 390 px screen; axe-core's accessibility rules
with no violation on every page, at both sizes. Screenshots of every step and page are kept under
$STACKBENCH_ARTEFACTS/web (default: the system's temporary directory); any console error (a CSP violation
included) fails the tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from stackbench.model.warning import Warning, WarningCode
from stackbench.web.settings import Settings
from stored_runs import store_run
from synthetic import cell
from web.site import PASSWORD, Site, app_routes
from web.test_browser import CHROMIUM, _artefacts, _expect_charts_drawn
from web.test_runs_finder import WIDE_LABEL, stored_run

pytestmark = pytest.mark.slow
SIZES = {"desk": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGE_CACHE = Warning(WarningCode.PAGE_CACHE, "", "the file (256 MiB) fits in RAM (16 GiB): reads may come from the "
                     "page cache", "use a --size larger than RAM")
# Routes that answer no page to look at: images, downloads, the stylesheet, the API, metrics
NOT_PAGES = {"/runs/{run_id}/chart.svg", "/runs/{run_id}/report.html", "/compare/{a}/{b}/chart.svg",
             "/compare/{a}/{b}/report.html", "/s/{token}/chart.svg", "/s/{token}/report.html", "/layers/chart.svg",
             "/slog/chart.svg", "/scans/{scan_id}/chart.svg", "/static/style.css", "/static/copy.js", "/robots.txt",
             "/metrics"}


def _more(factor: float) -> tuple:
    return (cell(rw="randwrite", bs=4096, qd=16, iops=4000 * factor, runs=[v * factor for v in (3900, 4000, 4100)]),
            cell(rw="read", bs=1 << 20, qd=4, iops=900 * factor, runs=[v * factor for v in (880, 900, 930)]))


@pytest.fixture
def dashboard(fresh_site) -> Iterator[Site]:  # noqa: ANN001 - the fixture's factory
    """The web tests' store plus alice's runs of a tuning session on ext4 (the baseline with a warning),
    one on ZFS and one with a 200-character label."""
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/test, which installs it (apt-get install chromium)")
    with fresh_site(Settings()) as site:
        for name, stored in (
            ("baseline", stored_run("baseline-ext4", host="db01", fs="ext4", target="/srv/ext4", plan="quick",
                                    minutes=1, iops=12932.4, warnings=(PAGE_CACHE,), more_cells=_more(1))),
            ("tuned", stored_run("tuned-ext4-noatime", host="db01", fs="ext4", target="/srv/ext4", plan="quick",
                                 minutes=2, iops=14100.0, more_cells=_more(1.2))),
            ("zfs", stored_run("zfs-tank", host="db02", fs="zfs", target="/tank/a", plan="quick", minutes=3,
                               iops=9000.0, more_cells=_more(1))),
            ("wide", stored_run(WIDE_LABEL, host="db03", fs="xfs", target="/srv/xfs", plan="quick", minutes=4,
                                iops=100.0)),
        ):
            store_run(site.store, stored)
            site.runs[name] = stored.id
            site.accounts.claim(site.ids["alice"], [stored.id])
        yield site


class Browser:
    """Chromium with the console watched: every error (a CSP violation included) is a problem."""

    def __init__(self, playwright) -> None:  # noqa: ANN001
        self.browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        self.problems: list[str] = []

    def page(self, size: str):  # noqa: ANN201 - a Playwright page
        context = self.browser.new_context(viewport=SIZES[size], permissions=["clipboard-read", "clipboard-write"])
        page = context.new_page()
        page.on("console", lambda m: self.problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        return page


def _log_in(page, base: str) -> None:  # noqa: ANN001
    page.goto(base + "/login")
    page.get_by_label("Name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)


def _width(page) -> int:  # noqa: ANN001
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("size", SIZES)
def test_find_read_compare_and_share_in_under_ten_clicks(dashboard: Site, size: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    shots = _artefacts()
    clicks = 0

    def click(locator) -> None:  # noqa: ANN001
        nonlocal clicks
        clicks += 1
        locator.click()

    def step(page, name: str) -> None:  # noqa: ANN001
        page.screenshot(path=shots / f"walk-{size}-{name}.png", full_page=True)
        if size == "phone":
            assert _width(page) <= SIZES["phone"]["width"], f"{name} is {_width(page)} px wide on a phone"

    with sync_playwright() as playwright:
        chromium = Browser(playwright)
        try:
            user = chromium.page(size)
            _log_in(user, dashboard.base)
            click(user.get_by_role("button", name="Log in"))
            expect(user).to_have_url(re.compile(r"/runs$"))
            user.get_by_label("Search label, target or host").fill("BASELINE")  # a word of the label, any case
            click(user.get_by_role("button", name="Search"))
            expect(user.locator("table.runs tbody tr")).to_have_count(1)
            step(user, "1-found")

            click(user.get_by_role("link", name="baseline-ext4", exact=True))
            expect(user.get_by_role("heading", level=1)).to_have_text("baseline-ext4")
            _expect_charts_drawn(user)
            warnings = user.locator("section.warnings").bounding_box()
            table = user.locator("table").first.bounding_box()
            charts = user.locator("section.charts").bounding_box()
            assert warnings and table and charts and warnings["y"] < table["y"] < charts["y"]
            user.evaluate("window.scrollTo(0, 0)")
            step(user, "2-run")

            click(user.get_by_role("link", name="Compare with another run"))
            click(user.get_by_role("link", name="tuned-ext4-noatime"))
            expect(user.locator("p.verdict")).to_contain_text("Verdict: KEEP")
            assert user.locator("p.verdict").bounding_box()["y"] < SIZES[size]["height"]  # on the first screen
            _expect_charts_drawn(user)
            user.evaluate("window.scrollTo(0, 0)")
            step(user, "3-compare")

            user.get_by_label("note").fill("for the storage team")
            click(user.get_by_role("button", name="Create share link"))
            link = user.get_by_label("share link").input_value()
            user.get_by_role("button", name="Copy link").click()  # not a step of the task: the field is there
            expect(user.get_by_role("status")).to_have_text("Copied.")
            assert user.evaluate("navigator.clipboard.readText()") == link
            step(user, "4-shared")
            assert clicks < 10, clicks

            stranger = chromium.page(size)
            assert stranger.goto(link).status == 200
            expect(stranger.locator("p.verdict")).to_contain_text("Verdict: KEEP")
            expect(stranger.get_by_role("button", name="Log out")).to_have_count(0)
            step(stranger, "5-link-opened")
        finally:
            chromium.browser.close()
    assert chromium.problems == []


def _every_page(site: Site, share: str) -> dict[str, str]:
    """A URL of every page the server answers, by its route (and the cases a page shows differently)."""
    runs = site.runs
    return {
        "/": "/", "/login": "/login", "/runs": "/runs", "/runs?q": "/runs?q=ext4&fs=ext4&sort=label",
        "/runs/{run_id}": f"/runs/{runs['baseline']}", "/runs/{run_id} (wide label)": f"/runs/{runs['wide']}",
        "/compare/{a}/{b}": f"/compare/{runs['baseline']}/{runs['tuned']}",
        "/compare/{a}/{b} (different set-ups)": f"/compare/{runs['baseline']}/{runs['zfs']}",
        "/compare/{a}/{b} (the same run)": f"/compare/{runs['baseline']}/{runs['baseline']}",
        "/compare": f"/compare?a={runs['baseline']}", "/layers": "/layers",
        "/layers?runs": f"/layers?runs={runs['baseline']},{runs['tuned']}&names=host,vm",
        "/slog": "/slog", "/scans": "/scans", "/scans/{scan_id}": f"/scans/{runs['scan']}",
        "/audits": "/audits", "/audits/{audit_id}": f"/audits/{runs['audit-after']}",
        "/tunes": "/tunes", "/tunes/{tune_id}": f"/tunes/{runs['tune']}",
        "/s/{token}": share, "404": f"/runs/{'0' * 32}",
    }


def test_every_page_fits_a_phone_and_passes_axe_at_both_sizes(dashboard: Site) -> None:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import sync_playwright

    shots = _artefacts()
    with sync_playwright() as playwright:
        chromium = Browser(playwright)
        try:
            owner = chromium.page("desk")
            _log_in(owner, dashboard.base)
            owner.get_by_role("button", name="Log in").click()
            owner.goto(f"{dashboard.base}/runs/{dashboard.runs['baseline']}")
            owner.get_by_role("button", name="Create share link").click()
            share = owner.get_by_label("share link").input_value().removeprefix(dashboard.base)
            pages = _every_page(dashboard, share)
            routes = {route.path for route in app_routes(dashboard.app) if "GET" in route.methods}
            assert routes - NOT_PAGES == {name.split(" ")[0].split("?")[0] for name in pages} - {"404"}
            axe, found, wide = Axe(), {}, {}
            for size in SIZES:
                viewer = chromium.page(size)
                _log_in(viewer, dashboard.base)
                viewer.get_by_role("button", name="Log in").click()
                logged_out = chromium.page(size)
                for name, url in pages.items():
                    page = logged_out if name in ("/login", "/s/{token}") else viewer
                    page.goto(dashboard.base + url)
                    page.screenshot(path=shots / f"page-{size}-{re.sub(r'[^a-z0-9]+', '-', name).strip('-') or 'home'}.png",
                                    full_page=True)
                    if size == "phone" and _width(page) > SIZES["phone"]["width"]:
                        wide[name] = _width(page)
                    result = axe.run(page)
                    if result.violations_count:
                        found[f"{size} {name}"] = result.generate_report()
            logged_out.goto(dashboard.base + pages["404"])  # logged out: the 404 that offers the login
            assert axe.run(logged_out).violations_count == 0
        finally:
            chromium.browser.close()
    assert wide == {}
    assert found == {}
    # the browser reports the documents of the 404 page and of the runs that cannot be compared (409) as
    # failed resources: those lines, and only those
    refused = ("status of 404 (Not Found)", "status of 409 (Conflict)")
    assert [p for p in chromium.problems if not p.endswith(refused)] == []
