"""`stackbench serve`: the team dashboard over a results store (docs/server.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import DbOption, IntBetween


@app.command("serve")
def serve_command(
    host: str = typer.Option(
        "127.0.0.1", "--host", metavar="ADDRESS",
        help="Address to listen on. Anything but loopback is refused until an account exists "
        "(stackbench user add NAME --admin). Put a TLS reverse proxy in front for other machines.",
    ),
    port: int = typer.Option(8080, "--port", click_type=IntBetween(1, 65535), metavar="PORT",
                             help="TCP port to listen on (1-65535)."),
    forwarded_allow_ips: Optional[str] = typer.Option(
        None, "--forwarded-allow-ips", metavar="ADDRESSES",
        help="Comma-separated addresses of the TLS reverse proxy whose X-Forwarded-For/-Proto headers are "
        "trusted (client address for rate limits, https for Secure cookies). Default: none trusted.",
        show_default=False,
    ),
    workers: int = typer.Option(
        1, "--workers", click_type=IntBetween(1, 64), metavar="N",
        help="Worker processes (1-64) answering requests (each one CPU core at most; about 100 MB of memory each). "
        "For a team, the number of cores. Limits and sessions are shared through the store.",
    ),
    threads: int = typer.Option(
        2, "--threads", click_type=IntBetween(1, 64), metavar="N",
        help="Requests each worker process runs at once (1-64); the rest wait in arrival order. The pages are CPU "
        "work under one interpreter lock, so more threads only queue for it.",
    ),
    allowed_host: Optional[List[str]] = typer.Option(
        None, "--allowed-host", envvar="STACKBENCH_ALLOWED_HOSTS", metavar="NAME",
        help="A host name the server answers to besides the address it is reached on (repeat it or separate "
        "names by commas; the name a TLS proxy passes on). Other Host headers are refused (DNS rebinding).",
        show_default=False,
    ),
    chart_cache: Optional[Path] = typer.Option(
        None, "--chart-cache", metavar="DIR",
        help="Directory where drawn charts are kept, shared by the workers and across restarts (made private; "
        "refused if another user can write it). Default: stackbench/charts in $XDG_CACHE_HOME or ~/.cache.",
        show_default=False,
    ),
    warm_runs: int = typer.Option(
        200, "--warm-runs", click_type=IntBetween(0, 10_000), metavar="N",
        help="Draw the charts of this many newest runs (0-10000) in the background (on start, every 30 s and on every "
        "push), so their pages open without drawing. 0: draw on a page's first view only.",
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

        stackbench serve --workers 4 --allowed-host bench.example.org   # behind a TLS reverse proxy
    """
    from stackbench.web.server import serve, uvicorn_config

    store, target = _checked_server(db, host, port, allowed_host or [], chart_cache, warm_runs, workers, threads)
    shown = f"[{host}]" if ":" in host else host
    processes = f", {workers} worker processes" if workers > 1 else ""
    err.print(f"Serving {store.where} on http://{shown}:{port}{processes} (Ctrl-C stops)", soft_wrap=True)
    serve(uvicorn_config(target, host, port, forwarded_allow_ips, workers, threads))


def _checked_server(db: Optional[str], host: str, port: int, allowed_host: list[str], chart_cache: Optional[Path],
                    warm_runs: int, workers: int, threads: int) -> tuple[Any, Any]:
    """Every check `serve` makes before it listens (hosts, the chart directory, the store, the address), and
    what uvicorn will serve: the app, or the workers' factory."""
    from stackbench.cli.common import open_store_from
    from stackbench.store.accounts import Accounts
    from stackbench.report.charts.files import ChartFiles, default_directory
    from stackbench.web.server import WorkerApp, allowed_hosts, check_host, check_port
    from stackbench.web.settings import Settings

    names = allowed_hosts(allowed_host)
    charts = ChartFiles(chart_cache or default_directory()).directory  # made, or refused, before serving
    store = open_store_from(db)
    accounts = Accounts(store)
    check_host(host, accounts.count_accounts())
    check_port(host, port)
    accounts.server_secret()  # made here on the first start, before any worker could race to make it
    settings = Settings(allowed_hosts=names, chart_cache=charts, warm_runs=warm_runs)
    if workers > 1:
        target = WorkerApp(store.url, threads, settings)
        store.dispose()  # the workers open their own engines
    else:
        from stackbench.web.app import create_app

        target = create_app(store, settings)
    return store, target


__all__ = ["serve_command"]
