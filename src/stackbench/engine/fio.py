"""Running fio: finding it, writing the job file for a workload, and running it so it can be stopped.

fio is the only I/O engine: stackbench never times I/O itself. Each cell is one fio process with a job file
we write, `--output-format=json+` on stdout (captured to a file so a large json+ document cannot fill a pipe
and stall fio), and its own process group, so Ctrl-C and SIGTERM reach us first and we stop fio cleanly
before removing the scratch file.

fio runs each job in a process of its own that calls setsid: a job process is in no process group of
ours, and a SIGKILL of fio's main process leaves it writing for the rest of its runtime (or hung on a lock
the main process held). So fio is only ever stopped by a signal it handles (SIGINT from us, SIGTERM from
the kernel when stackbench dies), on which it ends its jobs itself, and when it has to be killed its job
processes are killed with it.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence

from stackbench.base import processes, spawn
from stackbench import __version__
from stackbench.engine.fio_logs import log_options, read_logs
from stackbench.model.fio_result import Sample
from stackbench.engine.jobtext import render
from stackbench.base.errors import FioJobError, FioNotFound, FioOutputError
from stackbench.model.plan import Workload, check_ioengine
from stackbench.base.units import format_size

_INSTALL_FIX = "Install fio (Debian/Ubuntu: apt-get install fio) or point STACKBENCH_FIO at the fio binary"


def find_fio(explicit: str | None = None) -> str:
    """The fio binary: an explicit path, else $STACKBENCH_FIO, else `fio` on PATH."""
    candidate = explicit or os.environ.get("STACKBENCH_FIO") or "fio"
    resolved = shutil.which(candidate)
    if resolved is None:
        raise FioNotFound(f"fio was not found (looked for {candidate!r})", _INSTALL_FIX)
    return resolved


def fio_version(fio_path: str) -> str:
    """`fio-3.33` as fio prints it; the version is stored with every run because results differ by version."""
    try:
        completed = spawn.run(
            [fio_path, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as error:
        raise FioNotFound(f"cannot execute fio at {fio_path}: {error.strerror}", _INSTALL_FIX) from None
    except subprocess.TimeoutExpired:
        raise FioNotFound(f"{fio_path} --version did not answer within 30 s", _INSTALL_FIX) from None
    version = completed.stdout.strip().splitlines()[0] if completed.stdout.strip() else ""
    if completed.returncode != 0 or not version.startswith("fio-"):
        raise FioNotFound(f"{fio_path} does not behave like fio (--version printed {version!r})", _INSTALL_FIX)
    return version


SAMPLE_LOG_PREFIX = "cell"


def job_file(
    workload: Workload,
    filename: str,
    *,
    title: str | None = None,
    runtime: float | None = None,
    sample_logs: bool = True,
    unlink: bool = False,
    log_prefix: str = SAMPLE_LOG_PREFIX,
) -> str:
    """The fio job file for one cell. Every option is explicit so the stored job reproduces the cell.

    With `sample_logs`, fio also writes per-second IOPS/bandwidth/latency logs next to the job file
    (relative names, so the stored job file works wherever it is replayed). With `unlink`, fio removes the
    file when the job ends (fleet runs: the file is on another host, where our own cleanup is a round trip).
    `log_prefix` names the logs: a fleet run gives every host's job file its own, since fio's client writes
    all the hosts' logs into one directory.
    """
    options = [("ioengine", check_ioengine(workload.ioengine)), ("filename", filename),
               *_measure_options(workload, runtime), ("group_reporting", 1), *_rate_options(workload)]
    if unlink:
        options.append(("unlink", 1))
    if sample_logs:
        options += log_options(log_prefix)
    return render(f"stackbench {__version__}: {title or workload.name}",
                  [("global", options), (section_name(workload), _cell_options(workload))])


def section_name(workload: Workload, index: int | None = None) -> str:
    """The job's name in the job file (and in fio's JSON): `randwrite-4k-qd1`, numbered in a sweep."""
    name = f"{workload.rw}-{format_size(workload.bs).lower()}-qd{workload.iodepth}"
    return name if index is None else f"{index + 1:02d}-{name}"


def job_log_prefix(index: int) -> str:
    """The per-second logs' prefix of the `index`th job of a sweep job file: each job logs on its own."""
    return f"job{index + 1:02d}"


def sweep_job_file(workloads: Sequence[Workload], filename: str, *, title: str) -> str:
    """One job file measuring several cells one after the other in one fio process: each cell a job of its
    own with `stonewall`, so a job starts only when the one before it has ended and fio reports every job
    in its own group, with its own latency histogram and per-second logs (prefix `job_log_prefix(i)`).

    One process per round of a sweep rather than one per cell: one command, one job file and one output to
    keep per round. It saves processes, not seconds: fio 3.33's main loop spends about 0.3 s between two
    stonewalled jobs (plan.JOB_OVERHEAD_S), as much as a fio process of its own costs. fio gives each
    stonewalled job its own `jobs` entry (`groupid` = its index) whose `clat_ns` histogram counts exactly
    that job's writes (tests/engine/test_sweep_job_file.py).
    """
    sections: list[tuple[str, Sequence[tuple[str, object]]]] = [("global", [("filename", filename),
                                                                           ("group_reporting", 1)])]
    for index, workload in enumerate(workloads):
        sections.append((section_name(workload, index), [
            ("stonewall", 1), ("ioengine", check_ioengine(workload.ioengine)), *_measure_options(workload, None),
            *_rate_options(workload), *_cell_options(workload), *log_options(job_log_prefix(index)),
        ]))
    return render(f"stackbench {__version__}: {title}", sections)


def _measure_options(workload: Workload, runtime: float | None) -> list[tuple[str, object]]:
    """How long and how a cell writes: size, time, ramp, O_DIRECT, sync."""
    runtime_ms = int(round((runtime if runtime is not None else workload.runtime) * 1000))
    options: list[tuple[str, object]] = [
        ("size", workload.size),
        *([("time_based", 1)] if workload.time_based else []),  # else: the file once, runtime a cap
        ("runtime", f"{runtime_ms}ms"),
    ]
    if workload.ramp_time:
        options.append(("ramp_time", f"{int(round(workload.ramp_time * 1000))}ms"))
    options += [
        ("direct", int(workload.direct)),
        ("sync", "dsync" if workload.dsync else int(workload.sync)),
    ]
    return options


def _rate_options(workload: Workload) -> list[tuple[str, object]]:
    return [("rate_iops", int(workload.rate_iops))] if workload.rate_iops else []


def _cell_options(workload: Workload) -> list[tuple[str, object]]:
    return [("rw", workload.rw), ("bs", workload.bs), ("iodepth", workload.iodepth), ("numjobs", workload.numjobs)]


@dataclass(frozen=True)
class FioInvocation:
    """One finished fio process: what ran and everything it printed."""

    command: list[str]
    job_file: str
    stdout: str
    stderr: str
    exit_code: int
    started_at: datetime
    seconds: float
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    # fio --client: the servers' samples, by the log prefix of each server's job file (`client_logs`)
    client_samples: dict[str, dict[str, list[Sample]]] = field(default_factory=dict)
    # a sweep job file: each job's samples, by its log prefix (`job_logs`)
    job_samples: dict[str, dict[str, list[Sample]]] = field(default_factory=dict)
    # when fio began its measured window (after the ramp), epoch seconds, from its per-second logs: None
    # where it logged no full second (engine/fio_logs.py)
    measured_from: float | None = None


def run_fio(
    fio_path: str,
    job_text: str,
    *,
    on_tick: Callable[[float], None] | None = None,
    tick_seconds: float = 0.2,
    extra_args: tuple[str, ...] = (),
    workdir_parent: Path | None = None,
    extra_files: dict[str, str] | None = None,
    client: bool = False,
    client_logs: tuple[str, ...] = (),
    on_started: Callable[[int, Path], None] | None = None,
    job_logs: tuple[str, ...] = (),
) -> FioInvocation:
    """Run fio on a job file and wait, calling `on_tick(elapsed)` while it runs.

    KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one by the runner) stops fio — SIGINT first so it can
    finish writing, then SIGKILL, its job processes too — and is re-raised once fio is gone, so the caller's
    cleanup never races a still-writing fio. fio also stops when we die (Linux parent-death signal, SIGTERM,
    on which fio ends its jobs), so a SIGKILLed stackbench does not leave fio writing; the job directory lives
    in `workdir_parent`, which the run records beforehand, and is fio's working directory, which its job
    processes inherit: what the next command looks for (abandoned.py).
    `on_started(pid, job_directory)` is called before fio has its job: fio reads the job file from its
    standard input, which is written only once the call has returned, so what the caller records (the run's
    fio process) is recorded before fio can write a byte. If it raises, fio is stopped unstarted.
    `extra_files` (relative name -> text) are written next to the job file, for `extra_args` that name
    more job files (a fleet run gives each `--client` its own). With `client` (fio --client), fio runs with
    SIGPIPE ignored: one server's connection closing must end that server's part, not the whole client.
    `client_logs`: the log prefixes of those job files, whose per-second logs the servers send to the client
    (`FioInvocation.client_samples`). `job_logs`: the log prefixes of the jobs of a sweep job file, whose
    per-second logs are read one job at a time (`FioInvocation.job_samples`).
    """
    with tempfile.TemporaryDirectory(prefix="stackbench-job-", dir=workdir_parent) as workdir:
        job_path = Path(workdir) / "cell.fio"
        job_path.write_text(job_text)
        for name, text in (extra_files or {}).items():
            (Path(workdir) / Path(name).name).write_text(text)
        out_path = Path(workdir) / "stdout"
        err_path = Path(workdir) / "stderr"
        # fio --client sends its job files to the servers, so it is given them by name; a local fio reads
        # its job from stdin (`-`), the gate that holds it until on_started has returned
        gated = not client
        command = [fio_path, "--output-format=json+", "--eta=never", *extra_args, "-" if gated else str(job_path)]
        started = datetime.now(timezone.utc)
        clock = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            process = _start(command, Path(workdir), out, err, gated=gated, client=client, fio_path=fio_path)
            try:
                if on_started:
                    on_started(process.pid, Path(workdir))
                if gated:
                    _hand_over(process, job_text)
                with _exit_watch(process) as exited:
                    while not exited(tick_seconds):
                        if on_tick:
                            on_tick(time.monotonic() - clock)
            except BaseException:
                _stop(process)
                raise
        stdout = out_path.read_text(errors="replace")
        stderr = err_path.read_text(errors="replace")
        (samples, measured_from), client_samples, job_samples = _samples(
            Path(workdir), process.returncode, client_logs=client_logs, job_logs=job_logs)
    # Store the command with the job file name it will have when replayed by hand.
    return FioInvocation(
        command=[*command[:-1], "cell.fio"],
        job_file=job_text,
        stdout=stdout,
        stderr=stderr,
        exit_code=process.returncode,
        started_at=started,
        seconds=time.monotonic() - clock,
        samples=samples,
        client_samples=client_samples,
        job_samples=job_samples,
        measured_from=measured_from,
    )


_Logs = dict[str, list[Sample]]  # a log prefix's per-second samples, by job (or host)


def _start(command: list[str], workdir: Path, out: IO[bytes], err: IO[bytes], *, gated: bool, client: bool,
           fio_path: str) -> subprocess.Popen[bytes]:
    """fio started in its own session in the job directory, ended by SIGTERM if we die; a gated fio waits
    on its standard input for the job, a client ignores SIGPIPE."""
    try:
        return spawn.popen(
            command, stdout=out, stderr=err, stdin=subprocess.PIPE if gated else subprocess.DEVNULL,
            start_new_session=True, cwd=str(workdir), death_signal=signal.SIGTERM,
            child_setup=_ignore_sigpipe if client else None,
        )
    except OSError as error:
        raise FioNotFound(f"cannot start fio at {fio_path}: {error.strerror}", _INSTALL_FIX) from None


def _samples(workdir: Path, returncode: int | None, *, client_logs: tuple[str, ...],
             job_logs: tuple[str, ...]) -> tuple[tuple[_Logs, float | None], dict[str, _Logs], dict[str, _Logs]]:
    """The per-second logs of the job (with when it began measuring), of every --client server and of every
    job of a sweep; a failed fio run (or host) is reported from its output, not its logs, so its unreadable
    logs are none."""
    def logs(prefix: str, of_client: bool) -> _Logs:
        return own(prefix, of_client)[0]

    def own(prefix: str, of_client: bool) -> tuple[_Logs, float | None]:
        try:
            return read_logs(workdir, prefix, client=of_client)
        except FioOutputError:
            if returncode == 0:
                raise
            return {}, None

    return (own(SAMPLE_LOG_PREFIX, False), {prefix: logs(prefix, True) for prefix in client_logs},
            {prefix: logs(prefix, False) for prefix in job_logs})


@contextmanager
def _exit_watch(process: subprocess.Popen[bytes]) -> Iterator[Callable[[float], bool]]:
    """`exited(seconds)`: whether `process` has ended (reaped), waiting at most that long.

    On Linux it waits on a pidfd and wakes the moment the process ends; `Popen.wait(timeout)` polls with
    sleeps of up to 50 ms, which made every fio run look 20-40 ms longer than it was."""
    try:
        pidfd = os.pidfd_open(process.pid)  # type: ignore[attr-defined]  # Linux 5.3+, Python 3.9+
    except (AttributeError, OSError):
        pidfd = None

    def exited(seconds: float) -> bool:
        if pidfd is not None and not select.select([pidfd], [], [], seconds)[0]:
            return False
        try:
            process.wait(timeout=None if pidfd is not None else seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    try:
        yield exited
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _hand_over(process: subprocess.Popen[bytes], job_text: str) -> None:
    """Give a gated fio its job file on stdin; a fio that died meanwhile says why in its own output."""
    assert process.stdin is not None
    try:
        process.stdin.write(job_text.encode())
        process.stdin.close()
    except BrokenPipeError:
        pass


def _ignore_sigpipe() -> None:
    """fio --client: survive a server's connection closing (SIGPIPE ignored: EPIPE)."""
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT to fio (it ends its jobs and writes its output); after 5 s SIGKILL, to its job processes too."""
    for sig, grace in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            return
        if sig == signal.SIGKILL:  # they are in sessions of their own: nothing sent to fio's group reaches them
            for job in processes.children_of(process.pid):
                try:
                    processes.end(job, lambda pid: processes.parent_of(pid) == process.pid)
                except OSError:
                    pass
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def failure_from_output(invocation: FioInvocation, what: str) -> FioJobError:
    """A one-line error from a failed fio run, naming fio's own complaint and a fix for the common ones."""
    text = (invocation.stderr + "\n" + invocation.stdout).strip()
    complaint = ""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("{") and ("error" in line.lower() or "fio:" in line):
            complaint = line
            break
    if not complaint:
        complaint = next((l.strip() for l in text.splitlines() if l.strip() and not l.startswith("{")), "")
    return FioJobError(
        f"fio failed on {what} (exit {invocation.exit_code}){': ' + complaint[:200] if complaint else ''}",
        fix_for(complaint),
    )


def fix_for(complaint: str) -> str:
    lowered = complaint.lower()
    if "no space left" in lowered or "enospc" in lowered:
        return "Free space on the target or lower --size"
    if ("invalid argument" in lowered and "direct" in lowered) or "o_direct" in lowered:
        return "The file system does not support O_DIRECT (tmpfs before Linux 6.6, older ZFS): drop --direct"
    if "invalid argument" in lowered:
        return "The target rejected an option (often O_DIRECT on tmpfs): try without --direct, or another --ioengine"
    if "permission denied" in lowered:
        return "Run as a user that may write the target, or choose another --target"
    if "ioengine" in lowered or "engine" in lowered:
        return "This fio lacks that engine: pass --ioengine psync (or posixaio)"
    return "Run the stored job file by hand with fio to see the full message (stackbench show RUN --json)"
