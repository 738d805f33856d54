"""One source for every list (docs/architecture.md, "Registries"): the docs' generated sections are what the
registries give, and each "Where a new thing goes" recipe for a registry is enough on its own.

The recipe test copies the package, README.md, docs/ and scripts/docs-tables into a temporary directory,
adds a throwaway entry to every registry exactly as docs/architecture.md's table says (the one new file and
the one line, no other edit), and runs the real CLI on the copy in a fresh interpreter (help texts are made
when the command modules are imported): the help, the error for an unknown name, dispatch, and the docs'
generated sections must all show the throwaway entry. `run --runs` once said "others 5" beside a preset of
one run, and docs/run.md's list of presets lacked one: lists written twice drift.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA
from stackbench.model.warning import WarningCode
from stackbench.report.registry_docs import SECTIONS, rewrite, sections_in

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Recipe:
    """A registry's "Where a new thing goes" row, as the test follows it: the new file (None: none), and the
    one line, put after (or before) `anchor` in the registry's file. `row` names docs/architecture.md's row."""

    row: str
    registry_file: str  # under src/stackbench
    registry: str  # the registry's name in that file
    anchor: str
    line: str
    after: bool = False
    new_file: str | None = None  # under src/stackbench; the row's file column names it with <...> for the name
    new_pattern: str | None = None
    new_text: str = ""


EXPORTER = '''
from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen


class ThrowawayExporter:
    name = "throwaway"
    description = "a throwaway output format of the registry test"

    def render(self, report: Report, screen: Screen) -> str:
        return f"THROWAWAY {len(report.tables)} table(s)\\n"


EXPORTER = ThrowawayExporter()
'''
INPUT = '''
from stackbench.engine import fio_json


def looks_like(text):
    return text.startswith("THROWAWAY\\n")


def read(text, source):
    return fio_json.read(text.removeprefix("THROWAWAY\\n"), source)
'''
DOCUMENT = '''
def render(contents, stem):
    return f"THROWAWAY {len(contents.runs)} run(s)\\n".encode(), []
'''
CHART = '''
from stackbench.report.charts.figure import Figure


def draw(request):
    from matplotlib.figure import Figure as Drawing

    drawing = Drawing(figsize=(4, 3))
    drawing.add_subplot().bar([0], [len(request.runs)])
    return Figure("throwaway", "A throwaway chart", "One bar: how many runs.", drawing)
'''
RULE = '''"""THROWAWAY-RULE: a throwaway rule of the registry test: a pool named throwaway."""

from stackbench.audit.examples import tab_separated
from stackbench.audit.rule import Rule


def check(facts):
    for pool in facts.pools:
        if pool == "throwaway":
            yield RULE.finding(pool, "the pool is named throwaway", "zpool export throwaway")


FAILING = ({"zpool-get-Hp-all.txt": tab_separated("throwaway  capacity  10  -")},)
PASSING = ({"zpool-get-Hp-all.txt": tab_separated("tank  capacity  10  -")},)

RULE = Rule(id="THROWAWAY-RULE", title="A throwaway rule", checks="a pool named throwaway", severity="info",
            rationale="The registry test adds it.", fix="Nothing", source="https://example.org/throwaway",
            check=check, doc=__doc__, failing=FAILING, passing=PASSING)
'''

RECIPES = {
    "presets": Recipe(
        "preset", "model/presets.py", "PRESETS", "\n)\nDEFAULT_PRESET",
        '    Preset("throwaway", "a throwaway preset of the registry test", (("randread", "4k", 2),), size="16M", '
        'runtime=1, ramp=0, runs=2),'),
    "import-formats": Recipe(
        "import format", "engine/input_formats.py", "FORMATS", "FORMATS: dict[str, InputFormat] = by_name(",
        '    InputFormat(name="throwaway", module="throwaway_format", title="a throwaway format", versions="any", '
        'detected_by="a THROWAWAY line", says="fio JSON after it", computes="as for fio JSON"),',
        after=True, new_file="engine/throwaway_format.py", new_pattern="engine/<format>.py", new_text=INPUT),
    "output-formats": Recipe(
        "output format", "report/formats/__init__.py", "MODULES", "\n)\nEXPORTERS", '    "throwaway",',
        new_file="report/formats/throwaway.py", new_pattern="report/formats/<format>.py", new_text=EXPORTER),
    "document-formats": Recipe(
        "report document format", "report/documents/__init__.py", "DOCUMENT_FORMATS", "\n)\n\n\ndef document_format",
        '    DocumentFormat("throwaway", (".thr",), "throwaway", "a throwaway document of the registry test"),',
        new_file="report/documents/throwaway.py", new_pattern="report/documents/<format>.py", new_text=DOCUMENT),
    "chart-kinds": Recipe(
        "chart kind", "report/charts/kinds.py", "KINDS", "\n)\n",
        '    ChartKind("throwaway", "throwaway", "a throwaway chart of the registry test", '
        '"stackbench chart thr -k throwaway -o t.svg", runs=(1, None)),',
        new_file="report/charts/throwaway.py", new_pattern="report/charts/<kind>.py", new_text=CHART),
    "audit-rules": Recipe(
        "audit rule", "audit/rules/__init__.py", "MODULES", "\n)\nREGISTRY", '    "throwaway_rule",',
        new_file="audit/rules/throwaway_rule.py", new_pattern="audit/rules/<rule_id>.py", new_text=RULE),
    "warning-codes": Recipe(
        "warning", "model/warning.py", "WarningCode", "\n\n\n@dataclass(frozen=True)\nclass Warning:",
        '    THROWAWAY = ("THROWAWAY", "a throwaway warning of the registry test", "nothing to fix")'),
}


# -- the generated sections ------------------------------------------------------------------------------


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_generated_section_is_what_its_registry_gives(document: Path) -> None:
    text = document.read_text()
    assert rewrite(text) == text, f"{document.name} differs from the registries: run scripts/docs-tables"


def test_every_registry_has_its_section_in_the_docs_and_a_recipe() -> None:
    found = {name for document in DOCUMENTS for name in sections_in(document.read_text())}
    assert found == set(SECTIONS)
    assert set(RECIPES) == set(SECTIONS)


def test_a_section_edited_by_hand_or_misnamed_is_caught() -> None:
    """The check can fail: a row changed by hand is made again, and a marker no registry has is an error."""
    run_md = (ROOT / "docs" / "run.md").read_text()
    edited = run_md.replace("| 3 runs of 0.5 + 2 s |", "| 5 runs of 0.5 + 2 s |")
    assert edited != run_md and rewrite(edited) == run_md
    with pytest.raises(ValueError, match="no generated section 'presetz'"):
        rewrite("<!-- registry:presetz -->\n<!-- /registry:presetz -->\n")


def test_a_warning_code_is_its_own_name() -> None:
    """JSON and the store spell a code by its value, scripts filter on it: a value unlike its name would be a
    second name for one warning."""
    assert [code.name for code in WarningCode if code.value != code.name] == []
    assert all(code.meaning and code.fix for code in WarningCode)


# -- the recipes -----------------------------------------------------------------------------------------


def _rows() -> dict[str, str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("Where a new thing goes"):]
    table = table[:table.index("\n\n", table.index("| new ... |"))]
    return {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}


@pytest.mark.parametrize("section", sorted(RECIPES))
def test_the_architecture_table_says_what_the_recipe_test_does(section: str) -> None:
    recipe = RECIPES[section]
    _, new_file, line = _rows()[recipe.row].strip().strip("|").split(" | ")
    assert f"`{recipe.registry}`" in line and f"`{recipe.registry_file}`" in line
    assert (f"`{recipe.new_pattern}`" in new_file) if recipe.new_pattern else "<" not in new_file  # no new module


def _house(root: Path) -> None:
    """A copy of the package, the docs and their script, every recipe applied: one new file and one line each."""
    shutil.copytree(ROOT / "src" / "stackbench", root / "src" / "stackbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "docs", root / "docs", ignore=shutil.ignore_patterns("img"))
    shutil.copy(ROOT / "README.md", root / "README.md")
    (root / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "docs-tables", root / "scripts" / "docs-tables")
    package = root / "src" / "stackbench"
    for recipe in RECIPES.values():
        if recipe.new_file:
            (package / recipe.new_file).write_text(recipe.new_text)
        path = package / recipe.registry_file
        text = path.read_text()
        assert text.count(recipe.anchor) == 1, f"{recipe.registry_file}: the anchor is not there once"
        made = recipe.anchor + "\n" + recipe.line if recipe.after else "\n" + recipe.line + recipe.anchor
        path.write_text(text.replace(recipe.anchor, made))


PROBE = r'''
import contextlib, io, json, sys
from pathlib import Path

work, sample = Path(sys.argv[1]), Path(sys.argv[2])


def cli(*args):
    from stackbench.cli import run_app

    out, err, code = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            run_app([str(a) for a in args])
    except SystemExit as done:
        code = int(done.code or 0)
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}


db = f"sqlite:///{work / 'r.db'}"
(work / "scratch").mkdir()
(work / "notes.txt").write_text("my benchmark notes\n")
thr = work / "out.thr"
thr.write_text("THROWAWAY\n" + sample.read_text())
done = {}
done["presets"] = {
    "help": cli("run", "--help"),
    "error": cli("run", "-t", work / "scratch", "--preset", "nope", "--dry-run"),
    "dispatch": cli("run", "-t", work / "scratch", "--preset", "throwaway", "--dry-run", "--json"),
}
done["import-formats"] = {
    "help": cli("import", "--help"),
    "error": cli("import", thr, "--input-format", "nope", "--db", db),
    "unknown": cli("import", work / "notes.txt", "--db", db),
    "dispatch": cli("import", thr, "--db", db, "--label", "thr", "--json"),
    "forced": cli("import", thr, "--input-format", "throwaway", "--db", db, "--label", "forced", "--json"),
}
done["output-formats"] = {
    "help": cli("runs", "--help"),
    "error": cli("runs", "--db", db, "--format", "nope"),
    "dispatch": cli("runs", "--db", db, "--format", "throwaway"),
}
done["document-formats"] = {
    "help": cli("report", "--help"),
    "error": cli("report", "thr", "--db", db, "--format", "nope", "-o", work / "r.html"),
    "suffix": cli("report", "thr", "--db", db, "-o", work / "r.pdf"),
    "dispatch": cli("report", "thr", "--db", db, "-o", work / "r.thr"),
    "written": (work / "r.thr").read_text() if (work / "r.thr").exists() else None,
}
done["chart-kinds"] = {
    "help": cli("chart", "--help"),
    "error": cli("chart", "thr", "--db", db, "-k", "nope", "-o", work / "c.svg"),
    "dispatch": cli("chart", "thr", "--db", db, "-k", "throwaway", "-o", work / "t.svg"),
    "written": (work / "t.svg").exists(),
}
from stackbench.audit.rules import BY_ID

rule = BY_ID.get("THROWAWAY-RULE")
for name, example in (("failing", rule.failing[0]), ("passing", rule.passing[0])) if rule else ():
    for file, text in example.items():
        (work / name / file).parent.mkdir(parents=True, exist_ok=True)
        (work / name / file).write_text(text)
done["audit-rules"] = {
    "help": cli("audit", "--list-rules", "--json"),
    "explain": cli("audit", "--explain", "throwaway-rule"),
    "dispatch": cli("audit", "--from", work / "failing", "--json"),
    "passing": cli("audit", "--from", work / "passing", "--json"),
}
from stackbench.model.warning import Warning

stored = Warning.from_json({"code": "THROWAWAY", "subject": "", "text": "seen", "fix": ""})
done["warning-codes"] = {"dispatch": stored.code.value, "str": str(Warning("THROWAWAY", "", "seen"))}
print(json.dumps(done))
'''


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the CLI and the docs script of the copy with every throwaway entry say; the docs as rewritten."""
    root = tmp_path_factory.mktemp("house")
    _house(root)
    work = root / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "COLUMNS": "2000", "NO_COLOR": "1",
           "XDG_DATA_HOME": str(work), "XDG_STATE_HOME": str(work), "STACKBENCH_DB": f"sqlite:///{work / 'r.db'}"}
    probe = subprocess.run([sys.executable, "-c", PROBE, str(work), str(DATA / "fio" / "randread-psync.json")],
                           capture_output=True, text=True, env=env, cwd=work, timeout=300)
    assert probe.returncode == 0, probe.stderr[-3000:]
    said = json.loads(probe.stdout.splitlines()[-1])
    script = subprocess.run([sys.executable, str(root / "scripts" / "docs-tables")], capture_output=True, text=True,
                            env=env, timeout=120)
    assert script.returncode == 0, script.stderr
    docs = {name: "" for name in SECTIONS}
    for document in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for match in re.finditer(r"<!-- registry:([a-z-]+) -->\n(.*?)<!-- /registry:\1 -->", document.read_text(),
                                 re.DOTALL):
            docs[match[1]] += match[2]
    return {"said": said, "docs": docs}


def flat(result: dict[str, Any]) -> str:
    """A command's output with the help's boxes and line breaks taken out."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result["out"] + result["err"]).split())


@pytest.mark.parametrize("section", sorted(RECIPES))
def test_the_docs_section_shows_the_throwaway_entry(section: str, throwaway: dict[str, Any]) -> None:
    assert "throwaway" in throwaway["docs"][section].lower()


def test_a_throwaway_preset_is_offered_refused_alike_and_planned(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["presets"]
    assert "throwaway: a throwaway preset of the registry test" in flat(said["help"])
    assert "throwaway 2" in flat(said["help"])  # --runs' default per preset
    assert said["error"]["code"] == 2 and "unknown preset 'nope'" in said["error"]["err"]
    assert "throwaway" in said["error"]["err"]
    assert said["dispatch"]["code"] == 0, said["dispatch"]["err"]
    assert "4K QD2 rnd read" in said["dispatch"]["out"]


def test_a_throwaway_import_format_is_offered_detected_and_forced(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["import-formats"]
    assert re.search(r"Files to import: [^.]*a throwaway format", flat(said["help"]))
    assert re.search(r"auto \(detect each file's\), throwaway, json", flat(said["help"]))  # first: detected first
    assert said["error"]["code"] == 2 and "throwaway" in said["error"]["err"]
    assert "a throwaway format (any)" in flat(said["unknown"])
    assert said["dispatch"]["code"] == 0, said["dispatch"]["err"]
    assert said["forced"]["code"] == 0, said["forced"]["err"]
    assert json.loads(said["dispatch"]["out"])["runs"][0]["cells"]


def test_a_throwaway_output_format_is_offered_refused_alike_and_printed(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["output-formats"]
    assert re.search(r"Output format: [^.]* or throwaway\.", flat(said["help"]))
    assert said["error"]["code"] == 2 and "throwaway" in said["error"]["err"]
    assert said["dispatch"]["code"] == 0 and said["dispatch"]["out"].startswith("THROWAWAY 1 table(s)")


def test_a_throwaway_document_format_is_offered_refused_alike_and_written(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["document-formats"]
    assert "throwaway, a throwaway document of the registry test" in flat(said["help"])
    assert said["error"]["code"] == 2 and "throwaway" in said["error"]["err"]
    assert said["suffix"]["code"] == 2 and ".thr" in said["suffix"]["err"]
    assert said["dispatch"]["code"] == 0, said["dispatch"]["err"]
    assert said["written"] == "THROWAWAY 1 run(s)\n"


def test_a_throwaway_chart_kind_is_offered_refused_alike_and_drawn(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["chart-kinds"]
    assert "throwaway: a throwaway chart of the registry test" in flat(said["help"])
    assert "stackbench chart thr -k throwaway -o t.svg" in flat(said["help"])
    assert said["error"]["code"] == 2 and "throwaway" in said["error"]["err"]
    assert said["dispatch"]["code"] == 0, said["dispatch"]["err"]
    assert said["written"] and "(throwaway: A throwaway chart)" in said["dispatch"]["err"]


def test_a_throwaway_audit_rule_is_listed_explained_and_run_on_its_own_examples(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["audit-rules"]
    assert "THROWAWAY-RULE" in [rule["id"] for rule in json.loads(said["help"]["out"])["rules"]]
    assert said["explain"]["code"] == 0 and "a pool named throwaway" in said["explain"]["out"]
    assert said["dispatch"]["code"] == 3, said["dispatch"]["err"]
    assert [f["rule"] for f in json.loads(said["dispatch"]["out"])["findings"]] == ["THROWAWAY-RULE"]
    assert "THROWAWAY-RULE" not in said["passing"]["out"]


def test_a_throwaway_warning_code_is_read_back_as_itself(throwaway: dict[str, Any]) -> None:
    said = throwaway["said"]["warning-codes"]
    assert said["dispatch"] == "THROWAWAY" and said["str"] == "seen"
