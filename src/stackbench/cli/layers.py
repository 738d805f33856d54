"""`stackbench layers RUN1 RUN2 ...`: where in the stack performance is lost; `layers --auto TARGET` finds
the layers and measures them (cli/layers_auto.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, chosen_format, emit_report, open_store_from, split_list, target_path,
)
from stackbench.cli.plan_options import BsOption, PresetOption, QdOption, RunsOption, RuntimeOption, RwOption, SizeOption


@app.command("layers")
def layers_command(
    runs: Optional[list[str]] = typer.Argument(None, help="Runs from the bottom layer up (ids, prefixes or labels).",
                                               show_default=False),
    names: Optional[str] = typer.Option(None, "--names", help="Layer names, comma-separated: host,vm,vm+luks."),
    metric: str = typer.Option("iops", "--metric", help="iops or bw (MB/s)."),
    auto: Optional[Path] = typer.Option(
        None, "--auto", help="Find the layers under this path or device (`stackbench stack`) and propose a safe run "
        "at each; with --run, make them.", show_default=False, parser=target_path),
    run: bool = typer.Option(False, "--run", help="With --auto: make the proposed runs, then show the layers table."),
    preset: Optional[str] = PresetOption,
    bs: Optional[list[str]] = BsOption,
    qd: Optional[list[str]] = QdOption,
    rw: Optional[list[str]] = RwOption,
    size: Optional[str] = SizeOption,
    runtime: Optional[str] = RuntimeOption,
    fio_runs: Optional[int] = RunsOption,
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Show each layer's result per cell, the factor lost between neighbouring layers with its 95 %
    interval, and where the biggest gap the runs prove opens.

    Measure the same cells at every layer (host pool, zvol, inside the VM, with LUKS ...) with --runs 5 or
    more, then compare them. Each factor is tested as `compare` tests a change (Holm over every factor); with
    no gap proven, the output says how many runs per layer would tell one.

    With --auto TARGET the layers are found for you: each layer of the stack under TARGET gets a run where
    one is safe (scratch files, scratch datasets, zvols and LVs it makes and removes, read-only reads of
    devices that hold data) and a reason where none is; --run makes them (the plan options choose the plan).

    Examples:

        stackbench layers host-zfs vm-virtio vm-luks --names host,vm,vm+luks

        stackbench layers --auto /srv/data

        stackbench layers --auto /srv/data --run --rw randread,randwrite --bs 4k --qd 1,16 --runs 5
    """
    fmt = chosen_format(output_format, json_output)
    if auto is not None:
        from stackbench.cli.layers_auto import auto_layers

        auto_layers(auto, run=run, plan_words=(preset, bs, qd, rw, size, runtime, fio_runs), metric=metric, db=db,
                    fmt=fmt, given_runs=runs, names=names)
        return
    from stackbench.analysis.layers import layer_gaps
    from stackbench.base.errors import UsageError
    from stackbench.report.layers import layers_report

    if not runs:
        raise UsageError("layers needs the runs to compare, bottom layer first, or --auto TARGET",
                         "e.g. stackbench layers host vm, or stackbench layers --auto /srv/data")
    if run or any(word is not None for word in (preset, bs, qd, rw, size, runtime, fio_runs)):
        raise UsageError("--run and the plan options (--preset, --bs, ...) are for --auto TARGET, and none was given",
                         "Add --auto TARGET, or leave them out to compare stored runs")
    store = open_store_from(db)
    measured = [store.get_run(r) for r in runs]
    gaps = layer_gaps(measured, split_list([names]) if names else None, metric)
    emit_report(fmt, layers_report(gaps, measured))
