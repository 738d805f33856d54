"""The pages of stored tune sessions against the real server: the session's tables as `show TUNE` builds them,
a comparison shown only to who may see both of its runs, the lists and the home page by the visibility rule,
and the owner's visibility form."""

from __future__ import annotations

import html
import re

from web.site import Site, csrf_of


def _cells(page: str) -> list[str]:
    return [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", page)]


def test_the_session_page_shows_its_tables_and_only_the_comparisons_whose_runs_are_the_viewers(
        web: Site, as_user: dict) -> None:
    """alice's session compared her runs a and b (its knob), and her b with bob's private run (its
    confirmation): the summary and the knob's comparison are shown cell for cell as `show` builds them, the
    confirmation's is said to be not hers to see, with none of its numbers."""
    from stackbench.analysis.compare import compare_runs
    from stackbench.report.compare import comparison_table
    from stackbench.report.tune import summary_table

    alice = as_user["alice"]
    stored = web.store.tune_session_by_id(web.runs["tune"])
    answer = alice.get(f"/tunes/{stored.id}")
    assert answer.status_code == 200, answer.text
    page, cells = answer.text, _cells(answer.text)
    for row in summary_table(stored.document).rows:
        assert all(text in cells for text in row), row
    knob = stored.document["knobs"][0]["compare"]
    mine = comparison_table(compare_runs(web.store.get_run(web.runs["a"]), web.store.get_run(web.runs["b"]),
                                         alpha=knob["alpha"], min_effect=knob["min_effect_pct"] / 100))
    for row in mine.rows:
        assert all(str(text) in cells for text in row), row
    assert page.count("<caption>") == 2  # the summary and the knob's comparison; not the confirmation's
    assert "The comparison of the confirmation: its runs are not yours to see, so it is not shown." in page
    assert web.runs["bob"] not in page and web.runs["bob"][:12] not in page
    assert f"<code>stackbench tune --rollback {stored.id}</code>" in page  # the undo command
    assert 'action="/tunes/' + stored.id + '/visibility"' in page  # hers: the visibility form


def test_the_lists_and_the_home_page_follow_the_visibility_rule(web: Site, as_user: dict) -> None:
    alice, bob, carol = as_user["alice"], as_user["bob"], as_user["carol"]
    tune = web.runs["tune"]
    listed = alice.get("/tunes").text
    assert f'href="/tunes/{tune}"' in listed and "alice-tune" in listed and "completed" in listed
    assert f'href="/tunes/{tune}"' in alice.get("/").text and "Latest tune sessions" in alice.get("/").text
    for other in (bob, carol):  # private: not bob's, and an admin does not read private items
        assert tune not in other.get("/tunes").text and tune not in other.get("/").text
        assert other.get(f"/tunes/{tune}").status_code == 404
    assert '<a href="/tunes">Tune</a>' in alice.get("/runs").text  # the nav link
    path = f"/tunes/{tune}"
    try:
        made = alice.post(f"{path}/visibility", data={"csrf": csrf_of(alice, path), "visibility": "team"})
        assert (made.status_code, made.headers["location"]) == (303, path)
        team = bob.get(path)
        assert team.status_code == 200 and "visibility team" in team.text
        assert 'action="/tunes/' not in team.text  # not his: no form
        # bob may see his own run and alice's team session, but not her private runs a and b
        assert "The comparison of blockdev.read_ahead_kb: its runs are not yours to see" in team.text
        refused = bob.post(f"{path}/visibility", data={"csrf": csrf_of(bob), "visibility": "private"})
        assert refused.status_code == 403 and "Only the tune session&#39;s owner can change who sees it." in refused.text
    finally:
        web.accounts.set_visibility(tune, "private", kind="tune")


def test_a_damaged_session_is_one_page_naming_how_to_remove_it(web: Site, as_user: dict) -> None:
    """A session whose stored document is not a session's (written by hand, or by a broken tool) answers the
    damaged page with the `rm` command, not a server error."""
    from datetime import datetime, timezone

    from stackbench.model.results import new_id

    session_id = web.store.add_tune_session(session_id=new_id(), label=None, status="failed",
                                            created_at=datetime.now(timezone.utc), finished_at=None,
                                            document={"target": "/mnt/x"})  # no knobs
    web.accounts.claim_items(web.ids["alice"], [("tune", session_id)])
    try:
        answer = as_user["alice"].get(f"/tunes/{session_id}")
        assert answer.status_code == 409
        assert f"stackbench rm {session_id[:12]} --yes" in answer.text
    finally:
        web.store.delete_stored(tunes=[session_id])
