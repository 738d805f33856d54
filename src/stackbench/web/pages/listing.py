"""A list's pages (the runs list, the SLOG candidates, scans, audits): one page of rows, `runs_per_page`
long, and the links to the pages before and after it."""

from __future__ import annotations

from typing import Any, Callable

from fastapi import Request

from stackbench.web.access import RUN_ID
from stackbench.web.context import context_of

LAST_PAGE_NUMBER = 10**9  # of a list's pages: beyond, (number - 1) x a page can pass a 64-bit offset


class NotAPageLink(Exception):
    """A runs list's `older_than` / `newer_than` that is not one run's id, or both at once (see `paged`)."""


def paged(request: Request, page_number: int, fetch: Callable[..., tuple[list, int]], link: Callable[..., str],
          anchor: dict[str, str] | None = None, key_of: Callable[[Any], str] | None = None) -> dict[str, Any]:
    """One page of a list, `runs_per_page` long: `fetch(offset=, limit=)` answers its rows and the total;
    the template values of the page and its pager.

    A list whose rows have a key (`key_of`: the runs lists) links its Older and Newer pages by the
    last and first run shown (`older_than=ID`, `newer_than=ID`: `anchor`), so that paging deep
    reads from that run on rather than skipping every run before it; `page_number` then only numbers
    the page. A page number without an anchor (typed, or a bookmark) still skips to that page, and so
    does an anchor that no longer finds a page (its run deleted or hidden since)."""
    size = context_of(request).settings.runs_per_page
    # A number past any list is past its end, not an offset the database cannot hold (500 before)
    number = min(max(1, page_number), LAST_PAGE_NUMBER)
    rows, total = fetch(offset=0, limit=size, **anchor) if anchor else ([], 0)
    if anchor and "newer_than" in anchor and len(rows) < size:
        rows, number = [], 1  # fewer newer runs than a page: the top of the list, shown whole
    if not rows:
        rows, total = fetch(offset=(number - 1) * size, limit=size)
    pages = (total + size - 1) // size
    previous = link(min(number - 1, pages)) if number > 1 and pages else None  # past the end: to the last
    following = link(number + 1) if number < pages else None
    if key_of is not None and rows:
        previous = previous if number <= 2 else link(number - 1, newer_than=key_of(rows[0]))
        following = following and link(number + 1, older_than=key_of(rows[-1]))
    return dict(rows=rows, total=total, page_number=number, pages=pages, previous=previous, next=following)


def page_anchor(older_than: str, newer_than: str) -> dict[str, str] | None:
    """The runs list's page anchor from its query (see `paged`); a value that is not one run's id, or
    both at once, is refused (the 400 of NotAPageLink) before any query."""
    given = {name: value for name, value in (("older_than", older_than), ("newer_than", newer_than)) if value}
    if len(given) > 1 or not all(RUN_ID.fullmatch(value) for value in given.values()):
        raise NotAPageLink()
    return given or None
