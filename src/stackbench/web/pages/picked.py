"""The runs checked for a layers or SLOG page: the runs list's checkboxes send one id each, the page's own
form one comma-separated list; every id goes through `access.load_runs`."""

from __future__ import annotations

from fastapi import Request

from stackbench.web.access import Principal, RunView, load_runs

MAX_PICKED = 12  # runs on one layers or SLOG page: a stack is a handful of layers, a shoot-out of candidates


class TooManyRuns(Exception):
    """More runs than MAX_PICKED on a layers or SLOG page: refused before any is loaded (says nothing about
    them). `what` names the page's runs in the message ("A layers page shows ...")."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def picked_runs(request: Request, principal: Principal, runs: list[str], what: str) -> list[RunView]:
    """The runs of a layers or SLOG page, in order: `runs` values, each one id or several comma-separated
    (the runs list's checkboxes send one value each, the page's own form one list), each through load."""
    ids = [i.strip() for value in runs for i in value.split(",") if i.strip()]
    if len(ids) > MAX_PICKED:
        raise TooManyRuns(what)
    return load_runs(request, principal, ids) if ids else []
