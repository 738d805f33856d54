"""The plan options `run` and `ab` share, declared once so both commands accept and document them alike."""

from __future__ import annotations

from typing import Optional

import typer

from stackbench.cli.common import split_list
from stackbench.base.errors import UsageError
from stackbench.base.registry import one_of
from stackbench.model.plan import IOENGINES, Plan, build_plan
from stackbench.model.presets import DEFAULT_PRESET, PRESETS
from stackbench.base.units import parse_duration

# What the help says of the presets is read from their records (model/presets.py), never listed by hand.
_PRESET_HELP = "; ".join(f"{p.name}: {p.description}" for p in PRESETS.values())
_RUNS_DEFAULTS = ", ".join(f"{p.name} {p.runs}" for p in PRESETS.values())
_ADAPTIVE = one_of((p.name for p in PRESETS.values() if p.max_runs is not None), "and")
_DIRECT_AUTO = one_of((p.name for p in PRESETS.values() if p.direct is None), "and")
_ENGINES = "".join(f", {p.name}: {p.ioengine}" for p in PRESETS.values() if p.ioengine)

PresetOption = typer.Option(None, "--preset", "-p", help=f"Named plan (default {DEFAULT_PRESET}). {_PRESET_HELP}.")
BsOption = typer.Option(None, "--bs", help="Block sizes, comma-separated: 4k,64k,1m.")
QdOption = typer.Option(None, "--qd", help="Queue depths (fio iodepth): 1,4,8,16.")
RwOption = typer.Option(None, "--rw", help="Patterns: randread,randwrite,read,write (also randrw, rw).")
SyncOption = typer.Option(
    None, "--sync/--no-sync", help="O_SYNC writes (fio sync=1), as the SLOG and VM tests need.", show_default=False
)
DirectOption = typer.Option(
    None,
    "--direct/--buffered",
    help="O_DIRECT (fio direct=1) or buffered I/O. Default: the preset's; with " + _DIRECT_AUTO + ", O_DIRECT "
    "where the file system honours it, with a warning where it does not. ZFS < 2.3 still caches O_DIRECT reads in "
    "the ARC.",
    show_default=False,
)
SizeOption = typer.Option(None, "--size", help="Test file size, e.g. 1G (default from the preset).")
RuntimeOption = typer.Option(None, "--runtime", help="Measured seconds of each fio run, after the ramp, e.g. 8 or 1m.")
RampOption = typer.Option(None, "--ramp", help="Seconds each fio run runs before it measures (fio ramp_time).")
JobsOption = typer.Option(1, "--jobs", min=1, max=256, help="fio numjobs per cell (1-256).")
RunsOption = typer.Option(
    None,
    "--runs",
    "-n",
    min=1,
    max=100,
    help="Separate fio runs per cell (the unit the statistics count). Fixed mode; with --until-stable the "
    f"minimum. Default: the preset's ({_RUNS_DEFAULTS}).",
)
RepeatOption = typer.Option(None, "--repeat", min=1, max=100, hidden=True, help="Old name of --runs.")
UntilStableOption = typer.Option(
    None,
    "--until-stable/--fixed",
    help="Adaptive: after the minimum runs, add runs to cells whose 95 % interval across runs is wider than "
    f"--ci-target, up to --max-runs. Default for {_ADAPTIVE} unless --runs is given.",
    show_default=False,
)
CiTargetOption = typer.Option(
    5.0, "--ci-target", min=0.1, max=99, help="Adaptive mode: interval half-width to reach, in % of the estimate."
)
MaxRunsOption = typer.Option(None, "--max-runs", min=2, max=100, help="Adaptive mode: most runs per cell (default 10).")
MaxTimeOption = typer.Option(None, "--max-time", help="Adaptive mode: cap on one cell's fio time, e.g. 2m.")
IoengineOption = typer.Option(
    None, "--ioengine", help=f"fio ioengine, one of: {', '.join(IOENGINES)}. Default libaio{_ENGINES}."
)
RateIopsOption = typer.Option(
    None, "--rate-iops", min=1, help="Cap each cell at this many IOPS (fio rate_iops): a known effect for checks."
)


def plan_from_options(
    preset: Optional[str],
    bs: Optional[list[str]],
    qd: Optional[list[str]],
    rw: Optional[list[str]],
    sync: Optional[bool],
    direct: Optional[bool],
    size: Optional[str],
    runtime: Optional[str],
    ramp: Optional[str],
    jobs: int,
    runs: Optional[int],
    repeat: Optional[int],
    until_stable: Optional[bool],
    ci_target: float,
    max_runs: Optional[int],
    max_time: Optional[str],
    ioengine: Optional[str],
    rate_iops: Optional[int],
) -> Plan:
    if runs is not None and repeat is not None and runs != repeat:
        raise UsageError("--repeat is the old name of --runs; give one of them", "Use --runs N")
    return build_plan(
        preset,
        bs=split_list(bs),
        qd=_depths(split_list(qd)),
        rw=split_list(rw),
        sync=sync,
        direct=direct,
        size=size,
        runtime=parse_duration(runtime) if runtime else None,
        ramp=parse_ramp(ramp),
        numjobs=jobs,
        ioengine=ioengine,
        runs=runs if runs is not None else repeat,
        until_stable=until_stable,
        ci_target=ci_target / 100,
        max_runs=max_runs,
        max_time=parse_duration(max_time, option="max-time") if max_time else None,
        rate_iops=rate_iops,
    )


def parse_ramp(value: Optional[str]) -> float | None:
    """`--ramp`: a duration, where 0 (no ramp) is allowed as it is not for a runtime."""
    if value is None:
        return None
    if value.strip() in ("0", "0s"):
        return 0.0
    return parse_duration(value, option="ramp")


def _depths(values: list[str] | None) -> list[int] | None:
    if values is None:
        return None
    depths = []
    for value in values:
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"--qd needs whole numbers of at least 1, got {value!r}", "Use e.g. --qd 1,4,16")
        if int(value) > 4096:
            raise UsageError(f"--qd must be between 1 and 4096, got {value}", "Use e.g. --qd 1,4,16")
        depths.append(int(value))
    return depths
