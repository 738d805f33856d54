"""`stackbench tune`: the method's middle run by the program, one knob at a time: read the original, check that
the knob's undo really restores it, measure the original (A) against the candidate (B) in counterbalanced
rounds, let compare's verdict decide, and keep the candidate only when it is proven better; otherwise undo it.

Why this shape (docs/tune.md): no tuner in the field proves a change before keeping it,
and a change kept on one noisy observation is often not better at all (TUNA: up to 63 % of "best"
configurations lose >= 30 % when deployed). `ab` already measures a change the drift-proof way; a session is
`ab` with the arms made by the journal instead of shell commands: every switch to B is a journaled change
and every switch back its compare-and-swap undo (tune_changes.py), so a killed session is restored by the
next stackbench command and Ctrl-C, SIGTERM and SIGHUP restore the starting state before exiting.

A knob is measured on top of the ones kept before it. A knob whose safety class is not `safe` (semantic,
tradeoff, restart) is refused unless `--allow` names its class, and a forbidden setting is never a candidate
whatever the flags (knobs/forbidden.py). A candidate compare marks as less safe (unsafe_settings.py) is not
kept unless its class was allowed.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from stackbench.analysis.alpha_spending import alpha_left, look_alphas
from stackbench.analysis.advice import smallest_provable
from stackbench.analysis.compare import KEEP, REVERT, SAME, RunComparison, compare_runs
from stackbench.analysis.race import compare_arms, race_look
from stackbench.base.errors import Interrupted, StackbenchError, UsageError
from stackbench.measure.runner import (
    Measurement, RunObserver, RunRequest, SilentObserver, interrupt_cause, prepare, remove_scratch,
    signals_as_interrupt,
)
from stackbench.measure.tune_budget import (
    confirmation_reserve, out_of_time, race_proof_reserve,
)
from stackbench.measure.tune_changes import Changes, Outcome
from stackbench.measure.tune_journal import Change, Journal
from stackbench.measure.tune_result import Calibration, Confirmation, KnobResult, Paired, Race, TuneResult
from stackbench.measure.tune_plan import (
    DEFAULT_LOOKS, SAFETY_WHY, PlannedKnob, looks_for, plan_knob, plan_round_seconds,
)
from stackbench.measure.tune_preflight import refuse_journal_under_test, refuse_second_session
from stackbench.model.results import Run, new_id
from stackbench.model.round_order import even_rounds, race_orders, round_orders
from stackbench.store import Store
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Knob, Safety
from stackbench.tune.subjects import TargetInfo, target_info

KEPT, UNDONE_DECISION, NOT_MEASURED = "kept", "undone", "not measured"


DECIDED = (KEEP, REVERT, SAME)


@dataclass(frozen=True)
class TuneRequest:
    run: RunRequest
    knobs: tuple[tuple[Knob, str | tuple[str, ...] | None], ...]
    rounds: int = 12  # the most rounds per knob
    alpha: float = 0.05
    min_effect: float = 0.05
    allow: frozenset[Safety] = frozenset()
    looks: tuple[int, ...] = DEFAULT_LOOKS
    max_time: float | None = None  # seconds for the whole session, from its start
    calibration_rounds: int = 4  # A/A rounds before the first knob; 0: none
    force: bool = False  # tune although the calibration says --min-effect cannot be proven
    confirm: bool = True  # the kept set against the original, afresh, before it stays
    keep_unconfirmed: bool = False
    audit: dict[str, Any] | None = None  # the stored audit the knobs answer (--audit): tune_stored_audit.py


def plan_session(request: TuneRequest) -> tuple[TargetInfo, list[PlannedKnob]]:
    """The dry run: every knob checked and its commands made, nothing changed."""
    info = target_info(request.run.target)
    return info, [plan_knob(knob, value, info, request.allow) for knob, value in request.knobs]


def _restored(outcomes: list[Outcome]) -> str:
    return "; ".join(o.describe() for o in outcomes) or "nothing had been changed"


def execute_tune(store: Store, request: TuneRequest, observer: RunObserver | None = None,
                 on_knob: Callable[[PlannedKnob], None] | None = None) -> TuneResult:
    """Run the session: each knob checked for reversibility, measured against the state before it, kept or
    undone; every change journaled first. On an interruption or an error everything is undone. Once it has
    started measuring, the session is stored as it ended (completed, interrupted or failed), with what it had:
    `stackbench show SESSION` prints its report again."""
    observer = observer or SilentObserver()
    deadline = time.monotonic() + request.max_time if request.max_time else None
    rounds = even_rounds(request.rounds)
    if rounds < 2:
        raise UsageError(f"--rounds must be at least 2, got {request.rounds}", "Use --rounds 6 or more")
    looks = looks_for(rounds, request.looks)
    refuse_second_session()
    info, planned = plan_session(request)
    refuse_journal_under_test(info)
    session = new_id()
    created_at = datetime.now(timezone.utc)
    prepared = prepare(request.run, session, observer)
    # the scratch file (an absolute path), when stackbench creates it, and the fio that writes it: what a
    # rollback after a kill -9 removes and stops (tune_changes.py)
    scratch = prepared.target.fio_filename if prepared.target.remove_after else None
    journal = Journal.create(session, {"target": str(request.run.target), "argv": sys.argv, "scratch": scratch,
                                       "fio_path": prepared.fio_path, "uid": os.geteuid(),
                                       "knobs": [p.to_json() for p in planned]})
    changes = Changes(journal)
    result = TuneResult(session, str(journal.path), info.describe(), created_at, audit=request.audit)
    how, error = "failed", None
    try:
        with signals_as_interrupt():
            _run_session(store, request, prepared, changes, planned, result, looks, observer, deadline, on_knob)
        how = "completed"
    except KeyboardInterrupt as interrupt:
        how = "interrupted"
        restored = _restored(changes.undo_all())
        error = Interrupted(f"{interrupt_cause(interrupt)} stopped tune session {session[:12]}: {restored}",
                            "The settings are as they were before the session")
    except StackbenchError as failure:
        outcomes = changes.undo_all()
        if outcomes:
            failure.what += f"; tune session {session[:12]} undid its changes: {_restored(outcomes)}"
        error = failure
    finally:
        remove_scratch(prepared.target)
        journal.append({"t": "closed", "how": how, "left_applied": sorted(changes.open)})
        journal.close()
    result.status, result.finished_at = how, datetime.now(timezone.utc)
    result.error = None if error is None else error.what
    _keep(store, result, request.run.label, error)
    if error is not None:
        raise error from None
    return result


def _run_session(store: Store, request: TuneRequest, prepared: Any, changes: Changes, planned: list[PlannedKnob],
                 result: TuneResult, looks: tuple[int, ...], observer: RunObserver, deadline: float | None,
                 on_knob: Callable[[PlannedKnob], None] | None) -> None:
    """The calibration, each knob, the confirmation: what `result` holds grows as they end, so that an
    interrupted session is stored with what it had."""
    session = result.session
    round_s = plan_round_seconds(prepared.plan)
    if request.calibration_rounds:
        started = time.monotonic()
        result.calibration = calibrate(store, request, prepared, session, looks, observer)
        round_s = (time.monotonic() - started) / result.calibration.rounds  # measured here, now
        refusal = result.calibration.refusal(request.min_effect, request.force)
        if refusal is not None:
            raise refusal
    reserve = confirmation_reserve(request, looks, round_s)
    knobs_deadline = None if deadline is None else deadline - reserve
    for plan in planned:
        if on_knob:
            on_knob(plan)
        result.results.append(_tune_knob(store, request, prepared, changes, plan, session, looks, observer,
                                         knobs_deadline, round_s))
    result.confirmation, result.kept = confirm(store, request, prepared, changes, result.results, session, looks,
                                               observer, deadline)


def _keep(store: Store, result: TuneResult, label: str | None, error: StackbenchError | None) -> None:
    """Store the session as it ended. When it ended on an error, a store that cannot take it is said in that
    error's line rather than hiding it; a completed session that cannot be stored is the error."""
    try:
        store.add_tune_session(session_id=result.session, label=label, status=result.status,
                               created_at=result.created_at, finished_at=result.finished_at, document=result.to_json())
    except StackbenchError as failure:
        if error is None:
            raise
        error.what += f"; its report was not stored: {failure.what}"


def _arms(store: Store, request: TuneRequest, prepared: Any, observer: RunObserver, name: str, pair: str,
          commands: dict[str, str], orders: list[str], tune: dict[str, Any]) -> dict[str, Measurement]:
    """The two stored runs of one paired experiment (a knob's A and B, or the calibration's A and A)."""
    base = request.run.label or f"tune-{pair[:8]}"
    arms = {}
    for arm in ("a", "b"):
        facts = {"ab": {"session": pair, "arm": arm.upper(), "command": commands[arm], "prepare": None,
                        "rounds": len(orders), "orders": orders}, "tune": tune[arm]}
        arms[arm] = Measurement(store, prepared, observer, label=f"{base}-{name}-{arm}",
                                target_text=str(request.run.target), extra_facts=facts)
    observer.run_started(arms["a"].run_id, prepared.plan, prepared.target)
    return arms


def calibrate(store: Store, request: TuneRequest, prepared: Any, session: str, looks: tuple[int, ...],
              observer: RunObserver) -> Calibration:
    """A/A rounds before anything changes: how much a round's ratio moves by itself here and now (FAST'17 saw
    more than a quarter of storage configurations vary over 10 % run to run), and so which change the knobs'
    rounds can prove at all."""
    orders = round_orders(even_rounds(request.calibration_rounds))
    alpha_look = look_alphas(looks, request.alpha)[-1]  # what a knob's last look may spend
    same = {"session": session, "calibration": True}
    arms = _arms(store, request, prepared, observer, "calibration", f"{session}:calibration",
                 {"a": "(nothing changed)", "b": "(nothing changed)"}, orders, {"a": same, "b": same})
    status = "failed"
    try:
        for round_index, order in enumerate(orders):
            for arm in order.lower():
                arms[arm].round(round_index, every_cell=True)
        status = "complete"
    finally:
        runs = {arm: measurement.finish(status if status == "complete" else "incomplete") for arm, measurement
                in arms.items()}
    comparison = compare_runs(runs["a"], runs["b"], alpha=alpha_look, min_effect=request.min_effect)
    spreads = [row.test.log_sd for row in comparison.rows
               if row.weight > 0 and row.test is not None and row.test.log_sd is not None]
    noise = max(spreads) if spreads else math.inf
    return Calibration(len(orders), noise, smallest_provable(noise, looks[-1], alpha=alpha_look), looks[-1],
                       alpha_look)


def _switch(changes: Changes, plans: list[PlannedKnob], to_b: bool, applied: list[Change]) -> list[Change]:
    """To B: every plan's value applied, in order; to A: what is applied undone, newest first."""
    if to_b and not applied:
        return [changes.apply(plan.knob, subject, plan.value) for plan in plans for subject in plan.subjects]
    if not to_b and applied:
        for change in reversed(applied):
            outcome = changes.undo(change)
            if outcome.result != "undone":
                raise ActionFailed(outcome.describe(), "Nothing more was measured")
        return []
    return applied


def check_reversible(changes: Changes, plan: PlannedKnob) -> None:
    """Apply, verify, undo, verify every view equals the original, before a minute is spent measuring: the
    obvious undo of a setting is often wrong (docs/tune.md, "Undos that do not undo"), and a knob tune cannot undo is not tried."""
    _switch(changes, [plan], False, _switch(changes, [plan], True, []))


def reversibility_failure(changes: Changes, plan: PlannedKnob) -> str | None:
    """Why the knob fails the check (what is left of its change undone where its undo can), or None. The knobs
    kept before it stay as they are."""
    try:
        check_reversible(changes, plan)
    except ActionFailed as error:
        left = [o.describe() for o in changes.undo_all(plan.knob.id)]
        return f"the reversibility check failed: {error.what}" + (f" ({'; '.join(left)})" if left else "")
    return None


def _measure_pair(store: Store, request: TuneRequest, prepared: Any, observer: RunObserver, changes: Changes,
                  plans: list[PlannedKnob], applied: list[Change], name: str, pair: str, tune: dict[str, Any],
                  looks: tuple[int, ...], deadline: float | None) -> Paired:
    """A (the plans' values undone) against B (applied) in rounds AB, BA, ..., compare's verdict read after each
    round of `looks` at that look's share of alpha (O'Brien-Fleming-type spending, analysis/alpha_spending.py:
    the shares sum to alpha, so valid whatever the looks' dependence); the first look that decides (keep,
    revert, same) ends it. Before each pair of rounds, `--max-time` is checked against how long the rounds so
    far took: out of time, it ends on the (even number of) rounds it has, tested at the alpha not yet spent."""
    orders = round_orders(looks[-1])
    alphas = look_alphas(looks, request.alpha)
    alpha_look = alphas[-1]  # the alpha of the test that ends it; the last look's unless another ends it
    facts = {arm: {**tune[arm], "looks": list(looks), "alpha_looks": list(alphas)} for arm in ("a", "b")}
    commands = {"a": "; ".join(c for p in reversed(plans) for c in p.undo),
                "b": "; ".join(c for p in plans for c in p.apply)}
    arms = _arms(store, request, prepared, observer, name, pair, commands, orders, facts)
    status, done, stop = "failed", 0, ""
    started = time.monotonic()
    try:
        for round_index, order in enumerate(orders):
            if round_index % 2 == 0 and out_of_time(deadline, started, round_index):
                alpha_look = alpha_left(alphas, sum(look <= done for look in looks), request.alpha)
                stop = f"out of time (--max-time) after round {done}"
                break
            for arm in order.lower():
                applied = _switch(changes, plans, arm == "b", applied)
                arms[arm].round(round_index, every_cell=True)
            done = round_index + 1
            if done in looks and alphas[looks.index(done)] > 0:  # a share that underflows to 0 decides nothing
                alpha_look = alphas[looks.index(done)]
                look = compare_runs(store.get_run(arms["a"].run_id), store.get_run(arms["b"].run_id),
                                    alpha=alpha_look, min_effect=request.min_effect)
                stop = f"look {looks.index(done) + 1} of {len(looks)} (round {done}) at alpha {alpha_look:.4g}"
                if look.verdict in DECIDED:
                    stop = f"decided at {stop}"
                    break
        else:
            stop = f"undecided at the last {stop}"
        status = "complete"
    finally:
        if status != "complete":
            status = "incomplete" if arms["a"].order else "failed"
        runs: dict[str, Run] = {arm: measurement.finish(status) for arm, measurement in arms.items()}
    comparison = compare_runs(runs["a"], runs["b"], alpha=alpha_look, min_effect=request.min_effect)
    return Paired(comparison, tuple(orders[:done]), stop, applied, (time.monotonic() - started) / max(1, done))


def _tune_knob(store: Store, request: TuneRequest, prepared: Any, changes: Changes, plan: PlannedKnob,
               session: str, looks: tuple[int, ...], observer: RunObserver, deadline: float | None,
               round_s: float) -> KnobResult:
    """One knob: the reversibility check, then its value now (A) against the candidate (B). A knob of several
    candidates races them first (`_race`), keeping the first look of its winner's proof back from --max-time;
    the winner alone is then measured against A afresh, and only that verdict decides."""
    if deadline is not None and time.monotonic() >= deadline:
        return KnobResult(plan, NOT_MEASURED, "--max-time was reached before it started")
    race = None
    if plan.race:
        race = _race(store, request, prepared, changes, plan, session, looks, observer, deadline, round_s)
        winner = next((p for p in plan.race if p.value == race.winner), None)
        if winner is None:
            return KnobResult(plan, UNDONE_DECISION if race.rounds else NOT_MEASURED, race.stop, race=race)
        plan = winner
    else:
        failure = reversibility_failure(changes, plan)
        if failure:
            return KnobResult(plan, NOT_MEASURED, failure)
    tune = {arm: {"session": session, "knob": plan.knob.id, "value": value}
            for arm, value in (("a", plan.from_value), ("b", plan.value))}
    name = f"{plan.knob.id}={plan.value}-proof" if race else plan.knob.id
    measured = _measure_pair(store, request, prepared, observer, changes, [plan], [], name,
                             f"{session}:{name}", tune, looks, deadline)
    decision, why = decide(measured.comparison, plan.knob, request.allow)
    applied = _switch(changes, [plan], decision == KEPT, measured.applied)
    return KnobResult(plan, decision, why, measured.comparison, measured.orders, tuple(applied), measured.stop,
                      measured.round_s, race)


def _switch_arm(changes: Changes, plan: PlannedKnob | None, applied: list[Change]) -> list[Change]:
    """To one arm of a race: what is applied undone newest first (compare-and-swap, journaled), then the arm's
    candidate applied on every subject (None: the original, nothing applied)."""
    if applied and plan is not None and all(c.value == plan.value for c in applied):
        return applied
    applied = _switch(changes, [], False, applied)
    return _switch(changes, [plan], True, []) if plan is not None else []


def _race_arms(changes: Changes, plan: PlannedKnob, race: Race) -> dict[str, PlannedKnob | None]:
    """The race's arms: the original (None: nothing to apply) and each candidate whose undo was proven to
    restore every view; a candidate that failed its check is named in `race.not_raced` with why."""
    arms: dict[str, PlannedKnob | None] = {plan.from_value: None}
    for candidate in plan.race:
        failure = reversibility_failure(changes, candidate)
        if failure:
            race.not_raced[candidate.value] = failure
        else:
            arms[candidate.value] = candidate
    return arms


def _race(store: Store, request: TuneRequest, prepared: Any, changes: Changes, plan: PlannedKnob, session: str,
          looks: tuple[int, ...], observer: RunObserver, deadline: float | None, round_s: float) -> Race:
    """The original and every candidate in rounds of race_orders (each round visits every arm left once);
    after each look, analysis/race.py drops the candidates proven worse than another arm, at the look's
    O'Brien-Fleming share of alpha spent over its pairs by Holm's step-down. It stops at one candidate left,
    none, every arm left `same` as every other (no candidate can be proven better: no winner), the last look,
    or --max-time; the candidate with the best ratio to the original wins. Every switch is a journaled
    change or its undo, as a single candidate's are; the race ends with everything it applied undone."""
    original = plan.from_value
    budget = None if deadline is None else deadline - time.monotonic()
    alphas = look_alphas(looks, request.alpha)
    race = Race(original, tuple(p.value for p in plan.race), alpha_looks=alphas)
    if budget is not None:
        race.proof_reserve_s = race_proof_reserve(looks, round_s, budget, 0.0, 0)
    arms = _race_arms(changes, plan, race)
    if len(arms) < 2:
        race.stop = "no candidate passed the reversibility check"
        return race
    pair = f"{session}:{plan.knob.id}:race"
    base = request.run.label or f"tune-{pair[:8]}"
    measured = {value: Measurement(store, prepared, observer, label=f"{base}-{plan.knob.id}={value}-race",
                                   target_text=str(request.run.target),
                                   extra_facts={"race": {"session": pair, "arm": value},
                                                "tune": {"session": session, "knob": plan.knob.id, "value": value,
                                                         "race": True}})
                for value in arms}
    observer.run_started(measured[original].run_id, prepared.plan, prepared.target)
    alive, applied, status, started, all_same = list(arms), [], "failed", time.monotonic(), False
    try:
        while race.rounds < looks[-1]:
            if len(alive) < 3:  # the original and one candidate, or the original alone
                break
            if budget is not None:
                race.proof_reserve_s = race_proof_reserve(looks, round_s, budget, time.monotonic() - started,
                                                          sum(len(order) for order in race.orders))
            if out_of_time(None if deadline is None else deadline - (race.proof_reserve_s or 0.0), started,
                           race.rounds):
                race.stop = f"out of time (--max-time) after round {race.rounds}"
                break
            for order in race_orders(len(alive), 2, start=race.rounds):
                for arm in (alive[i] for i in order):
                    applied = _switch_arm(changes, arms[arm], applied)
                    measured[arm].round(race.rounds, every_cell=True)
                race.orders.append([alive[i] for i in order])
            if race.rounds in looks and alphas[looks.index(race.rounds)] > 0:  # see _measure_pair
                runs = {value: store.get_run(m.run_id) for value, m in measured.items()}
                look = race_look(runs, race.orders, alive, original, alpha=alphas[looks.index(race.rounds)],
                                 min_effect=request.min_effect)
                race.looks.append(look)
                race.dropped.extend(look.dropped)
                alive = [arm for arm in alive if arm not in {d.arm for d in look.dropped}]
                if look.all_same:
                    all_same = True
                    race.stop = (f"all remaining candidates within ±{request.min_effect * 100:g} % of each other "
                                 f"and of the original at round {race.rounds}: none can be proven better, the "
                                 "original is kept")
                    break
        _switch_arm(changes, None, applied)  # on an error or interruption the session undoes everything
        status = "complete"
    finally:
        runs = {value: m.finish(status if status == "complete" else ("incomplete" if m.order else "failed"))
                for value, m in measured.items()}
    left = [arm for arm in alive if arm != original]
    race.ratios = {arm: compare_arms(runs, race.orders, original, arm, alpha=request.alpha,
                                     min_effect=request.min_effect).geomean_ratio
                   for arm in arms if arm != original and race.rounds}
    if all_same:
        return race
    if not left:
        race.stop = race.stop or f"no candidate left at round {race.rounds}: each was proven worse than another arm"
        return race
    race.winner = max(left, key=lambda arm: -math.inf if race.ratios.get(arm) is None else race.ratios[arm])
    race.stop = race.stop or (f"one candidate left at round {race.rounds}" if len(left) == 1
                              else f"{len(left)} candidates left at the last look (round {race.rounds}): "
                                   "the best ratio to the original wins")
    return race


def confirm(store: Store, request: TuneRequest, prepared: Any, changes: Changes, results: list[KnobResult],
            session: str, looks: tuple[int, ...], observer: RunObserver, deadline: float | None
            ) -> tuple[Confirmation | None, list[Change]]:
    """Measure every knob kept, together, against the original in fresh rounds; keep them only when the set
    is proven better (docs/method.md: kept only if it helps as a whole), else undo them all unless
    --keep-unconfirmed. Returns the confirmation and the changes left applied."""
    kept = [r for r in results if r.decision == KEPT]
    applied = [change for r in kept for change in r.kept]
    if not kept or not request.confirm:
        return None, applied
    plans = [r.planned for r in kept]
    pair_s = 2 * max(r.round_s for r in kept)  # the fewest rounds a confirmation can run
    if deadline is not None and time.monotonic() + pair_s > deadline:
        keep = request.keep_unconfirmed
        applied = _switch(changes, plans, keep, applied)
        return Confirmation(KEPT if keep else UNDONE_DECISION, "--max-time left no time to confirm the kept set: "
                            + ("kept as --keep-unconfirmed asks" if keep else "every change undone"), None), applied
    shown = ", ".join(f"{p.knob.id}={p.value}" for p in plans)
    tune = {"a": {"session": session, "confirmation": "original"}, "b": {"session": session, "confirmation": shown}}
    measured = _measure_pair(store, request, prepared, observer, changes, plans, applied, "confirmation",
                             f"{session}:confirmation", tune, looks, deadline)
    verdict = measured.comparison.verdict
    worse = [row.pattern for row in measured.comparison.rows if row.weight > 0 and row.verdict == REVERT]
    if verdict == KEEP and not worse:
        decision, why = KEPT, f"proven better than the original: {measured.comparison.reason}"
    elif request.keep_unconfirmed and verdict != REVERT and not worse:
        decision, why = KEPT, f"not confirmed (compare says {verdict}), kept as --keep-unconfirmed asks"
    else:
        slower = f", slower in {', '.join(worse)}" if worse else ""
        decision, why = UNDONE_DECISION, f"not confirmed (compare says {verdict}{slower}): every change undone"
    applied = _switch(changes, plans, decision == KEPT, measured.applied)
    return Confirmation(decision, why, measured), applied


def decide(comparison: RunComparison, knob: Knob, allow: frozenset[Safety]) -> tuple[str, str]:
    """Keep only a proven gain: compare's verdict `keep`, no weighted row worse, and not bought with safety
    unless that trade was allowed."""
    if comparison.verdict != KEEP:
        return UNDONE_DECISION, f"compare says {comparison.verdict}: {comparison.reason}"
    worse = [row.pattern for row in comparison.rows if row.weight > 0 and row.verdict == REVERT]
    if worse:
        return UNDONE_DECISION, f"slower in {', '.join(worse)}"
    if comparison.safety.less_safe == "B" and Safety.TRADEOFF not in allow:
        return UNDONE_DECISION, "faster because it is less safe (add --allow tradeoff to keep such a change)"
    if knob.safety is not Safety.SAFE:  # allowed, and said: what the kept value gives up
        return KEPT, f"{comparison.reason}; LESS SAFE: a {knob.safety.value} change, {SAFETY_WHY[knob.safety]}"
    return KEPT, comparison.reason
