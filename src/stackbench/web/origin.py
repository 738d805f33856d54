"""Which requests the server answers at all: the names it is known by, and where a form was sent from.

Two checks run before any route, on every request (an ASGI middleware that `create_app` installs, so a
route added later is covered without doing anything):

- **Host** (DNS rebinding). A page of another site whose name the attacker re-points at 127.0.0.1 reaches
  this server with its own name in `Host`, and its script could then read the pages as the browser's own.
  A request is answered only when its Host names the address the connection arrived on (the address serve
  listens on, or the one of a wildcard bind that the client used: `scope["server"]`), `localhost` on a
  loopback connection, or a name the operator allowed (`serve --allowed-host`, STACKBENCH_ALLOWED_HOSTS).
  Anything else is refused with 400 and a page that says how to allow a name.
- **Origin** (CSRF, and login CSRF by cookie tossing). Cookies are not separated by port: a page served on
  another port of the same host is "same-site", so the browser sends our SameSite=Strict cookies with its
  form posts, and it could plant our login cookie beside them. So every request other than GET, HEAD and
  OPTIONS must come from one of our own pages: its `Origin` must be this server's own origin (the scheme
  the browser used and the Host it asked for), or, when the browser sent no Origin or `null` (which it
  does for our own forms, since every page says `Referrer-Policy: no-referrer`), `Sec-Fetch-Site` must be
  `same-origin` (a header no page can set; Chromium 76, Firefox 90 and Safari 16.4 send it). A request
  with neither is a script's, not a browser's: it is accepted only when it carries no cookie at all, so
  that nothing ambient (a session, the login cookie) rides on it; the token API (`Authorization: Bearer`,
  which ignores cookies) is such a request. Refused: 403 with a page that says why.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable, Iterable

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": "80", "https": "443"}
# A host name or an IP address as an operator may allow it: letters, digits, dots, dashes; an IPv6 address
# in brackets or without them.
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


class RefusedRequest(Exception):
    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def allowed_host_name(text: str) -> str:
    """An operator's `--allowed-host` value as the check compares it (lower case, IPv6 without brackets);
    ValueError naming what is wrong."""
    name = text.strip().lower()
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"{text!r} is not a host name or an IP address (give the name alone, without a "
                         "scheme, port or path: bench.example.org)")
    return name


def split_host(value: str) -> tuple[str, str] | None:
    """`Host`'s name (lower case, IPv6 without brackets) and port ('' when none); None when it is not one."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, port = value[1:].partition("]")
        if not bracket or port and not port.startswith(":"):
            return None
        port = port[1:]
    else:
        name, _, port = value.partition(":")
    if port and not (port.isdigit() and len(port) <= 5):
        return None
    try:
        return str(ipaddress.ip_address(name)), port
    except ValueError:
        return (name, port) if _NAME.fullmatch(name) and not value.startswith("[") else None


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _header(scope: dict, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == name]


def check_host(scope: dict, allowed: frozenset[str]) -> tuple[str, str]:
    """The request's Host as (name, port) when the server answers to it; RefusedRequest otherwise."""
    values = _header(scope, b"host")
    parsed = split_host(values[0]) if len(values) == 1 else None
    if parsed is None:
        raise RefusedRequest(400, "Bad request", "The request names no host, or names it twice.")
    name, port = parsed
    arrived_on = str((scope.get("server") or ("",))[0] or "").lower()
    try:
        address = ipaddress.ip_address(arrived_on.strip("[]"))
        # an IPv4 client of a dual-stack `--host ::` arrives on ::ffff:a.b.c.d and asks for a.b.c.d
        mapped = getattr(address, "ipv4_mapped", None)
        arrived_on = str(mapped or address)
    except ValueError:
        pass
    if name in allowed or name == arrived_on or (name == "localhost" and _is_loopback(arrived_on)):
        return name, port
    raise RefusedRequest(
        400, "Unknown host name",
        "This server does not answer to that host name (it could be another site's name pointed at this "
        "server). Open it by its address, or ask whoever runs it to allow the name with "
        "`stackbench serve --allowed-host NAME`.")


FOREIGN = ("This form was sent from another site or another port of this host, not from this server's own "
           "pages, so it was refused. Open the page on this server and send the form from there.")


def check_origin(scope: dict, host: tuple[str, str]) -> None:
    """A state-changing request sent from one of this server's pages; RefusedRequest otherwise."""
    scheme = scope.get("scheme", "http")
    origins = _header(scope, b"origin")
    if origins and origins != ["null"]:
        if len(origins) == 1 and _origin(origins[0]) == (scheme, host[0], host[1] or DEFAULT_PORTS.get(scheme, "")):
            return
        raise RefusedRequest(403, "Forbidden", FOREIGN)
    # No Origin, or `null`: our own pages' forms send `null`, as the Fetch standard asks of a browser when
    # the page's Referrer-Policy is no-referrer (every page's: share tokens never leave in a Referer), so
    # the browser's Sec-Fetch-Site (which no page can set) says where the form came from.
    fetch_site = _header(scope, b"sec-fetch-site")
    if fetch_site:
        if fetch_site == ["same-origin"]:
            return
        raise RefusedRequest(403, "Forbidden", FOREIGN)
    if origins or _header(scope, b"cookie"):
        raise RefusedRequest(403, "Forbidden", "The request says neither where it was sent from (Origin) "
                             "nor that it came from this server's pages (Sec-Fetch-Site), and it is a browser's "
                             "(it carries cookies or a null Origin), so it was refused. Use a current browser, "
                             "or, from a script, an API token.")


def _origin(value: str) -> tuple[str, str, str] | None:
    """`Origin: scheme://host[:port]` as (scheme, name, port with the scheme's default filled in)."""
    scheme, sep, rest = value.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS or "/" in rest:
        return None
    parsed = split_host(rest)
    if parsed is None:
        return None
    return scheme, parsed[0], parsed[1] or DEFAULT_PORTS[scheme]


class RequestOrigin:
    """The ASGI middleware of both checks (see the module); `page(status, title, message)` renders the
    refusal as the server's other error pages."""

    def __init__(self, app: Any, allowed_hosts: Iterable[str], page: Callable[[int, str, str], str]) -> None:
        self.app, self.page = app, page
        self.allowed = frozenset(allowed_host_name(name) for name in allowed_hosts)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            try:
                host = check_host(scope, self.allowed)
                if scope.get("method", "GET") not in SAFE_METHODS:
                    check_origin(scope, host)
            except RefusedRequest as refused:
                body = self.page(refused.status, refused.title, refused.message).encode("utf-8")
                await send({"type": "http.response.start", "status": refused.status,
                            "headers": [(b"content-type", b"text/html; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
