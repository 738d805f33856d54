"""The plan options `run` and `ab` share (and `tune` will), declared once so every command accepts and
documents them alike, and taken by a command as one `PlanOptions` value (`with_plan_options`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

import typer

from stackbench.cli.common import FiniteRange, IntBetween, split_list
from stackbench.cli.option_groups import option_group
from stackbench.base.errors import UsageError
from stackbench.base.registry import one_of
from stackbench.model.plan import IOENGINES, Plan, build_plan
from stackbench.model.presets import DEFAULT_PRESET, PRESETS
from stackbench.base.units import parse_duration

# The --help panels of the plan's options: what each fio run does, and how many runs a cell gets.
WORKLOAD_PANEL = "Workload"
REPEATS_PANEL = "Repeats"

# What the help says of the presets is read from their records (model/presets.py), never listed by hand.
_PRESET_HELP = "; ".join(f"{p.name}: {p.description}" for p in PRESETS.values())
_RUNS_DEFAULTS = ", ".join(f"{p.name} {p.runs}" for p in PRESETS.values())
_ADAPTIVE = one_of((p.name for p in PRESETS.values() if p.max_runs is not None), "and")
_DIRECT_AUTO = one_of((p.name for p in PRESETS.values() if p.direct is None), "and")
_ENGINES = "".join(f", {p.name}: {p.ioengine}" for p in PRESETS.values() if p.ioengine)

PresetOption = typer.Option(
    None, "--preset", "-p", metavar="NAME", rich_help_panel=WORKLOAD_PANEL,
    help=f"Named plan (default {DEFAULT_PRESET}). {_PRESET_HELP}.",
)
BsOption = typer.Option(
    None, "--bs", metavar="SIZES", rich_help_panel=WORKLOAD_PANEL, help="Block sizes, comma-separated: 4k,64k,1m."
)
QdOption = typer.Option(
    None, "--qd", metavar="DEPTHS", rich_help_panel=WORKLOAD_PANEL, help="Queue depths (fio iodepth): 1,4,8,16."
)
RwOption = typer.Option(
    None, "--rw", metavar="PATTERNS", rich_help_panel=WORKLOAD_PANEL,
    help="Patterns, comma-separated: randread, randwrite, read, write, randrw or rw.",
)
SyncOption = typer.Option(
    None, "--sync/--no-sync", rich_help_panel=WORKLOAD_PANEL, show_default=False,
    help="O_SYNC writes (fio sync=1), as the SLOG and VM tests need.",
)
DirectOption = typer.Option(
    None, "--direct/--buffered", rich_help_panel=WORKLOAD_PANEL, show_default=False,
    help="O_DIRECT (fio direct=1) or buffered I/O. Default: the preset's; with " + _DIRECT_AUTO + ", O_DIRECT "
    "where the file system honours it, with a warning where it does not. ZFS < 2.3 still caches O_DIRECT reads in "
    "the ARC.",
)
SizeOption = typer.Option(
    None, "--size", metavar="SIZE", rich_help_panel=WORKLOAD_PANEL,
    help="Test file size, e.g. 1G (default from the preset).",
)
RuntimeOption = typer.Option(
    None, "--runtime", metavar="TIME", rich_help_panel=WORKLOAD_PANEL,
    help="Measured seconds of each fio run, after the ramp, e.g. 8 or 1m.",
)
RampOption = typer.Option(
    None, "--ramp", metavar="TIME", rich_help_panel=WORKLOAD_PANEL,
    help="Seconds each fio run runs before it measures (fio ramp_time).",
)
JobsOption = typer.Option(
    1, "--jobs", click_type=IntBetween(1, 256), metavar="N", rich_help_panel=WORKLOAD_PANEL,
    help="fio numjobs per cell (1-256)."
)
IoengineOption = typer.Option(
    None, "--ioengine", metavar="ENGINE", rich_help_panel=WORKLOAD_PANEL,
    help=f"fio ioengine, one of: {', '.join(IOENGINES)}. Default libaio{_ENGINES}.",
)
RateIopsOption = typer.Option(
    None, "--rate-iops", click_type=IntBetween(1), metavar="N", rich_help_panel=WORKLOAD_PANEL,
    help="Cap each cell at this many IOPS (1 or more; fio rate_iops): a known effect for checks.",
)
RunsOption = typer.Option(
    None, "--runs", "-n", click_type=IntBetween(1, 100), metavar="N", rich_help_panel=REPEATS_PANEL,
    help="Separate fio runs per cell (1-100; the unit the statistics count). Fixed mode; with --until-stable the "
    f"minimum. Default: the preset's ({_RUNS_DEFAULTS}).",
)
RepeatOption = typer.Option(None, "--repeat", click_type=IntBetween(1, 100), hidden=True, help="Old name of --runs.")
UntilStableOption = typer.Option(
    None, "--until-stable/--fixed", rich_help_panel=REPEATS_PANEL, show_default=False,
    help="Adaptive: after the minimum runs, add runs to cells whose 95 % interval across runs is wider than "
    f"--ci-target, up to --max-runs. Default for {_ADAPTIVE} unless --runs is given.",
)
CiTargetOption = typer.Option(
    5.0, "--ci-target", click_type=FiniteRange(0.1, 99), metavar="PCT", rich_help_panel=REPEATS_PANEL,
    help="Adaptive mode: interval half-width to reach, in % of the estimate (0.1-99).",
)
MaxRunsOption = typer.Option(
    None, "--max-runs", click_type=IntBetween(2, 100), metavar="N", rich_help_panel=REPEATS_PANEL,
    help="Adaptive mode: most runs per cell (2-100, default 10).",
)
MaxTimeOption = typer.Option(
    None, "--max-time", metavar="TIME", rich_help_panel=REPEATS_PANEL,
    help="Adaptive mode: cap on one cell's fio time, e.g. 2m.",
)


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    """The plan as the command line asks for it, before the preset fills in the rest: what `run`, `ab`
    and fleet runs take instead of eighteen parameters. Values are as typed (durations and lists are
    text); `plan()` checks and reads them."""

    preset: Optional[str] = None
    bs: Optional[list[str]] = None
    qd: Optional[list[str]] = None
    rw: Optional[list[str]] = None
    sync: Optional[bool] = None
    direct: Optional[bool] = None
    size: Optional[str] = None
    runtime: Optional[str] = None
    ramp: Optional[str] = None
    jobs: int = 1
    ioengine: Optional[str] = None
    rate_iops: Optional[int] = None
    runs: Optional[int] = None
    repeat: Optional[int] = None
    until_stable: Optional[bool] = None
    ci_target: float = 5.0
    max_runs: Optional[int] = None
    max_time: Optional[str] = None

    def plan(self) -> Plan:
        """The plan these options make of their preset (build_plan), or a UsageError naming the option."""
        if self.runs is not None and self.repeat is not None and self.runs != self.repeat:
            raise UsageError("--repeat is the old name of --runs; give one of them", "Use --runs N")
        return build_plan(
            self.preset,
            bs=split_list(self.bs),
            qd=_depths(split_list(self.qd)),
            rw=split_list(self.rw),
            sync=self.sync,
            direct=self.direct,
            size=self.size,
            runtime=parse_duration(self.runtime) if self.runtime else None,
            ramp=parse_ramp(self.ramp),
            numjobs=self.jobs,
            ioengine=self.ioengine,
            runs=self.runs if self.runs is not None else self.repeat,
            until_stable=self.until_stable,
            ci_target=self.ci_target / 100,
            max_runs=self.max_runs,
            max_time=parse_duration(self.max_time, option="max-time") if self.max_time else None,
            rate_iops=self.rate_iops,
        )


# What each fio run of a cell does, and how many runs a cell gets: PlanOptions' fields, as options.
WORKLOAD_OPTIONS = {
    "preset": PresetOption, "bs": BsOption, "qd": QdOption, "rw": RwOption, "sync": SyncOption,
    "direct": DirectOption, "size": SizeOption, "runtime": RuntimeOption, "ramp": RampOption, "jobs": JobsOption,
    "ioengine": IoengineOption, "rate_iops": RateIopsOption,
}
REPEAT_OPTIONS = {
    "runs": RunsOption, "repeat": RepeatOption, "until_stable": UntilStableOption, "ci_target": CiTargetOption,
    "max_runs": MaxRunsOption, "max_time": MaxTimeOption,
}

Command = TypeVar("Command", bound=Callable[..., Any])


def with_plan_options(*, repeats: bool) -> Callable[[Command], Command]:
    """The decorated command's `plan_options` parameter is a `PlanOptions` made of the workload options,
    and with `repeats` of the options that say how many runs a cell gets (a command that decides the runs
    itself, as `ab` does by rounds, leaves them out: their fields keep their defaults)."""
    return option_group("plan_options", PlanOptions, {**WORKLOAD_OPTIONS, **(REPEAT_OPTIONS if repeats else {})})


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
