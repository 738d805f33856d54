"""The rule registry: one module per rule, each exposing `RULE`. Ids are never reused."""

from __future__ import annotations

from importlib import import_module

from stackbench.audit.rule import Rule

MODULES = (
    "zp_special_single",
    "zp_ashift_low",
    "zp_capacity",
    "ds_sync_disabled",
    "ds_atime",
    "ds_compress_off",
    "ds_vbs_tiny",
    "ds_vbs_guest",
    "ds_ssb_size",
    "kvm_cache",
    "kvm_cpu_noaes",
    "kvm_bus",
    "zp_special_weaker",
    "zp_special_full",
    "zp_log_single",
    "zp_log_slow",
    "ds_sync_always_hdd",
    "arc_max_le_min",
    "arc_overcommit",
    "host_init_on_alloc",
    "kvm_aio_native",
    "kvm_iothread",
    "kvm_iothread_ignored",
    "zp_ashift_flash512",
    "host_nvme_lba",
    "zp_log_unused",
    "zp_log_oversize",
    "arc_small",
    "l2arc_hdr",
    "l2arc_write_max",
    "ds_vbs_raidz",
    "ds_qcow2_on_zfs",
    "ds_img_recordsize",
    "kvm_discard",
    "kvm_numa",
    "guest_lvm",
    "host_swap_zvol",
    "guest_cpu_noaes",
)
REGISTRY: tuple[Rule, ...] = tuple(import_module(f"{__name__}.{name}").RULE for name in MODULES)
BY_ID = {rule.id: rule for rule in REGISTRY}
