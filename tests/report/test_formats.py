"""The exporters behind `--format`: one protocol, found by name; the terminal table keeps its colours on a
terminal and prints none in a pipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackbench.base.errors import UsageError
from stackbench.report.document import Report
from stackbench.report.formats import EXPORTERS, FORMATS, Screen, exporter
from stackbench.report.tabular import Tabular

RESULT = Tabular(
    headers=["Goal", "Result"],
    rows=[["4K QD4 rnd write >= 3000 IOPS", "PASS"], ["p99 <= 1 ms", "FAIL"]],
    title="Goals",
    notes=["margin = distance to the threshold"],
    cell_styles={(0, 1): "bold green", (1, 1): "bold red"},
)
PLAIN = Screen(width=100)


def test_every_format_is_registered_under_its_name_and_renders_a_report() -> None:
    assert FORMATS == ("table", "markdown", "csv", "json")
    for name, found in EXPORTERS.items():
        assert found.name == name
        assert found.render(Report(tables=(RESULT,), data={"goals": 2}), PLAIN).endswith("\n")


def test_an_unknown_format_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(UsageError, match="unknown --format 'pdf'") as raised:
        exporter("pdf")
    assert "table, markdown, csv, json" in raised.value.fix


def test_the_terminal_table_is_coloured_for_a_terminal_and_plain_for_a_pipe() -> None:
    table = exporter("table")
    coloured = table.render(Report(tables=(RESULT,)), Screen(width=100, color_system="truecolor"))
    plain = table.render(Report(tables=(RESULT,)), PLAIN)
    assert "\x1b[1;32mPASS" in coloured and "\x1b[1;31mFAIL" in coloured
    assert "\x1b[" not in plain and "PASS" in plain and "Goals" in plain
    no_color = table.render(Report(tables=(RESULT,)), Screen(width=100, color_system="truecolor", no_color=True))
    assert "\x1b[1mPASS" in no_color and "32m" not in no_color  # NO_COLOR: bold stays, green goes


def test_the_terminal_and_markdown_show_the_same_tables_and_csv_its_plain_numbers() -> None:
    """Issue 33: `show --format markdown` pasted plain numbers and no goals while the terminal, `report -o
    x.md` and `compare --format markdown` showed units: Markdown is what a reader is shown, in every command."""
    numbers = Tabular(["Pattern", "IOPS"], [["4K QD1 rnd read", "12000.0"]])
    shown = Tabular(["Pattern", "IOPS"], [["4K QD1 rnd read", "12,000 ± 0.8%"]])
    report = Report(tables=(shown, RESULT), data={}, csv_tables=(numbers,))
    for name in ("table", "markdown"):
        text = exporter(name).render(report, PLAIN)
        assert "12,000 ± 0.8%" in text and "PASS" in text and "12000.0" not in text
    assert exporter("csv").render(report, PLAIN) == "Pattern,IOPS\n4K QD1 rnd read,12000.0\n"


def test_csv_exports_the_csv_tables_when_the_report_has_them_and_markdown_does_not() -> None:
    """compare and layers: Markdown pastes the text a reader is shown, CSV gets the plain numbers."""
    shown = Tabular(["Pattern", "vs A"], [["4K QD1 rnd read", "+19.9% [+18.5%, +21.4%]"]])
    numbers = Tabular(["Pattern", "change %", "change CI low %"], [["4K QD1 rnd read", "19.95", "18.47"]])
    report = Report(tables=(shown,), data={}, csv_tables=(numbers,))
    assert exporter("csv").render(report, PLAIN) == "Pattern,change %,change CI low %\n4K QD1 rnd read,19.95,18.47\n"
    assert "+19.9% \\[+18.5%, +21.4%\\]" in exporter("markdown").render(report, PLAIN)
    assert "+19.9%" in exporter("table").render(report, PLAIN)


def test_the_terminal_table_prints_user_text_as_it_is() -> None:
    label = Tabular(["Label"], [["[bold]x[/bold] :smile:"]])
    assert "[bold]x[/bold] :smile:" in exporter("table").render(Report(tables=(label,)), PLAIN)


def test_several_tables_are_separated_by_an_empty_line_in_markdown_and_csv() -> None:
    first, second = Tabular(["a"], [["1"]]), Tabular(["b"], [["2"]])
    report = Report(tables=(first, second))
    assert exporter("markdown").render(report, PLAIN) == "| a |\n|:---|\n| 1 |\n\n| b |\n|:---|\n| 2 |\n"
    assert exporter("csv").render(report, PLAIN) == "a\n1\n\nb\n2\n"


def test_json_prints_the_data_not_the_tables() -> None:
    text = exporter("json").render(Report(tables=(RESULT,), data={"verdict": "keep"}), PLAIN)
    assert json.loads(text) == {"verdict": "keep"}


def test_markdown_shows_user_text_as_typed_never_as_links_images_or_html() -> None:
    """A label pasted into a wiki or an issue must not become a link, an image, HTML, emphasis or a new
    column: every text of the table (title, headers, cells, notes) is escaped."""
    hostile = "[x](javascript:alert(1)) ![t](http://tracker/p.png) <script>s</script> **b** a|b #h"
    report = Report(tables=(Tabular(["label"], [[hostile]], title=hostile, notes=[hostile]),))
    shown = exporter("markdown").render(report, PLAIN)
    escaped = ("\\[x\\](javascript:alert(1)) \\!\\[t\\](http://tracker/p.png) \\<script\\>s\\</script\\> "
               "\\*\\*b\\*\\* a\\|b \\#h")
    assert shown == f"**{escaped}**\n\n| label |\n|:---|\n| {escaped} |\n\n{escaped}  \n"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_json_output_cannot_hold_nan_or_infinity(value: float, tmp_path: Path) -> None:
    """`show --json` once printed `Infinity`, which no JSON reader accepts. The one encoding every command
    prints through refuses it: a value that is not finite is a bug (exit 70), never a broken document."""
    from conftest import cli_here
    from stackbench.model.goal import Goal
    from stackbench.report.formats.json import dumps
    from stackbench.store import open_store

    with pytest.raises(ValueError):
        dumps({"runs": [{"clat_mean_us": value}]})
    with pytest.raises(ValueError):
        EXPORTERS["json"].render(Report(tables=(RESULT,), data={"x": [value]}), PLAIN)
    db = f"sqlite:///{tmp_path / 'r.db'}"  # a goal stored before goals were checked held Infinity
    store = open_store(db)
    store.add_goal(Goal(text="seq write >= 999 MB/s", metric="bw", statistic=None, op=">=", threshold=value))
    store.dispose()
    done = cli_here("goal", "list", "--json", "--db", db)
    assert done.returncode == 70 and done.stdout == "" and "internal error ValueError" in done.stderr
