"""MNT-STRICTATIME: an ext4, ext3 or xfs file system mounted with strict access times (neither `relatime` nor
`noatime` in its options).

With strict atime every read of a file writes its inode's access time: a read-mostly workload turns into
metadata writes, and on a journalled file system into journal commits. The kernel mounts with `relatime` by
default since 2.6.30, so strict atime is asked for (`strictatime` in fstab) or inherited from an old setup.
`noatime` saves a little more but changes what programs can observe (mail readers, tmpwatch), so the fix is
`relatime`, which keeps access times usable; `stackbench tune` tries `mount.atime` only with --allow semantic.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule

FS_TYPES = ("ext4", "ext3", "xfs")


def check(facts: Facts) -> Iterator[Finding]:
    for point, (source, fs_type, options) in sorted(facts.mount_options.items()):
        if fs_type not in FS_TYPES or "relatime" in options or "noatime" in options:
            continue
        yield RULE.finding(
            point, f"{fs_type} {source} on {point}: options {','.join(options)} (neither relatime nor noatime)",
            f"mount -o remount,relatime {point}, and relatime instead of strictatime in its /etc/fstab line",
            prove=f"stackbench tune -t {point} --knob mount.atime=relatime --allow semantic --rw read --bs 4k "
                  "--buffered --apply",
        )


FAILING = (
    {"mounts.txt": "/dev/sdb1 /srv/data ext4 rw,seclabel,data=ordered 0 0\n"},
)
PASSING = (
    {"mounts.txt": "/dev/sdb1 /srv/data ext4 rw,relatime,data=ordered 0 0\n"
                   "/dev/sdc1 /srv/logs xfs rw,noatime,attr2 0 0\n"
                   "tmpfs /tmp tmpfs rw,nosuid 0 0\n"},
)


RULE = Rule(
    id="MNT-STRICTATIME",
    title="Strict access times on an ext4 or xfs mount",
    checks="an ext4, ext3 or xfs mount with neither relatime nor noatime",
    severity="warn",
    rationale="Every read writes the inode's access time: reads become metadata writes and journal commits.",
    fix="Remount with relatime (the kernel's default), and put relatime in /etc/fstab",
    source="https://man7.org/linux/man-pages/man8/mount.8.html",
    check=check,
    doc=__doc__ or "",
    failing=FAILING,
    passing=PASSING,
)
