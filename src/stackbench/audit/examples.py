"""Rule examples: small saved-facts directories written by hand next to each rule, read with the real loader.

Each rule carries `failing` and `passing` examples (`Rule.failing`, `Rule.passing`), ruff's "example" and "use
instead": facts it must report and facts it must not. An example is what `stackbench facts save` would
write, file name -> text, so `facts_of` reads it through `load_facts` exactly as an audit reads a capture;
the helpers below only spare an example the tabs and columns of the real formats.
"""

from __future__ import annotations

import re
import tempfile
import textwrap
from pathlib import Path

from stackbench.audit.facts import Facts, load_facts
from stackbench.audit.rule import Example

__all__ = ["facts_of", "kstat", "tab_separated", "zpool_status"]


def facts_of(example: Example) -> Facts:
    """The example's files in a temporary directory, read by `load_facts`."""
    with tempfile.TemporaryDirectory(prefix="stackbench-example-") as tmp:
        for name, text in example.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return load_facts(Path(tmp))


def tab_separated(text: str) -> str:
    """Rows written with two or more spaces between fields, as the tab-separated lines of `zfs get -Hp`,
    `zpool get -Hp`, the probe's /sys/block and image lists (a single space stays inside a field)."""
    rows = [re.split(r" {2,}", line.strip()) for line in textwrap.dedent(text).splitlines() if line.strip()]
    return "".join("\t".join(row) + "\n" for row in rows)


def zpool_status(tree: str) -> str:
    """`zpool status` of one pool from its config tree, two spaces per level: the pool, its vdevs and leaves,
    and class headers (logs, special, cache, ...) at the pool's own depth, as zpool prints them."""
    lines = [line.rstrip() for line in textwrap.dedent(tree).splitlines() if line.strip()]
    pool = lines[0].strip()
    rows = []
    for line in lines:
        name = line.strip()
        if line == name and name != pool:
            rows.append(f"\t{name}")  # a class header: no state columns
        else:
            rows.append(f"\t{line:<12} ONLINE       0     0     0")
    return (f"  pool: {pool}\n state: ONLINE\nconfig:\n\n\tNAME         STATE     READ WRITE CKSUM\n"
            + "\n".join(rows) + "\n\nerrors: No known data errors\n")


def kstat(**values: int) -> str:
    """A /proc/spl/kstat/zfs file such as arcstats with these counters."""
    return ("13 1 0x01 147 39984 4398045716 8796093022208\nname                            type data\n"
            + "".join(f"{name:<32}4    {value}\n" for name, value in values.items()))
