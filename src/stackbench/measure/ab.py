"""`stackbench ab`: configuration A, measure, configuration B, measure, alternating for N rounds.

Why a command of its own: two runs measured an hour apart differ by the machine's drift as much as by the
change (separate runs differed by 14-40 % here). Alternating A and B within rounds, and pairing the runs by
round in `compare`, takes drift that hits both arms of a round out of the verdict. Which arm goes first
alternates too (AB, BA, AB, ...: round_order.py says why), so that neither the second place in a round nor
what the previous measurement left behind favours one arm; the order is stored in both runs' facts
(`ab.orders`) for the order-effect diagnostic of `compare`. The commands are the
user's own shell commands (`zfs set compression=lz4 tank/vm`), run by /bin/sh exactly as given: they are
code the user hands over, never text stackbench builds. How they run (their own process group, a timeout
that ends the group, interruptions forwarded) is user_commands.py; what the session says when it stops
names the command that was running, if any, and the last one that completed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stackbench.base import user_commands
from stackbench.base.errors import Interrupted, StackbenchError
from stackbench.model.results import Run, new_id
from stackbench.model.round_order import round_orders
from stackbench.measure.runner import (
    Measurement,
    RunObserver,
    RunRequest,
    SilentObserver,
    remove_scratch,
    signals_as_interrupt,
    interrupt_cause,
    prepare,
)
from stackbench.store import Store

COMMAND_TIMEOUT_S = 600


class CommandFailed(StackbenchError):
    """A configuration or prepare command of `ab` failed: the measurement stops there."""


@dataclass(frozen=True)
class AbRequest:
    run: RunRequest  # the target and the plan; its label names the session
    command_a: str
    command_b: str
    rounds: int = 5
    prepare: str | None = None
    command_timeout: float = COMMAND_TIMEOUT_S


@dataclass(frozen=True)
class AbResult:
    session: str
    a: Run
    b: Run
    orders: tuple[str, ...] = ()  # each round's order, "AB" or "BA": the system is left as orders[-1] ends


def run_shell(command: str, what: str, timeout: float = COMMAND_TIMEOUT_S) -> None:
    """Run one of the user's commands; a non-zero exit stops the session with the command's own words."""
    try:
        done = user_commands.run(command, timeout=timeout)
    except OSError as error:
        raise CommandFailed(f"cannot run /bin/sh for the {what} command: {error.strerror}", "Check /bin/sh") from None
    if done.timed_out:
        raise CommandFailed(
            f"the {what} command did not finish within {timeout:g} s and was stopped with everything it started "
            "in its process group: its state is unknown",
            "Check the command by hand, or give it longer with --command-timeout",
        )
    if not done.ok:
        raise CommandFailed(
            f"the {what} command exited with {done.exit_code}" + (f": {done.said}" if done.said else ""),
            "Run it by hand to see why; nothing more was measured",
        )


class _CommandState:
    """Which of the session's commands is running and which configuration command completed last: what
    the user needs to know about the system's state when the session stops."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.running: str | None = None
        self.applied: str | None = None

    def run(self, command: str, what: str, *, configures: bool) -> None:
        self.running = f"{what} ({command})"
        run_shell(command, what, self.timeout)
        self.running = None
        if configures:
            self.applied = f"{what} ({command})"

    def last_applied(self) -> str:
        return f"the last command applied was {self.applied}" if self.applied else "no command had been applied"

    def interrupted(self) -> str:
        if self.running is None:
            return self.last_applied()
        return f"{self.running} was started and interrupted: its state is unknown; " + (
            f"the last command applied before it was {self.applied}" if self.applied
            else "no command had been applied before it")


def execute_ab(
    store: Store,
    request: AbRequest,
    observer: RunObserver | None = None,
    on_command: Callable[[str, str], None] | None = None,
) -> AbResult:
    """Measure A and B in counterbalanced rounds (AB, BA, AB, ...) into two stored runs of one session."""
    observer = observer or SilentObserver()
    if request.rounds < 2:
        raise StackbenchError(f"--rounds must be at least 2, got {request.rounds}", "Use --rounds 6 or more")
    session = new_id()
    prepared = prepare(request.run, session, observer)
    base = request.run.label or f"ab-{session[:8]}"
    orders = round_orders(request.rounds)
    arm_commands = {"a": request.command_a, "b": request.command_b}
    arms: dict[str, Measurement] = {}
    for arm, command in arm_commands.items():
        facts = {"ab": {"session": session, "arm": arm.upper(), "command": command, "prepare": request.prepare,
                        "rounds": request.rounds, "orders": orders}}
        arms[arm] = Measurement(store, prepared, observer, label=f"{base}-{arm}", target_text=str(request.run.target),
                                extra_facts=facts)
    observer.run_started(arms["a"].run_id, prepared.plan, prepared.target)
    commands = _CommandState(request.command_timeout)
    status = "failed"
    try:
        with signals_as_interrupt():
            for round_index, order in enumerate(orders):
                for arm in order.lower():
                    command = arm_commands[arm]
                    if on_command:
                        on_command(arm.upper(), command)
                    commands.run(command, f"--{arm}", configures=True)
                    if request.prepare:
                        commands.run(request.prepare, "--prepare", configures=False)
                    arms[arm].round(round_index, every_cell=True)
        status = "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        state = commands.interrupted()
        raise Interrupted(
            f"{interrupt_cause(interrupt)} stopped the ab session: {state}; the finished fio runs are stored as "
            f"runs {arms['a'].run_id[:12]} and {arms['b'].run_id[:12]} (incomplete) and the scratch file was removed",
            "Put the system in the configuration you want to keep before going on",
        ) from None
    except StackbenchError as error:
        status = "incomplete" if arms["a"].order else "failed"
        if commands.applied and isinstance(error, CommandFailed):
            error.what += f" ({commands.last_applied()})"
        raise
    finally:
        remove_scratch(prepared.target)
        for measurement in arms.values():
            measurement.finish(status)
    return AbResult(session, store.get_run(arms["a"].run_id), store.get_run(arms["b"].run_id), tuple(orders))
