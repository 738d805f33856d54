"""DS-ATIME: a file system that holds VM image files has atime=on and relatime=off: every read of an image
writes an access time, a metadata write per read. Zvols have no atime and are never flagged. relatime
defaults to on since OpenZFS 2.2.0 (off before, so an untouched 2.1 pool has this finding).

Which file systems hold images: those the probe found image files on, or VM configs point at; when the
facts have neither, every file system with both settings is reported and the evidence says so."""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.versions import default_relatime, label


def _image_datasets(facts):
    if facts.image_files is None and not facts.vms:
        return None
    holders = {facts.dataset_of_path(path) for path in (facts.image_files or {})}
    holders |= {loc.dataset for _, _, loc in facts.vm_disks() if loc.kind == "zfs-file" and loc.dataset}
    return holders - {None}


def check(facts: Facts) -> Iterator[Finding]:
    holders = _image_datasets(facts)
    for name in facts.filesystems():
        relatime = facts.dataset_prop(name, "relatime")  # absent before 0.6.5 (and in zfs-fuse): no relatime at all
        if facts.dataset_prop(name, "atime") != "on" or relatime not in ("off", None):
            continue
        if holders is not None and name not in holders:
            continue
        relatime_default = default_relatime(facts.version)
        why = "holds VM image files" if holders is not None else "image files not listed in the facts: check it holds VM images"
        note = f"; relatime is off by default on {label(facts.version)}" if relatime_default == "off" else ""
        fix = f"zfs set atime=off {name}"
        yield RULE.finding(
            name,
            f"atime=on ({facts.dataset_source(name, 'atime')}), "
            f"{'relatime=off (' + str(facts.dataset_source(name, 'relatime')) + ')' if relatime else 'no relatime property'}; "
            f"{why}{note}", fix,
            prove=ab(RULE.id, mountpoint(facts, name), "--bs 4k --qd 4 --rw randread", fix),
        )


_IMAGES = "10737418240  /tank/images/web.qcow2"  # image-files.txt: size and path, as the probe's find prints them
FAILING = (
    {"image-files.txt": tab_separated(_IMAGES), "zfs-get-Hp-all.txt": tab_separated("""
        tank/images  type        filesystem    -
        tank/images  mountpoint  /tank/images  default
        tank/images  atime       on            default
        tank/images  relatime    off           default
    """)},
)
PASSING = (
    {"image-files.txt": tab_separated(_IMAGES), "zfs-get-Hp-all.txt": tab_separated("""
        tank/images  type        filesystem    -
        tank/images  mountpoint  /tank/images  default
        tank/images  atime       on            default
        tank/images  relatime    on            local
    """)},
)


RULE = Rule(
    id="DS-ATIME",
    title="atime updates on a dataset holding image files",
    checks="file system holding image files with atime=on and relatime=off",
    severity="info",
    rationale="Every read updates the access time: a metadata write per read.",
    fix="zfs set atime=off DATASET (image datasets)",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#atime-updates",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
