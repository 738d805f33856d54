"""Command-line interface: one module per command, all registered on `stackbench.cli.app.app`."""

from __future__ import annotations

from stackbench.cli.app import app, run_app

# Importing a command module registers its command(s) on `app`.
from stackbench.cli import run as _run  # noqa: F401,E402
from stackbench.cli import results as _results  # noqa: F401,E402
from stackbench.cli import compare as _compare  # noqa: F401,E402
from stackbench.cli import ab as _ab  # noqa: F401,E402
from stackbench.cli import layers as _layers  # noqa: F401,E402
from stackbench.cli import goals as _goals  # noqa: F401,E402
from stackbench.cli import synclat as _synclat  # noqa: F401,E402
from stackbench.cli import slog as _slog  # noqa: F401,E402
from stackbench.cli import smallblocks as _smallblocks  # noqa: F401,E402
from stackbench.cli import audit as _audit  # noqa: F401,E402
from stackbench.cli import crypto as _crypto  # noqa: F401,E402
from stackbench.cli import report as _report  # noqa: F401,E402
from stackbench.cli import serve as _serve  # noqa: F401,E402
from stackbench.cli import user as _user  # noqa: F401,E402
from stackbench.cli import push as _push  # noqa: F401,E402
from stackbench.cli import chart as _chart  # noqa: F401,E402


def main() -> None:
    run_app()


__all__ = ["app", "main"]
