"""`run --hosts`: the fleet side of the run command (fleet/run.py measures; this checks and prints)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from stackbench.cli.app import err, error_line, out, warn
from stackbench.cli.common import open_store_from, print_run
from stackbench.base.errors import FleetHostsFailed, StackbenchError, UsageError
from stackbench.model.plan import MIN_AUTO_SIZE, Plan
from stackbench.model.results import Run, is_fleet
from stackbench.model.warning import WarningCode

if TYPE_CHECKING:
    from concurrent.futures import Future

    from stackbench.cli.fleet_options import FleetOptions
    from stackbench.fleet.preflight import Sessions
    from stackbench.fleet.ssh import Ssh


def run_fleet(
    *, plan: Plan, target: Path, fleet: FleetOptions, label: Optional[str], destroy_data: bool, db: Optional[str],
    fmt: str,
) -> None:
    """Check the host list, measure on every host, print the run and the spread between hosts.

    The hosts' sessions are opened first, with only light modules imported: their ssh handshakes and checks
    run while the store and the rest of stackbench load."""
    from stackbench.fleet import timing

    with timing.phase("sessions_open"):
        sessions, names, ssh = _open_sessions(plan=plan, target=target, fleet=fleet, destroy_data=destroy_data)
        local_fio = _ask_local_fio()  # `fio --version` takes tens of ms: asked while the store loads
    try:
        with timing.phase("store_open"):
            from stackbench.cli.progress import FleetProgressObserver
            from stackbench.fleet.run import FleetRequest, execute_fleet_run

            store = open_store_from(db)
            observer = FleetProgressObserver(plan, names, enabled=err.is_terminal and fmt == "table",
                                             quiet=fmt == "json")
    except BaseException:
        sessions.close()
        raise
    request = FleetRequest(hosts=names, target=target, plan=plan, label=label, ssh=ssh, sessions=sessions,
                           local_fio=local_fio)
    try:
        with observer:
            run = execute_fleet_run(store, request, observer)
    except FleetHostsFailed as failed:
        for line in failed.failures:
            error_line(line)
        raise
    with timing.phase("print"):
        print_run(store, run, fmt)
        print_spread(run, fmt)
        for warning in run.warnings:
            if warning not in observer.shown:
                warn(str(warning))
    if run.status == "partial":  # results are printed and stored, but a script must not take this as a pass
        dropped = sorted({w.subject for w in run.warnings if w.code == WarningCode.HOST_DROPPED})
        raise StackbenchError(
            f"run {run.id[:12]} is partial: {', '.join(dropped)} dropped out, the other hosts' results are kept",
            f"See the warnings above, fix {'it' if len(dropped) == 1 else 'them'} and run again",
        )


def _ask_local_fio() -> Future[tuple[str, str]]:
    """This machine's fio and its version (FioNotFound from `result()` when it has none), in a thread."""
    from concurrent.futures import ThreadPoolExecutor

    from stackbench.engine.fio import find_fio, fio_version

    def ask() -> tuple[str, str]:
        path = find_fio()
        return path, fio_version(path)

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(ask)
    finally:
        pool.shutdown(wait=False)


def _open_sessions(
    *, plan: Plan, target: Path, fleet: FleetOptions, destroy_data: bool,
) -> tuple[Sessions, list[str], Ssh]:
    """The host list and options checked (nothing contacted if they are wrong), then every host's session."""
    from stackbench.fleet.hosts import parse_hosts
    from stackbench.fleet.preflight import open_sessions
    from stackbench.fleet.ssh import Ssh
    from stackbench.model.results import new_id
    from stackbench.measure.safety import check_target_text

    if destroy_data:
        raise UsageError("--destroy-data cannot be used with --hosts: fleet runs only write new scratch files",
                         "Pass a directory (or a new file name) as --target")
    names = parse_hosts(fleet.hosts, fleet.hosts_file)
    ssh_config = fleet.ssh_config
    if ssh_config is not None:  # ssh reads it, not us: checked as if we did (never a FIFO, /dev/zero, 4 GiB)
        from stackbench.base.inputs import SSH_CONFIG, InputError, check_input

        if not Path(ssh_config).is_file():
            raise UsageError(f"--ssh-config {ssh_config} is not a file", "Pass an existing ssh config file")
        try:
            check_input(Path(ssh_config), SSH_CONFIG)
        except InputError as error:
            raise UsageError(f"--ssh-config: {error.what}", error.fix) from None
    check_target_text(target)
    if not target.is_absolute():
        raise UsageError(f"--target {target} is relative, and each host would read it from the login directory",
                         "Pass an absolute path with --hosts")
    ssh = Ssh.from_environment(ssh_config, fleet.connect_timeout)
    # a plan sized from the target (cache-exhaustion) is sized from every host's answer (fleet_size); until
    # then each host checks only that the smallest useful file fits
    size = MIN_AUTO_SIZE if plan.size_from_target else plan.size
    return open_sessions(ssh, names, target=str(target), size=size, scratch_id=new_id()), names, ssh


def print_spread(run: Run, fmt: str) -> None:
    """Under a run with per-host cells, on the terminal: the table across hosts naming the slowest."""
    if fmt != "table" or not is_fleet(run):
        return
    from stackbench.analysis.fleet import host_spread
    from stackbench.cli.common import emit
    from stackbench.report.fleet import spread_table

    out.print()
    emit(fmt, spread_table(host_spread(run)), None)
