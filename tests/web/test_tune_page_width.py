"""A stored tune session's page (`/tunes/ID`) in a real browser (Debian's chromium driven by Playwright): on a
1366 x 768 laptop every table is whole in its box (long knob ids and child dataset paths, compare's headers
naming arms `tune-SESSION-KNOB-a`, every change with its interval, the verdicts), and on a 390 px phone the page
is no wider than the screen (a table may scroll in its own box). The session is tests/stored_tune.py's,
alice's, with her arm runs."""

from __future__ import annotations

import re
from typing import Iterator

import pytest

from stackbench.web.settings import Settings
from stored_tune import store_wide_session
from web.site import Site
from web.test_browser import CHROMIUM
from web.test_browser_walk import _log_in

pytestmark = pytest.mark.slow  # a browser
SIZES = {"1366": {"width": 1366, "height": 768}, "390": {"width": 390, "height": 844}}
BOXES = """[...document.querySelectorAll('main .wide')].map(box => [
    (box.querySelector('caption') || {}).textContent || '', box.scrollWidth, box.clientWidth])"""


@pytest.fixture
def tuned(fresh_site) -> Iterator[tuple[Site, str]]:  # noqa: ANN001 - the fixture's factory
    with fresh_site(Settings()) as site:
        session, _, runs = store_wide_session(site.store)
        site.accounts.claim(site.ids["alice"], runs)
        site.accounts.claim_items(site.ids["alice"], [("tune", session)])
        yield site, session


def test_a_tune_session_page_reads_on_a_laptop_and_keeps_to_a_phone(tuned: tuple[Site, str]) -> None:
    from playwright.sync_api import sync_playwright

    site, session = tuned
    seen = {}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for name, viewport in SIZES.items():
                page = browser.new_page(viewport=viewport)
                _log_in(page, site.base)
                page.get_by_role("button", name="Log in").click()
                page.wait_for_url(re.compile(r"/runs$"))
                page.goto(f"{site.base}/tunes/{session}")
                page.screenshot(path=f"/tmp/tunewide29-web-{name}.png", full_page=True)
                seen[name] = (page.evaluate(BOXES), page.evaluate("document.documentElement.scrollWidth"))
        finally:
            browser.close()
    boxes, _ = seen["1366"]
    assert len(boxes) == 8, boxes  # the summary, the race, five knobs' comparisons and the confirmation's
    assert [box for box in boxes if box[1] > box[2]] == []
    assert seen["390"][1] <= 390, seen["390"]
