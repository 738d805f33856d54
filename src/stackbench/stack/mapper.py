"""Device-mapper layers: dm-crypt and LVM settings from `dmsetup table` and `lvs`, the rest from sysfs.

What kind a dm device is comes from its uuid in sysfs (`CRYPT-LUKS2-...`, `LVM-...`), which needs no root;
the cipher, the crypt sector size and the LVM segment type come from `dmsetup table` and `lvs`, which do.
A dm-crypt key is never read: `dmsetup table` without --showkeys prints it as zeros or as a keyring
reference, and only its length (the key size) is kept.
"""

from __future__ import annotations

import json
from typing import Any

from stackbench.stack.layer import Layer
from stackbench.stack.tools import Tools

CRYPT_FLAGS = ("allow_discards", "same_cpu_crypt", "submit_from_crypt_cpus", "no_read_workqueue",
               "no_write_workqueue", "iv_large_sectors")


def parse_table(text: str) -> list[tuple[str, list[str]]]:
    """`dmsetup table NAME`: (target type, its arguments) per line (`0 262144 crypt aes-xts-plain64 ...`)."""
    rows = []
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0].isdigit() and words[1].isdigit():
            rows.append((words[2], words[3:]))
    return rows


def crypt_settings(args: list[str]) -> dict[str, Any]:
    """A crypt target's arguments: cipher, key, iv_offset, device, offset, [count, options...]."""
    if len(args) < 5:
        return {}
    cipher, key = args[0], args[1]
    if key.startswith(":"):  # :64:logon:cryptsetup:...: a key in the kernel keyring, its size in bytes
        size = key.split(":")[1]
        bits = int(size) * 8 if size.isdigit() else None
    else:
        bits = len(key) * 4 if key and key != "-" else None
    options = args[6:6 + int(args[5])] if len(args) > 5 and args[5].isdigit() else []
    sector = next((o.split(":", 1)[1] for o in options if o.startswith("sector_size:")), "512")
    return {
        "cipher": cipher, "key_bits": bits, "sector_size": int(sector) if sector.isdigit() else sector,
        "offset_sectors": int(args[4]) if args[4].isdigit() else args[4],
        "flags": [o for o in options if o in CRYPT_FLAGS],
    }


def crypt_type(uuid: str) -> str | None:
    """LUKS1, LUKS2, PLAIN, ... from a dm-crypt uuid `CRYPT-LUKS2-<uuid>-<name>` (cryptsetup sets it)."""
    parts = uuid.split("-")
    return parts[1] if len(parts) > 1 and parts[0] == "CRYPT" else None


def parse_lvs(text: str) -> list[dict[str, str]]:
    """`lvs --reportformat json`: one dict per LV (values as lvs prints them)."""
    try:
        reports = json.loads(text).get("report") or []
        return [lv for report in reports for lv in report.get("lv") or [] if isinstance(lv, dict)]
    except (ValueError, AttributeError):
        return []


LVS = ("lvs", "--reportformat", "json", "-a", "--units", "b", "--nosuffix", "-o",
       "vg_name,lv_name,lv_attr,segtype,pool_lv,stripes,stripe_size,lv_size,lv_kernel_major,lv_kernel_minor")


def lvm_settings(tools: Tools, dev: str, dm_name: str) -> tuple[dict[str, Any], list[str]]:
    """The LV whose kernel device number is `dev` (`253:2`): its VG, name, segment type and layout."""
    text, why = tools.output(*LVS)
    if text is None:
        vg, _, lv = dm_name.replace("--", "\0").partition("-")
        return {"vg": vg.replace("\0", "-"), "lv": lv.replace("\0", "-")}, [f"LV layout unknown: {why}"]
    major, _, minor = dev.partition(":")
    for lv in parse_lvs(text):
        if lv.get("lv_kernel_major") == major and lv.get("lv_kernel_minor") == minor:
            settings: dict[str, Any] = {"vg": lv.get("vg_name"), "lv": lv.get("lv_name"),
                                        "segtype": lv.get("segtype"),
                                        "provisioning": "thin" if lv.get("segtype") == "thin" else "thick"}
            if lv.get("pool_lv"):
                settings["thin_pool"] = lv["pool_lv"]
            if (lv.get("stripes") or "1") not in ("", "1"):
                settings["stripes"] = _number(lv["stripes"])
                settings["stripe_size"] = _number(lv.get("stripe_size") or "")
            return settings, []
    return {}, [f"lvs lists no LV with device {dev}"]


def vg_free(tools: Tools, vg: str) -> tuple[int | None, int | None, str]:
    """(free bytes, extent size, why unknown) of a volume group, for a scratch LV from free extents."""
    text, why = tools.output("vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o",
                             "vg_name,vg_free,vg_extent_size", vg)
    if text is None:
        return None, None, why
    try:
        rows = [r for report in json.loads(text).get("report") or [] for r in report.get("vg") or []]
    except (ValueError, AttributeError):
        rows = []
    for row in rows:
        if row.get("vg_name") == vg:
            free, extent = _number(row.get("vg_free") or ""), _number(row.get("vg_extent_size") or "")
            if isinstance(free, int) and isinstance(extent, int):
                return free, extent, ""
    return None, None, f"vgs does not list volume group {vg}"


def _number(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def dm_layer(name: str, dev: str, dm_name: str, uuid: str, tools: Tools) -> Layer:
    """A dm device as dm-crypt, lvm or dm, with the settings its table and lvs give (children: the caller)."""
    text, why = tools.output("dmsetup", "table", dm_name) if dm_name else (None, "no dm name in sysfs")
    table = parse_table(text) if text is not None else []
    settings: dict[str, Any] = {"dm_name": dm_name}
    notes = [] if text is not None else [f"device-mapper table unknown: {why}"]
    if uuid.startswith("CRYPT-"):
        kind = "dm-crypt"
        settings["type"] = crypt_type(uuid)
        crypt = [args for target, args in table if target == "crypt"]
        settings.update(crypt_settings(crypt[0]) if crypt else {})
    elif uuid.startswith("LVM-"):
        kind = "lvm"
        lvm, more = lvm_settings(tools, dev, dm_name)
        settings.update(lvm)
        notes += more
    else:
        kind = "dm"
    if table:
        settings["targets"] = sorted({target for target, _ in table})
    return Layer(kind, f"/dev/{name}", settings, devices=[name], notes=notes)
