"""Stored smallblocks scans and audits (`smallblocks --db`, `audit --db`): their lists, their pages as
`stackbench show` prints them, a scan's chart, and their owner's visibility forms. Share links do not
reach them."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from stackbench.store.accounts import Viewer
from stackbench.web.access import ItemView, Principal, load
from stackbench.web.charts import Chart
from stackbench.web.context import context_of
from stackbench.web.pages.listing import paged
from stackbench.web.pages.render import chart_image, logged_in, page
from stackbench.web.pages.visibility import change_visibility
from stackbench.web.sessions import csrf_checked, current
from stackbench.web.views import html_table, text_lines

router = APIRouter()


def items_page(request: Request, kind: str, page_number: int) -> Response:
    principal = logged_in(request)
    if isinstance(principal, Response):
        return principal
    account = principal.account
    assert account is not None
    viewer = Viewer(account.id, account.is_admin)
    accounts = context_of(request).accounts
    listing = paged(request, page_number, lambda **at: accounts.visible_items(viewer, kind, **at),
                    lambda n: f"/{kind}s?page_number={n}")
    return page(request, f"{kind}s.html", 200, principal, **listing)


@router.get("/scans")
def scans_page(request: Request, page_number: int = 1) -> Response:
    return items_page(request, "scan", page_number)


@router.get("/audits")
def audits_page(request: Request, page_number: int = 1) -> Response:
    return items_page(request, "audit", page_number)


def damaged_page(request: Request, principal: Principal, view: ItemView) -> Response:
    return page(request, "error.html", 409, principal, title="Damaged",
                message=f"The stored {view.kind} {view.item.id[:12]} is damaged and cannot be shown. Delete it "
                f"with `stackbench rm {view.item.id[:12]} --yes`.")


@router.get("/scans/{scan_id}")
def scan_page(request: Request, scan_id: str) -> Response:
    """A stored scan as `stackbench show SCAN` prints it: the size histogram, the usage estimates and
    the recommendation, and the special vdev chart (`chart SCAN --kind special`)."""
    from stackbench.report.smallblocks import histogram_table, recommendation_text
    from stackbench.scan.document import scan_from_json

    principal = current(request)
    view: ItemView = load(request, principal, "scan", scan_id)
    try:
        result, recommendation, estimates = scan_from_json(view.item.document)
    except ValueError:
        return damaged_page(request, principal, view)
    return page(request, "scan.html", 200, principal, view=view, scan=view.item,
                histogram=html_table(histogram_table(result)),
                lines=text_lines(recommendation_text(result, recommendation, estimates)),
                charts=_scan_charts(request, view), chart_src=f"/scans/{view.item.id}/chart.svg")


@router.get("/scans/{scan_id}/chart.svg")
def scan_chart(request: Request, scan_id: str, n: int = 0) -> Response:
    return chart_image(_scan_charts(request, load(request, current(request), "scan", scan_id)), n)


def _scan_charts(request: Request, view: ItemView) -> list[Chart]:
    def draw() -> list:
        from stackbench.report.charts import scan_figures
        from stackbench.scan.document import scan_from_json

        try:
            result, recommendation, _ = scan_from_json(view.item.document)
        except ValueError:
            return []
        return scan_figures(result.histogram, recommendation, source=", ".join(view.item.paths))

    return context_of(request).charts.charts(("scan", view.item.id, view.item.label), draw)


@router.get("/audits/{audit_id}")
def audit_page(request: Request, audit_id: str) -> Response:
    """A stored audit as `report --audit` shows it: the findings (new or still, when compared) and what
    the previous audit of the same machine had that is gone (fixed, or not rechecked)."""
    from stackbench.report.audit import stored_audit_tables

    principal = current(request)
    view: ItemView = load(request, principal, "audit", audit_id)
    audit = view.item
    try:
        tables, notes = stored_audit_tables(audit.document)
    except (ValueError, KeyError, TypeError):
        return damaged_page(request, principal, view)
    assert principal.account is not None
    previous = (audit.previous_id if audit.previous_id and context_of(request).accounts.access(
        Viewer(principal.account.id, principal.account.is_admin), "audit", audit.previous_id) else None)
    return page(request, "audit.html", 200, principal, view=view, audit=audit, notes=notes,
                tables=[html_table(t) for t in tables], previous=previous)


@router.post("/scans/{scan_id}/visibility")
def set_scan_visibility(request: Request, scan_id: str, visibility: str = Form(...),
                        principal: Principal = Depends(csrf_checked)) -> Response:
    return set_item_visibility(request, principal, load(request, principal, "scan", scan_id), visibility)


@router.post("/audits/{audit_id}/visibility")
def set_audit_visibility(request: Request, audit_id: str, visibility: str = Form(...),
                         principal: Principal = Depends(csrf_checked)) -> Response:
    return set_item_visibility(request, principal, load(request, principal, "audit", audit_id), visibility)


def set_item_visibility(request: Request, principal: Principal, view: ItemView, visibility: str) -> Response:
    return change_visibility(request, principal, view.kind, view.item.id, view.mine, visibility)
