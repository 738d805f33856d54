"""The sync latency / SLOG page against the real server: `stackbench slog --run ID...` as a page (the same
ranking table cell for cell, compared with the CLI's own output on the same store), the list of the
sync-latency runs the viewer may see, the synclat chart of the sweeps among the candidates, and the
refusals (a run not the viewer's is the random-id 404).

The candidates are stored synthetic `slog` runs (4 KiB sync writes at QD1 and QD16, known latencies, no
fio) and imported `diskinfo -wS` outputs (tests/data/diskinfo), so these tests run in about a second; the
real `synclat` run on the page is in test_pages.py (slow)."""

from __future__ import annotations

import html
import re
import secrets
from dataclasses import replace
from datetime import datetime, timezone
from typing import Iterator

import httpx
import pytest

from stackbench.load.importer import import_files
from stackbench.model.results import new_id
from stored_runs import store_run
from synthetic import cell, run, slog_candidate
from web.site import DISKINFO, HOSTILE, SHARED, Site, Template, assert_slog_page_is_the_clis, first_table



def _slog_run(label: str, qd1_median_us: float, qd16_median_us: float, hour: int) -> object:
    """A run shaped as `stackbench slog` stores a candidate: 4 KiB random sync writes at QD1 and QD16, each
    with per-second samples (the best second of the table); the medians are chosen, not measured."""
    qd1 = cell(rw="randwrite", bs=4096, qd=1, sync=True, p99_ns=2 * qd1_median_us * 1000,
               samples=[1e6 / qd1_median_us * f for f in (0.9, 1.0, 1.1)])
    qd16 = cell(rw="randwrite", bs=4096, qd=16, sync=True, p99_ns=2 * qd16_median_us * 1000,
                samples=[16e6 / qd16_median_us * f for f in (0.95, 1.0, 1.05)])
    made = run([qd1, replace(qd16, id="qd16")], label=label, run_id=new_id(),
               facts={"fio_version": "fio-3.33", "target": {"fs_type": "xfs"}})
    return replace(made, plan_name="slog", planned_cells=2,
                   created_at=datetime(2024, 6, 1, hour, tzinfo=timezone.utc), finished_at=None)


@pytest.fixture(scope="module")
def slog_site(template: Template) -> Iterator[Site]:
    """A server of its own over the web tests' store plus sync-latency runs: alice's `slog` candidates
    (one labelled with a script tag) and imported diskinfo sweeps, bob's private and team candidates, an
    unowned sweep (admins only). Names of the runs: slog-*, sweep-*."""
    with template.site(replace(SHARED, runs_per_page=4)) as site:
        made = {
            "slog-sata": ("alice", _slog_run("slog:sata-ssd", 420.0, 900.0, 1)),
            "slog-hdd": ("alice", _slog_run(f"slog:{HOSTILE}", 7800.0, 9000.0, 2)),
            "slog-bob": ("bob", _slog_run("slog:bob-private", 30.0, 60.0, 3)),
            "slog-team": ("bob", _slog_run("slog:bob-team", 90.0, 200.0, 4)),
        }
        for name, (owner, stored) in made.items():
            store_run(site.store, stored)
            site.runs[name] = stored.id
            site.accounts.claim(site.ids[owner], [stored.id])
        site.accounts.set_visibility(site.runs["slog-team"], "team")
        for name, file, owner in (("sweep-optane", "optane-4k-start.txt", "alice"),
                                  ("sweep-hdd", "hdd-512-start.txt", "alice"),
                                  ("sweep-unowned", "nvme-4kn-start.txt", None)):
            imported = import_files(site.store, [DISKINFO / file], label=name)[0]
            site.runs[name] = imported.id
            if owner:
                site.accounts.claim(site.ids[owner], [imported.id])
        yield site


@pytest.fixture(scope="module")
def alice(slog_site: Site) -> httpx.Client:
    return slog_site.login("alice")


def _listed(page: str) -> set[str]:
    return set(re.findall(r'name="runs" value="([0-9a-f]{32})"', page))


def test_the_slog_page_ranks_the_checked_runs_as_stackbench_slog_does(slog_site: Site, alice: httpx.Client) -> None:
    """Hers and bob's team candidate, slog runs and diskinfo sweeps mixed: the CLI's table, best first."""
    ids = [slog_site.runs[n] for n in ("slog-hdd", "sweep-hdd", "slog-team", "sweep-optane", "slog-sata")]
    page = assert_slog_page_is_the_clis(alice, str(slog_site.store.engine.url), ids)
    first = first_table(page)
    assert [r[0] for r in first] == ["sweep-optane", "slog:bob-team", "slog:sata-ssd", f"slog:{HOSTILE}", "sweep-hdd"]  # 15.8 µs .. 11 ms
    assert HOSTILE not in page and html.escape(HOSTILE) in page  # the label is text, in the table and the list
    assert "power-loss protection cannot be measured" in page  # the CLI's notes under the table


def test_the_page_proves_what_the_cli_proves(template: Template) -> None:
    """Candidates measured in separate runs of one slog session: tmpfs fastest and never best, an SSD proven
    better than an HDD, a noisy one whose interval straddles a class bound with the advice naming --runs;
    the page shows the CLI's table, its conclusion and its warnings."""
    with template.site(SHARED) as site:
        made = {
            "ram": slog_candidate("slog:ram", [9.0, 9.5, 10.0, 9.2, 9.8], fs_type="tmpfs", run_id=new_id()),
            "ssd": slog_candidate("slog:ssd", [300.0, 310.0, 290.0, 305.0, 295.0], run_id=new_id()),
            "noisy": slog_candidate("slog:noisy", [362.0, 420.0, 480.0, 560.0, 700.0], run_id=new_id()),
            "hdd": slog_candidate("slog:hdd", [8000.0, 8400.0, 7900.0, 8100.0, 8300.0], run_id=new_id()),
        }
        for stored in made.values():
            store_run(site.store, stored)
            site.accounts.claim(site.ids["alice"], [stored.id])
        alice = site.login("alice")
        page = assert_slog_page_is_the_clis(alice, str(site.store.engine.url), [r.id for r in made.values()])
        rows = first_table(page)
        assert [r[0] for r in rows] == ["slog:ssd", "slog:noisy", "slog:hdd", "slog:ram"]
        assert rows[-1][-1] == "not a device: tmpfs is RAM and loses every write on power loss"
        assert rows[1][-1] == "enterprise-SSD or consumer-SSD: the runs cannot tell"
        text = html.unescape(page)
        assert "Best candidate by QD1 median latency: slog:ssd, proven better than slog:noisy" in text
        assert re.search(r"Warning: slog:noisy: its QD1 median .* straddles the 600 µs bound between enterprise-SSD "
                         r"and consumer-SSD; about \d+ runs per candidate would tell its class", text)


def test_the_list_holds_the_sync_latency_runs_the_viewer_may_see(slog_site: Site, alice: httpx.Client) -> None:
    """Sync-write runs only (not alice's random-read imports), by the runs list's visibility rule: her
    own, bob's team run, never bob's private one; the unowned sweep for the admin only. The list pages
    (four a page here), and a run checked on another page of it is sent again."""
    runs = slog_site.runs
    mine = {runs[n] for n in ("slog-sata", "slog-hdd", "slog-team", "sweep-optane", "sweep-hdd")}
    first = alice.get("/slog").text
    assert "5 runs with 4 KiB random synchronous writes you may see (0 checked); page 1 of 2" in first
    older = html.unescape(re.search(r'href="([^"]+)" rel="next"', first).group(1))
    second = alice.get(older).text
    assert _listed(first) | _listed(second) == mine
    assert "<table>" not in first  # nothing ranked before anything is checked
    carol = slog_site.login("carol")
    assert _listed(carol.get("/slog").text) == {runs["sweep-unowned"], runs["slog-team"]}  # an admin: not private
    bob = slog_site.login("bob")
    listed = _listed(bob.get("/slog").text) | _listed(bob.get("/slog", params={"page_number": 2}).text)
    assert listed == {runs["slog-bob"], runs["slog-team"]}
    # checked on page 2, looking at page 1: kept as a hidden field, and the pager carries it
    on_two = sorted(_listed(second))[0]
    page_one = alice.get("/slog", params={"runs": on_two, "page_number": 1}).text
    assert f'<input type="hidden" name="runs" value="{on_two}">' in page_one
    assert "(1 checked)" in page_one and "1 checked run on other pages of this list stays checked." in page_one
    assert f"runs={on_two}" in html.unescape(re.search(r'href="([^"]+)" rel="next"', page_one).group(1))


def test_a_run_not_yours_makes_the_page_the_random_404(slog_site: Site, alice: httpx.Client) -> None:
    reference = alice.get(f"/runs/{secrets.token_hex(16)}").text
    mine = slog_site.runs["slog-sata"]
    for other in (slog_site.runs["slog-bob"], slog_site.runs["sweep-unowned"], secrets.token_hex(16), "../x"):
        for path in ("/slog", "/slog/chart.svg"):
            refused = alice.get(path, params={"runs": f"{mine},{other}"})
            assert (refused.status_code, refused.text) == (404, reference), (path, other)
    nobody = slog_site.client()
    assert nobody.get("/slog").status_code == 303  # the list: log in first
    assert (nobody.get("/slog", params={"runs": mine}).status_code,
            nobody.get("/slog", params={"runs": mine}).text) == (404, nobody.get("/slog", params={"runs": secrets.token_hex(16)}).text)
    many = alice.get("/slog", params={"runs": ",".join([mine] * 13)})
    assert many.status_code == 400 and "A SLOG page ranks at most 12 runs" in many.text


def test_the_chart_overlays_the_sweeps_and_says_which_runs_it_leaves_out(slog_site: Site, alice: httpx.Client) -> None:
    """`stackbench chart SWEEP... --kind synclat` of the sweeps among the candidates, served as an SVG image
    through the page's authorization; `slog` runs (4 KiB only, two queue depths) are named as left out."""
    from stackbench.report.charts import synclat_figures

    runs = slog_site.runs
    ids = [runs["slog-sata"], runs["sweep-optane"], runs["sweep-hdd"]]
    page = alice.get("/slog", params={"runs": ids}).text
    images = re.findall(r'<img src="([^"]+)" alt="([^"]*)"', page)
    sweeps = [slog_site.store.get_run(runs[n]) for n in ("sweep-optane", "sweep-hdd")]
    assert [html.unescape(alt) for _, alt in images] == [synclat_figures(sweeps)[0].alt]
    image = alice.get(html.unescape(images[0][0]))
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/svg+xml")
    assert "<script" not in image.text
    assert re.search(r"<li>run slog:sata-ssd \([0-9a-f]{8}\) has several cells per write size", page)
    past = alice.get("/slog/chart.svg", params={"runs": ids, "n": 1})
    assert past.status_code == 404
    only_slog = alice.get("/slog", params={"runs": runs["slog-sata"]}).text
    assert "<img" not in only_slog and "<table>" in only_slog  # ranked, nothing to draw


def test_the_navigation_links_the_page(alice: httpx.Client) -> None:
    assert '<a href="/slog">Sync latency / SLOG</a>' in alice.get("/runs").text


def test_the_store_lists_sync_write_runs_by_the_visibility_rule(slog_site: Site) -> None:
    """RunFilter(sync_writes=True) keeps runs with a 4 KiB random sync write cell, over the one visibility
    condition (here an admin: unowned and team runs, no private ones)."""
    from stackbench.store.accounts import RunFilter, Viewer

    carol = Viewer(slog_site.ids["carol"], True)
    rows, total = slog_site.accounts.visible_runs(carol, RunFilter(sync_writes=True), offset=0, limit=50)
    assert {r.id for r, *_ in rows} == {slog_site.runs["sweep-unowned"], slog_site.runs["slog-team"]} and total == 2
    everything, _ = slog_site.accounts.visible_runs(carol, RunFilter(), offset=0, limit=50)
    assert slog_site.runs["unowned"] in {r.id for r, *_ in everything}  # a random-read run: not a candidate
