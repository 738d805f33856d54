"""`stackbench tune`: try a knob, prove it, keep it only if it helps; undo on demand (docs/tune.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import (
    OUTPUT_PANEL, AlphaOption, DbOption, FormatOption, IntBetween, JsonOption, MinEffectOption, check_label,
    chosen_format, emit, emit_report, open_store_from, split_list, target_path,
)
from stackbench.cli.plan_options import PlanOptions, with_plan_options

STATUS_KEYS = ("session", "target", "state", "left_applied")
TARGET_PANEL, KNOBS_PANEL, ROUNDS_PANEL, SESSIONS_PANEL = "Target", "Knobs", "Rounds", "Catalogue and sessions"


# tune_command's rounds and sessions options, declared here so that its signature stays readable
_ROUNDS = typer.Option(
    12, "--rounds", "-r", rich_help_panel=ROUNDS_PANEL, click_type=IntBetween(2, 100), metavar="N",
    help="Most rounds per knob (2-100), A first and B first in turn (an odd number is raised by one).")
_LOOKS = typer.Option(
    None, "--looks", rich_help_panel=ROUNDS_PANEL, metavar="R,R,...",
    help="Rounds after which the verdict is looked at, alpha spent over them (O'Brien-Fleming: most at the "
         "last); the first look that decides "
         "stops the knob [default: 4,6,8,12].")
_CALIBRATE_ROUNDS = typer.Option(
    4, "--calibrate-rounds", rich_help_panel=ROUNDS_PANEL, click_type=IntBetween(0, 100), metavar="N",
    help="A/A rounds (0-100) before the first knob (nothing changed): the noise now, and the smallest change the "
         "rounds can prove; 0 skips them.")
_FORCE = typer.Option(
    False, "--force", rich_help_panel=ROUNDS_PANEL,
    help="Tune even when the calibration says a change of --min-effect cannot be proven now.")
_CONFIRM = typer.Option(
    True, "--confirm/--no-confirm", rich_help_panel=ROUNDS_PANEL,
    help="Measure the kept set against the original afresh before it stays.")
_KEEP_UNCONFIRMED = typer.Option(
    False, "--keep-unconfirmed", rich_help_panel=ROUNDS_PANEL,
    help="Keep the set when the confirmation finds no proven gain (never when it finds a loss).")
_MAX_TIME = typer.Option(
    None, "--max-time", rich_help_panel=ROUNDS_PANEL, metavar="DURATION",
    help="Time for the whole session, e.g. 30m: a knob out of time is decided on the rounds it has, the knobs "
         "after it are not measured; the confirmation's first look is kept back from the knobs.")
_KNOBS_FILE = typer.Option(
    None, "--knobs", rich_help_panel=KNOBS_PANEL, metavar="FILE.toml", show_default=False,
    help="Your own knobs, declared in a TOML file of [[knob]] tables (docs/tune.md, \"User knobs\"): name them "
         "with --knob; --list-knobs and --explain-knob include them. The file is your code: its commands run as "
         "given.")
_AUDIT = typer.Option(
    None, "--audit", rich_help_panel=KNOBS_PANEL, metavar="ID", show_default=False,
    help="Instead of --knob, the knobs that answer a stored audit's findings (its id, prefix or label: "
         "`audit --db`): an audit of this machine made on it since it booted, each finding re-checked now.")
_LIST_KNOBS = typer.Option(
    False, "--list-knobs", rich_help_panel=SESSIONS_PANEL, help="List the knob catalogue and exit.")
_EXPLAIN_KNOB = typer.Option(
    None, "--explain-knob", rich_help_panel=SESSIONS_PANEL, metavar="ID",
    help="Explain one knob (values, safety, undo, examples) and exit.")
_ROLLBACK = typer.Option(
    None, "--rollback", rich_help_panel=SESSIONS_PANEL, metavar="SESSION",
    help="Undo what a session left applied (its id or a prefix), where the value is still what tune set.")
_PERSIST = typer.Option(
    None, "--persist", rich_help_panel=SESSIONS_PANEL, metavar="SESSION",
    help="Print how the volatile changes a finished session kept survive a reboot (udev, sysctl.d, "
         "modprobe.d, fstab).")
_WRITE = typer.Option(
    False, "--write", rich_help_panel=SESSIONS_PANEL,
    help="With --persist: write those lines to their files (a backup of each file changed; fstab only printed).")
_STATUS = typer.Option(
    False, "--status", rich_help_panel=SESSIONS_PANEL,
    help="List the sessions on this host and what each left applied.")


@app.command("tune")
@with_plan_options(repeats=False)
def tune_command(
    *,
    target: Optional[Path] = typer.Option(
        None, "--target", "-t", rich_help_panel=TARGET_PANEL, metavar="DIR", show_default=False, parser=target_path,
        help="Directory on the storage under test (a scratch file is created and removed).",
    ),
    knob: Optional[list[str]] = typer.Option(
        None, "--knob", "-k", rich_help_panel=KNOBS_PANEL, metavar="ID[=V1,V2...]",
        help="A knob to try (repeatable; tried one at a time, each on top of the ones kept): "
             "see --list-knobs. Several values race, and the winner is then proven against the value now; "
             "without =VALUE, every candidate other than the value now (one: tried, several: raced).",
    ),
    apply: bool = typer.Option(
        False, "--apply", rich_help_panel=KNOBS_PANEL,
        help="Change settings and measure; without it, only the plan is printed (a dry run changes nothing)."),
    knobs_file: Optional[Path] = _KNOBS_FILE,
    stored_audit: Optional[str] = _AUDIT,
    allow: Optional[list[str]] = typer.Option(
        None, "--allow", rich_help_panel=KNOBS_PANEL, metavar="CLASS",
        help="Let knobs of these safety classes be tried: semantic, tradeoff, restart (forbidden settings never "
             "are)."),
    rounds: int = _ROUNDS,
    looks: Optional[str] = _LOOKS,
    calibrate_rounds: int = _CALIBRATE_ROUNDS,
    force: bool = _FORCE,
    confirm: bool = _CONFIRM,
    keep_unconfirmed: bool = _KEEP_UNCONFIRMED,
    max_time: Optional[str] = _MAX_TIME,
    list_knobs: bool = _LIST_KNOBS,
    explain_knob: Optional[str] = _EXPLAIN_KNOB,
    rollback: Optional[str] = _ROLLBACK,
    status: bool = _STATUS,
    persist: Optional[str] = _PERSIST,
    write: bool = _WRITE,
    plan_options: PlanOptions,
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    label: Optional[str] = typer.Option(
        None, "--label", "-l", rich_help_panel=OUTPUT_PANEL, callback=check_label,
        help="Name of the runs (NAME-KNOB-a and -b)."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Try knobs on the storage under test, prove each with counterbalanced rounds, keep only what helps.

    Per knob: its subjects are read, the change and its undo are checked on the real system (apply, verify,
    undo, verify every view equals the original), then the value now (A) and the candidate (B) are measured
    in rounds AB, BA, AB, ... and compare's verdict decides: kept when proven faster, undone otherwise. Every
    change is written to a journal, with its undo, before it is made: Ctrl-C, SIGTERM and SIGHUP undo the
    session's changes, and after kill -9 the next stackbench command does. An undo never overwrites a value
    someone else changed since (exit 3).

    Examples:

        stackbench tune -t /mnt/scratch --knob blockdev.read_ahead_kb=128 --rw read --bs 4k --qd 1 --buffered

        stackbench tune -t /mnt/scratch --knob blockdev.read_ahead_kb=128 --rw read --bs 4k --buffered --apply
    """
    fmt = chosen_format(output_format, json_output)
    user = _user_knobs(knobs_file)
    if _answered_another_mode(fmt, list_knobs, explain_knob, rollback, status, (persist, write), user):
        return
    from stackbench.base.units import parse_duration
    from stackbench.measure.preparation import RunRequest
    from stackbench.measure.tune_session import TuneRequest

    target = _checked_target(target)
    chosen, origin = _chosen_knobs(target, knob, stored_audit, user, _allowed(allow), apply, (db, fmt))
    if not chosen:
        return
    plan = replace(plan_options, runs=1, until_stable=False).plan()  # the rounds are the runs
    request = TuneRequest(
        RunRequest(target=target, plan=plan, label=label), chosen,
        rounds=rounds, alpha=alpha, min_effect=min_effect / 100, allow=_allowed(allow), looks=_looks(looks),
        max_time=parse_duration(max_time, option="max-time") if max_time is not None else None,
        calibration_rounds=calibrate_rounds, force=force, confirm=confirm, keep_unconfirmed=keep_unconfirmed,
        audit=origin)
    _session(request, apply, db, fmt)


def _checked_target(target: Optional[Path]) -> Path:
    """The target a session measures on, refused as `run` refuses one (a device, a path that is not text)."""
    from stackbench.base.errors import UsageError
    from stackbench.measure.safety import check_target_text

    if target is None:
        raise UsageError("tune needs a target", "Give -t DIR, with --knob ID[=VALUE] or without it for the knobs "
                                                "that answer the audit's findings (see --list-knobs)")
    check_target_text(target)
    return target


def _user_knobs(path: Optional[Path]) -> dict:
    """The knobs of a `--knobs` file by id (none without it)."""
    if path is None:
        return {}
    from stackbench.tune.user_knobs import load

    return {knob.id: knob for knob in load(path)}


def _answered_another_mode(fmt: str, list_knobs: bool, explain_knob: Optional[str], rollback: Optional[str],
                           status: bool, persist: tuple[Optional[str], bool], user: dict) -> bool:
    """tune's modes that measure nothing (the catalogue, one knob, a rollback, the sessions, persisting one):
    True when one was asked and done."""
    from stackbench.base.errors import UsageError

    if persist[1] and persist[0] is None:
        raise UsageError("--write goes with --persist SESSION", "Add --persist SESSION")

    modes = [name for name, on in (("--list-knobs", list_knobs), ("--explain-knob", explain_knob is not None),
                                   ("--rollback", rollback is not None), ("--status", status),
                                   ("--persist", persist[0] is not None)) if on]
    if len(modes) > 1:
        raise UsageError(f"{' and '.join(modes)} cannot be combined", "Give one of them")
    if list_knobs:
        _list_knobs(fmt, user)
    elif explain_knob is not None:
        _explain(explain_knob, fmt, user)
    elif rollback is not None:
        _rollback(rollback, fmt)
    elif status:
        _status(fmt)
    elif persist[0] is not None:
        _persist(persist[0], persist[1], fmt)
    return bool(modes)


def _list_knobs(fmt: str, user: dict) -> None:
    from stackbench.report.tune import knob_list_table
    from stackbench.tune.knobs import REGISTRY
    from stackbench.tune.knobs.forbidden import FORBIDDEN
    from stackbench.tune.user_knobs import knob_json

    knobs = (*REGISTRY, *user.values())
    emit(fmt, knob_list_table(knobs), {"knobs": [knob_json(k) for k in knobs],
                                       "forbidden": [f.to_json() for f in FORBIDDEN]})


def _explain(knob_id: str, fmt: str, user: dict) -> None:
    from stackbench.measure.tune_plan import knob_by_id
    from stackbench.report.tune import explain_knob_lines

    found = knob_by_id(knob_id, user)
    if fmt == "json":
        from stackbench.cli.common import print_json
        from stackbench.tune.user_knobs import knob_json

        print_json({**knob_json(found), "doc": found.doc.strip()})
        return
    out.print("\n".join(explain_knob_lines(found)), markup=False, highlight=False, soft_wrap=True)


def _chosen_knobs(target: Path, knob: Optional[list[str]], stored_audit: Optional[str], user: dict,
                  allow: frozenset, apply: bool, store_fmt: tuple[Optional[str], str]) -> tuple[tuple, Optional[dict]]:
    """The knobs a session tries: those --knob names, else those that answer an audit's findings (a stored
    one with --audit, else one run now), and the stored audit they came from; the two ways of choosing are
    one or the other."""
    from stackbench.base.errors import UsageError
    from stackbench.measure.tune_plan import parse_knob_option

    if knob and stored_audit is not None:
        raise UsageError("--audit and --knob cannot be combined: --audit chooses the knobs from its findings",
                         "Give --audit ID for the knobs that answer that audit, or --knob ID[=VALUE] for your own")
    if knob:
        return tuple(parse_knob_option(text, user) for text in knob), None
    return _knobs_from_audit(target, allow, apply, store_fmt, stored_audit)


def _knobs_from_audit(target: Path, allow: frozenset, apply: bool, store_fmt: tuple[Optional[str], str],
                      stored_audit: Optional[str]) -> tuple[tuple, Optional[dict]]:
    """Without --knob: the knobs that answer the audit's findings on the target's stack, of the audit run now
    or, with --audit, of that stored audit where they still hold. A dry run prints them (with what is left out
    and why) and returns no knob; --apply returns them to be run as if given by --knob, and the stored audit."""
    from stackbench.measure.tune_from_audit import live_audit, propose
    from stackbench.measure.tune_stored_audit import stored_audit_findings
    from stackbench.report.tune import audit_plan_tables, stored_audit_name
    from stackbench.tune.subjects import target_info

    db, fmt = store_fmt
    info = target_info(target)
    stored = None if stored_audit is None else stored_audit_findings(open_store_from(db), stored_audit)
    found = propose(info, live_audit()[1], allow) if stored is None else propose(info, stored.still, allow,
                                                                                 gone=stored.gone)
    data = {"dry_run": not apply, "target": info.describe(), "from_audit": True,
            "audit": stored.to_json() if stored else None,
            "audit_findings": len(stored.audit.findings) if stored else found.findings,
            "knobs": [p.to_json() for p in found.proposed], "not_proposed": [n.to_json() for n in found.not_proposed]}
    source = stored_audit_name(data["audit"])
    if not found.proposed:
        data["said"] = (f"nothing to tune on {info.describe()}: {source} found nothing a knob answers there"
                        f"{' that still holds' if stored else ''}. --knob ID[=VALUE] tries a knob anyway: its change "
                        "and undo are checked, then it is measured against the value now and kept only if proven "
                        "faster (see --list-knobs)")
    if not apply or not found.proposed:
        from stackbench.report.document import Report

        if fmt != "json" and not found.proposed:
            out.print(data["said"], markup=False, highlight=False, soft_wrap=True)
        if fmt == "json" or found.proposed or found.not_proposed:
            emit_report(fmt, Report(tables=audit_plan_tables(data), data=data))
        return (), None
    if fmt != "json":
        err.print(f"from {source}: " + "; ".join(f"{p.planned.knob.id}={p.planned.to_json()['to']} ("
                                                 f"{', '.join(dict.fromkeys(f.rule_id for f in p.findings))})"
                                                 for p in found.proposed), markup=False, highlight=False, soft_wrap=True)
    return tuple((p.planned.knob, _tried(p.planned)) for p in found.proposed), data["audit"]


def _tried(planned):  # noqa: ANN001, ANN202 - a PlannedKnob: its value, or the values it races
    return tuple(c.value for c in planned.race) if planned.race else planned.value


def _allowed(allow: Optional[list[str]]) -> frozenset:
    from stackbench.base.errors import UsageError
    from stackbench.tune.knob import Safety

    classes = {Safety.SEMANTIC.value, Safety.TRADEOFF.value, Safety.RESTART.value}
    chosen = split_list(allow) or []
    bad = [c for c in chosen if c not in classes]
    if bad:
        raise UsageError(f"--allow {bad[0]!r} is not a safety class tune can allow",
                         f"Use one of: {', '.join(sorted(classes))} (forbidden settings are never tried)")
    return frozenset(Safety(c) for c in chosen)


def _looks(text: Optional[str]) -> tuple[int, ...]:
    from stackbench.base.errors import UsageError
    from stackbench.measure.tune_plan import DEFAULT_LOOKS

    if text is None:
        return DEFAULT_LOOKS
    try:
        return tuple(int(word) for word in (split_list([text]) or []))
    except ValueError:
        raise UsageError(f"--looks {text!r} is not a list of rounds", "Use e.g. --looks 4,6,8,12") from None


def _session(request, apply: bool, db: Optional[str], fmt: str) -> None:  # noqa: ANN001 - a TuneRequest
    from stackbench.cli.progress import ProgressObserver
    from stackbench.measure.tune_budget import confirmation_reserve, proof_reserve
    from stackbench.measure.tune_session import execute_tune, plan_session
    from stackbench.measure.tune_plan import looks_for, plan_round_seconds
    from stackbench.model.round_order import even_rounds
    from stackbench.report.tune import plan_table

    looks = looks_for(even_rounds(request.rounds), request.looks)
    if not apply:
        info, planned = plan_session(request)
        round_s = plan_round_seconds(request.run.plan)
        reserve = confirmation_reserve(request, looks, round_s)
        races = any(p.race for p in planned)
        proof = proof_reserve(request, looks, round_s) if races else 0.0
        data = {"dry_run": True, "target": info.describe(), "rounds": looks[-1], "looks": list(looks),
                "max_time_s": request.max_time, "confirmation_reserve_s": reserve if request.max_time else None,
                "proof_reserve_s": proof if request.max_time and races else None,
                "knobs": [p.to_json() for p in planned]}
        capped = ", capped at half the budget" if reserve < looks[0] * round_s else ""
        budget = (f"--max-time {request.max_time:g} s: {reserve:.0f} s of it kept for the confirmation (its first "
                  f"look: {looks[0]} rounds of ~{round_s:.1f} s by the plan's fio time{capped}; the calibration's "
                  "rounds measure it afresh)",) if request.max_time and reserve else ()
        if request.max_time and proof:
            capped = ", capped at half of what the knobs have" if proof < looks[0] * round_s else ""
            budget += (f"--max-time: each race keeps {proof:.0f} s of the knobs' time back for its winner's proof "
                       f"(its first look: {looks[0]} rounds{capped}; worked out again from the time left when the "
                       "race starts)",)
        emit(fmt, plan_table(data["knobs"], dry_run=True, budget=budget), data)
        return
    store = open_store_from(db)
    observer = ProgressObserver(request.run.plan, enabled=err.is_terminal and fmt != "json", quiet=True, arms=2,
                                rounds=looks[-1])

    def announce(planned) -> None:  # noqa: ANN001
        if fmt != "json" and not err.is_terminal:
            err.print(f"trying {planned.knob.id}: {planned.from_value} -> {planned.value} ({'; '.join(planned.apply)})",
                      markup=False, highlight=False, soft_wrap=True)

    with observer:
        result = execute_tune(store, request, observer, on_knob=announce)
    comparisons = [r.comparison for r in result.results if r.comparison is not None]
    if result.confirmation is not None and result.confirmation.measured is not None:
        comparisons.append(result.confirmation.measured.comparison)
    print_tune_session(result.to_json(), comparisons, fmt)


def print_tune_session(data: dict, comparisons: list, fmt: str) -> None:  # noqa: ANN001
    """A session's report, at its end and from the store (`show`): the summary, then compare's table of each
    knob's runs and of the confirmation's."""
    from stackbench.report.compare import comparison_table
    from stackbench.report.document import Report
    from stackbench.report.tune import race_tables, summary_table

    emit_report(fmt, Report(tables=(summary_table(data), *race_tables(data), *[comparison_table(c) for c in comparisons]),
                            data=data))


def show_tune_session(store, stored, fmt: str) -> None:  # noqa: ANN001 - a Store and its StoredTuneSession
    """A stored session's report as it was printed at its end (report/tune.py `stored_session_tables`, which
    the web's session page shows too); a comparison whose runs were removed since is left out, and said."""
    from stackbench.base.errors import StoreError
    from stackbench.report.document import Report
    from stackbench.report.tune import stored_session_document, stored_session_tables

    if fmt == "json":  # the document alone: nothing to compare again
        print_tune_session(stored_session_document(stored.id, stored.document), [], fmt)
        return

    def arm_runs(base: str, other: str):  # noqa: ANN202
        try:
            return store.get_run(base), store.get_run(other)
        except StoreError:
            return "are no longer stored"

    shown = stored_session_tables(stored.id, stored.document, arm_runs)
    for name, why in shown.left_out:
        warn(f"the runs of {name} {why}: its comparison table is left out")
    emit_report(fmt, Report(tables=shown.tables, data=shown.data))


def _rollback(session: str, fmt: str) -> None:
    from stackbench.base.errors import StackbenchError
    from stackbench.measure.tune_changes import rollback
    from stackbench.measure.tune_journal import Journal
    from stackbench.measure.tune_persist import find_session_journal

    path = find_session_journal(session)
    journal = Journal.take_over(path)
    if journal is None:
        raise StackbenchError(f"tune session {path.stem[:12]} is still running",
                              "Stop it with Ctrl-C, which undoes what it changed")
    try:
        done = rollback(journal, kept=True, how="rolled back by tune --rollback")
    finally:
        journal.close()
    data = {"session": done.session, "outcomes": [{"seq": o.change.seq, "knob": o.change.knob,
                                                   "subject": o.change.subject.name, "result": o.result,
                                                   "said": o.describe()} for o in done.outcomes]}
    if fmt == "json":
        from stackbench.cli.common import print_json

        print_json(data)
    else:
        out.print(done.describe(), markup=False, highlight=False, soft_wrap=True)
    if done.incomplete:
        raise typer.Exit(3)


def _persist(session: str, write: bool, fmt: str) -> None:
    from stackbench.measure.tune_persist import persist_root, persist_steps, write_steps

    full, steps = persist_steps(session)
    if write:
        steps = write_steps(full, steps)
    data = {"session": full, "written": write, "root": str(persist_root()), "steps": [s.to_json() for s in steps]}
    if fmt == "json":
        from stackbench.cli.common import print_json

        print_json(data)
        return
    lines = [f"tune session {full[:12]}: what keeps each kept change across a reboot"]
    for step in steps:
        lines.append(f"- {step.knob}={step.value} on {step.subject}: "
                     + (f"{step.said} [{step.result}]" if step.result else step.said))
    if not write and any(s.how == "file" for s in steps):
        lines.append(f"Write these with `stackbench tune --persist {full[:12]} --write` (a backup of each file it "
                     "changes); a udev rule applies at the next boot or `udevadm control --reload`.")
    out.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


def _status(fmt: str) -> None:
    from stackbench.measure.tune_journal import Journal, journals, replay
    from stackbench.report.tune import status_table

    rows = []
    for path in journals():
        state = replay(path)
        if state.closed is None:
            journal = Journal.take_over(path)
            how = "running" if journal is None else "stopped without restoring"
            if journal is not None:
                journal.close()
        else:
            how = str(state.closed.get("how", "closed"))
        applied = state.left_applied if state.closed is not None else state.open
        rows.append([state.session[:12], str(state.header.get("target", "?")), how,
                     "; ".join(f"{state.changes[s].knob}={state.changes[s].value} on {state.changes[s].subject.name}"
                               for s in applied) or "nothing"])
    emit(fmt, status_table(rows), {"sessions": [dict(zip(STATUS_KEYS, row)) for row in rows]})
