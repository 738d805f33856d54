"""The options of `run --hosts` (docs/fleet.md), taken by `run` as one `FleetOptions` value: which hosts,
and how ssh reaches them. Kept apart from cli/fleet.py, which `show` imports to print a fleet run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import typer

from stackbench.cli.common import IntBetween
from stackbench.cli.option_groups import option_group

FLEET_PANEL = "Fleet (--hosts)"


@dataclass(frozen=True, kw_only=True)
class FleetOptions:
    """Where a fleet run measures; `asked` says whether the run is one (a host named either way)."""

    hosts: Optional[str] = None
    hosts_file: Optional[Path] = None
    ssh_config: Optional[str] = None
    connect_timeout: int = 10

    @property
    def asked(self) -> bool:
        return self.hosts is not None or self.hosts_file is not None


FLEET_OPTIONS = {
    "hosts": typer.Option(
        None, "--hosts", metavar="HOSTS", rich_help_panel=FLEET_PANEL, show_default=False,
        help="Run the plan on these hosts at once over ssh: comma-separated [user@]host names (your ~/.ssh/config "
        "and keys apply; fio and python3 must be on each). TARGET is then a path on every host (a directory or "
        "a new file). See docs/fleet.md.",
    ),
    "hosts_file": typer.Option(
        None, "--hosts-file", metavar="FILE", rich_help_panel=FLEET_PANEL, show_default=False,
        help="A file with one host per line (# starts a comment), added to --hosts.",
    ),
    "ssh_config": typer.Option(
        None, "--ssh-config", metavar="FILE", rich_help_panel=FLEET_PANEL, show_default=False,
        help="An ssh config file, passed as ssh -F. Default: $STACKBENCH_SSH_CONFIG, else ssh's own "
        "~/.ssh/config.",
    ),
    "connect_timeout": typer.Option(
        10, "--connect-timeout", click_type=IntBetween(1, 300), metavar="SECONDS", rich_help_panel=FLEET_PANEL,
        help="Seconds (1-300) ssh waits for a host to answer (ssh ConnectTimeout).",
    ),
}

Command = TypeVar("Command", bound=Callable[..., Any])


def with_fleet_options(command: Command) -> Command:
    """The decorated command's `fleet` parameter is a `FleetOptions` made of the --hosts options."""
    return option_group("fleet", FleetOptions, FLEET_OPTIONS)(command)


__all__ = ["FLEET_OPTIONS", "FLEET_PANEL", "FleetOptions", "with_fleet_options"]
