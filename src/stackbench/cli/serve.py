"""`stackbench serve`: the team dashboard over a results store (docs/server.md)."""

from __future__ import annotations

import logging
import sys
from typing import Any, Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import DbOption


@app.command("serve")
def serve_command(
    host: str = typer.Option(
        "127.0.0.1", "--host",
        help="Address to listen on. Anything but loopback is refused until an account exists "
        "(stackbench user add NAME --admin). Put a TLS reverse proxy in front for other machines.",
    ),
    port: int = typer.Option(8080, "--port", min=1, max=65535, help="TCP port to listen on."),
    forwarded_allow_ips: Optional[str] = typer.Option(
        None, "--forwarded-allow-ips",
        help="Comma-separated addresses of the TLS reverse proxy whose X-Forwarded-For/-Proto headers are "
        "trusted (client address for rate limits, https for Secure cookies). Default: none trusted.",
        show_default=False,
    ),
    db: Optional[str] = DbOption,
) -> None:
    """Serve the stored runs as web pages: runs list, run, compare, share links.

    Accounts log in with a password (stackbench user add); every run is private to its owner unless made
    team-visible; runs stored by the CLI without an account are seen by admins only until claimed
    (stackbench user claim). Stop with Ctrl-C.

    Example:

        stackbench user add alice --admin

        stackbench serve --port 8080
    """
    from stackbench.cli.common import open_store_from
    from stackbench.store.accounts import Accounts
    from stackbench.web.server import check_host, check_port, uvicorn_config

    store = open_store_from(db)
    check_host(host, Accounts(store).count_accounts())
    check_port(host, port)

    import uvicorn

    from stackbench.web.app import create_app

    access = logging.getLogger("stackbench.web.access")
    if not any(isinstance(h, _CurrentStderr) for h in access.handlers):  # once, however often serve runs
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access.addHandler(handler)
    access.setLevel(logging.INFO)
    app_ = create_app(store)
    shown = f"[{host}]" if ":" in host else host
    err.print(f"Serving {store.where} on http://{shown}:{port} (Ctrl-C stops)", soft_wrap=True)
    uvicorn.Server(uvicorn_config(app_, host, port, forwarded_allow_ips)).run()


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """The access log on the stderr of the moment it writes, not the one of the moment it was made (a
    replaced stderr, as under a test harness or a daemon manager, may since have been closed)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


__all__ = ["serve_command"]
