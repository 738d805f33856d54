"""What `stackbench tune` shows: the knob catalogue (`--list-knobs`), one knob explained (`--explain-knob`), the
dry run's plan, and a session's summary (per knob: from -> to, rounds, change with its 95 % interval, verdict,
decision), from the records and the session's JSON; the per-knob comparison tables are compare's own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from stackbench.base.errors import StoreError
from stackbench.base.units import count, format_utc
from stackbench.model.results import Run
from stackbench.report.tabular import Tabular
from stackbench.report.uncertainty import CHANGE, describe
from stackbench.tune.knob import Knob
from stackbench.tune.user_knobs import command_lines


def knob_row(knob: Knob) -> list[str]:
    """A knob as the catalogue lists it (here and in the docs' generated table)."""
    return [knob.id, knob.title, knob.values.describe(), knob.safety.value, knob.cost.value,
            knob.persistence.value, knob.undo.value, ", ".join(knob.audit_rules) or "-"]


KNOB_HEADERS = ("knob", "what", "values tried", "safety", "cost", "persistence", "undo", "answers")


def knob_list_table(knobs: Iterable[Knob]) -> Tabular:
    return Tabular(KNOB_HEADERS, [knob_row(knob) for knob in knobs], title="Knobs (stackbench tune --knob ID[=VALUE])",
                   notes=("safe knobs run with --apply; semantic, tradeoff and restart ones need --allow CLASS; "
                          "forbidden settings are never tried (stackbench tune --explain-knob ID)",))


def explain_knob_lines(knob: Knob) -> list[str]:
    """Everything a knob declares, as lines of text: what it is, why, its values, how it is read and undone."""
    lines = [*[line.rstrip() for line in knob.doc.strip().splitlines()], "",
             f"values tried: {knob.values.describe()}",
             f"safety: {knob.safety.value}; cost: {knob.cost.value}; persistence: {knob.persistence.value}",
             f"read: every view of {', '.join(knob.access.views)}; undo: {knob.undo.value}",
             f"affects: {', '.join(knob.affects) or '-'}; answers audit rules: {', '.join(knob.audit_rules) or '-'}",
             f"source: {knob.source}"]
    user = command_lines(knob)
    lines += ["", *user] if user else []
    for example in knob.examples:
        shown = ", ".join(f"{view}={value}" for view, value in example.original.items())
        lines += ["", f"example: {example.subject.name} with {shown}, set to {example.value}:",
                  *[f"  apply: {command}" for command in example.apply],
                  *[f"  undo:  {command}" for command in example.undo]]
    return lines


def plan_table(planned: list[dict[str, Any]], *, dry_run: bool, budget: tuple[str, ...] = ()) -> Tabular:
    """The knobs a session will try, with the exact commands of each change and its undo; `budget` says what
    of --max-time is kept for the confirmation."""
    rows = [[p["knob"], ", ".join(p["subjects"]), p["from"], p["to"], p["safety"], p["cost"],
             "; ".join(p["apply"]), "; ".join(p["undo"])] for p in planned]
    notes = (*budget, "dry run: nothing was changed; add --apply to run it") if dry_run else budget
    return Tabular(("knob", "on", "now", "try", "safety", "cost", "apply", "undo"), rows,
                   title="tune plan", notes=notes, fold=frozenset({6, 7}))


def stored_audit_name(audit: dict[str, Any] | None) -> str:
    """The audit a plan came from, as it names it: `audit 1a2b3c4d5e6f (LABEL) of 2026-11-28 10:41:07 UTC`
    for a stored one (`--audit`), `the audit` for the one run as tune started."""
    if not audit:
        return "the audit"
    label = f" ({audit['label']})" if audit.get("label") else ""
    return f"audit {audit['audit_id'][:12]}{label} of {format_utc(datetime.fromisoformat(audit['created_at']))}"


def audit_plan_tables(data: dict[str, Any]) -> tuple[Tabular, ...]:
    """The plan `tune -t DIR` makes without --knob: per knob the findings it answers (rule, subject, evidence)
    and its candidates; then what is left out and why (a class not allowed, a forbidden setting, no knob).
    Without a knob the plan table is left out (the command says there is nothing to tune)."""
    rows = [[p["knob"], ", ".join(p["subjects"]), p["from"], ", ".join(p["candidates"]), p["to"],
             "; ".join(f"{w['rule']} on {w['subject']}: {w['evidence']}" for w in p["why"]), p["safety"], p["cost"],
             "; ".join(p["apply"]), "; ".join(p["undo"])] for p in data["knobs"]]
    notes = ["dry run: nothing was changed; add --apply to measure these knobs as if given by --knob"] \
        if data["dry_run"] else []
    stored = data.get("audit")
    if stored and stored["new_since"]:
        notes.append(f"found now and not in {stored_audit_name(stored)}: {count(len(stored['new_since']), 'finding')} "
                     "(`stackbench audit` lists them; tune without --audit answers them)")
    title = (f"tune plan for {data['target']} from {stored_audit_name(stored)} ({data['audit_findings']} findings "
             "on the machine then)") if stored else \
        f"tune plan from the audit of {data['target']} ({data['audit_findings']} findings on the machine)"
    plan = Tabular(("knob", "on", "now", "candidates", "try", "why (audit)", "safety", "cost", "apply", "undo"), rows,
                   title=title, notes=tuple(notes), fold=frozenset({5, 8, 9}))
    tables = (plan,) if rows else ()
    if not data["not_proposed"]:
        return tables
    left = Tabular(("not proposed", "findings", "why"),
                   [[n["what"], "; ".join(f"{f['rule']} on {f['subject']}: {f['evidence']}" for f in n["findings"]),
                     n["why"]] for n in data["not_proposed"]], title="not proposed", fold=frozenset({1, 2}))
    return (*tables, left)


def _change(compare: dict[str, Any] | None) -> str:
    if not compare or compare.get("geomean_ratio") is None:
        return "-"
    interval = compare.get("geomean_ratio_ci")
    low, high = (interval if interval else (None, None))
    return describe(compare["geomean_ratio"], low, high, style=CHANGE)


def summary_table(session: dict[str, Any]) -> Tabular:
    """One row per knob: from -> to, rounds, the change of B against A with its 95 % interval (geometric
    mean over the plan's cells), compare's verdict and what tune did; below, what is set now and the undo."""
    rows = []
    for knob in session["knobs"]:
        compare = knob.get("compare")
        race = knob.get("race") if isinstance(knob.get("race"), dict) else None
        won = f" (won a race of {len(race['candidates'])})" if race and race.get("winner") else ""
        rows.append([knob["knob"], ", ".join(knob["subjects"]), f"{knob['from']} -> {knob['to']}{won}", str(knob["rounds"]),
                     _change(compare), compare["verdict"] if compare else "-", knob["decision"]])
    confirmation = session.get("confirmation")
    if confirmation:
        compare = confirmation["compare"]
        kept = [k for k in session["knobs"] if k["decision"] == "kept"]
        rows.append(["kept set vs original", "-", ", ".join(f"{k['knob']}={k['to']}" for k in kept),
                     str(confirmation["rounds"]), _change(compare), compare["verdict"] if compare else "-",
                     confirmation["decision"]])
    ended = session.get("status", "completed")
    how = {"interrupted": "was interrupted", "failed": "failed"}.get(ended, f"ended {ended}")
    notes = [] if ended == "completed" else [f"the session {how}: {session.get('error') or 'no reason stored'}"]
    notes += [f"the knobs answer the findings of {stored_audit_name(session['audit'])}"] if session.get("audit") else []
    notes += [session["calibration"]["said"]] if session.get("calibration") else []
    notes += [session["where"]] if session.get("where") else []
    notes += child_notes(session["child"]) if session.get("child") else []
    notes += [f"why {k['knob']} was {k['decision']}: {k['why']}" + (f" ({k['stop']})" if k.get("stop") else "")
              for k in session["knobs"]]
    if confirmation:
        notes.append(f"the kept set: {confirmation['why']}" + (f" ({confirmation['stop']}); its change is the one "
                                                               "to quote" if confirmation["stop"] else ""))
    notes += [f"now set: {command}" for command in session["now_set"]] or ["now set: nothing (every change was undone)"]
    if session["now_set"]:
        notes.append(f"undo all: {session['undo']}")
        notes += [f"volatile, gone at reboot; to keep it: {line}" for line in session.get("persist", [])]
        if session.get("persist"):
            notes.append(f"write those: stackbench tune --persist {session['session'][:12]} --write")
    return Tabular(("knob", "on", "from -> to", "rounds", "change [95 % CI]", "verdict", "tune"), rows,
                   title=f"stackbench tune {session['session'][:12]} on {session['target']}", notes=tuple(notes),
                   no_wrap=frozenset({0, 4}),  # a knob, and a change with its interval: each on one line
                   fold=frozenset({1, 2}))  # long words: a child dataset, a value, the kept set


def child_notes(child: dict[str, Any]) -> list[str]:
    """Which dataset was changed when: the child measured on, and the parent changed only after the
    confirmation (measure/tune_child.py)."""
    name, parent = child["dataset"], child["parent"]
    destroyed = (f"destroyed {child['destroyed_at']}" if child.get("destroyed_at")
                 else "not destroyed: `stackbench tune --rollback` destroys it")
    notes = [f"the child dataset {name}: created {child.get('created_at') or '(not made)'}, {destroyed}"]
    if child.get("applied_to_parent"):
        notes.append(f"{parent} changed {child['applied_to_parent_at']}, after the confirmation: "
                     + ", ".join(child["applied_to_parent"]))
    else:
        notes.append(f"{parent} was not changed")
    notes += [f"left alone: {why}" for why in child.get("left_alone", [])]
    return notes


def race_tables(session: dict[str, Any]) -> tuple[Tabular, ...]:
    """Per knob that raced several candidates: each candidate, its ratio to the original at the race's last
    look, when and why it was dropped (or left out, or the winner); the winner's proof is the knob's row of
    the summary and its own compare table."""
    tables = []
    for knob in session["knobs"]:
        race = knob.get("race")
        if not isinstance(race, dict) or "candidates" not in race:
            continue
        dropped = {d["value"]: d for d in race["dropped"]}
        not_raced = {n["value"]: n["why"] for n in race["not_raced"]}
        rows = []
        for value in race["candidates"]:
            ratio = race["ratios"].get(value)
            shown = "-" if ratio is None else f"{(ratio - 1) * 100:+.1f}%"
            if value in not_raced:
                fate, why = "not raced", not_raced[value]
            elif value in dropped:
                fate, why = f"dropped at round {dropped[value]['round']}", dropped[value]["why"]
            elif value == race["winner"]:
                fate, why = "winner", "proven against the original afresh: " + knob["why"]
            else:
                fate, why = "left", "not the best ratio to the original"
            rows.append([value, shown, fate, why])
        notes = (f"{race['rounds']} rounds, each visiting the original ({race['original']}) and every candidate "
                 f"left once; {_race_alpha(race)}; stopped: {race['stop']}",
                 "the race only chooses: its ratios lean high for the winner; the verdict is the proof's, from "
                 "fresh rounds")
        tables.append(Tabular(("candidate", "vs original (race)", "race", "why"), rows,
                              title=f"race of {knob['knob']} from {race['original']}", notes=notes,
                              fold=frozenset({3})))
    return tuple(tables)


def _race_alpha(race: dict[str, Any]) -> str:
    """How a race spent alpha: over its looks O'Brien-Fleming-style with Holm over each look's pairs; a
    session stored before that (`alpha_per_look`) split it evenly, and Bonferroni over the pairs."""
    if "alpha_looks" in race:
        shares = ", ".join(f"{a:.4g}" for a in race["alpha_looks"])
        return f"alpha {shares} at its looks (O'Brien-Fleming), Holm over each look's pairs"
    return f"alpha {race['alpha_per_look']:.4g} per look, split over its pairs"


def status_table(rows: list[list[str]]) -> Tabular:
    """`tune --status`: each session on this host, its state and what it left applied."""
    return Tabular(("session", "target", "state", "left applied"), rows, title="tune sessions")


# The two runs of a stored comparison (base, other) by their ids, or why they cannot be had ("are no longer
# stored", "are not yours to see"): the CLI reads the store, the web also asks whether the viewer may see them.
ArmRuns = Callable[[str, str], "tuple[Run, Run] | str"]


@dataclass(frozen=True)
class StoredTuneTables:
    """A stored session's report as it was printed at its end: its document, the summary and compare's table
    of each knob's runs made again, and the comparisons left out with why (name, reason)."""

    data: dict[str, Any]
    tables: tuple[Tabular, ...]
    left_out: tuple[tuple[str, str], ...]


def stored_session_document(session_id: str, document: Any) -> dict[str, Any]:
    """The stored document when it is a session's; a StoreError naming the way out otherwise."""
    if not isinstance(document, dict) or not isinstance(document.get("knobs"), list):
        raise StoreError(f"the stored tune session {session_id[:12]} is damaged (its document is not a session's)",
                         f"Remove it with `stackbench rm {session_id[:12]}`")
    return document


def session_comparisons(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each comparison a session made, named (its knob, or "the confirmation"): the arms' runs are named in
    each (`base`, `other`), and `report TUNE` loads them before anything is redacted."""
    compared = [(k["knob"], k.get("compare")) for k in data["knobs"]]
    compared.append(("the confirmation", (data.get("confirmation") or {}).get("compare")))
    return [(name, compare) for name, compare in compared if compare]


def stored_session_tables(session_id: str, document: Any, arm_runs: ArmRuns) -> StoredTuneTables:
    """`show TUNE` and the web's session page: each comparison made again by compare from the arms' stored
    runs at the alpha and minimum effect the session used, so both show what the session printed. A
    comparison whose runs cannot be had is left out, and said by the caller."""
    from stackbench.analysis.compare import compare_runs
    from stackbench.report.compare import comparison_table

    data = stored_session_document(session_id, document)
    tables, left_out = [summary_table(data), *race_tables(data)], []
    for name, compare in session_comparisons(data):
        runs = arm_runs(compare["base"]["run_id"], compare["other"]["run_id"])
        if isinstance(runs, str):
            left_out.append((name, runs))
            continue
        tables.append(comparison_table(compare_runs(*runs, alpha=compare["alpha"],
                                                    min_effect=compare["min_effect_pct"] / 100)))
    return StoredTuneTables(data, tuple(tables), tuple(left_out))
