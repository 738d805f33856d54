"""A fleet run's hosts side by side: per cell, each host's value and the fleet's total, the slowest host named.

A total hides a slow host (ten nodes at 10 k IOPS and one at 2 k still sum to a fine number), so the upper
panel draws one bar per host in every cell, with the slowest host and the spread (1 - slowest / fastest,
from analysis/fleet.py, the numbers of the "Across hosts" table) written above the cell; the lower panel
draws the total stackbench computed from the hosts, on its own axis (a sum of N hosts on the hosts' axis
would flatten them). The values are the cells' own, as `show` and the table print them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.analysis.fleet import HostSpread, host_spread
from stackbench.base.errors import StackbenchError, UsageError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS
from stackbench.model.results import Cell, Run, is_fleet

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest


def _value(cell: Cell, metric: str) -> float:
    """IOPS, or MB/s (10^6 bytes per second), of the cell's result: the numbers the fleet table shows."""
    return cell.result.iops if metric == "iops" else cell.result.bw_bytes / 1e6


def _hosts_in_order(spreads: list[HostSpread], run: Run) -> list[str]:
    """The run's hosts in the order the user gave them (facts.fleet.hosts), then any other host seen."""
    given = [str(h) for h in ((run.facts or {}).get("fleet") or {}).get("hosts") or []]
    seen = [str(c.result.host) for s in spreads for c in s.hosts]
    return list(dict.fromkeys([*given, *seen]))


def hosts_figure(run: Run, metric: str = "iops") -> Figure:
    """Per cell of a fleet run: a bar per host (the slowest named above it with the spread), and the total."""
    if not is_fleet(run):
        raise StackbenchError(f"run {run.id[:12]} is not a fleet run: it was measured on one machine",
                              "Chart the hosts of a `stackbench run --hosts` run, or use --kind matrix")
    spreads = [s for s in host_spread(run) if s.hosts]
    if not spreads:
        raise StackbenchError(f"fleet run {run.id[:12]} has no host cell to draw",
                              "Chart a fleet run with finished cells (`stackbench show RUN`)")
    hosts = _hosts_in_order(spreads, run)
    unit = METRICS[metric].axis
    what = "IOPS" if metric == "iops" else "MB/s"
    gid = style.Gids()
    positions = list(range(len(spreads)))
    width = 0.8 / max(1, len(hosts))
    rotate = len(spreads) > 4
    with style.styled():
        drawing, (top, bottom) = style.new_drawing(6.4 + (0.8 if rotate else 0.0), 2, columns=1)
        tallest = 0.0
        for h_index, host in enumerate(hosts):
            xs, ys = [], []
            for position, spread in zip(positions, spreads):
                cell = next((c for c in spread.hosts if c.result.host == host), None)
                if cell is None:  # the host dropped out before this cell
                    continue
                xs.append(position - 0.4 + width * (h_index + 0.5))
                ys.append(_value(cell, metric))
            if not xs:
                continue
            tallest = max(tallest, *ys)
            style.bars(top, xs, ys, width * 0.92, color=style.color(h_index), hatch=style.hatch(h_index),
                       edgecolor="white", linewidth=0.5, label=host, gid=gid("series"))
        crowded = len(spreads) > 8
        for position, spread in zip(positions, spreads):
            slowest = spread.slowest
            note = (f"slowest: {slowest.result.host},\nspread {spread.spread * 100:.1f} %" if len(spread.hosts) > 1
                    else f"one host:\n{slowest.result.host}")
            top.text(position, tallest * 1.03, note, ha="center", va="bottom", fontsize=8.5 if crowded else 9.5,
                     rotation=90 if crowded else 0, linespacing=1.1, gid=gid("slowest"))
            if len(spread.hosts) > 1:  # outlined too, so the slowest bar stands out without reading the text
                h_index = hosts.index(str(slowest.result.host))
                top.bar(position - 0.4 + width * (h_index + 0.5), _value(slowest, metric), width * 0.92,
                        fill=False, edgecolor="#000000", linewidth=1.6, zorder=3)
        top.set_ylim(0, tallest * (1.6 if crowded else 1.28) if tallest > 0 else 1)
        top.set_ylabel(unit)
        top.set_title("each host (the slowest outlined, named above with the spread, 1 - slowest / fastest)",
                      fontsize=11.5)
        totals = [(position, _value(s.total, metric)) for position, s in zip(positions, spreads) if s.total]
        if totals:
            style.bars(bottom, [p for p, _ in totals], [v for _, v in totals], 0.5, color=style.PALETTE[-1],
                       edgecolor="white", linewidth=0.5, label="total", gid=gid("total"))
            peak = max(v for _, v in totals)
            for position, number in totals:
                bottom.text(position, number + peak * 0.02, f"{style.plain_number(number)} {what}", ha="center",
                            va="bottom", fontsize=9.5)
            bottom.set_ylim(0, peak * 1.18 if peak > 0 else 1)
        else:
            bottom.text(0.5, 0.5, "no total: no fio run in which every host reported", ha="center", va="center",
                        transform=bottom.transAxes)
        bottom.set_ylabel(unit)
        bottom.set_title(f"the fleet's total (the {len(hosts)} hosts' sum, computed by stackbench)", fontsize=11.5)
        labels = [s.pattern for s in spreads]
        for ax in (top, bottom):
            ax.set_xticks(positions, labels, rotation=30 if rotate else 0, ha="right" if rotate else "center")
            ax.set_xlim(-0.6, len(spreads) - 0.4)
            style.thousands(ax)
            ax.grid(axis="x", visible=False)
        drawing.legend(*top.get_legend_handles_labels(), loc="outside upper right", ncol=min(len(hosts), 6),
                       frameon=False, title="host")
        drawing.suptitle(f"{what} per host and the fleet's total", x=0.01, ha="left")
        style.footer(drawing, [run], extra=f"{len(hosts)} hosts: {', '.join(hosts)}")
    slow = "; ".join(f"{s.pattern}: {s.slowest.result.host}" for s in spreads)
    return Figure(
        kind="hosts",
        title=f"{what} per host and the total, fleet run {style.run_name(run)}",
        alt=f"Bars of {what} of each of the {len(hosts)} hosts ({', '.join(hosts)}) per cell, with the slowest "
            f"host named ({slow}), and the fleet's total per cell below, run {style.run_name(run)}.",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind hosts` (report/charts/kinds.py)."""
    run = request.runs[0]
    if not is_fleet(run):
        raise UsageError(f"run {run.id[:12]} is not a fleet run (it was measured on one machine), and "
                         "--kind hosts draws the hosts of a `stackbench run --hosts` run",
                         "Chart a fleet run, or use --kind matrix for this one")
    return hosts_figure(run, request.metric)
