"""`/runs`: the runs the viewer may see as a finder (docs/server.md, "Finding a run"): a search over label,
target and host, facets with their counts, sortable columns, a headline figure per run, paged."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from markupsafe import Markup
from starlette.responses import Response

from stackbench.base.units import format_iops, format_mb_per_s
from stackbench.base.usertext import shown
from stackbench.store.accounts import FACETS, KeyCell, RunSummary, Viewer
from stackbench.store.run_filter import NEWEST_FIRST, SORTS, RunFilter
from stackbench.web.context import context_of
from stackbench.web.pages.listing import page_anchor, paged
from stackbench.web.pages.render import logged_in, page

router = APIRouter()

# The sortable columns, in the table's order: (sort key, heading); the other columns are not sortable
SORTABLE = {"created": "Created (UTC)", "label": "Label", "status": "Status", "plan": "Plan", "target": "Target",
            "host": "Host", "fs": "File system"}
FACET_TITLES = {"plan": "Plan", "fs": "File system", "device": "Device model", "status": "Status", "owner": "Owner",
                "visibility": "Visibility"}
SEARCH_LENGTH = 200  # as long as a label may be


def headline(key: KeyCell | None) -> str:
    """A run's headline figure: its key cell's IOPS and MB/s with the units, as the CLI's tables write them."""
    if key is None:
        return ""
    return f"{format_iops(key.iops)} IOPS · {format_mb_per_s(key.bw_bytes)} MB/s"


@router.get("/runs")
def runs_page(request: Request, q: str = "", plan: str = "", fs: str = "", device: str = "", status: str = "",
              owner: str = "", visibility: str = "", since: str = "", until: str = "", sort: str = NEWEST_FIRST,
              page_number: int = 1, older_than: str = "", newer_than: str = "") -> Response:
    principal = logged_in(request)
    if isinstance(principal, Response):
        return principal
    account = principal.account
    assert account is not None
    if sort.removeprefix("-") not in SORTS:
        return page(request, "error.html", 400, principal, title="Bad request",
                    message=f"Runs are sorted by one of {', '.join(SORTABLE)} (a - first for descending): "
                            "pick a column heading of the runs list.")
    if len(q) > SEARCH_LENGTH:
        return page(request, "error.html", 400, principal, title="Bad request",
                    message=f"A search is at most {SEARCH_LENGTH} characters: search for a shorter part of the label.")
    try:
        where = RunFilter(search=q.strip() or None, plan=plan or None, fs_type=fs or None,
                          device_model=device or None, status=status or None,
                          owner=owner or None, visibility=visibility or None,
                          since=date.fromisoformat(since) if since else None,
                          until=date.fromisoformat(until) if until else None)
    except ValueError:
        return page(request, "error.html", 400, principal, title="Bad request",
                    message="Dates are written YYYY-MM-DD.")
    anchor = page_anchor(older_than, newer_than) if sort == NEWEST_FIRST else None
    filters = {k: v for k, v in (("q", q), ("plan", plan), ("fs", fs), ("device", device), ("status", status),
                                 ("owner", owner), ("visibility", visibility), ("since", since), ("until", until))
               if v}
    ordered = {**filters, **({"sort": sort} if sort != NEWEST_FIRST else {})}
    viewer = Viewer(account.id, account.is_admin)
    accounts = context_of(request).accounts
    counts, total = accounts.run_facets(viewer, where)  # the list's total too: not counted twice
    listing = paged(request, page_number,
                    lambda **at: accounts.visible_runs(viewer, where, whole=False, sort=sort, total=total, **at),
                    lambda n, **key: "/runs?" + urlencode({**ordered, "page_number": n, **key}),
                    anchor, key_of=(lambda row: row[0].id) if sort == NEWEST_FIRST else None)
    facets = _facet_links(counts, ordered)
    listing["rows"] = [_listed(*row) for row in listing["rows"]]
    return page(request, "runs.html", 200, principal, filters=filters, facets=facets,
                columns=_sort_links(filters, sort), **listing)


# One row of the runs list's table. A page of 50 rows printed ~1,200 values through Jinja, each through its
# finalize (`shown_in_template`), markupsafe's escape and a generator step: ~1.3 ms of a list page's ~4 ms of
# CPU at 10,000 runs. Here each value is shown and escaped once, as the template did it (`_text`), and the
# row is one format: the same bytes (tests/web/test_runs_finder.py).
_ROW = """
  <tr>
    <td><input type="radio" name="a" value="{id}" aria-label="A: {name}"></td>
    <td><input type="radio" name="b" value="{id}" aria-label="B: {name}"></td>
    <td><input type="checkbox" name="runs" value="{id}" aria-label="Layer: {name}"></td>
    <td class="label"><a href="/runs/{id}">{name}</a>{short_id}</td>
    <td class="num">{headline}</td>
    <td class="date"><time datetime="{created_iso}">{created_shown}</time></td>
    <td class="status-{status}">{status}</td>
    <td>{plan}</td>
    <td class="label">{target}</td>
    <td>{host}</td>
    <td>{fs}</td>
    <td class="num">{cells}</td>
    <td>{owner}</td>
    <td>{visibility}</td>
  </tr>
  """


def _text(value: object) -> str:
    """`value` as a template prints it: shown (its invisible characters escaped: the templates' finalize),
    then HTML-escaped as markupsafe escapes it (the same five characters, the same entities)."""
    text = shown(value, keep="\n\t") if type(value) is str else str(value)
    return (text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;")
            .replace('"', "&#34;"))


def _listed(run: RunSummary, cells: int, owner: str | None, visibility: str) -> Markup:
    """The runs list's row of `run`, every value a text shown and escaped (user text is data, never markup)."""
    key, status = run.key_cell, _text(run.status)
    planned = "" if run.planned_cells is None else f"/{run.planned_cells:d}"
    return Markup(_ROW.format(
        id=_text(run.id), name=_text(run.label or run.id[:12]),
        short_id=f' <code class="id">{_text(run.id[:8])}</code>' if run.label else "",
        headline=f'{_text(headline(key))}<br><span class="note">{_text(key.pattern)}</span>' if key else "",
        created_iso=run.created_at.isoformat(), created_shown=run.created_at.strftime("%Y-%m-%d %H:%M"),
        status=status, plan=_text(run.plan_name or run.source), target=_text(run.target or ""),
        host=_text(run.host or ""), fs=_text(run.fs_type or ""), cells=f"{cells:d}{planned}",
        owner=_text(owner or "(none)"), visibility=_text(visibility)))


def _facet_links(counts: dict[str, list[tuple[str, int]]], query: dict[str, str]) -> list[dict[str, Any]]:
    """Each facet's values with their counts and the link that picks the value (or, picked, drops it)."""
    facets = []
    for name in FACETS:
        values = []
        for value, count in counts[name]:
            picked = query.get(name) == value
            rest = {k: v for k, v in query.items() if k != name}
            values.append({"value": value, "count": count, "picked": picked,
                           "href": "/runs?" + urlencode(rest if picked else {**rest, name: value})})
        if values:
            facets.append({"name": name, "title": FACET_TITLES[name], "values": values})
    return facets


def _sort_links(filters: dict[str, str], sort: str) -> dict[str, dict[str, str]]:
    """Each sortable column's heading, its link (ascending, or descending if the list is sorted by it
    ascending; the dates newest first) and `aria-sort` of the column the list is sorted by."""
    links = {}
    for key, title in SORTABLE.items():
        first = "-created" if key == "created" else key
        reverse = first[1:] if first.startswith("-") else "-" + first
        target = reverse if sort == first else first
        state = "" if sort.removeprefix("-") != key else ("descending" if sort.startswith("-") else "ascending")
        links[key] = {"title": title, "aria": state,
                      "href": "/runs?" + urlencode({**filters, **({"sort": target} if target != NEWEST_FIRST else {})})}
    return links
