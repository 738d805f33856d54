"""HOST-INIT-ON-ALLOC: the kernel zeroes every page it allocates (init_on_alloc), which "can lower ARC
throughput considerably" (OpenZFS workload tuning docs).

It is on when the command line says init_on_alloc=1, or when the kernel was built with
CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y and the command line does not turn it off. Distribution kernels are
built that way: Ubuntu's (openzfs#9910, which measured about 40 % less uncached `zfs send` throughput) and
Debian 12's (6.1.0-56-amd64 in the lab guest: the config line and `heap alloc:on` in its boot log).

Sources, most direct first: /proc/cmdline (the last init_on_alloc= wins, values as the kernel's kstrtobool
reads them); the kernel's own boot line `mem auto-init: ... heap alloc:on|off` (dmesg), which reports the
state in force; the build default from /boot/config-$(uname -r). The evidence names the source.
init_on_alloc=0 on the command line always silences the rule.

It is a hardening option: turning it off is a security trade-off, so the finding is info.
"""

import re
from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule

_TRUE, _FALSE = ("1", "y", "on"), ("0", "n", "off")


def cmdline_value(cmdline):
    """(the last readable init_on_alloc= on the command line as a bool, that word), or (None, None)."""
    value, written = None, None
    for word in (cmdline or "").split():
        key, sep, raw = word.partition("=")
        if key == "init_on_alloc" and sep and raw.lower().startswith(_TRUE + _FALSE):
            value, written = raw.lower().startswith(_TRUE), word
    return value, written


def _state(facts):
    """(on, evidence) from the most direct source that says anything."""
    explicit, word = cmdline_value(facts.cmdline)
    if explicit is not None:
        return explicit, f"{word} in /proc/cmdline"
    match = re.search(r"heap alloc:(\w+)", facts.mem_auto_init or "")
    if match:
        return match[1] == "on", (f"kernel log: {facts.mem_auto_init.strip()!r} (dmesg), "
                                  "no init_on_alloc= in /proc/cmdline")
    if facts.kernel_config.get("CONFIG_INIT_ON_ALLOC_DEFAULT_ON") == "y":
        return True, ("CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y (kernel config: on by default), "
                      "no init_on_alloc= in /proc/cmdline")
    return False, ""


def check(facts: Facts) -> Iterator[Finding]:
    on, evidence = _state(facts)
    if not on:
        return
    change = "reboot with init_on_alloc=0 on the kernel command line"
    target = mountpoint(facts, next(iter(facts.pools))) if facts.pools else "<a directory on ZFS>"
    yield RULE.finding(
        "kernel", evidence,
        "add init_on_alloc=0 to the kernel command line if the security trade-off is acceptable (GRUB: "
        "GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub; Proxmox with systemd-boot: /etc/kernel/cmdline, "
        "then proxmox-boot-tool refresh)",
        prove=ab(RULE.id, target, "--bs 1m --qd 4 --rw read", change),
    )


_BUILT_ON = "/boot/config-6.1.0-18-amd64:CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y\n"  # the probe's grep -H
FAILING = (
    {"cmdline.txt": "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/sda1 ro init_on_alloc=1\n"},
    {"cmdline.txt": "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/sda1 ro quiet\n", "kernel-config.txt": _BUILT_ON},
)
PASSING = (
    {"cmdline.txt": "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/sda1 ro init_on_alloc=0\n",
     "kernel-config.txt": _BUILT_ON},
)


RULE = Rule(
    id="HOST-INIT-ON-ALLOC",
    title="Kernel zeroes every allocation",
    checks="init_on_alloc on: command line, the kernel's `mem auto-init` line, or "
           "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y without init_on_alloc=0",
    severity="info",
    rationale="Zeroing every page the ARC allocates costs memory bandwidth.",
    fix="init_on_alloc=0 on the kernel command line",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
