"""What every request handler shares, one object in the app's state (`context_of(request)`): the store,
the server's key, the settings, the limiters (counted in the store, so shared by every worker process),
the drawn charts and the pages' templates. The page groups (web/pages/) and the API (web/api.py) are
modules of routes over it, never closures over a local of `create_app`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from dataclasses import dataclass, field

from jinja2 import Environment, PackageLoader
from starlette.requests import Request

from stackbench.base.units import count
from stackbench.base.usertext import shown_in_template
from stackbench.store.accounts import Accounts
from stackbench.store.rate_limits import RateEvents
from stackbench.store.repository import Store
from stackbench.report.charts.files import ChartFiles
from stackbench.web.chart_warmer import ChartWarmer
from stackbench.web.charts import REPORT_ENTRIES, ChartCache, DrawnCache
from stackbench.web.limits import SlidingWindow
from stackbench.web.settings import Settings


def page_templates() -> Environment:
    """The pages' templates. auto_reload off: the templates are files of the installed package, compiled
    once per process; with it on, every page checked the modification time of each template it uses (3 stat
    calls for the runs list). finalize: every text a page prints with its invisible and control characters
    escaped (base/usertext.py)."""
    templates = Environment(loader=PackageLoader("stackbench.web", "templates"), autoescape=True,
                            auto_reload=False, finalize=shown_in_template)
    templates.filters["counted"] = count  # `{{ total | counted("run") }}`: "1 run", "7 runs", never "7 run(s)"
    return templates


@dataclass
class ServerContext:
    store: Store
    accounts: Accounts
    settings: Settings
    hash_key: bytes
    stylesheet: str = ""  # static/style.css, read once when the app is made
    script: str = ""  # static/copy.js, the copy buttons' script, read once too
    templates: Environment = field(default_factory=page_templates)
    login_by_account: SlidingWindow = field(init=False)
    login_by_address: SlidingWindow = field(init=False)
    misses: SlidingWindow = field(init=False)
    charts: ChartCache = field(init=False)
    warmer: ChartWarmer | None = field(init=False, default=None)  # started by create_app when asked
    reports: DrawnCache[bytes] = field(default_factory=lambda: DrawnCache(REPORT_ENTRIES))
    upload_slots: asyncio.Semaphore = field(init=False)  # see Settings.uploads_at_once

    def __post_init__(self) -> None:
        s = self.settings
        self.charts = ChartCache(files=ChartFiles(s.chart_cache) if s.chart_cache else None)
        events, keep_s = RateEvents(self.store), max(s.login_window_s, s.miss_window_s)

        def window(scope: str, limit: int, window_s: float) -> SlidingWindow:
            return SlidingWindow(events, scope, limit, window_s, self.digest, keep_s)

        self.login_by_account = window("login-account", s.login_failures_per_account, s.login_window_s)
        self.login_by_address = window("login-address", s.login_failures_per_address, s.login_window_s)
        self.misses = window("miss", s.misses_per_address, s.miss_window_s)
        self.upload_slots = asyncio.Semaphore(s.uploads_at_once)

    def digest(self, secret: str) -> str:
        return keyed_digest(self.hash_key, secret)


def keyed_digest(key: bytes, secret: str) -> str:
    """The stored form of a session id, share token or API token: HMAC-SHA256 under the server's key. The
    secrets are 256 random bits, so a fast hash is enough; the key makes a copied table useless elsewhere."""
    return hmac.new(key, secret.encode(), hashlib.sha256).hexdigest()


def context_of(request: Request) -> ServerContext:
    return request.app.state.server


def client_address(request: Request) -> str:
    """The client's address as uvicorn saw it (the proxy's X-Forwarded-For only with --forwarded-allow-ips)."""
    return request.client.host if request.client else "unknown"
