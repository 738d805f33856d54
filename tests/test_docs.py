"""Every command has --help with an example and is documented in README.md or docs/ (datasette's test_docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli_here
from stackbench.cli import app

ROOT = Path(__file__).parent.parent
DOCS = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
COMMANDS = sorted(
    [c.name or c.callback.__name__ for c in app.registered_commands]
    + [f"{g.name} {c.name}" for g in app.registered_groups for c in g.typer_instance.registered_commands]
)


def test_the_command_list_is_not_empty() -> None:
    assert {"run", "runs", "show", "import", "compare", "layers", "synclat", "slog", "smallblocks", "goal add"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_command_has_help(command: str) -> None:
    # In process (the real entry point): what --help imports is checked in a real interpreter by
    # tests/web/test_serve_cli.py and tests/report/charts/test_chart_imported.py.
    result = cli_here(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_command_is_documented(command: str) -> None:
    assert f"stackbench {command}" in DOCS, f"document `stackbench {command}` in README.md or docs/"


@pytest.mark.parametrize("command", [c for c in COMMANDS if " " not in c and c not in ("runs",)])
def test_command_help_shows_an_example(command: str) -> None:
    assert "Example" in cli_here(command, "--help").stdout


def test_nothing_points_at_a_file_outside_the_repository() -> None:
    """Issue 33: the docs and the code cited ../shared/docs/... and docs/anchors-benchmark-tools.md, which a
    reader of the repository does not have; what they said is in the repository's own docs or tests."""
    import re

    outside = re.compile(r"\.\./shared/|/work/shared|anchors-benchmark-tools|\]\(\.\./")
    files = [ROOT / "README.md", ROOT / "SECURITY.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "src").rglob("*.py"),
             *(ROOT / "bench").glob("*.py"), *(ROOT / "scripts").iterdir()]
    found = [f"{path.relative_to(ROOT)}:{number}" for path in files if path.is_file()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if outside.search(line)]
    assert found == []
