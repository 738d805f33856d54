"""Security headers on every response, and the access log with share tokens left out.

An ASGI middleware (not Starlette's BaseHTTPMiddleware) so it wraps every response, errors included.
The CSP allows only our own stylesheet, images and one script file (static/copy.js: the copy buttons;
no inline script, no eval), forms posting only to us, no framing (an SVG chart's own inline styles too, for the chart alone: IMAGE_CSP). uvicorn's own access log
is off (`server.uvicorn_config`): it would log a share link's token with its path; this log writes
`/s/[token]` instead, and never a query string. Its lines are one line each whatever the path holds
(web/logs.py escapes every control character of every log line; the quotes and backslashes of the
quoted path are escaped here).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from stackbench.web.logs import ACCESS_LOGGER

CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
# A chart opened in its own tab is an SVG document: matplotlib's drawing carries its own <style> element and
# style attributes (every fill and stroke colour), which CSP would refuse, showing the chart in black. Its
# own styles only; still no script, no request anywhere, no framing.
IMAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"

HEADERS = [  # and a content-security-policy: CSP, or IMAGE_CSP for an SVG
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # every page: share links must never leak through Referer
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
    (b"x-robots-tag", b"noindex, nofollow"),
]
HSTS = (b"strict-transport-security", b"max-age=31536000")

log = logging.getLogger(ACCESS_LOGGER)
_TOKEN_PATH = re.compile(r"^/s/[^/]*")


def loggable_path(path: str) -> str:
    """The path as it may be logged: a share token replaced by `[token]`, and the quote and backslash
    that would end or blur the log line's quoted field written `\\x22`, `\\x5c` (as nginx does)."""
    return _TOKEN_PATH.sub("/s/[token]", path).replace("\\", "\\x5c").replace('"', "\\x22")


class SecurityHeaders:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 0}

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"content-security-policy", b"server")]
                svg = any(k.lower() == b"content-type" and v.startswith(b"image/svg+xml") for k, v in headers)
                headers.append((b"content-security-policy", (IMAGE_CSP if svg else CSP).encode()))
                headers += HEADERS
                if scope.get("scheme") == "https":
                    headers.append(HSTS)
                if not any(k.lower() == b"cache-control" for k, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            client = scope.get("client") or ("-", 0)
            log.info('%s "%s %s" %s', client[0], scope.get("method"), loggable_path(scope.get("path", "")),
                     status["code"] or 500)
