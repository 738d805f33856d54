"""The server's front door and its fixed files: `/` (the runs list, for now), the stylesheet and robots.txt."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from stackbench.web.context import context_of

ROBOTS = "User-agent: *\nDisallow: /s/\nDisallow: /\n"  # share links above all; nothing here is for indexing

router = APIRouter()


@router.get("/static/style.css")
def style(request: Request) -> Response:
    return Response(context_of(request).stylesheet, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


@router.get("/robots.txt")
def robots() -> PlainTextResponse:
    return PlainTextResponse(ROBOTS)


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/runs", status_code=303)
