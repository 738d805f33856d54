"""The probe: run the commands whose raw output the audit reads and save each to a file of a fixed name.

Raw text is saved, never parsed values, so a capture stays the evidence and a better parser can re-read an
old one. This module uses the standard library only: the lab runs it inside the OpenZFS test guest with
`python3 -m stackbench.audit.probe DIR`, where none of stackbench's dependencies are installed.

A command that is missing or fails is recorded in `probe.json` with its exit status and skipped; a missing
file means the fact is unknown, never an error. Files that cover several pools or devices are written by a
small shell loop that puts a `## <name>` line before each one (the only text the probe adds).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from stackbench.base import spawn
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "probe.json"
TIMEOUT_S = 120


@dataclass(frozen=True)
class Capture:
    file: str
    argv: tuple[str, ...]
    needs: str  # the executable that must exist for the capture to make sense
    why: str
    fallback: tuple[tuple[str, ...], ...] = ()  # older spellings, tried in order when argv fails


def _sh(script: str) -> tuple[str, ...]:
    return ("sh", "-c", script)


_POOLS = "zpool list -H -o name"
CAPTURES: tuple[Capture, ...] = (
    Capture("zfs-version.txt", ("zfs", "version"), "zfs", "OpenZFS userland and kernel module versions (0.8+)"),
    Capture("zfs-module-version.txt", ("cat", "/sys/module/zfs/version"), "cat", "module version, also on 0.7"),
    Capture("zpool-get-Hp-all.txt", ("zpool", "get", "-Hp", "all"), "zpool", "pool properties: capacity, ashift hint",
            fallback=(_sh(f'for p in $({_POOLS}); do zpool get all "$p" || exit $?; done'),)),  # no -H/-p before 0.6.5
    Capture("zpool-get-vdevs.txt",
            _sh(f'for p in $({_POOLS}); do echo "## $p"; zpool get -Hp all "$p" all-vdevs || exit $?; done'),
            "zpool", "per-vdev properties incl. the real ashift (OpenZFS 2.2+)"),
    Capture("zpool-list-Hpv.txt", ("zpool", "list", "-Hp", "-v"), "zpool", "pool and allocation-class sizes",
            fallback=(("zpool", "list", "-H"),)),
    Capture("zpool-status.txt", ("zpool", "status", "-P"), "zpool", "vdev tree with classes and device paths",
            fallback=(("zpool", "status"),)),  # -P is 0.6.4+
    Capture("zpool-status-j.txt", ("zpool", "status", "-j", "--json-int", "-P"), "zpool", "vdev tree as JSON (2.3+)"),
    Capture("zfs-get-Hp-all.txt", ("zfs", "get", "-Hp", "-o", "name,property,value,source", "all"), "zfs",
            "dataset and zvol properties with their source"),
    Capture("zdb-C.txt", ("zdb", "-C"), "zdb", "cached pool configs: the real per-vdev ashift before 2.2"),
    Capture("arcstats.txt", ("cat", "/proc/spl/kstat/zfs/arcstats"), "cat", "ARC size, c_min, c_max, L2ARC headers"),
    Capture("zfs-module-parameters.txt", _sh("cd /sys/module/zfs/parameters && grep -H . *"), "sh",
            "live module tunables (zfs_arc_max, l2arc_write_max, ...)"),
    # grep's exit 1 is "no match": no persistent zfs options is a fact (an empty file), not a failure
    Capture("modprobe-zfs.txt", _sh("grep -Hs . /etc/modprobe.d/*.conf | grep -w zfs; [ $? -le 1 ]"), "sh",
            "persistent module options"),
    Capture("sys-block-queue.txt",
            _sh('for d in /sys/block/*; do for f in physical_block_size logical_block_size rotational scheduler read_ahead_kb; '
                'do printf "%s/queue/%s\\t%s\\n" "$d" "$f" "$(cat "$d/queue/$f" 2>/dev/null)"; done; done'),
            "sh", "sector sizes, rotational flag, scheduler and read-ahead per disk"),
    Capture("lsblk.json", ("lsblk", "-J", "-b", "-O"), "lsblk", "block devices, partitions, LVM, parents"),
    # /dev/zvol/POOL/NAME links too: they tie a zd device (in /proc/swaps, a VM disk) to its zvol
    Capture("dev-disk-links.txt",
            _sh("for d in /dev/disk /dev/zvol; do [ -d \"$d\" ] || continue; find \"$d\" -type l -exec sh -c "
                "'for l; do printf \"%s\\t%s\\n\" \"$l\" \"$(readlink -f \"$l\")\"; done' _ {} + || exit; done"),
            "find", "by-id/by-path names in zpool status and /dev/zvol names resolved to kernel devices"),
    Capture("nvme-id-ns.txt",
            _sh('for n in /dev/nvme*n*; do case "$n" in *p*) continue;; esac; [ -b "$n" ] || continue; '
                'echo "## $n"; nvme id-ns -H "$n" || exit $?; done'),
            "nvme", "NVMe LBA formats (which sizes a namespace offers, which is in use)"),
    Capture("mounts.txt", ("cat", "/proc/self/mounts"), "cat", "which directories are ZFS datasets; mount options"),
    Capture("image-files.txt",
            _sh("awk '$3==\"zfs\"||$3==\"fuse.zfs\"{print $2}' /proc/self/mounts | while read -r m; do "
                "find \"$m\" -xdev -maxdepth 4 -type f \\( -name '*.qcow2' -o -name '*.raw' -o -name '*.img' "
                "-o -name '*.vmdk' -o -name '*.vdi' -o -name '*.qed' \\) -size +1M -printf '%s\\t%p\\n' 2>/dev/null; "
                "done; true"),
            "find", "VM image files on ZFS file systems (which datasets hold images)"),
    Capture("swaps.txt", ("cat", "/proc/swaps"), "cat", "swap devices (swap on a zvol)"),
    Capture("numa-nodes.txt", _sh("ls -d /sys/devices/system/node/node[0-9]*"), "sh", "NUMA nodes of the host"),
    Capture("cpuinfo.txt", ("cat", "/proc/cpuinfo"), "cat", "CPU flags: aes, hypervisor"),
    Capture("meminfo.txt", ("cat", "/proc/meminfo"), "cat", "MemTotal"),
    Capture("cmdline.txt", ("cat", "/proc/cmdline"), "cat", "kernel options such as init_on_alloc"),
    Capture("kernel-config.txt", _sh('grep -H "^CONFIG_INIT_ON_ALLOC" "/boot/config-$(uname -r)"'), "sh",
            "the kernel's build default for init_on_alloc"),
    Capture("dmesg-mem-auto-init.txt", _sh("dmesg | grep 'mem auto-init'"), "dmesg",
            "the kernel's own report of init_on_alloc"),
    Capture("uname.txt", ("uname", "-a"), "uname", "kernel release"),
    Capture("virt.txt", ("systemd-detect-virt",), "systemd-detect-virt", "host or VM"),
    # Which machine this is, for comparing stored audits of it (docs/audit.md, "Stored audits"): a hash of
    # /etc/machine-id with a fixed prefix, so the capture never holds the id itself (machine-id(5) asks that
    # it stay private); no machine-id, no file.
    Capture("machine-id-hash.txt",
            _sh('id=$(cat /etc/machine-id) && [ -n "$id" ] && printf "stackbench audit subject %s" "$id" | sha256sum'),
            "sha256sum", "which machine the facts are from, without its machine-id"),
)

# Configuration files copied as they are: (glob, directory in the capture).
CONFIG_FILES: tuple[tuple[str, str], ...] = (
    ("/etc/pve/qemu-server/*.conf", "qemu-server"),
    ("/etc/pve/storage.cfg", "pve"),
    ("/etc/libvirt/qemu/*.xml", "libvirt"),
)


def _run(capture: Capture) -> tuple[str, int | None, str, tuple[str, ...]]:
    """(stdout, exit status, stderr, the argv that produced them): the first spelling that succeeds."""
    if shutil.which(capture.needs) is None:
        return "", None, f"{capture.needs} not installed", capture.argv
    result: tuple[str, int | None, str, tuple[str, ...]] = ("", None, "", capture.argv)
    for argv in (capture.argv, *capture.fallback):
        try:
            done = spawn.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                                  errors="replace")
        except (OSError, subprocess.TimeoutExpired) as error:
            result = ("", None, str(error), argv)
            continue
        result = (done.stdout, done.returncode, done.stderr.strip(), argv)
        if done.returncode == 0:
            break
    return result


def save_facts(directory: Path, roots: dict[str, str] | None = None) -> dict[str, str]:
    """Run every capture and copy the config files; returns file -> status ("saved" or why not).

    All or nothing: outputs go to a staging directory and appear only when every capture is done (a new
    `directory` by one rename; into an existing one through stackbench/base/output_files.py's `publish`, every
    file or none, the manifest last). A full disk, Ctrl-C or any error removes what this call wrote, so no
    half-written capture is left to be audited. Nothing already in an existing `directory` is replaced: a
    file of the same name, or a device, pipe or link there, is refused before anything moves.
    `roots` maps a config glob's directory to another place (tests point /etc/pve at a fixture tree).
    Nothing is written outside `directory`.
    """
    if (directory / MANIFEST).exists():
        raise FileExistsError(f"{directory} already holds a capture ({MANIFEST})")
    if not directory.exists():  # a new directory appears whole, by one rename
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.partial-", dir=directory.parent))
        try:
            status = _capture_into(staging, roots)
            os.rename(staging, directory)
            return status
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    from stackbench.base.output_files import Destination, publish

    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=directory))
    made: list[Path] = []
    try:
        status = _capture_into(staging, roots)
        moves = sorted(((path, directory / path.relative_to(staging)) for path in staging.rglob("*")
                        if not path.is_dir()), key=lambda move: (move[0].name == MANIFEST, str(move[1])))
        for folder in sorted({final.parent for _, final in moves} - {directory}):
            if not os.path.lexists(folder):
                folder.mkdir()
                made.append(folder)
        publish(moves, destination=Destination("DIR", force=None, instead="give `facts save` a new directory"))
        shutil.rmtree(staging)
        return status
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _capture_into(directory: Path, roots: dict[str, str] | None) -> dict[str, str]:
    status: dict[str, str] = {}
    manifest: dict[str, object] = {
        "probe": "stackbench.audit.probe", "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": platform.node(), "kernel": platform.release(), "captures": {},
    }
    captures: dict[str, object] = {}
    for capture in CAPTURES:
        began = time.monotonic()
        stdout, code, error, argv = _run(capture)
        entry = {"command": list(argv), "exit": code, "seconds": round(time.monotonic() - began, 2),
                 "why": capture.why}
        if code == 0:  # an empty output is a fact too (no image files, no swap)
            (directory / capture.file).write_text(stdout)
            status[capture.file] = "saved" if stdout.strip() else "saved (empty)"
        else:
            first = error.strip().splitlines()[0] if error.strip() else f"exit {code}, no output"
            status[capture.file] = f"skipped: {first[:100]}"
            entry["error"] = error[:400]
        captures[capture.file] = entry
    for pattern, target in CONFIG_FILES:
        base, _, glob = pattern.rpartition("/")
        source_dir = Path((roots or {}).get(base, base))
        for path in sorted(source_dir.glob(glob)) if source_dir.is_dir() else []:
            (directory / target).mkdir(exist_ok=True)
            shutil.copyfile(path, directory / target / path.name)
            status[f"{target}/{path.name}"] = "saved"
            captures[f"{target}/{path.name}"] = {"copied_from": str(path)}
    manifest["captures"] = captures
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return status


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m stackbench.audit.probe DIR", file=sys.stderr)
        return 2
    for name, state in save_facts(Path(argv[0])).items():
        print(f"{name:<28} {state}")
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised in the lab guest
    sys.exit(main(sys.argv[1:]))
