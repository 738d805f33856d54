"""`/runs`: the runs the viewer may see as a finder (docs/server.md, "Finding a run"): a search over label,
target and host, facets with their counts, sortable columns, a headline figure per run, paged."""

from __future__ import annotations

from datetime import date
from typing import Any, NamedTuple
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.responses import Response

from stackbench.base.units import format_iops, format_mb_per_s
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


class ListedRun(NamedTuple):
    """A row of the runs list with what the template would otherwise call for, per row: a call from a
    template goes through Jinja's Context.call, a few microseconds each, three per row of 50 rows."""

    run: RunSummary
    cells: int
    owner: str | None
    visibility: str
    name: str  # the label, or the id's first 12 characters for a run without one
    headline: str
    created_iso: str
    created_shown: str  # one line: 2026-11-27 23:41


def _listed(run: RunSummary, cells: int, owner: str | None, visibility: str) -> ListedRun:
    return ListedRun(run, cells, owner, visibility, run.label or run.id[:12], headline(run.key_cell),
                     run.created_at.isoformat(), run.created_at.strftime("%Y-%m-%d %H:%M"))


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
