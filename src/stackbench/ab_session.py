"""`stackbench ab`: configuration A, measure, configuration B, measure, alternating for N rounds.

Why a command of its own: two runs measured an hour apart differ by the machine's drift as much as by the
change (separate runs differed by 14-40 % here). Alternating A and B within rounds, and pairing the runs by
round in `compare`, takes drift that hits both arms of a round out of the verdict. Which arm goes first
alternates too (AB, BA, AB, ...: round_order.py says why), so that neither the second place in a round nor
what the previous measurement left behind favours one arm; the order is stored in both runs' facts
(`ab.orders`) for the order-effect diagnostic of `compare`. The commands are the
user's own shell commands (`zfs set compression=lz4 tank/vm`), run by /bin/sh exactly as given: they are
code the user hands over, never text stackbench builds.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Callable

from stackbench import spawn
from stackbench.errors import Interrupted, StackbenchError
from stackbench.results import Run, new_id
from stackbench.round_order import round_orders
from stackbench.runner import (
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


@dataclass(frozen=True)
class AbResult:
    session: str
    a: Run
    b: Run
    orders: tuple[str, ...] = ()  # each round's order, "AB" or "BA": the system is left as orders[-1] ends


def run_shell(command: str, what: str) -> None:
    """Run one of the user's commands; a non-zero exit stops the session with the command's own words."""
    try:
        done = spawn.run(
            ["/bin/sh", "-c", command], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise CommandFailed(
            f"the {what} command did not finish within {COMMAND_TIMEOUT_S} s", "Check the command by hand"
        ) from None
    except OSError as error:
        raise CommandFailed(f"cannot run /bin/sh for the {what} command: {error.strerror}", "Check /bin/sh") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise CommandFailed(
            f"the {what} command exited with {done.returncode}" + (f": {said[-1][:200]}" if said else ""),
            "Run it by hand to see why; nothing more was measured",
        )


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
    commands = {"a": request.command_a, "b": request.command_b}
    arms: dict[str, Measurement] = {}
    for arm, command in commands.items():
        facts = {"ab": {"session": session, "arm": arm.upper(), "command": command, "prepare": request.prepare,
                        "rounds": request.rounds, "orders": orders}}
        arms[arm] = Measurement(store, prepared, observer, label=f"{base}-{arm}", target_text=str(request.run.target),
                                extra_facts=facts)
    observer.run_started(arms["a"].run_id, prepared.plan, prepared.target)
    last_applied: str | None = None
    status = "failed"
    try:
        with signals_as_interrupt():
            for round_index, order in enumerate(orders):
                for arm in order.lower():
                    command = commands[arm]
                    if on_command:
                        on_command(arm.upper(), command)
                    run_shell(command, f"--{arm}")
                    last_applied = f"--{arm} ({command})"
                    if request.prepare:
                        run_shell(request.prepare, "--prepare")
                    arms[arm].round(round_index, every_cell=True)
        status = "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        state = f"the last command applied was {last_applied}" if last_applied else "no command had been applied"
        raise Interrupted(
            f"{interrupt_cause(interrupt)} stopped the ab session: {state}; the finished fio runs are stored as "
            f"runs {arms['a'].run_id[:12]} and {arms['b'].run_id[:12]} (incomplete) and the scratch file was removed",
            "Put the system in the configuration you want to keep before going on",
        ) from None
    except StackbenchError as error:
        status = "incomplete" if arms["a"].order else "failed"
        if last_applied and isinstance(error, CommandFailed):
            error.what += f" (the last command applied was {last_applied})"
        raise
    finally:
        remove_scratch(prepared.target)
        for measurement in arms.values():
            measurement.finish(status)
    return AbResult(session, store.get_run(arms["a"].run_id), store.get_run(arms["b"].run_id), tuple(orders))
