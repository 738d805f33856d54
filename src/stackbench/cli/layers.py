"""`stackbench layers RUN1 RUN2 ...`: where in the stack performance is lost."""

from __future__ import annotations

from typing import Optional

import typer

from stackbench.cli.app import app
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, chosen_format, emit, open_store_from, split_list,
)


@app.command("layers")
def layers_command(
    runs: list[str] = typer.Argument(..., help="Runs from the bottom layer up (ids, prefixes or labels).", show_default=False),
    names: Optional[str] = typer.Option(None, "--names", help="Layer names, comma-separated: host,vm,vm+luks."),
    metric: str = typer.Option("iops", "--metric", help="iops or bw (MB/s)."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Show each layer's result per cell, the factor lost between neighbouring layers with its 95 %
    interval, and where the biggest gap the runs prove opens.

    Measure the same cells at every layer (host pool, zvol, inside the VM, with LUKS ...) with --runs 5 or
    more, then compare them. Each factor is tested as `compare` tests a change (Holm over every factor); with
    no gap proven, the output says how many runs per layer would tell one.

    Example:

        stackbench layers host-zfs vm-virtio vm-luks --names host,vm,vm+luks
    """
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.layers import layers_csv_table, layers_table

    store = open_store_from(db)
    gaps = layer_gaps([store.get_run(r) for r in runs], split_list([names]) if names else None, metric)
    emit(chosen_format(output_format, json_output), layers_table(gaps), gaps.to_json(), csv=layers_csv_table(gaps))
