"""Stored tune sessions (`tune --apply --db`): their list, a session's page as `stackbench show TUNE` prints it
(report/tune.py `stored_session_tables`), and their owner's visibility form. Share links do not reach them.

A session's comparisons are of its arms' runs, which are runs with their own owners: a comparison is shown
only where the viewer may see both of its runs, otherwise the page says so without any of their numbers."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from stackbench.base.errors import StoreError
from stackbench.model.results import Run
from stackbench.store.accounts import Viewer
from stackbench.web.access import ItemView, Principal, load
from stackbench.web.context import context_of
from stackbench.web.pages.render import page
from stackbench.web.pages.scans_audits import damaged_page, items_page, set_item_visibility
from stackbench.web.sessions import csrf_checked, current
from stackbench.web.views import html_table

router = APIRouter()

NOT_SEEN = "are not yours to see"  # an arm run hidden from the viewer, or removed: the same words for both


@router.get("/tunes")
def tunes_page(request: Request, page_number: int = 1) -> Response:
    return items_page(request, "tune", page_number)


@router.get("/tunes/{tune_id}")
def tune_page(request: Request, tune_id: str) -> Response:
    """A stored session: the summary (what is set now and the undo command among its notes), and compare's
    table of each knob's runs made again from the stored runs, where the viewer may see both of them."""
    from stackbench.report.tune import stored_session_tables

    principal = current(request)
    view: ItemView = load(request, principal, "tune", tune_id)
    assert principal.account is not None
    ctx = context_of(request)
    viewer = Viewer(principal.account.id, principal.account.is_admin)

    def arm_runs(base: str, other: str) -> tuple[Run, Run] | str:
        if any(ctx.accounts.access(viewer, "run", run_id) is None for run_id in (base, other)):
            return NOT_SEEN
        try:
            return ctx.store.get_run(base), ctx.store.get_run(other)
        except StoreError:  # removed since the check
            return NOT_SEEN

    try:
        shown = stored_session_tables(view.item.id, view.item.document, arm_runs)
    except (StoreError, KeyError, TypeError, ValueError):
        return damaged_page(request, principal, view)
    left_out = [f"The comparison of {name}: its runs {why}, so it is not shown." for name, why in shown.left_out]
    return page(request, "tune.html", 200, principal, view=view, tune=view.item,
                tables=[html_table(t) for t in shown.tables], left_out=left_out, undo=shown.data.get("undo"),
                now_set=shown.data.get("now_set") or [])


@router.post("/tunes/{tune_id}/visibility")
def set_tune_visibility(request: Request, tune_id: str, visibility: str = Form(...),
                        principal: Principal = Depends(csrf_checked)) -> Response:
    return set_item_visibility(request, principal, load(request, principal, "tune", tune_id), visibility)
