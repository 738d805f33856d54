"""The error pages and the pages opened without what they show (docs/server.md, "Errors"), against the real
server: a 404 offers a visitor who is not logged in the login, and says no more for a run that exists than
for a random id; 403 and 404 pages keep a logged-in viewer's navigation; the layers page opened from the
menu is a run picker, and its runs move up and down the stack by links."""

from __future__ import annotations

import html
import re
import secrets

from web.site import Site, csrf_of

NAV = '<nav aria-label="Main">'


def test_a_logged_out_404_offers_the_login_and_says_nothing_of_what_exists(web: Site) -> None:
    nobody = web.client()
    team_run = nobody.get(f"/runs/{web.runs['team']}")
    random_run = nobody.get(f"/runs/{secrets.token_hex(16)}")
    assert team_run.status_code == random_run.status_code == 404
    assert team_run.text == random_run.text
    assert '<a class="button" href="/login">Log in</a>' in team_run.text and "log in and open it again" in team_run.text
    dead_link = nobody.get(f"/s/{secrets.token_urlsafe(32)}")
    assert dead_link.status_code == 404 and "ask its sender for a new one" in dead_link.text


def test_404_and_403_pages_keep_the_navigation(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    missing = alice.get(f"/runs/{secrets.token_hex(16)}")
    assert missing.status_code == 404 and NAV in missing.text and "Log out" in missing.text
    assert 'href="/login">Log in' not in missing.text
    unknown_path = alice.get("/no/such/page")
    assert unknown_path.status_code == 404 and NAV in unknown_path.text
    csrf_of(alice)
    stale = alice.post(f"/runs/{web.runs['a']}/visibility", data={"csrf": "stale", "visibility": "team"})
    assert stale.status_code == 403 and NAV in stale.text and "reload the page" in stale.text


def test_the_layers_page_from_the_menu_is_a_run_picker(fresh_site) -> None:  # noqa: ANN001
    """On a server of its own: the shared one holds whatever runs the tests before this one pushed."""
    from stackbench.web.settings import Settings

    with fresh_site(Settings()) as site:
        page = site.login("alice").get("/layers")
        assert page.status_code == 200 and 'class="problem"' not in page.text
        offered = set(re.findall(r'<input type="checkbox" name="runs" value="([0-9a-f]{32})">', page.text))
        assert offered == {site.runs["a"], site.runs["b"], site.runs["team"]}  # hers and bob's team run, no other


def test_layers_move_up_and_down_by_links_with_their_names(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    bottom, top = web.runs["b"], web.runs["team"]
    page = alice.get("/layers", params={"runs": f"{bottom},{top}", "names": "host,vm"}).text
    up = html.unescape(re.search(r'<a href="([^"]+)" aria-label="Move alice-b up the stack">', page).group(1))
    assert up == f"/layers?runs={top}%2C{bottom}&metric=iops&names=vm%2Chost"
    moved = alice.get(up).text
    assert re.findall(r'<li><a href="/runs/([0-9a-f]{32})">', moved) == [top, bottom]
    assert html.unescape(re.search(r'<a href="([^"]+)" aria-label="Move alice-b down the stack">', moved).group(1)) \
        == f"/layers?runs={bottom}%2C{top}&metric=iops&names=host%2Cvm"
