"""`stack` as a terminal tree, a Markdown list and a CSV table: one layer per node or row, with its kind,
name, settings, counters (diskstats devices, ZFS names) and notes. Every text is data: Rich `Text` in the
tree, escaped in Markdown and in the table (report/tabular.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stackbench.base.units import format_bytes
from stackbench.report.formats.markdown import escape
from stackbench.report.tabular import Tabular
from stackbench.stack.layer import Layer, Stack

if TYPE_CHECKING:
    from rich.tree import Tree

_BYTES = ("size_bytes", "start_bytes", "chunk_bytes", "recordsize", "volblocksize", "volsize", "special_small_blocks",
          "refreservation", "available", "size", "free", "block_size", "stripe_size")


def _value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key in _BYTES and value >= 1024:
        return format_bytes(value)
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)


def settings_text(layer: Layer) -> str:
    """`logical_sector_size 512, scheduler mq-deadline, ...`: every setting, sizes in binary units."""
    return ", ".join(f"{key} {_value(key, value)}" for key, value in layer.settings.items()
                     if value is not None and not (key == "mount_point" and value == layer.name))


def counters_text(layer: Layer) -> str:
    """Where per-second telemetry reads this layer: `diskstats vda1; zpool tank vdev /dev/vda1`."""
    parts = []
    if layer.devices:
        parts.append("diskstats " + ",".join(layer.devices))
    if layer.zfs:
        parts.append("zfs " + " ".join(f"{key} {value}" for key, value in layer.zfs.items()))
    return "; ".join(parts)


def stack_tree(stack: Stack) -> Tree:
    """The tree for the terminal: kind in bold, the name as text, settings and notes dim below."""
    from rich.text import Text
    from rich.tree import Tree

    def node(layer: Layer) -> Text:
        text = Text()
        text.append(layer.label(), style="bold")
        if layer.label() != f"{layer.kind} {layer.name}":
            text.append(f" ({layer.kind})")
        details = [part for part in (settings_text(layer), counters_text(layer)) if part]
        for part in details:
            text.append(f"\n{part}", style="dim")
        for note in layer.notes:
            text.append(f"\nnote: {note}", style="yellow")
        return text

    def grow(branch: Tree, layer: Layer) -> None:
        for child in layer.children:
            grow(branch.add(node(child)), child)

    title = Text(f"stack under {stack.target}", style="bold")
    if stack.virtualization not in (None, "none"):
        title.append(f" (in a VM: {stack.virtualization})")
    tree = Tree(title)
    grow(tree.add(node(stack.root)), stack.root)
    return tree


def stack_markdown(stack: Stack) -> str:
    """A nested list, ready to paste into notes and issues; every text escaped."""
    vm = f" (in a VM: {escape(stack.virtualization)})" if stack.virtualization not in (None, "none") else ""
    lines = [f"**Stack under {escape(stack.target)}**{vm}", ""]
    for depth, layer in stack.root.walk():
        pad = "  " * depth
        detail = "; ".join(part for part in (settings_text(layer), counters_text(layer)) if part)
        lines.append(f"{pad}- **{escape(layer.kind)}** {escape(layer.name)}" + (f": {escape(detail)}" if detail else ""))
        lines += [f"{pad}  - note: {escape(note)}" for note in layer.notes]
    return "\n".join(lines) + "\n"


def stack_table(stack: Stack) -> Tabular:
    """One row per layer (depth first), for CSV: the depth says the tree."""
    rows = [[str(depth), layer.kind, layer.name, settings_text(layer), " ".join(layer.devices),
             " ".join(f"{k}={v}" for k, v in layer.zfs.items()), "; ".join(layer.notes)]
            for depth, layer in stack.root.walk()]
    return Tabular(headers=["depth", "kind", "name", "settings", "diskstats", "zfs", "notes"], rows=rows,
                   title=f"stack under {stack.target}")
