"""The pages against the real server: the CLI's numbers, user text rendered inert, share links from
creation to revocation, no token in any log line, and enumeration of ids and tokens running into the rate
limit (the security headers of every route: test_headers.py; scans and audits: test_scans_audits.py)."""

from __future__ import annotations

import html
import logging
import re
import secrets

import httpx
import pytest

from stackbench.analysis.compare import compare_runs
from stackbench.analysis.goals import evaluate
from stackbench.report.compare import comparison_table
from stackbench.report.goals import goals_table
from stackbench.report.run import run_table
from stackbench.web.settings import Settings
from web.site import (
    HOSTILE, PASSWORD, Site, assert_charts_served, assert_slog_page_is_the_clis, chart_images, csrf_of, first_table,
)


def _share(client: httpx.Client, path: str, days: str = "7", note: str = "for the vendor") -> httpx.Response:
    return client.post(f"{path}/shares", data={"csrf": csrf_of(client, path), "days": days, "note": note})


def _link(created: httpx.Response, web: Site) -> str:
    assert created.status_code == 201, created.text
    return re.search(r'value="(http[^"]+)"', created.text).group(1).removeprefix(web.base)


def test_the_run_page_shows_the_clis_table_cell_for_cell(web: Site, as_user: dict) -> None:
    page = as_user["alice"].get(f"/runs/{web.runs['b']}").text
    table = run_table(web.store.get_run(web.runs["b"]))
    for row in table.rows:
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
        for text in row:
            assert html.escape(text, quote=True) in cells
    assert html.escape(table.notes[0], quote=True) in page


def test_the_run_page_checks_the_stored_goals_as_the_cli_does(web: Site, as_user: dict) -> None:
    run = web.store.get_run(web.runs["b"])
    table = goals_table(evaluate([goal for _, goal in web.store.list_goals()], run))
    assert table.rows  # site.populate stores goals
    page = as_user["alice"].get(f"/runs/{web.runs['b']}").text
    for row in table.rows:
        for text in row:
            assert html.escape(text, quote=True) in page


def test_the_compare_page_shows_the_clis_verdict_table(web: Site, as_user: dict) -> None:
    answer = as_user["alice"].get(f"/compare?a={web.runs['a']}&b={web.runs['b']}")
    assert answer.status_code == 303
    page = as_user["alice"].get(answer.headers["location"]).text
    table = comparison_table(compare_runs(web.store.get_run(web.runs["a"]), web.store.get_run(web.runs["b"])))
    for row in table.rows:
        for text in row:
            assert html.escape(text, quote=True) in page
    assert html.escape(table.notes[-1], quote=True) in page


def test_the_run_page_shows_the_charts_of_the_report(web: Site, as_user: dict) -> None:
    """The charts `stackbench report` draws for the run (report.charts.run_figures), same alt texts, served
    as SVG images through the page's own authorization; a chart number past the last is the same 404."""
    from stackbench.report.charts import representative_cell, run_figures
    from stackbench.store.latency_bins import bins_where_stored

    alice = as_user["alice"]
    run = web.store.get_run(web.runs["b"])
    expected = [f.alt for f in run_figures(run, bins=bins_where_stored(web.store, run, [representative_cell(run)]))]
    assert len(expected) >= 2  # matrix and percentiles at least, on this capture
    assert assert_charts_served(alice, alice.get(f"/runs/{run.id}").text, len(expected)) == expected
    past = alice.get(f"/runs/{run.id}/chart.svg", params={"n": len(expected)})
    assert (past.status_code, past.text) == (404, alice.get(f"/runs/{secrets.token_hex(16)}").text)
    assert alice.get(f"/runs/{run.id}/chart.svg", params={"n": "x"}).status_code == 400
    for other in (as_user["bob"], web.client()):
        assert other.get(f"/runs/{run.id}/chart.svg").status_code == 404


def test_the_compare_page_shows_the_comparison_chart(web: Site, as_user: dict) -> None:
    from stackbench.report.charts import compare_figures

    alice = as_user["alice"]
    base, other = web.store.get_run(web.runs["a"]), web.store.get_run(web.runs["b"])
    expected = [f.alt for f in compare_figures(compare_runs(base, other))]
    page = alice.get(f"/compare/{base.id}/{other.id}").text
    assert assert_charts_served(alice, page, 1) == expected
    assert as_user["bob"].get(f"/compare/{base.id}/{other.id}/chart.svg").status_code == 404


@pytest.mark.slow
def test_shared_pages_show_charts_drawn_from_the_redacted_runs(fresh_site, tmp_path) -> None:
    """A link's holder gets the charts through the link (and only while it lives), drawn from the redacted
    run: a user name in a path in the run's label, which the owner's charts show, is not in the holder's."""
    import shutil

    from stackbench.load.importer import import_files
    from web.site import FIO

    home = tmp_path / "home" / "mallory-charts" / "runs"
    home.mkdir(parents=True)
    shutil.copyfile(FIO / "randread-psync.json", home / "out.json")
    with fresh_site(Settings()) as site:
        run = import_files(site.store, [home / "out.json"], label=f"from {home}/out.json")[0]
        site.accounts.claim(site.ids["alice"], [run.id])
        alice, stranger = site.login("alice"), site.client()
        for path in (f"/runs/{run.id}", f"/compare/{site.runs['b']}/{run.id}"):
            link = _link(_share(alice, path), site)
            page = stranger.get(link).text
            for alt in assert_charts_served(stranger, page, 1):
                assert "mallory-charts" not in alt
            for src, _ in chart_images(page):
                assert src.startswith(link + "/chart.svg") and "mallory-charts" not in stranger.get(src).text
            assert stranger.get(link + "/chart.svg", params={"n": 99}).status_code == 404
            owners = [alice.get(src).text for src, _ in chart_images(alice.get(path).text)]
            assert any("mallory-charts" in text for text in owners)  # what redaction took out was there
            revoke = re.search(r'action="(/shares/[0-9a-f]{32}/revoke)"', alice.get(path).text).group(1)
            assert alice.post(revoke, data={"csrf": csrf_of(alice)}).status_code == 303
            assert stranger.get(src).status_code == 404  # the link's charts end with the link


def test_hostile_labels_and_notes_render_inert(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    link = _link(_share(alice, f"/runs/{web.runs['a']}", note=HOSTILE), web)
    pages = [alice.get("/runs", params={"q": HOSTILE}).text, alice.get(f"/runs/{web.runs['a']}").text,
             alice.get(f"/compare/{web.runs['a']}/{web.runs['b']}").text, web.client().get(link).text]
    for page in pages:
        assert "<script" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_runs_list_filters_and_pages(web: Site, as_user: dict) -> None:
    bob = as_user["bob"]  # sees his two runs and no one else's private ones (runs_per_page=2 here)
    first = bob.get("/runs").text
    assert "2 runs you may see" in first
    alice = as_user["alice"]  # her two and bob's team run: two pages
    page_one = alice.get("/runs").text
    assert "3 runs you may see; page 1 of 2" in page_one
    older = re.search(r'href="([^"]+)" rel="next"', page_one).group(1)
    page_two = alice.get(html.unescape(older)).text
    ids = set(re.findall(r'href="/runs/([0-9a-f]{32})"', page_one)) | set(re.findall(r'href="/runs/([0-9a-f]{32})"', page_two))
    assert ids == {web.runs["a"], web.runs["b"], web.runs["team"]}
    only = alice.get("/runs", params={"q": "alice-b"}).text
    assert re.findall(r'href="/runs/([0-9a-f]{32})"', only) == [web.runs["b"]]
    assert "0 runs you may see" in alice.get("/runs", params={"since": "2999-01-01"}).text
    assert "3 runs you may see" in alice.get("/runs", params={"plan": "import", "until": "2999-01-01"}).text
    assert "0 runs you may see" in alice.get("/runs", params={"plan": "quick"}).text
    one = alice.get("/compare", params={"a": web.runs["a"]})  # one run picked: pick the other, or go back
    assert one.status_code == 200 and f'href="/compare/{web.runs["a"]}/{web.runs["b"]}"' in one.text
    assert 'href="/runs">go back to the runs list</a>' in one.text
    assert alice.get("/runs", params={"since": "yesterday"}).status_code == 400


def test_paging_links_name_runs_and_an_anchor_you_may_not_see_is_a_random_one(web: Site, as_user: dict) -> None:
    """Older/Newer carry the last/first run shown (keyset paging, `_paged`). An anchor that is another
    account's private run answers byte for byte as a random id does (the page by its number), and a value
    that is not a run id is refused before any query."""
    alice = as_user["alice"]  # three runs, two a page
    page_one = alice.get("/runs").text
    shown = re.findall(r'href="/runs/([0-9a-f]{32})"', page_one)
    older = html.unescape(re.search(r'href="([^"]+)" rel="next"', page_one).group(1))
    assert f"older_than={shown[-1]}" in older and "page_number=2" in older
    page_two = alice.get(older).text
    assert "page 2 of 2" in page_two
    newer = html.unescape(re.search(r'href="([^"]+)" rel="prev"', page_two).group(1))
    assert re.findall(r'href="/runs/([0-9a-f]{32})"', alice.get(newer).text) == shown
    hidden = alice.get("/runs", params={"page_number": 2, "older_than": web.runs["bob"]})
    random = alice.get("/runs", params={"page_number": 2, "older_than": "0" * 32})
    assert hidden.status_code == random.status_code == 200
    assert hidden.text == random.text == alice.get("/runs", params={"page_number": 2}).text
    for bad in ({"older_than": "x' OR 1=1 --"}, {"newer_than": shown[0].upper()},
                {"older_than": shown[0], "newer_than": shown[1]}):
        assert alice.get("/runs", params=bad).status_code == 400
        assert alice.get("/slog", params=bad).status_code == 400


def test_a_page_number_past_any_list_is_past_its_end(web: Site, as_user: dict) -> None:
    """A page number too big for the database's 64-bit offset was a 500 (an OverflowError on SQLite,
    "bigint out of range" on PostgreSQL); it is a page past the end, whose Newer link is the last page."""
    alice = as_user["alice"]  # three runs, two a page
    for path in ("/runs", "/slog", "/scans", "/audits"):
        for number in ("99999999999999999999", str(2**63 // 2)):
            answer = alice.get(path, params={"page_number": number})
            assert answer.status_code == 200, (path, number, answer.text[-300:])
    past = alice.get("/runs", params={"page_number": "99999999999999999999"}).text
    assert "No runs to show" in past
    assert html.unescape(re.search(r'href="([^"]+)" rel="prev"', past).group(1)) == "/runs?page_number=2"


def test_a_share_link_works_logged_out_until_revoked(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    run_page = f"/runs/{web.runs['b']}"
    link = _link(_share(alice, run_page), web)
    assert re.fullmatch(r"/s/[A-Za-z0-9_-]{43}", link)
    stranger = web.client()
    shared = stranger.get(link)
    assert shared.status_code == 200 and "alice-b" in shared.text and "read-only shared page" in shared.text
    assert shared.headers["referrer-policy"] == "no-referrer"
    assert 'name="csrf"' not in shared.text and "Share links" not in shared.text  # no owner controls
    listing = alice.get(run_page).text
    assert "for the vendor" in listing and "never" not in listing.split("for the vendor", 1)[1].split("</tr>")[0]
    link_id = re.search(r'action="/shares/([0-9a-f]{32})/revoke"', listing).group(1)
    assert alice.post(f"/shares/{link_id}/revoke", data={"csrf": csrf_of(alice)}).status_code == 303
    gone = stranger.get(link)
    assert gone.status_code == 404
    assert gone.text == stranger.get(f"/s/{secrets.token_urlsafe(32)}").text
    assert "revoked" in alice.get(run_page).text


def test_a_comparison_can_be_shared(web: Site, as_user: dict) -> None:
    link = _link(_share(as_user["alice"], f"/compare/{web.runs['a']}/{web.runs['b']}"), web)
    page = web.client().get(link)
    assert page.status_code == 200 and "Compare" in page.text and "alice-b" in page.text


def test_a_shared_page_is_redacted_and_the_owners_page_is_not(web: Site, as_user: dict, tmp_path) -> None:
    """A run imported from a file under a home directory: its owner sees the path, a link's holder sees a
    placeholder (report/redact.py), on the run page and on a shared compare."""
    import shutil

    from stackbench.load.importer import import_files
    from web.site import FIO

    home = tmp_path / "home" / "mallory-fs" / "runs"
    home.mkdir(parents=True)
    shutil.copyfile(FIO / "randread-psync.json", home / "out.json")
    run = import_files(web.store, [home / "out.json"], label="from-home")[0]
    web.accounts.claim(web.ids["alice"], [run.id])
    alice = as_user["alice"]
    assert "mallory-fs" in alice.get(f"/runs/{run.id}").text
    for page in (f"/runs/{run.id}", f"/compare/{web.runs['b']}/{run.id}"):
        shared = web.client().get(_link(_share(alice, page), web))
        assert shared.status_code == 200
        assert "mallory-fs" not in shared.text
        assert "user-1" in shared.text or page.startswith("/compare/")  # a compare page shows no facts


@pytest.mark.parametrize("days", ["0", "91", "-1", "x"])
def test_share_lifetime_is_one_to_ninety_days(web: Site, as_user: dict, days: str) -> None:
    assert _share(as_user["alice"], f"/runs/{web.runs['b']}", days=days).status_code == 400


def test_share_notes_are_bounded(web: Site, as_user: dict) -> None:
    assert _share(as_user["alice"], f"/runs/{web.runs['b']}", note="n" * 501).status_code == 400


def test_no_share_token_reaches_a_log(web: Site, as_user: dict, caplog: pytest.LogCaptureFixture) -> None:
    link = _link(_share(as_user["alice"], f"/runs/{web.runs['b']}"), web)
    token = link.removeprefix("/s/")
    with caplog.at_level(logging.INFO):
        assert web.client().get(link).status_code == 200
        web.client().get(f"/s/{secrets.token_urlsafe(32)}")
    # the server's loggers (the test's own HTTP client, httpx, logs its requests too)
    lines = [r.getMessage() for r in caplog.records if r.name.split(".")[0] in ("uvicorn", "stackbench")]
    assert any("/s/[token]" in line for line in lines)
    assert not any(token in line for line in lines), [l for l in lines if token in l]


def test_guessing_ids_and_tokens_runs_into_the_rate_limit(fresh_site) -> None:
    with fresh_site(Settings(misses_per_address=25, miss_window_s=60)) as site:
        alice = site.login("alice")
        anonymous = site.client()
        answers = [alice.get(f"/runs/{secrets.token_hex(16)}").status_code for _ in range(15)]
        answers += [anonymous.get(f"/s/{secrets.token_urlsafe(32)}").status_code for _ in range(15)]
        assert answers[:25] == [404] * 25 and set(answers[25:]) == {429}
        refused = alice.get(f"/runs/{site.runs['a']}")  # once limited, even a real id is refused
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert alice.get("/runs").status_code == 200  # pages without an object still work


@pytest.mark.slow
def test_ten_thousand_guesses_find_nothing_and_are_refused_after_the_limit(fresh_site) -> None:
    """Issue 14: 10,000 random run ids and share tokens at the default limit (60 misses), in a window long
    enough that the test's own duration cannot reopen it."""
    settings = Settings(miss_window_s=3600)
    with fresh_site(settings) as site:
        alice = site.login("alice")
        anonymous = site.client()
        statuses: dict[int, int] = {}
        for index in range(10_000):
            if index % 2:
                answer = anonymous.get(f"/s/{secrets.token_urlsafe(32)}")
            else:
                answer = alice.get(f"/runs/{secrets.token_hex(16)}")
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        assert statuses == {404: settings.misses_per_address, 429: 10_000 - settings.misses_per_address}


def test_the_owner_makes_a_run_team_visible_and_private_again(fresh_site) -> None:
    with fresh_site(Settings()) as site:
        alice, bob = site.login("alice"), site.login("bob")
        run = f"/runs/{site.runs['b']}"
        assert bob.get(run).status_code == 404
        assert alice.post(f"{run}/visibility", data={"csrf": csrf_of(alice), "visibility": "team"}).status_code == 303
        assert bob.get(run).status_code == 200
        assert alice.post(f"{run}/visibility", data={"csrf": csrf_of(alice), "visibility": "public"}).status_code == 400
        assert alice.post(f"{run}/visibility", data={"csrf": csrf_of(alice), "visibility": "private"}).status_code == 303
        assert bob.get(run).status_code == 404


def test_a_share_link_stops_when_its_run_changes_owner_and_stays_dead(fresh_site) -> None:
    """Links bound to their maker's ownership (migration 0009), through the `user` command's moves: a run
    taken by another account and given back, and an account removed, made again and claiming the run."""
    from conftest import cli_here, run_cli

    with fresh_site(Settings()) as site:
        alice, run = site.login("alice"), site.runs["b"]
        link = _link(_share(alice, f"/runs/{run}"), site)
        compared = _link(_share(alice, f"/compare/{site.runs['a']}/{run}"), site)
        assert site.client().get(link).status_code == site.client().get(compared).status_code == 200
        db = site.store.url
        assert cli_here("user", "claim", "bob", run, "--take", "--db", db).returncode == 0
        assert site.client().get(link).status_code == 404
        assert cli_here("user", "claim", "alice", run, "--take", "--db", db).returncode == 0
        assert alice.get(f"/runs/{run}").status_code == 200  # alice's again ...
        assert site.client().get(link).status_code == 404  # ... and her links to it stay dead
        assert site.client().get(compared).status_code == 404
        assert "/revoke" not in alice.get(f"/runs/{run}").text  # and are gone from her list

        fresh = _link(_share(alice, f"/runs/{run}"), site)
        assert cli_here("user", "remove", "alice", "--db", db).returncode == 0
        made = run_cli("user", "add", "alice", "--password-stdin", "--db", db, input=PASSWORD + "\n")
        assert made.returncode == 0, made.stderr
        assert cli_here("user", "claim", "alice", run, "--db", db).returncode == 0
        assert site.client().get(fresh).status_code == 404


def test_the_layers_page_shows_what_stackbench_layers_prints(web: Site, as_user: dict) -> None:
    """The layers table cell for cell and the layers chart, for runs picked bottom first (the runs list's
    checkboxes send one value each); a run that is not the viewer's makes the whole page the random 404."""
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.charts import layers_figures
    from stackbench.report.layers import layers_notes, layers_table

    alice = as_user["alice"]
    bottom, top = web.store.get_run(web.runs["b"]), web.store.get_run(web.runs["team"])  # hers, bob's team run
    gaps = layer_gaps([bottom, top], ["host", "vm"], "iops")
    answer = alice.get("/layers", params={"runs": [bottom.id, top.id], "names": "host,vm"})
    assert answer.status_code == 200
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", answer.text)]
    for row in layers_table(gaps).rows:
        for text in row:
            assert text in cells
    assert assert_charts_served(alice, answer.text, 1) == [f.alt for f in layers_figures(gaps, [bottom, top])]
    assert all(note in _notes(answer.text) for note in layers_notes(gaps))  # runs without replicates: said
    reference = alice.get(f"/runs/{secrets.token_hex(16)}").text
    for other in (web.runs["bob"], secrets.token_hex(16)):
        refused = alice.get("/layers", params={"runs": f"{bottom.id},{other}"})
        assert (refused.status_code, refused.text) == (404, reference)
    one = alice.get("/layers", params={"runs": bottom.id})
    assert one.status_code == 409 and "at least two runs" in one.text
    assert alice.get("/layers").status_code == 200  # the empty form
    many = alice.get("/layers", params={"runs": ",".join([bottom.id] * 13)})
    assert many.status_code == 400 and "at most 12 runs" in many.text
    assert web.client().get("/layers").status_code == 303


def _notes(text: str) -> list[str]:
    return [html.unescape(n) for n in re.findall(r'<p class="note">([^<]*)</p>', text)]


def test_the_layers_page_names_a_gap_only_when_the_runs_prove_it(fresh_site) -> None:  # noqa: ANN001
    """As `stackbench layers` says it: a proven gap with its factor and interval, and for two layers the
    runs cannot tell apart "No gap proven" with what would decide, never a bare factor."""
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.layers import layers_notes
    from web.test_runs_finder import store_owned, stored_run

    def layer(label: str, iops: float):  # noqa: ANN202 - a synthetic run of 3 separate runs, ±3 %
        return ("alice", stored_run(label, host="pve1", fs="zfs", target=f"/{label}", plan="quick", minutes=1,
                                    iops=iops))

    with fresh_site(Settings()) as site:
        store_owned(site, {"host": layer("host", 40000.0), "vm": layer("vm", 10000.0),
                           "vm-again": layer("vm-again", 10100.0)})
        alice = site.login("alice")
        for lower, upper, start in (("host", "vm", "The biggest gap opens between host and vm: 4.00x"),
                                    ("vm", "vm-again", "No gap proven")):
            picked = [site.store.get_run(site.runs[name]) for name in (lower, upper)]
            answer = alice.get("/layers", params={"runs": [r.id for r in picked], "names": f"{lower},{upper}"})
            claim, legend = layers_notes(layer_gaps(picked, [lower, upper], "iops"))
            assert answer.status_code == 200 and claim.startswith(start), claim
            assert claim in _notes(answer.text) and legend in _notes(answer.text)


@pytest.mark.slow
def test_a_synclat_run_page_shows_the_sync_write_table_and_chart(fresh_site, tmp_path) -> None:
    """A real `stackbench synclat` sweep (4K and 8K, 1 s each) stored in the server's store: its page adds the
    table `synclat` prints and the synclat chart."""
    import json

    from conftest import cli_here
    from stackbench.report.charts import synclat_figures
    from stackbench.report.synclat import synclat_rows, synclat_table

    with fresh_site(Settings()) as site:
        done = cli_here("synclat", str(tmp_path), "--sizes", "4k..8k", "--min-time", "0.5s", "--size", "4M", "--json",
                        "--db", str(site.store.engine.url))
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["run_id"]
        site.accounts.claim(site.ids["alice"], [run_id])
        alice = site.login("alice")
        page = alice.get(f"/runs/{run_id}").text
        run = site.store.get_run(run_id)
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]
        for row in synclat_table(run.id, synclat_rows(run)).rows:
            for text in row:
                assert text in cells
        alts = assert_charts_served(alice, page, 2)
        assert alts[-1] == synclat_figures([run])[0].alt
        assert "Sync write latency" in page
        # the SLOG page lists it and ranks it with another run as `stackbench slog --run` does, and charts it
        assert run_id in alice.get("/slog").text
        other = site.runs["b"]  # a random-read import: ranked last, "unknown", not a candidate in the list
        ranked = assert_slog_page_is_the_clis(alice, str(site.store.engine.url), [other, run_id])
        assert first_table(ranked)[0][0] == run.id[:12]
        # its chart is `stackbench chart B RUN -k synclat`, which draws any run with one cell per size
        assert [alt for _, alt in chart_images(ranked)] == [synclat_figures([site.store.get_run(other), run])[0].alt]


@pytest.mark.slow
def test_a_measured_run_page_charts_its_samples_and_latency_buckets(fresh_site, tmp_path) -> None:
    """A real `stackbench run` (one cell, 2 s, per-second samples, fio's json+ output stored): its page draws
    the per-second timeline and the latency histogram from the store's buckets, as the report does."""
    import json

    from conftest import cli_here
    from stackbench.report.charts import representative_cell, run_figures
    from stackbench.store.latency_bins import bins_where_stored

    with fresh_site(Settings()) as site:
        done = cli_here("run", "-t", str(tmp_path), "--bs", "4k", "--qd", "1", "--rw", "randread", "--runs", "1",
                        "--ramp", "0", "--runtime", "2", "--size", "4M", "--json", "--db", str(site.store.engine.url))
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["run_id"]
        site.accounts.claim(site.ids["alice"], [run_id])
        alice = site.login("alice")
        run = site.store.get_run(run_id)
        drawn = run_figures(run, bins=bins_where_stored(site.store, run, [representative_cell(run)]))
        assert {"timeline", "histogram"} <= {f.kind for f in drawn}
        assert assert_charts_served(alice, alice.get(f"/runs/{run_id}").text, 4) == [f.alt for f in drawn]


@pytest.mark.slow
def test_the_charts_of_a_run_still_measuring_follow_its_cells(fresh_site) -> None:
    """A run that gains cells (measured into the server's store, or pushed) is drawn again, not served
    from the charts cache as it was at the first view."""
    from dataclasses import replace

    from stackbench.store.repository import CellRecord, OutputRecord

    with fresh_site(Settings()) as site:
        done = site.store.get_run(site.runs["b"])
        run_id = site.store.create_run(source=done.source, label="growing", target=done.target,
                                       plan_name=done.plan_name, planned_cells=2, facts=done.facts, warnings=[])
        site.accounts.claim(site.ids["alice"], [run_id])
        cell = done.cells[0]

        def add(bs: int) -> None:
            site.store.add_measurement(run_id, [OutputRecord(raw_text="{}", fio_version="fio-3.33")],
                                       [CellRecord(replace(cell.workload, bs=bs), cell.result, (), None)])

        alice = site.login("alice")
        add(4096)
        first = alice.get(f"/runs/{run_id}/chart.svg").text
        add(65536)
        second = alice.get(f"/runs/{run_id}/chart.svg").text
        assert ">64K<" not in first and ">64K<" in second  # the matrix chart's new block size


def test_reports_are_downloads_redacted_for_owners_and_link_holders_and_end_with_the_link(
    web: Site, as_user: dict, tmp_path
) -> None:
    """The report of a run or a comparison (`stackbench report`'s HTML) is offered on its page and through
    its share link, as a download, redacted for everybody; another account gets the random-id 404, and a
    revoked link's report is the same 404 as a random token's."""
    import shutil

    from stackbench.load.importer import import_files
    from web.site import FIO

    home = tmp_path / "home" / "mallory-rep" / "runs"
    home.mkdir(parents=True)
    shutil.copyfile(FIO / "randread-psync.json", home / "out.json")
    run = import_files(web.store, [home / "out.json"], label="report-me")[0]
    web.accounts.claim(web.ids["alice"], [run.id])
    alice, stranger = as_user["alice"], web.client()
    run_page = f"/runs/{run.id}"
    assert f'href="{run_page}/report.html"' in alice.get(run_page).text
    reports = web.app.state.server.reports
    drawn_before = len(reports)
    own = alice.get(f"{run_page}/report.html")
    assert own.status_code == 200 and own.headers["content-type"].startswith("text/html")
    assert own.headers["content-disposition"] == f'attachment; filename="stackbench-report-{run.id[:12]}.html"'
    assert "<html" in own.text[:200] and "report-me" in own.text
    assert "mallory-rep" not in own.text and "user-1" in own.text  # redacted for the owner too
    # not his: the 404 of a random id, as bob sees it (a 404 page shows its viewer's navigation)
    assert as_user["bob"].get(f"{run_page}/report.html").text == as_user["bob"].get(
        f"/runs/{secrets.token_hex(16)}/report.html").text

    link = _link(_share(alice, run_page), web)
    assert f'href="{link}/report.html"' in stranger.get(link).text
    shared = stranger.get(f"{link}/report.html")
    assert shared.status_code == 200 and "report-me" in shared.text and "mallory-rep" not in shared.text
    assert shared.content == own.content and len(reports) == drawn_before + 1  # drawn once, kept for both

    compared = _link(_share(alice, f"/compare/{web.runs['b']}/{run.id}"), web)
    both = stranger.get(f"{compared}/report.html")
    assert both.status_code == 200 and "report-me" in both.text and "alice-b" in both.text
    assert "mallory-rep" not in both.text

    listing = alice.get(run_page).text
    link_id = re.search(r'action="/shares/([0-9a-f]{32})/revoke"', listing).group(1)
    assert alice.post(f"/shares/{link_id}/revoke", data={"csrf": csrf_of(alice)}).status_code == 303
    gone = stranger.get(f"{link}/report.html")
    assert gone.status_code == 404 and gone.text == stranger.get(f"/s/{secrets.token_urlsafe(32)}/report.html").text


INVISIBLE = ("\u202e", "\u2066", "\u200b", "\u2028", "\x1b", "\x00")


def test_pages_escape_invisible_characters_of_text_already_stored(fresh_site) -> None:
    """A label, a target and a fact written before labels refused them (straight into the database): the
    runs list, the run page, the compare page, the shared page and the charts show them escaped
    (usertext.shown, through every template's finalize and every chart's texts), never raw."""
    from sqlalchemy import update

    from stackbench.store import schema

    with fresh_site(Settings()) as site:
        run = site.runs["b"]
        with site.store.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == run).values(
                label="evil\u202eb\u200bx\u2028y", target="/tank/\u2066bench\x1b[2J"))
        alice = site.login("alice")
        link = _link(_share(alice, f"/runs/{run}"), site)
        pages = {path: alice.get(path) for path in ("/runs", f"/runs/{run}", f"/compare/{site.runs['a']}/{run}")}
        pages[link] = site.client().get(link)
        for path, answer in pages.items():
            assert answer.status_code == 200, path
            assert not any(char in answer.text for char in INVISIBLE), path
            assert "\\u202e" in answer.text or path == link, path  # the shared page shows the label redacted or so
        run_page = pages[f"/runs/{run}"].text
        assert "evil\\u202eb\\u200bx\\u2028y" in run_page and "\\u2066bench\\x1b[2J" in run_page
        for path in (f"/runs/{run}/chart.svg?n=0", f"/compare/{site.runs['a']}/{run}/chart.svg?n=0"):
            svg = alice.get(path)
            assert svg.status_code == 200 and not any(char in svg.text for char in INVISIBLE), path


def test_a_share_note_with_invisible_characters_is_refused(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    answer = _share(alice, f"/runs/{web.runs['b']}", note="for \u202eevil")
    assert answer.status_code == 400 and "A note cannot contain U+202E (right-to-left override)" in answer.text
    assert "for \u202eevil" not in alice.get(f"/runs/{web.runs['b']}").text


def test_every_page_counts_in_the_right_number(web: Site, as_user: dict) -> None:
    """Issue 32: "7 run(s)"; every count a page prints says its noun in the right number (issue 33's rule
    for the CLI), on every GET route with real ids."""
    from web.test_headers import _sample_requests

    for method, path in _sample_requests(web):
        text = as_user["alice"].request(method, path).text
        assert not re.search(r"\w\(s\)", text), (path, re.search(r".{40}\w\(s\).{20}", text))


def test_the_run_page_shows_what_each_layer_did_during_each_cell(fresh_site) -> None:  # noqa: ANN001
    """The layer table of `show` (report/layer_table.py) on the run's page too, after the cells' table and
    with the device names escaped as any text."""
    from dataclasses import replace

    from analysis_layers import MB, disk, loop_chain, summary, with_conditions
    from stackbench.report.layer_table import layer_table
    from stored_runs import store_run
    from synthetic import cell, run

    counted = summary({"loop3": disk(writes=100, write_bytes=409_600), "vda": disk(writes=90, write_bytes=4 * MB)},
                      fio_write=409_600)
    made = run([with_conditions(cell(runs=[1000.0]), [counted])], label="layered", run_id=secrets.token_hex(16),
               facts={"fio_version": "fio-3.33", "stack": loop_chain().to_json()})
    made = replace(made, planned_cells=1)
    with fresh_site(Settings()) as site:
        store_run(site.store, made)
        site.accounts.claim(site.ids["alice"], [made.id])
        page = site.login("alice").get(f"/runs/{made.id}").text
    table = layer_table(made)
    assert "<caption>Layers during each cell</caption>" in page
    assert page.index("Layers during each cell") > page.index("<th>Pattern</th>")
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]
    assert all(text in cells for row in table.rows for text in row if text)
