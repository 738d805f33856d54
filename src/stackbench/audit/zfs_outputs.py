"""Parsers for what zpool, zfs, zdb and the kstats print, in the formats of OpenZFS 0.7 to 2.3.

Formats follow the knowledge base (section 2) and real captures under tests/data/zfs/: `zpool get -Hp` and
`zfs get -Hp` are tab-separated name/property/value/source; `zpool status` text nests vdevs by the spaces
after a tab, and class headers (`logs`, `special`, ...) sit at the pool's depth; `zpool status -j` (2.3+)
puts classes in sibling objects; the real per-vdev ashift is in `zdb -C` or, from 2.2, in vdev properties
(`zpool get ... all-vdevs`), never in the pool property `ashift`, which is only the hint for new vdevs.
A file that does not have the expected shape raises FactsFormatError naming the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stackbench.audit.errors import FactsFormatError

CLASS_HEADERS = {"special": "special", "logs": "logs", "cache": "cache", "dedup": "dedup", "spares": "spares",
                 "spare": "spares", "log": "logs"}
_INTERIOR = re.compile(r"^(mirror|raidz[123]?|draid[123]?(?::[\w:]+)?|replacing|spare|root)(-\d+)?$")


@dataclass
class Vdev:
    name: str
    type: str  # mirror, raidz1, raidz2, draid2, disk, file
    vdev_class: str  # normal, special, logs, cache, dedup, spares
    leaves: list[str] = field(default_factory=list)  # as zpool prints them: vdb, /dev/vdb1, ata-...-part3
    ashift: int | None = None
    ashift_source: str | None = None  # "zdb -C" or "vdev property"


def _vdev_type(name: str) -> str:
    match = _INTERIOR.match(name)
    if not match:
        return "disk"
    kind = match[1].split(":")[0]
    return {"raidz": "raidz1", "draid": "draid1"}.get(kind, kind)


def _tab_rows(text: str, file: str, fields: int) -> list[tuple[int, list[str]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("## "):
            continue
        parts = line.split("\t")
        if len(parts) < fields:
            raise FactsFormatError(file, number, f"expected {fields} tab-separated fields "
                                                 f"(name, property, value, source), got {len(parts)}")
        rows.append((number, parts))
    return rows


def strip_unit(value: str) -> str:
    """`-p` prints `fragmentation` without `%` and `dedupratio` without `x` only since 0.7: accept both."""
    return value[:-1] if value[-1:] in ("%", "x") and value[:-1].replace(".", "", 1).isdigit() else value


def parse_zpool_get(text: str, file: str = "zpool-get-Hp-all.txt") -> dict[str, dict[str, str]]:
    """`zpool get -Hp all`, or the column format of releases without -H/-p (before 0.6.5, zfs-fuse).

    The column format has a `NAME PROPERTY VALUE SOURCE` header per pool and human sizes (`123M`); its
    values are single words except where a source is `inherited from X`, which zpool properties never are.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].split()[:2] == ["NAME", "PROPERTY"]:
        pools: dict[str, dict[str, str]] = {}
        for number, line in enumerate(text.splitlines(), 1):
            words = line.split()
            if not words or words[:2] == ["NAME", "PROPERTY"]:
                continue
            if len(words) < 4:
                raise FactsFormatError(file, number, f"expected NAME PROPERTY VALUE SOURCE columns, got {line[:60]!r}")
            pools.setdefault(words[0], {})[words[1]] = strip_unit(" ".join(words[2:-1]))
        return pools
    pools = {}
    for _, parts in _tab_rows(text, file, 3):
        pools.setdefault(parts[0], {})[parts[1]] = strip_unit(parts[2])
    return pools


def parse_zfs_get(text: str, file: str = "zfs-get-Hp-all.txt") -> dict[str, dict[str, tuple[str, str]]]:
    """name -> property -> (value, source); a value may itself hold tabs (user properties)."""
    datasets: dict[str, dict[str, tuple[str, str]]] = {}
    for _, parts in _tab_rows(text, file, 4):
        datasets.setdefault(parts[0], {})[parts[1]] = ("\t".join(parts[2:-1]), parts[-1])
    return datasets


def parse_zpool_status(text: str, file: str = "zpool-status.txt") -> dict[str, list[Vdev]]:
    """Top-level vdevs per pool with their class and leaves, from the config section's indentation."""
    pools: dict[str, list[Vdev]] = {}
    pool: str | None = None
    pool_depth, current_class, in_config = -1, "normal", False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("pool:"):
            pool = stripped.split(":", 1)[1].strip()
            pools[pool] = []
            in_config = False
            continue
        if stripped.startswith("NAME") and "STATE" in stripped:
            if pool is None:
                raise FactsFormatError(file, number, "config section before any `pool:` line")
            in_config, pool_depth = True, -1
            continue
        if not in_config or pool is None:
            continue
        if not stripped or stripped.startswith("errors:"):
            in_config = False
            continue
        body = line.lstrip("\t")
        depth = len(body) - len(body.lstrip(" "))
        name = body.split()[0]
        if pool_depth < 0:
            if name != pool:
                raise FactsFormatError(file, number, f"expected the pool's own row {pool!r}, got {name!r}")
            pool_depth, current_class = depth, "normal"
            continue
        if depth == pool_depth and name in CLASS_HEADERS:
            current_class = CLASS_HEADERS[name]
            continue
        if depth <= pool_depth or (depth - pool_depth) % 2:
            raise FactsFormatError(file, number, f"unexpected indentation for {name!r}")
        if depth == pool_depth + 2:
            kind = _vdev_type(name)
            kind = "file" if kind == "disk" and name.startswith("/") and not name.startswith("/dev/") else kind
            pools[pool].append(Vdev(name=name, type=kind, vdev_class=current_class,
                                    leaves=[name] if kind in ("disk", "file") else []))
        elif pools[pool] and _vdev_type(name) == "disk":
            pools[pool][-1].leaves.append(name)
    if not pools and "no pools available" not in text:
        raise FactsFormatError(file, 1, "no `pool:` line, and not `no pools available`")
    return pools


def _json_leaves(vdev: dict[str, Any]) -> list[str]:
    children = vdev.get("vdevs") or {}
    if not children:
        return [vdev.get("path") or vdev.get("name", "?")] if vdev.get("vdev_type") in ("disk", "file", None) else []
    return [leaf for child in children.values() for leaf in _json_leaves(child)]


_JSON_CLASSES = {"special": "special", "dedup": "dedup", "logs": "logs", "l2cache": "cache", "spares": "spares"}
_FLAT_CLASSES = {"special": "special", "dedup": "dedup", "log": "logs", "l2cache": "cache", "spare": "spares"}


def _flat_vdevs(entries: list[dict[str, Any]]) -> list[Vdev]:
    """`--json-flat-vdevs`: every vdev at one level with a `parent`; top-level vdevs hang off the root, and
    class vdevs (special, log, l2cache) have no parent at all."""
    root = next((e.get("name") for e in entries if e.get("vdev_type") == "root"), None)
    children: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        children.setdefault(entry.get("parent"), []).append(entry)

    def leaves(entry: dict[str, Any]) -> list[str]:
        below = children.get(entry.get("name"), [])
        if not below:
            return [entry.get("path") or entry.get("name", "?")]
        return [leaf for child in below for leaf in leaves(child)]

    tops = [e for e in entries if e.get("vdev_type") != "root" and (e.get("parent") in (root, None))
            and (e.get("parent") == root or e.get("class", "normal") != "normal")]
    return [Vdev(e.get("name", "?"), _vdev_type(e.get("name", "")), _json_class(e), leaves(e)) for e in tops]


def _json_class(vdev: dict[str, Any]) -> str:
    """A vdev's `class` (normal, special, dedup, log, l2cache, spare) as this module names classes."""
    value = vdev.get("class", "normal")
    return _JSON_CLASSES.get(value) or _FLAT_CLASSES.get(value, "normal")


def parse_zpool_status_json(text: str, file: str = "zpool-status-j.txt") -> dict[str, list[Vdev]]:
    """`zpool status -j` (OpenZFS 2.3+): root vdev under `vdevs`, classes in sibling objects."""
    try:
        document = json.loads(text)
        pools = document["pools"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise FactsFormatError(file, None, f"not zpool status JSON ({error})") from None
    if not isinstance(pools, dict):
        raise FactsFormatError(file, None, "`pools` is not an object")
    result: dict[str, list[Vdev]] = {}
    try:
        for key, pool in pools.items():
            name = pool.get("name", key)
            flat = list((pool.get("vdevs") or {}).values())
            if any("parent" in v for v in flat):
                result[name] = _flat_vdevs(flat)
                continue
            vdevs: list[Vdev] = []
            roots = (pool.get("vdevs") or {}).values()
            for root in roots:
                for child in (root.get("vdevs") or {}).values():
                    vdevs.append(Vdev(child.get("name", "?"), _vdev_type(child.get("name", "")), _json_class(child),
                                      _json_leaves(child)))
            for section, vclass in _JSON_CLASSES.items():
                for child in (pool.get(section) or {}).values():
                    vdevs.append(Vdev(child.get("name", "?"), _vdev_type(child.get("name", "")), vclass,
                                      _json_leaves(child)))
            result[name] = vdevs
    except AttributeError as error:
        raise FactsFormatError(file, None, f"unexpected JSON shape ({error})") from None
    return result


@dataclass
class ZdbTopVdev:
    type: str
    ashift: int | None = None
    is_log: bool = False
    alloc_bias: str | None = None  # special, dedup (zdb prints it for allocation-class vdevs)
    paths: list[str] = field(default_factory=list)


def parse_zdb_config(text: str, file: str = "zdb-C.txt") -> dict[str, list[ZdbTopVdev]]:
    """Per pool, the top-level vdevs of `vdev_tree` (children[N] at its first level) with their ashift.

    `zdb -C POOL` prints one `MOS Configuration:`; `zdb -C` prints every cached pool as `NAME:` blocks.
    The pool is named by its `name: '...'` line; children order is vdev id order, not zpool status order,
    so callers match them to status vdevs by leaf paths.
    """
    result: dict[str, list[ZdbTopVdev]] = {}
    pool: str | None = None
    name_indent: int | None = None
    top_indent: int | None = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if match := re.match(r"^(\s+)name: '(.+)'$", line):
            if name_indent is None or len(match[1]) == name_indent:
                name_indent, pool, top_indent = len(match[1]), match[2], None
                result.setdefault(pool, [])
            continue
        if pool is None:
            continue
        if match := re.match(r"^(\s+)children\[\d+\]:", line):
            if top_indent is None:
                top_indent = len(match[1])
            if len(match[1]) == top_indent:
                result[pool].append(ZdbTopVdev(type="?"))
            continue
        if top_indent is not None and line.strip() and indent < top_indent:
            top_indent = None  # past the end of vdev_tree
        if top_indent is None or not result[pool] or indent <= top_indent:
            continue
        top = result[pool][-1]
        key, _, value = line.strip().partition(": ")
        value = value.strip("'")
        if indent == top_indent + 4:
            if key == "type":
                top.type = value
            elif key == "ashift" and value.isdigit():
                top.ashift = int(value)
            elif key == "is_log":
                top.is_log = value == "1"
            elif key == "alloc_bias":
                top.alloc_bias = value
        if key == "path":
            top.paths.append(value)
    return result


def parse_zpool_list(text: str, file: str = "zpool-list-Hpv.txt") -> tuple[dict[str, int], dict[tuple[str, str], tuple[int, int]]]:
    """Pool sizes, and per allocation class the summed size and allocation of its top-level rows.

    `zpool list -Hp -v` flattens the tree: pool rows start without a tab, vdev rows with one, and class
    headers are printed space-padded even under -H. Only rows with a numeric allocation count (leaves print
    `-` there), so a mirror and its leaves are not added twice.
    """
    sizes: dict[str, int] = {}
    space: dict[tuple[str, str], tuple[int, int]] = {}
    pool, vclass = None, "normal"
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        first = line.split()[0]
        if not line.startswith("\t") and first in CLASS_HEADERS and "\t" not in line:
            vclass = CLASS_HEADERS[first]
            continue
        fields = line.split("\t")
        if not line.startswith("\t"):
            if len(fields) < 3:
                raise FactsFormatError(file, number, f"expected a tab-separated pool row, got {line[:60]!r}")
            pool, vclass = fields[0], "normal"
            if fields[1].isdigit():
                sizes[pool] = int(fields[1])
            continue
        if pool is None:
            raise FactsFormatError(file, number, "vdev row before any pool row")
        if vclass != "normal" and len(fields) > 3 and fields[2].isdigit() and fields[3].isdigit():
            size, alloc = space.get((pool, vclass), (0, 0))
            space[(pool, vclass)] = (size + int(fields[2]), alloc + int(fields[3]))
    return sizes, space


def parse_kstat(text: str, file: str = "arcstats.txt") -> dict[str, int]:
    """`/proc/spl/kstat/zfs/arcstats`: kstat header, `name type data`, then `name type value` rows."""
    lines = text.splitlines()
    if len(lines) < 2 or lines[1].split() != ["name", "type", "data"]:
        raise FactsFormatError(file, 2, "expected the kstat header `name type data`")
    values = {}
    for number, line in enumerate(lines[2:], 3):
        parts = line.split()
        if len(parts) != 3:
            raise FactsFormatError(file, number, f"expected `name type value`, got {line[:60]!r}")
        try:
            values[parts[0]] = int(parts[2])
        except ValueError:
            continue  # kstats of type string or char; none the audit reads
    return values


def parse_module_parameters(text: str) -> dict[str, str]:
    """`grep -H . *` in /sys/module/zfs/parameters: `name:value` (enumerations list choices, active in [])."""
    return {name: value.strip() for name, sep, value in (line.partition(":") for line in text.splitlines()) if sep}


def parse_vdev_properties(text: str, file: str = "zpool-get-vdevs.txt") -> dict[str, dict[str, dict[str, str]]]:
    """`zpool get -Hp all POOL all-vdevs` per pool (2.2+), each after a `## POOL` line from the probe."""
    result: dict[str, dict[str, dict[str, str]]] = {}
    pool: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            pool = line[3:].strip()
            result[pool] = {}
            continue
        if not line.strip():
            continue
        parts = line.split("\t")
        if pool is None or len(parts) < 3:
            raise FactsFormatError(file, number, "expected `## POOL` then tab-separated vdev, property, value rows")
        result[pool].setdefault(parts[0], {})[parts[1]] = parts[2]
    return result
