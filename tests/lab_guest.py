"""The OpenZFS test guest for pytest: build it if missing (lab/build-guest.sh), boot it with the CURRENT
src/stackbench (lab/run-guest.sh), and hand back what it captured.

One boot per OpenZFS series per pytest session. Skips (with the reason) only when the machine cannot do it
at all: not root, or the guest is not built and the Debian mirror is unreachable. A build or boot that
fails is a test failure, never a skip.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAB_SCRIPTS = REPO / "lab"
SERIES = ("2.1", "2.3")
BUILD_TIMEOUT_S = 45 * 60
RUN_TIMEOUT_S = 20 * 60


def lab_dir() -> Path:
    return Path(os.environ.get("LAB", "/var/tmp/stackbench-lab"))


def mirror() -> str:
    if os.environ.get("MIRROR"):
        return os.environ["MIRROR"].rstrip("/")
    for source in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in source.read_text(errors="replace").splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split(":", 1)[1].strip().rstrip("/")
    return "http://deb.debian.org/debian"


def mirror_reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/dists/bookworm/Release", timeout=15) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass(frozen=True)
class GuestRun:
    series: str
    out: Path  # everything the guest returned: the probe's files at the top, raw/, lab/
    build_s: float  # seconds spent in build-guest.sh this session (a cached guest: seconds)
    run_s: float  # seconds of boot + pool + capture

    @property
    def facts(self) -> Path:
        return self.out

    @property
    def raw(self) -> Path:
        return self.out / "raw"

    def layout(self) -> dict[str, list[str]]:
        """role (data, special, log, cache, lvm) -> names of its disks: the kernel name (vdd, sda, nvme0n1) and,
        where the pool was given another, that name too (the cache's scsi-0QEMU_QEMU_HARDDISK_zcache)."""
        roles: dict[str, list[str]] = {}
        for line in (self.out / "lab" / "layout.txt").read_text().splitlines():
            role, device, given = line.split("\t")
            names = roles.setdefault(role, [])
            names += [device] if given.rsplit("/", 1)[-1] == device else [device, given.rsplit("/", 1)[-1]]
        return roles


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def mdadm_deb() -> Path | None:
    """Debian bookworm's mdadm package, for the guest's md raid1 (tests/stack/test_stack_guest.py): fetched
    once with `apt-get download` into the lab directory and given to the guest in the source tar, where
    guest-init.sh unpacks it under /run. The images stay as built (no mdadm in them: a new package there
    would mean rebuilding both guests). None when this machine cannot fetch it (no apt, or no mirror)."""
    debs = lab_dir() / "debs"
    cached = sorted(debs.glob("mdadm_*_amd64.deb"))
    if cached:
        return cached[-1]
    debs.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["apt-get", "download", "mdadm"], cwd=debs, capture_output=True, timeout=300, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    fetched = sorted(debs.glob("mdadm_*_amd64.deb"))
    return fetched[-1] if fetched else None


def source_tar(destination: Path, debs: tuple[Path, ...] = ()) -> Path:
    """A tar of the current src/stackbench (no bytecode), as the guest's probe must run this very code, and
    the packages in `debs` under debs/ (guest-init.sh unpacks them, never installs them)."""
    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if "__pycache__" in info.name or info.name.endswith(".pyc") else info

    with tarfile.open(destination, "w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(REPO / "src" / "stackbench", arcname="stackbench", filter=keep)
        for deb in debs:
            tar.add(deb, arcname=f"debs/{deb.name}")
    return destination


def boot_guest(series: str, work: Path) -> GuestRun:
    """Build the guest if needed, boot it once, return the capture. Skips or fails as the module says."""
    if os.geteuid() != 0:
        pytest.skip("the OpenZFS guest needs root (debootstrap, chroot, qemu disk images)")
    env = {**os.environ, "LAB": str(lab_dir()), "QUIET": "1", "CAPTURE": "quick"}
    built = (lab_dir() / f"openzfs-{series}" / "root.img").exists()
    if not built and not mirror_reachable(mirror()):
        pytest.skip(f"OpenZFS {series} guest not built in {lab_dir()} and the Debian mirror {mirror()} is unreachable")
    start = time.monotonic()
    build = subprocess.run([str(LAB_SCRIPTS / "build-guest.sh"), series], capture_output=True, text=True, env=env,
                           timeout=BUILD_TIMEOUT_S)
    build_s = time.monotonic() - start
    if build.returncode != 0:
        pytest.fail(f"lab/build-guest.sh {series} failed (exit {build.returncode}):\n{_tail(build.stdout, 10)}\n"
                    f"{_tail(build.stderr)}", pytrace=False)
    out = work / f"openzfs-{series}"
    start = time.monotonic()
    debs = tuple(deb for deb in [mdadm_deb()] if deb is not None)
    run = subprocess.run([str(LAB_SCRIPTS / "run-guest.sh"), series, str(out), str(source_tar(work / "src.tar", debs))],
                         capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    run_s = time.monotonic() - start
    if run.returncode != 0:
        console = out / "lab" / "console.log"
        tail = _tail(console.read_text(errors="replace")) if console.exists() else ""
        pytest.fail(f"lab/run-guest.sh {series} failed (exit {run.returncode}): {_tail(run.stderr, 5)}\n"
                    f"console tail:\n{tail}", pytrace=False)
    return GuestRun(series, out, build_s, run_s)
