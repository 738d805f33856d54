"""In a VM, the layer under a virtual disk is on the host: what the host's captured facts (`stackbench
facts save` there) say about it, located by the audit's own rules (audit/storage.py, Facts.locate).

A guest disk is matched to one disk of the VM's config by its serial (Proxmox `serial=`), else by the name
libvirt gives it (`<target dev='vdb'>`), which the guest kernel usually but not always uses: how it was
matched is kept with the layer, and a disk that matches nothing gets a note instead of a guess.
"""

from __future__ import annotations

from typing import Any

from stackbench.audit.facts import Facts
from stackbench.audit.storage import KINDS
from stackbench.audit.vm import Vm, VmDisk
from stackbench.stack.devices import VIRTUAL_TRANSPORTS
from stackbench.stack.layer import Layer



def choose_vm(facts: Facts, vm: str | None) -> tuple[Vm | None, str]:
    """The VM the guest is, by --vm (VMID or domain name), or the only VM in the facts; else why not."""
    if vm is not None:
        chosen = [v for v in facts.vms if vm in (v.vmid, v.name, v.name.rsplit("/", 1)[-1].rsplit(".", 1)[0])]
        if not chosen:
            names = ", ".join(sorted(v.vmid for v in facts.vms)) or "none"
            return None, f"the host facts hold no VM {vm} (they hold: {names})"
        return chosen[0], ""
    if len(facts.vms) == 1:
        return facts.vms[0], ""
    return None, f"the host facts hold {len(facts.vms)} VM configs: name this VM with --vm"


def match_disk(vm: Vm, layer: Layer) -> tuple[VmDisk | None, str]:
    """The disk of `vm` that the guest's disk `layer` is, and how it was matched."""
    serial = layer.settings.get("serial")
    if serial:
        by_serial = [d for d in vm.disks if d.options.get("serial") == serial]
        if by_serial:
            return by_serial[0], f"serial {serial}"
    kernel_name = layer.name.rsplit("/", 1)[-1]
    by_name = [d for d in vm.disks if vm.kind == "libvirt" and d.key == kernel_name]
    if by_name:
        return by_name[0], f"libvirt's target name {kernel_name} (the guest kernel may name disks in another order)"
    return None, (f"no disk of {vm.name} has serial {serial}" if serial else
                  f"{layer.name} has no serial and {vm.name} names no disk {kernel_name}")


def host_layer(facts: Facts, vm: Vm, disk: VmDisk, how: str) -> Layer:
    """What `disk` is on the host: its kind of backing, with the zvol's or image's settings where the
    facts hold them."""
    location = facts.locate(vm, disk)
    settings: dict[str, Any] = {"kind": location.kind, "vm": vm.vmid, "vm_disk": disk.key, "bus": disk.bus,
                                "cache": disk.cache, "aio": disk.aio, "iothread": disk.iothread,
                                "image_format": disk.image_format, "matched_by": how}
    zfs: dict[str, str] = {}
    if location.dataset:
        zfs = {"pool": location.dataset.split("/", 1)[0], "dataset": location.dataset}
        for prop in ("volblocksize", "recordsize", "compression", "sync", "logbias", "primarycache"):
            value = facts.dataset_prop(location.dataset, prop)
            if value not in (None, "-"):
                settings[prop] = value
    if location.path:
        settings["path"] = location.path
    notes = [KINDS.get(location.kind, location.kind), "on the host: its counters are the host's, not this VM's"]
    return Layer("host-backing", location.where, {k: v for k, v in settings.items() if v is not None}, zfs=zfs,
                 notes=notes)


def attach_host(root: Layer, facts: Facts, vm_name: str | None) -> None:
    """Hang the host's view under every virtual disk of the tree (a note where it cannot be told)."""
    vm, why = choose_vm(facts, vm_name)
    for _depth, layer in root.walk():
        if layer.kind != "disk" or layer.settings.get("transport") not in VIRTUAL_TRANSPORTS:
            continue
        if vm is None:
            layer.notes.append(f"host backing unknown: {why}")
            continue
        disk, how = match_disk(vm, layer)
        if disk is None:
            layer.notes.append(f"host backing unknown: {how}")
        else:
            layer.children.append(host_layer(facts, vm, disk, how))
