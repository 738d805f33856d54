"""What tune never tries, whatever the flags: the entries of model/unsafe_settings.py whose `tune` is not
`allowed`, as knob ids with the reason, so the plan can say why a setting is not tried and `--knob zfs.sync` is
refused with it. Every candidate of every knob (built-in or a user's) is checked against the same table
(`forbidden_value`); a knob whose own id is listed here is never in the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.model.unsafe_settings import FORBIDDEN_ANY_VALUE, FORBIDDEN_FOR_TUNE, UnsafeSetting, forbidden_for_tune
from stackbench.tune.knob import Knob

_PREFIXES = {"zfs": "zfs.", "zfs-param": "zfs.module.", "mount": "mount.", "zpool": "zpool.", "vm-disk": "kvm.disk."}


@dataclass(frozen=True)
class Forbidden:
    id: str  # the knob id it would have (`zfs.sync`, `mount.barrier`, `kvm.disk.cache`)
    values: str  # "any value" or which values (`unsafe`)
    reason: str
    safer: str
    audit_rule: str | None

    def to_json(self) -> dict[str, str | None]:
        return {"id": self.id, "values": self.values, "reason": self.reason, "safer": self.safer,
                "audit_rule": self.audit_rule}


def knob_id(setting: str) -> str:
    kind, _, name = setting.partition(":")
    return _PREFIXES.get(kind, kind + ".") + name


def _entry(setting: UnsafeSetting) -> Forbidden:
    values = "any value" if setting.tune == FORBIDDEN_ANY_VALUE else setting.unsafe.describe
    return Forbidden(knob_id(setting.setting), values, setting.risk, setting.safer, setting.audit_rule)


def _first_per_id(entries: list[Forbidden]) -> tuple[Forbidden, ...]:
    """One entry per knob id, the table's first (the most serious: zfs-sync-disabled before zfs-sync-not-always)."""
    chosen: dict[str, Forbidden] = {}
    for entry in entries:
        chosen.setdefault(entry.id, entry)
    return tuple(chosen.values())


FORBIDDEN: tuple[Forbidden, ...] = _first_per_id([_entry(setting) for setting in FORBIDDEN_FOR_TUNE])
FORBIDDEN_IDS = frozenset(entry.id for entry in FORBIDDEN if entry.values == "any value")


def forbidden_knob(knob_id_: str) -> Forbidden | None:
    """The entry that forbids a whole knob (`zfs.sync`), or None."""
    return next((entry for entry in FORBIDDEN if entry.id == knob_id_ and entry.values == "any value"), None)


def forbidden_value(knob: Knob, value: str) -> UnsafeSetting | None:
    """The unsafe-settings entry that forbids setting `knob` to `value`, or None when tune may try it."""
    for setting, setting_value in knob.setting_values(value):
        entry = forbidden_for_tune(setting, setting_value)
        if entry is not None:
            return entry
    return None
