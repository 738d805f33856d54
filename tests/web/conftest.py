"""Fixtures of the web tests: one real server for the whole session (its limits raised so that the many
requests of the suite from 127.0.0.1 are not throttled), and dedicated servers for the tests of limits
and timeouts."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from web.site import SHARED, Site, Template, site



@pytest.fixture(scope="session")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    path: Path = tmp_path_factory.mktemp("web") / "results.db"
    with site(f"sqlite:///{path}", SHARED) as running:
        yield running


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return Template(tmp_path_factory.mktemp("web-template"))


@pytest.fixture
def fresh_site(template: Template):  # noqa: ANN201 - a factory: fresh_site(Settings(...)) -> context manager
    """A server of its own with the given settings (limits, timeouts), over a copy of the populated store."""
    return template.site


@pytest.fixture(scope="session")
def as_user(web: Site) -> dict:
    """Logged-in clients of the shared server, by account name (logging in costs an argon2 hash: once)."""
    return {name: web.login(name) for name in ("alice", "bob", "carol")}
