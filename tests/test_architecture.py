"""The data flows one way (docs/architecture.md): each part of the package imports only the parts below it.

The table is the architecture; a new module needs a row, and an import against the flow fails here with
the file that made it. Function-level imports count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "stackbench"

BASE = {"errors", "units"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "units": {"errors"},
    "warning": set(),
    "round_order": set(),
    "unsafe_settings": set(),
    "spawn": set(),
    "processes": set(),
    "credentials": set(),
    "inputs": BASE,
    "output_files": {"errors"},
    "recovery": {"errors", "output_files"},
    "abandoned": {"warning", "processes"},
    "plan": BASE,
    "engine": BASE | {"plan", "spawn", "processes"},
    "probe": BASE | {"spawn"},
    "scan": BASE,
    "audit": BASE | {"inputs", "output_files", "probe", "engine", "spawn"},
    "results": BASE | {"engine", "plan", "warning"},
    "goal": BASE | {"results"},
    "store": BASE | {"engine", "plan", "results", "goal", "warning", "credentials"},
    "analysis": BASE | {"engine", "plan", "results", "goal", "warning", "round_order", "unsafe_settings"},
    "report": BASE | {"engine", "plan", "results", "goal", "analysis", "audit"},
    "safety": BASE | {"engine", "probe", "warning", "spawn", "processes"},
    "synclat": BASE | {"plan", "probe"},
    "importer": BASE | {"inputs", "engine", "plan", "results", "store"},
    "runner": BASE | {"engine", "plan", "probe", "results", "store", "analysis", "safety", "recovery", "abandoned",
                      "warning"},
    "fleet": BASE | {"engine", "plan", "probe", "results", "store", "analysis", "safety", "runner", "abandoned",
                     "recovery", "warning", "spawn", "credentials", "output_files"},
    "user_commands": BASE | {"spawn", "processes"},
    "ab_session": BASE | {"results", "store", "runner", "plan", "analysis", "user_commands", "round_order"},
    "report_contents": BASE | {"engine", "plan", "results", "goal", "analysis", "report", "audit", "store",
                               "credentials"},
    "web": BASE | {"engine", "plan", "results", "goal", "warning", "store", "analysis", "report", "scan",
                   "report_contents"},
    "cli": None,  # the top: may import anything
    "__main__": {"cli", "scan"},  # smallblocks starts its walk before the CLI loads
}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "stackbench"


def imports() -> list[tuple[str, str, str]]:
    """(importing part, imported part, file) for every stackbench import in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        source = _part(".".join(p for p in relative.parts if p != "__init__"))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "stackbench":
                targets = [node.module] if node.module != "stackbench" else [f"stackbench.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "stackbench"]
            else:
                continue
            for target in targets:
                part = _part(target)
                if part not in (source, "__version__", "stackbench"):
                    found.append((source, part, str(relative)))
    return found


def test_every_part_of_the_package_has_a_row() -> None:
    parts = {_part(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)) for p in PACKAGE.glob("*.py")}
    parts |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts -= {"stackbench", "__init__"}
    assert sorted(parts - ALLOWED.keys()) == []


def test_imports_flow_one_way() -> None:
    against = sorted({f"{file}: {source} imports {target}" for source, target, file in imports()
                      if ALLOWED.get(source) is not None and target not in ALLOWED[source]})
    assert against == []


def test_the_table_has_no_cycles() -> None:
    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in ALLOWED.get(start) or ():
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert [part for part in ALLOWED if ALLOWED[part] is not None and reaches(part, part, {part})] == []
