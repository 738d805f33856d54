"""Running the app under uvicorn, and the rule on which addresses it may listen."""

from __future__ import annotations

import ipaddress
from typing import Any

from stackbench.errors import StackbenchError, UsageError
from stackbench.web.headers import SecurityHeaders


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def check_host(host: str, accounts: int) -> None:
    """Refuse to listen beyond this machine while the server has no account: nobody could log in, and an
    open port with no way in invites the first default someone adds."""
    if accounts == 0 and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host}: the server has no account yet, so it binds only to 127.0.0.1",
            "Create one first with `stackbench user add NAME --admin`, or leave out --host",
        )


def check_port(host: str, port: int) -> None:
    """Fail with one line before uvicorn starts when the address cannot be bound (uvicorn would log a
    traceback-like error and exit)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as error:
            raise StackbenchError(f"cannot listen on {host} port {port}: {error.strerror}",
                                  "Choose another --port, or stop what listens there") from None


def uvicorn_config(app: Any, host: str, port: int, forwarded_allow_ips: str | None = None) -> Any:
    """uvicorn's settings: no Server banner, our access log instead of uvicorn's (which would log share
    tokens), proxy headers trusted only from the addresses given (none by default)."""
    import logging

    import uvicorn

    from stackbench.web.headers import RedactTokens

    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
    return uvicorn.Config(
        SecurityHeaders(app), host=host, port=port, server_header=False, access_log=False,
        proxy_headers=forwarded_allow_ips is not None, forwarded_allow_ips=forwarded_allow_ips,
        log_level="info", lifespan="off",
    )
