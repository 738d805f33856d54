"""A run's page and a comparison in reading order (docs/server.md, "Reading a run", "Comparing"), against
the real server over a real SQLite store: what the run says first, the warnings before the numbers, the
owner's controls in the header, the facts grouped with the raw list folded; both runs of a comparison
linked with a swap, every row's change with its interval, the cases that cannot be compared answered with a
way back.

The runs are synthetic (stored as the runner stores them, no fio): these run in a few seconds."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator

import pytest

from stackbench.model.warning import Warning, WarningCode
from synthetic import cell
from web.site import SHARED, Site, Template
from web.test_runs_finder import store_owned, stored_run

PAGE_CACHE = Warning(WarningCode.PAGE_CACHE, "", "the file (256 MiB) fits in RAM (16 GiB)", "use a larger --size")


def _more(factor: float) -> tuple:
    return (cell(rw="randwrite", bs=4096, qd=16, iops=4000 * factor, runs=[v * factor for v in (3900, 4000, 4100)]),)


@pytest.fixture(scope="module")
def reading(template: Template) -> Iterator[Site]:
    """alice's `base` (with a warning) and `tuned` (same target, faster), her `other-fs` run on ZFS, and
    bob's private run."""
    with template.site(replace(SHARED, runs_per_page=50)) as site:
        made = {
            "base": ("alice", stored_run("baseline-ext4", host="db01", fs="ext4", target="/srv/ext4", plan="quick",
                                         minutes=1, iops=12932.4, warnings=(PAGE_CACHE,), more_cells=_more(1))),
            "tuned": ("alice", stored_run("tuned-ext4", host="db01", fs="ext4", target="/srv/ext4", plan="quick",
                                          minutes=2, iops=15000.0, more_cells=_more(1.2))),
            "other-fs": ("alice", stored_run("zfs-tank", host="db02", fs="zfs", target="/tank/a", plan="quick",
                                             minutes=3, iops=9000.0, more_cells=_more(1))),
            "bobs": ("bob", stored_run("bob-run", host="db01", fs="ext4", target="/srv/ext4", plan="quick",
                                       minutes=4, iops=1000.0)),
        }
        store_owned(site, made)
        yield site


def _at(page: str, marker: str) -> int:
    found = page.find(marker)
    assert found >= 0, marker
    return found


def test_a_run_page_reads_title_summary_warnings_table_charts_then_facts(reading: Site) -> None:
    page = reading.login("alice").get(f"/runs/{reading.runs['base']}").text
    order = [_at(page, "<h1>baseline-ext4</h1>"), _at(page, "Who sees this run"), _at(page, "Create share link"),
             _at(page, '<p class="summary">'), _at(page, "Warnings: read these before the numbers"),
             _at(page, "fits in RAM"), _at(page, "<th>Pattern</th>"), _at(page, '<section class="charts">'),
             _at(page, "<caption>Device</caption>"), _at(page, '<details class="raw">')]
    assert order == sorted(order)
    summary = re.search(r'<p class="summary">(.*?)</p>', page, re.S).group(1)
    assert summary == ("A complete quick run on /srv/ext4 (ext4, db01): 2 cells, the first 4K QD1 rnd read at "
                       "12,932 IOPS and 53.0 MB/s; the warning below says what not to trust.")
    assert "<caption>Machine and kernel</caption>" in page and "Example NVMe, 1T, non-rotational" in page
    raw = page[_at(page, '<details class="raw">'):]
    assert "boot_id" in raw and "boot_id" not in page[:_at(page, '<details class="raw">')]  # folded


def test_a_run_without_warnings_says_nothing_of_them_and_a_team_reader_gets_no_controls(reading: Site) -> None:
    page = reading.login("alice").get(f"/runs/{reading.runs['tuned']}").text
    assert "Warnings" not in page and "not to trust" not in page
    reading.accounts.set_visibility(reading.runs["bobs"], "team")
    try:
        bobs = reading.login("alice").get(f"/runs/{reading.runs['bobs']}").text
        assert "Create share link" not in bobs and "Who sees this run" not in bobs
        assert '<p class="summary">A complete quick run on /srv/ext4 (ext4, db01): 1 cell, the first' in bobs
    finally:
        reading.accounts.set_visibility(reading.runs["bobs"], "private")


def test_a_chart_links_to_its_full_size_image(reading: Site) -> None:
    alice = reading.login("alice")
    page = alice.get(f"/runs/{reading.runs['base']}").text
    full = re.findall(r'<a href="(/runs/[0-9a-f]{32}/chart\.svg\?n=\d+)"><img', page)
    assert full and all(alice.get(href).headers["content-type"].startswith("image/svg+xml") for href in full)


def test_a_comparison_links_both_runs_swaps_and_gives_the_verdict_before_the_table(reading: Site) -> None:
    base, tuned = reading.runs["base"], reading.runs["tuned"]
    page = reading.login("alice").get(f"/compare/{base}/{tuned}").text
    assert f'A = <a href="/runs/{base}">baseline-ext4</a>' in page
    assert f'B = <a href="/runs/{tuned}">tuned-ext4</a>' in page
    assert f'<a href="/compare/{tuned}/{base}">Swap A and B</a>' in page
    assert _at(page, "Create share link") < _at(page, "Verdict: KEEP") < _at(page, "<th>Pattern</th>")
    rows = re.findall(r"<tr>(<td.*?)</tr>", page[_at(page, "<th>Pattern</th>"):], re.S)
    changes = [re.findall(r"<td[^>]*>([^<]*)</td>", row)[3] for row in rows if "rnd" in row]
    assert len(changes) == 2
    for change in changes:  # the change, its interval, the test
        assert re.fullmatch(r"~? ?[+-]\d+\.\d% \[[+-]\d+\.\d%, [+-]\d+\.\d%\] \((?:p=\d\.\d{3}|p<0\.001) n=3\+3\)", change), change


def test_a_run_compared_with_itself_is_answered_with_a_way_on(reading: Site) -> None:
    base = reading.runs["base"]
    answer = reading.login("alice").get(f"/compare/{base}/{base}")
    assert answer.status_code == 200
    assert "A run compared with itself: nothing to compare." in answer.text
    assert "Verdict" not in answer.text and "Create share link" not in answer.text
    assert f'href="/compare?a={base}"' in answer.text and f'href="/runs/{base}">Back to the run' in answer.text


def test_one_run_picked_offers_the_others_of_its_plan_and_a_way_back(reading: Site) -> None:
    alice = reading.login("alice")
    base = reading.runs["base"]
    for params in ({"a": base}, {"b": base}):
        page = alice.get("/compare", params=params)
        assert page.status_code == 200
        offered = re.findall(rf'href="/compare/{base}/([0-9a-f]{{32}})"', page.text)
        assert reading.runs["tuned"] in offered and base not in offered and reading.runs["bobs"] not in offered
        assert 'href="/runs">go back to the runs list</a>' in page.text
    assert alice.get("/compare", params={"a": reading.runs["bobs"]}).status_code == 404  # not hers: the random 404
    assert alice.get("/compare", follow_redirects=False).headers["location"] == "/runs"


def test_incompatible_runs_say_what_differs_not_a_cli_flag(reading: Site) -> None:
    base, other = reading.runs["base"], reading.runs["other-fs"]
    answer = reading.login("alice").get(f"/compare/{base}/{other}")
    assert answer.status_code == 409
    assert "--force" not in answer.text and "Verdict" not in answer.text
    assert '<tr><th scope="row">file system</th><td>ext4</td><td>zfs</td></tr>' in answer.text
    assert f'href="/compare?a={base}"' in answer.text
