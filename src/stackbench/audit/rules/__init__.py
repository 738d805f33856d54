"""The rule registry: one module per rule, each exposing `RULE` (audit/rule.py) with its examples, and its
name in `MODULES`: nothing else to touch (docs/architecture.md, "Where a new thing goes"). Ids are never
reused."""

from __future__ import annotations

from importlib import import_module

from stackbench.audit.rule import Rule

# In the order `--list-rules` and docs/audit.md show them: pools, datasets, ARC, L2ARC, host, VMs, guests.
MODULES = (
    "zp_special_single",
    "zp_special_weaker",
    "zp_special_full",
    "zp_ashift_low",
    "zp_ashift_flash512",
    "zp_capacity",
    "zp_log_single",
    "zp_log_slow",
    "zp_log_unused",
    "zp_log_oversize",
    "ds_sync_disabled",
    "ds_sync_always_hdd",
    "ds_ssb_size",
    "ds_vbs_tiny",
    "ds_vbs_raidz",
    "ds_vbs_guest",
    "ds_compress_off",
    "ds_atime",
    "ds_qcow2_on_zfs",
    "ds_img_recordsize",
    "arc_overcommit",
    "arc_max_le_min",
    "arc_small",
    "l2arc_hdr",
    "l2arc_write_max",
    "host_init_on_alloc",
    "host_nvme_lba",
    "host_swap_zvol",
    "blk_readahead_off",
    "mnt_strictatime",
    "kvm_cache",
    "kvm_aio_native",
    "kvm_bus",
    "kvm_iothread",
    "kvm_iothread_ignored",
    "kvm_cpu_noaes",
    "kvm_discard",
    "kvm_numa",
    "guest_cpu_noaes",
    "guest_lvm",
)
REGISTRY: tuple[Rule, ...] = tuple(import_module(f"{__name__}.{name}").RULE for name in MODULES)
BY_ID = {rule.id: rule for rule in REGISTRY}
