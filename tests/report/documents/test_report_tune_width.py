"""`stackbench report TUNE -o tune.html` of a realistic session reads without sideways scrolling on a
1366 x 768 laptop (every table whole in the page's column: the change with its interval and the verdict of
every knob in sight), and on a 390 px phone the page keeps to the screen (a table may scroll in its own box).
The text stays readable (no cell below 13 px) and every cell's text is in the page as `show` builds it.

The session is tests/stored_tune.py's: five knobs with long names, paths and values, synthetic arm runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli_here
from stored_tune import store_wide_session
from stackbench.store import Store

pytestmark = pytest.mark.slow  # a browser


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[str]]]:
    """The HTML report of the session, and the rows of every table `show` builds of it."""
    from stackbench.report.tune import stored_session_tables

    base = tmp_path_factory.mktemp("tunewide")
    url = f"sqlite:///{base / 'r.db'}"
    store = Store(url)
    session, document, _ = store_wide_session(store)
    shown = stored_session_tables(session, document, lambda a, b: (store.get_run(a), store.get_run(b)))
    store.dispose()
    assert shown.left_out == () and len(shown.tables) == 8  # the summary, the race, 5 knobs, the confirmation
    output = base / "tune.html"
    done = cli_here("report", session, "-o", str(output), "--db", url, "--keep-identifiers")
    assert done.returncode == 0, done.stderr
    return output, [list(row) for table in shown.tables for row in table.rows]


# Every table's box: what it holds in the page, what it shows, its caption, and the smallest text in it.
BOXES = """[...document.querySelectorAll('.scroll')].map(box => ({
    caption: box.previousElementSibling ? box.previousElementSibling.textContent : '',
    scroll: box.scrollWidth, client: box.clientWidth, right: box.querySelector('table').getBoundingClientRect().right,
    font: Math.min(...[...box.querySelectorAll('td, th')].map(c => parseFloat(getComputedStyle(c).fontSize)))}))"""
CELL_TEXTS = "[...document.querySelectorAll('td')].map(c => c.textContent.replace(/\\s+/g, ' ').trim())"


def test_the_tune_report_needs_no_sideways_scrolling_on_a_laptop_and_keeps_to_a_phone(
        report: tuple[Path, list[list[str]]]) -> None:
    from playwright.sync_api import sync_playwright

    path, rows = report
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            laptop = browser.new_page(viewport={"width": 1366, "height": 768})
            laptop.goto(path.as_uri())
            laptop.screenshot(path="/tmp/tunewide29-1366.png", full_page=True)
            boxes, texts = laptop.evaluate(BOXES), set(laptop.evaluate(CELL_TEXTS))
            laptop_width = laptop.evaluate("innerWidth")
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(path.as_uri())
            phone.screenshot(path="/tmp/tunewide29-390.png", full_page=True)
            phone_width = phone.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
        finally:
            browser.close()
    assert len(boxes) == 8
    hidden = [(box["caption"], box["scroll"], box["client"]) for box in boxes if box["scroll"] > box["client"]]
    assert hidden == []  # every table whole in its box, at 1366 px
    assert [box["caption"] for box in boxes if box["right"] > laptop_width] == []  # and inside the window
    assert min(box["font"] for box in boxes) >= 13  # not made to fit by small print
    assert [text for row in rows for text in row if " ".join(text.split()) not in texts] == []  # nothing dropped
    assert max(phone_width) <= 390, phone_width
