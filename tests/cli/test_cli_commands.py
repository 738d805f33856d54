"""The command table that lets a command start with only its own module loaded (issue 12, start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.cli import COMMANDS, all_commands, command_name


def _registered() -> dict[str, str]:
    """Every top-level command and group of the whole application -> the module that registered it."""
    application = all_commands()
    found = {info.name: info.callback.__module__ for info in application.registered_commands}
    for group in application.registered_groups:
        found[group.name] = group.typer_instance.registered_commands[0].callback.__module__
    return {name: module.rsplit(".", 1)[-1] for name, module in found.items()}


def test_the_table_names_the_module_of_every_command_and_nothing_else() -> None:
    assert _registered() == COMMANDS


@pytest.mark.parametrize("argv, name", [
    (["runs", "--db", "x.db"], "runs"),
    (["--version"], None),
    (["--help"], None),
    (["user", "add", "alice"], "user"),
    ([], None),
])
def test_the_command_is_the_first_word_that_is_not_an_option(argv: list[str], name: str | None) -> None:
    assert command_name(argv) == name


def _modules_loaded_by(*argv: str) -> set[str]:
    probe = ("import runpy, sys; sys.argv = ['stackbench', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('stackbench', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    return set(done.stderr.rsplit("MODULES ", 1)[1].split())


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    loaded = _modules_loaded_by("runs", "--db", str(tmp_path / "r.db"))
    assert "stackbench.cli.results" in loaded  # the probe is real
    assert {module for module in loaded if module.startswith("stackbench.cli.")} <= {
        "stackbench.cli.app", "stackbench.cli.common", "stackbench.cli.results"}


def test_a_store_command_does_not_import_pydantic(tmp_path: Path) -> None:
    """Typer 0.29 coerces every option through pydantic at run time, about a sixth of `runs`' start-up
    here; pyproject keeps Typer below 0.29 for that. This test says why if the bound is lifted."""
    loaded = _modules_loaded_by("show", "nothing", "--db", str(tmp_path / "r.db"))
    assert "stackbench.cli.results" in loaded and "sqlalchemy" in loaded
    assert "pydantic" not in loaded


def test_help_still_lists_every_command() -> None:
    shown = subprocess.run([sys.executable, "-m", "stackbench", "--help"], capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": "200"}).stdout
    assert all(f" {name} " in shown for name in COMMANDS)
