"""The runs list as a finder (docs/server.md, "Finding a run"), against the real server over a real SQLite
store: a case-insensitive search over label, target and host whose wildcards are plain text, facets with
their counts under the visibility rule, the whitelisted sort keys and the headline column (migration 0012,
which fills the searched columns of older runs: tests/store/test_runs_finder_migration.py).

The runs are synthetic (stored through the store as the runner stores them, no fio), so these run in
about a second."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Iterator

import pytest

from stackbench.model.results import new_id
from stored_runs import store_run
from synthetic import cell, run
from web.site import SHARED, Site, Template

RUN_LINK = re.compile(r'<td class="label"><a href="/runs/([0-9a-f]{32})">')
WIDE_LABEL = "a-very-long-label-without-spaces-" * 6


def stored_run(label: str, *, host: str, fs: str, target: str, plan: str, minutes: int, iops: float,
               warnings: tuple = (), more_cells: tuple = (), model: str = "Example NVMe") -> object:
    """A synthetic run as the runner stores it: a 4 KiB random read at QD 1 of `iops` first, then
    `more_cells`; its host, file system and device facts as the probes write them."""
    first = cell(rw="randread", bs=4096, qd=1, iops=iops, runs=[iops * f for f in (0.97, 1.0, 1.03)])
    made = run([first, *more_cells], label=label, run_id=new_id(),
               facts={"fio_version": "fio-3.33", "boot_id": "5b1e4c1e", "system": {"hostname": host, "kernel": "6.1.0"},
                      "target": {"fs_type": fs, "path": target, "block_devices": [
                          {"name": "nvme0n1p1", "model": None, "size_bytes": 2**39, "rotational": False},
                          {"name": "nvme0n1", "model": model, "size_bytes": 2**40, "rotational": False}]}})
    return replace(made, target=target, plan_name=plan, planned_cells=1 + len(more_cells), warnings=warnings,
                   created_at=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=minutes))


_stored = stored_run


def store_owned(site: Site, made: dict[str, tuple[str, object]]) -> None:
    """Store `made`'s runs (name: (owner, run)) as their owners' on `site`, each by its name in site.runs."""
    for name, (owner, stored) in made.items():
        store_run(site.store, stored)
        site.runs[name] = stored.id
        site.accounts.claim(site.ids[owner], [stored.id])


@pytest.fixture(scope="module")
def finder(template: Template) -> Iterator[Site]:
    """The web tests' store plus alice's runs named for the finder (labels with LIKE's wildcards among
    them), bob's private run on the same host (never counted for alice) and his team run."""
    with template.site(replace(SHARED, runs_per_page=50)) as site:
        made = {
            "baseline": ("alice", _stored("Baseline-ext4", host="db01", fs="ext4", target="/srv/ext4",
                                           plan="quick", minutes=1, iops=12932.4)),
            "percent": ("alice", _stored("50%_mix", host="db02", fs="zfs", target="/tank/a", plan="quick",
                                          minutes=2, iops=900.0)),
            "lookalike": ("alice", _stored("50a_mixx", host="db02", fs="zfs", target="/tank/b", plan="blog",
                                            minutes=3, iops=800.0, model="WDC WD40EFRX <b>")),
            "wide": ("alice", _stored(WIDE_LABEL, host="db03", fs="xfs", target="/srv/xfs", plan="quick",
                                       minutes=4, iops=100.0)),
            "bobs": ("bob", _stored("baseline-bob", host="db01", fs="ext4", target="/srv/bob", plan="quick",
                                     minutes=5, iops=1.0)),
        }
        store_owned(site, made)
        yield site


def _found(client, **params: str) -> list[str]:  # noqa: ANN001 - an httpx client
    answer = client.get("/runs", params=params)
    assert answer.status_code == 200, answer.text[-400:]
    return RUN_LINK.findall(answer.text)


def test_the_search_finds_a_part_of_a_label_target_or_host_in_any_case(finder: Site) -> None:
    alice = finder.login("alice")
    runs = finder.runs
    assert _found(alice, q="baseline") == [runs["baseline"]]  # a word of the label; bob's private run not
    assert _found(alice, q="BASELINE-EXT") == [runs["baseline"]]
    assert _found(alice, q="tank") == [runs["lookalike"], runs["percent"]]  # a part of the target, newest first
    assert _found(alice, q="DB01") == [runs["baseline"]]  # the host
    assert _found(alice, q="no-such-thing") == []
    # the total under a search is the facets' (not counted again), the runs found
    assert "2 runs you may see" in alice.get("/runs", params={"q": "tank"}).text
    assert "1 run you may see" in alice.get("/runs", params={"q": "tank", "plan": "blog"}).text
    assert "3 runs you may see" in alice.get("/runs", params={"plan": "quick"}).text  # from the kept tallies


def test_like_wildcards_in_a_search_are_plain_text(finder: Site) -> None:
    """`%` and `_` are LIKE's wildcards: unescaped, `50%_mix` would also find `50a_mixx`, and `%` alone
    every run; the search binds them as a parameter, escaped."""
    alice = finder.login("alice")
    assert _found(alice, q="50%_mix") == [finder.runs["percent"]]
    assert _found(alice, q="%") == [finder.runs["percent"]]
    assert _found(alice, q="0a_") == [finder.runs["lookalike"]]
    assert _found(alice, q="' OR 1=1 --") == []


def _facet(page: str, name: str) -> dict[str, int]:
    section = re.search(rf'<section class="facet" aria-labelledby="facet-{name}">(.*?)</section>', page, re.S)
    assert section, name
    return {html.unescape(value): int(count) for value, count in
            re.findall(r'<a href="[^"]*"[^>]*>([^<]*?) <span class="count">(\d+)</span>', section.group(1))}


def test_facets_count_what_the_viewer_may_see_under_the_search(finder: Site) -> None:
    alice = finder.login("alice")
    page = alice.get("/runs", params={"q": "db0"}).text  # alice's four named runs, not bob's private one
    assert _facet(page, "fs") == {"zfs": 2, "ext4": 1, "xfs": 1}
    assert _facet(page, "plan") == {"quick": 3, "blog": 1}
    assert _facet(page, "owner") == {"alice": 4}
    assert _facet(page, "status") == {"complete": 4}
    assert _facet(page, "visibility") == {"private": 4}
    assert _facet(page, "device") == {"Example NVMe": 3, "WDC WD40EFRX <b>": 1}  # the disk's, not the partition's
    assert "WDC WD40EFRX <b>" not in page  # a model is text, escaped like any other
    assert _found(alice, device="WDC WD40EFRX <b>") == [finder.runs["lookalike"]]
    link = re.search(r'<a href="([^"]+)"[^>]*>zfs <span', page).group(1)
    assert _found(alice, **dict(pair.split("=") for pair in html.unescape(link).split("?")[1].split("&"))) == \
        [finder.runs["lookalike"], finder.runs["percent"]]
    picked = alice.get(html.unescape(link)).text
    assert 'class="picked" aria-current="true">zfs' in picked
    assert _found(alice, q="db0", fs="zfs", plan="blog") == [finder.runs["lookalike"]]
    assert _found(alice, owner="bob", q="baseline") == []  # bob's runs alice may not see are not hers by name
    assert _found(finder.login("bob"), owner="bob", q="baseline") == [finder.runs["bobs"]]


def test_columns_sort_by_whitelisted_keys_only(finder: Site) -> None:
    alice = finder.login("alice")
    mine = [finder.runs[n] for n in ("baseline", "percent", "lookalike", "wide")]
    assert _found(alice, q="db0", sort="label") == [mine[1], mine[2], mine[3], mine[0]]  # "5" < "a" < "B"
    assert _found(alice, q="db0", sort="-label") == [mine[0], mine[3], mine[2], mine[1]]
    assert _found(alice, q="db0", sort="created") == mine
    assert _found(alice, q="db0") == mine[::-1]
    page = alice.get("/runs", params={"q": "db0", "sort": "label"}).text
    assert '<th aria-sort="ascending"><a href="/runs?q=db0&amp;sort=-label">Label ▲</a></th>' in page
    for bad in ("id; DROP TABLE runs", "facts", "--label", "owner"):
        answer = alice.get("/runs", params={"sort": bad})
        assert answer.status_code == 400 and "sorted by one of created, label" in answer.text


def test_the_headline_is_the_key_cells_iops_and_mb_per_s_and_dates_are_one_line(finder: Site) -> None:
    page = finder.login("alice").get("/runs", params={"q": "baseline"}).text
    assert "12,932 IOPS · 53.0 MB/s" in page  # 12,932.4 IOPS of 4 KiB: 53.0 MB/s, as the CLI writes both
    assert '<td class="date"><time datetime="2026-01-01T00:01:00+00:00">2026-01-01 00:01</time></td>' in page


def test_a_search_longer_than_a_label_is_refused_in_one_line(finder: Site) -> None:
    answer = finder.login("alice").get("/runs", params={"q": "x" * 201})
    assert answer.status_code == 400 and "at most 200 characters" in answer.text


def test_the_home_page_lists_the_latest_runs_and_what_to_do_next(finder: Site) -> None:
    from web.site import _password_hash

    alice = finder.login("alice")
    page = alice.get("/")
    assert page.status_code == 200
    latest = re.findall(r'<li><a href="/runs/([0-9a-f]{32})">', page.text)
    assert len(latest) == 7 and latest == _found(alice)  # all she may see, newest first; bob's private not
    assert "All 7 runs you may see" in page.text
    assert "100 IOPS · 0.4 MB/s (4K QD1 rnd read)" in page.text  # the newest run's headline
    assert 'href="/runs">Find a run</a>' in page.text
    # her two audits of one machine, newest first: the second with what is new since the first
    audits = re.findall(r'<li><a href="/audits/([0-9a-f]{32})">', page.text)
    assert audits == [finder.runs["audit-after"], finder.runs["audit-before"]]
    assert "0 new findings since the previous audit" in page.text and "the first audit of this subject" in page.text
    assert "after &lt;script&gt;" in page.text and "All 2 audits you may see" in page.text
    assert finder.client().get("/", follow_redirects=False).headers["location"] == "/login"
    finder.accounts.add_account("dave", _password_hash(), admin=False)
    finder.accounts.set_visibility(finder.runs["team"], "private")  # the one run every account sees
    try:
        empty = finder.login("dave").get("/").text
    finally:
        finder.accounts.set_visibility(finder.runs["team"], "team")
    assert "No runs to show yet" in empty and "<code>stackbench push</code>" in empty


# The row as runs.html printed it through Jinja before the rows were formatted in Python (runs_list._ROW): the
# reference the Python row must match byte for byte, every value through the templates' finalize and escape.
JINJA_ROW = """{% for run, cells, owner, visibility, name, headline, created_iso, created_shown in rows %}
  <tr>
    <td><input type="radio" name="a" value="{{ run.id }}" aria-label="A: {{ name }}"></td>
    <td><input type="radio" name="b" value="{{ run.id }}" aria-label="B: {{ name }}"></td>
    <td><input type="checkbox" name="runs" value="{{ run.id }}" aria-label="Layer: {{ name }}"></td>
    <td class="label"><a href="/runs/{{ run.id }}">{{ name }}</a>{% if run.label %} <code class="id">{{ run.id[:8] }}</code>{% endif %}</td>
    <td class="num">{% if run.key_cell %}{{ headline }}<br><span class="note">{{ run.key_cell.pattern }}</span>{% endif %}</td>
    <td class="date"><time datetime="{{ created_iso }}">{{ created_shown }}</time></td>
    <td class="status-{{ run.status }}">{{ run.status }}</td>
    <td>{{ run.plan_name or run.source }}</td>
    <td class="label">{{ run.target or "" }}</td>
    <td>{{ run.host or "" }}</td>
    <td>{{ run.fs_type or "" }}</td>
    <td class="num">{{ cells }}{% if run.planned_cells is not none %}/{{ run.planned_cells }}{% endif %}</td>
    <td>{{ owner or "(none)" }}</td>
    <td>{{ visibility }}</td>
  </tr>
  {% endfor %}"""


@pytest.mark.parametrize("hostile", ["<b>x</b> & 'q' \"dq\"", "evil\u202eb\u200bx\u2028y\x1b[2J\t\n", ""])
def test_a_row_is_printed_as_the_template_printed_it_with_hostile_text(hostile: str) -> None:
    """`runs_list._listed` formats a row in Python (a page of 50 rows through Jinja cost ~1.3 ms): user text
    in every column is shown and escaped exactly as the templates' finalize and autoescape did it, quotes in
    attributes included, with and without a label, a key cell and planned cells."""
    from stackbench.store.accounts import KeyCell, RunSummary
    from stackbench.web.context import page_templates
    from stackbench.web.pages.runs_list import _listed, headline

    reference = page_templates().from_string(JINJA_ROW)
    moment = datetime(2026, 11, 28, 3, 4, 5, 6, tzinfo=timezone.utc)
    for key, planned, label in ((KeyCell(hostile or "randread", 12932.4, 5.3e7), 3, hostile), (None, None, None)):
        summary = RunSummary(id=new_id(), label=label, status=hostile or "complete", source="measured",
                             created_at=moment, target=hostile or None, plan_name=hostile or None,
                             planned_cells=planned, host=hostile or None, fs_type=hostile or None, key_cell=key)
        name = summary.label or summary.id[:12]
        expected = reference.render(rows=[(summary, 7, hostile or None, hostile or "team", name, headline(key),
                                           moment.isoformat(), moment.strftime("%Y-%m-%d %H:%M"))])
        assert str(_listed(summary, 7, hostile or None, hostile or "team")) == expected
