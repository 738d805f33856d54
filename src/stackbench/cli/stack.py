"""`stackbench stack TARGET`: the chain of layers under a path or a device, as a tree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import FormatOption, JsonOption, chosen_format, emit, target_path


@app.command("stack")
def stack_command(
    target: Path = typer.Argument(..., help="A file, directory or block device.", show_default=False,
                                  parser=target_path),
    host_facts: Optional[Path] = typer.Option(
        None, "--host-facts", help="In a VM: the host's saved facts (`stackbench facts save DIR` on the host), "
        "to show what each virtual disk is there.", show_default=False),
    vm: Optional[str] = typer.Option(
        None, "--vm", help="With --host-facts: this VM's VMID or libvirt domain name, when the facts hold several VMs.",
        show_default=False),
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Show every layer under TARGET, down to the disks: file system, dm-crypt, LVM, md, partitions, loop
    devices and their backing files, ZFS datasets, zvols, pools and vdevs, with the settings the audit reads
    (sector sizes, scheduler, read-ahead, cipher, ashift, recordsize, compression, sync, ...).

    Read-only; without root some settings (a dm-crypt cipher, an LVM layout) are unknown and the tree says
    so. Every run stores the same tree in its facts (`facts.stack`); `layers --auto TARGET` measures it.

    Examples:

        stackbench stack /srv/data

        stackbench stack /dev/zvol/tank/vm-100-disk-0 --json

        stackbench stack / --host-facts /tmp/host-facts --vm 100    # in a VM
    """
    from stackbench.base.errors import StackbenchError
    from stackbench.report.stack import stack_markdown, stack_table, stack_tree
    from stackbench.stack.discover import discover

    facts = None
    if host_facts is not None:
        from stackbench.audit.facts import load_facts

        if not host_facts.is_dir():
            raise StackbenchError(f"{host_facts} is not a directory of saved facts",
                                  "Save the host's with `stackbench facts save DIR` on the host and copy DIR here")
        facts = load_facts(host_facts)
        if not facts.vms:
            raise StackbenchError(f"{host_facts} holds no VM config (qemu-server/*.conf or libvirt/*.xml)",
                                  "Save the facts on the VM's host, where its config is")
    elif vm is not None:
        raise StackbenchError("--vm names a VM of the host's facts, and no --host-facts was given",
                              "Add --host-facts DIR, or leave out --vm")
    stack = discover(target, host_facts=facts, vm=vm)
    fmt = chosen_format(output_format, json_output)
    if fmt == "table":
        out.print(stack_tree(stack))
    elif fmt == "markdown":
        sys.stdout.write(stack_markdown(stack))
    else:
        emit(fmt, stack_table(stack), stack.to_json())
