"""The server's tunables in one place, with the defaults docs/server.md states. Tests shorten them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    # A session ends after this long without a request, and this long after login whatever happens.
    idle_timeout: timedelta = timedelta(minutes=30)
    absolute_timeout: timedelta = timedelta(hours=12)
    # Failed logins allowed per account name and per client address within `login_window_s` seconds.
    login_failures_per_account: int = 5
    login_failures_per_address: int = 20
    login_window_s: float = 900.0
    # Object lookups that find nothing (a run id, a share link, a share token) per client address within
    # `miss_window_s`: past it every object lookup from that address answers 429 for the rest of the window.
    misses_per_address: int = 60
    miss_window_s: float = 60.0
    # Share links: the default and the longest lifetime, in days.
    share_default_days: int = 7
    share_max_days: int = 90
    runs_per_page: int = 50
    # Pushed runs read and parsed at once by one server process: each holds up to 32 MiB of body and its
    # parsed document in memory; past it a push is answered 503 with Retry-After (`push` says so).
    uploads_at_once: int = 2
    # Host names the server answers to besides the address a request arrived on (and `localhost` on
    # loopback): `serve --allowed-host`, STACKBENCH_ALLOWED_HOSTS (web/origin.py).
    allowed_hosts: tuple[str, ...] = ()
    # Drawn charts kept on disk (`serve --chart-cache`, report/charts/files.py): None keeps them in memory only.
    chart_cache: Path | None = None
    # The newest runs whose charts a server thread draws before anyone asks (web/chart_warmer.py), looked at
    # on start, every `warm_interval_s` and on every push; 0: none (charts drawn on a page's first view).
    warm_runs: int = 0
    warm_interval_s: float = 30.0
