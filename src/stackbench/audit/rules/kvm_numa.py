"""KVM-NUMA: the host has more than one NUMA node and a VM does not have NUMA enabled (Proxmox `numa: 0`
or absent, which is the default; libvirt without `<cpu><numa>` or `<numatune>`).

With NUMA on, the guest sees the host's topology, so its memory stays local to the socket that runs its
vCPUs; Proxmox also needs it for CPU and memory hotplug. The Proxmox guide advises `numa: 1` with as many
sockets as the host has nodes. Info: a VM that fits in one node loses little. The node count is
/sys/devices/system/node/node* of the host the facts came from; without it the rule stays silent.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    if not facts.numa_nodes or facts.numa_nodes < 2:
        return
    for vm in facts.vms:
        if vm.numa is True:
            continue
        written = "numa: 0" if vm.numa is False else ("no numa: line (default 0)" if vm.kind == "proxmox"
                                                       else "no <cpu><numa> or <numatune>")
        yield RULE.finding(
            vm.name,
            f"host has {facts.numa_nodes} NUMA nodes (/sys/devices/system/node); {vm.name}: {written}",
            vm.fix(f"qm set VMID --numa 1 --sockets {facts.numa_nodes} (cores per socket as needed)",
                   "virsh edit NAME: <cpu><numa> cells matching the host's nodes, or <numatune>"),
            vm=vm.name,
        )


_TWO_NODES = "/sys/devices/system/node/node0\n/sys/devices/system/node/node1\n"
_VM = "cores: 8\nmemory: 65536\nsockets: 2\n"
FAILING = ({"numa-nodes.txt": _TWO_NODES, "qemu-server/100.conf": _VM},)  # no numa: line, Proxmox's default 0
PASSING = ({"numa-nodes.txt": _TWO_NODES, "qemu-server/100.conf": _VM + "numa: 1\n"},)


RULE = Rule(
    id="KVM-NUMA",
    title="VM without NUMA on a multi-node host",
    checks="VM without NUMA on a host with more than one NUMA node",
    severity="info",
    rationale="NUMA keeps VM memory local to its socket; Proxmox needs it for hotplug.",
    fix="numa: 1 with sockets = host nodes",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_cpu",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
