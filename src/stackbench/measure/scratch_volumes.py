"""Scratch volumes: a ZFS dataset, a zvol or an LVM logical volume that `layers --auto` creates to write to
at a layer whose own volume holds data, and always removes.

The safety story, as abandoned.py's for scratch files:
1. a volume is written to the journal (one file per volume under $XDG_STATE_HOME/stackbench/scratch-volumes,
   with this process's pid, boot and start time) *before* the command that creates it runs, so a kill -9 at
   any moment leaves a record of what may exist;
2. the volume carries its token where only we put it: the ZFS user property `stackbench:scratch` or the LV
   tag `stackbench-scratch-TOKEN`, and its name holds the token too; it is removed only when that mark is
   there, by name, never recursively (a dataset someone put a snapshot or a child in is left, named);
3. removal runs in a `finally` (Ctrl-C, SIGTERM), and the next command that opens the store removes what a
   dead process left (`reap`), then the journal entry goes.

Standard library only, like the rest of the runner's safety code, and run as root in the lab guests.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from stackbench.base import spawn
from stackbench.base.errors import StackbenchError
from stackbench.base.output_files import Destination, write_file

PREFIX = "stackbench-scratch-"
ZFS_PROPERTY = "stackbench:scratch"
TIMEOUT_S = 120.0
DEVICE_WAIT_S = 20.0


@dataclass(frozen=True)
class ScratchVolume:
    kind: str  # zfs-dataset, zvol, lvm
    name: str  # tank/stackbench-scratch-TOKEN, guestvg/stackbench-scratch-TOKEN
    token: str
    mountpoint: str | None = None  # a dataset's own private directory, made for it

    @property
    def device(self) -> str | None:
        """The block device a zvol or LV is; None for a dataset."""
        return {"zvol": f"/dev/zvol/{self.name}", "lvm": f"/dev/{self.name}"}.get(self.kind)

    @property
    def tag(self) -> str:
        return f"{PREFIX}{self.token}"

    def by_hand(self) -> str:
        """The command that removes it, for a message when we could not."""
        if self.kind == "lvm":
            return f"lvremove {shlex.quote(self.name)}"
        return f"zfs destroy {shlex.quote(self.name)}"


def new_token() -> str:
    return secrets.token_hex(6)


def journal_dir() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "stackbench" / "scratch-volumes"


def _entry(volume: ScratchVolume) -> Path:
    return journal_dir() / f"{volume.token}.json"


def _record(volume: ScratchVolume) -> None:
    journal_dir().mkdir(parents=True, exist_ok=True)
    from stackbench.measure.abandoned import owner_record

    document = {"volume": asdict(volume), "process": owner_record(), "recorded_at": time.time()}
    write_file(_entry(volume), json.dumps(document, indent=1).encode(), force=False, private=True,
               destination=Destination("the scratch-volume journal", force=None,
                                       instead=f"remove {_entry(volume)} if no stackbench runs"))


def _forget(volume: ScratchVolume) -> None:
    try:
        os.unlink(_entry(volume))
    except FileNotFoundError:
        pass


def _run(*argv: str) -> tuple[bool, str, str]:
    """(succeeded, what it printed, the last line of its complaint on failure)."""
    try:
        done = spawn.run(list(argv), capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S, check=False,
                         env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, "", str(error)
    said = (done.stderr or done.stdout or "").strip().splitlines()
    return done.returncode == 0, done.stdout, (said[-1] if said else f"exit {done.returncode}")[:200]


def _create(volume: ScratchVolume, argv: list[str]) -> ScratchVolume:
    """Record, then create; a failed creation removes whatever part of it exists, and the record."""
    _record(volume)
    ok, _, said = _run(*argv)
    if not ok:
        problem = remove(volume)
        raise StackbenchError(f"could not create the scratch {volume.kind} {volume.name}: {said}"
                              + (f"; and {problem}" if problem else ""),
                              "Run as root, or leave this layer out" + ("" if problem else "; nothing was left behind"))
    if volume.device and not _wait_for(volume.device):
        remove(volume)
        raise StackbenchError(f"the scratch {volume.kind} {volume.name} was created but {volume.device} did not "
                              f"appear within {DEVICE_WAIT_S:g} s; it was removed", "Check that udev runs")
    return volume


def _wait_for(path: str) -> bool:
    end = time.monotonic() + DEVICE_WAIT_S
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return os.path.exists(path)


def create_dataset(pool: str, token: str) -> ScratchVolume:
    """A child dataset at the pool's root, with the pool's inherited settings, mounted on a private directory."""
    mountpoint = tempfile.mkdtemp(prefix=f"{PREFIX}{token}-")
    volume = ScratchVolume("zfs-dataset", f"{pool}/{PREFIX}{token}", token, mountpoint)
    return _create(volume, ["zfs", "create", "-o", f"{ZFS_PROPERTY}={token}", "-o", f"mountpoint={mountpoint}",
                            volume.name])


def create_zvol(pool: str, token: str, size: int, properties: dict[str, str]) -> ScratchVolume:
    """A sparse zvol of `size` bytes in the pool, with the given properties (the measured zvol's)."""
    volume = ScratchVolume("zvol", f"{pool}/{PREFIX}{token}", token)
    options = [word for key, value in sorted(properties.items()) for word in ("-o", f"{key}={value}")]
    return _create(volume, ["zfs", "create", "-s", "-V", str(size), "-o", f"{ZFS_PROPERTY}={token}", *options,
                            volume.name])


def create_lv(vg: str, token: str, size: int, thin_pool: str | None = None) -> ScratchVolume:
    """An LV from the volume group's free extents (or a thin LV in `thin_pool`), signatures wiped."""
    volume = ScratchVolume("lvm", f"{vg}/{PREFIX}{token}", token)
    where = ["-V", f"{size}b", "--thinpool", f"{vg}/{thin_pool}"] if thin_pool else ["-L", f"{size}b", vg]
    return _create(volume, ["lvcreate", "-q", "-y", "-W", "y", "--addtag", volume.tag, "-n", f"{PREFIX}{token}",
                            *where])


_MISSING = ("dataset does not exist", "Failed to find logical volume")


def _ours(volume: ScratchVolume) -> bool | None:
    """True: it exists and carries our token; False: it exists without it; None: it does not exist.
    OSError when that cannot be told (not root, the command missing)."""
    if shutil.which("lvs" if volume.kind == "lvm" else "zfs") is None:
        return None  # without the tool there is no such volume on this machine
    if volume.kind == "lvm":
        ok, out, said = _run("lvs", "--noheadings", "-o", "lv_tags", volume.name)
        marked = volume.tag in out.strip().split(",")
    else:
        ok, out, said = _run("zfs", "get", "-H", "-o", "value", ZFS_PROPERTY, volume.name)
        marked = out.strip() == volume.token
    if ok:
        return marked
    if any(missing in said for missing in _MISSING):
        return None
    raise OSError(said)


def remove(volume: ScratchVolume) -> str | None:
    """Remove the volume if it is ours, and its journal entry; None when done (or when it never came to
    exist), else what went wrong with the command that removes it by hand (the entry is then kept, for the
    next command to try again)."""
    return _removed(volume)[1]


def _removed(volume: ScratchVolume) -> tuple[bool, str | None]:
    """(whether it existed, what went wrong) of `remove`."""
    try:
        ours = _ours(volume)
    except OSError as error:
        return True, f"could not check the scratch {volume.kind} {volume.name} ({error}): `{volume.by_hand()}`"
    if ours is False:
        _forget(volume)
        return True, (f"{volume.name} does not carry stackbench's mark {volume.token}, so it was left alone; remove it "
                f"yourself if it is a leftover: `{volume.by_hand()}`")
    if ours:
        argv = ["lvremove", "-q", "-y", volume.name] if volume.kind == "lvm" else ["zfs", "destroy", volume.name]
        ok, _, said = _run(*argv)
        if not ok:
            return True, f"could not remove the scratch {volume.kind} {volume.name} ({said}): `{volume.by_hand()}`"
    if volume.mountpoint and os.path.basename(volume.mountpoint).startswith(PREFIX):
        try:
            os.rmdir(volume.mountpoint)
        except FileNotFoundError:
            pass
        except OSError as error:
            return bool(ours), (f"could not remove the directory {volume.mountpoint} ({error.strerror}): "
                                f"`rmdir {volume.mountpoint}`")
    _forget(volume)
    return bool(ours), None


def journal() -> list[tuple[ScratchVolume, dict[str, Any]]]:
    """Every recorded volume with the process that recorded it; unreadable entries are skipped."""
    found = []
    try:
        entries = sorted(journal_dir().glob("*.json"))
    except OSError:
        return []
    for entry in entries:
        try:
            document = json.loads(entry.read_text())
            found.append((ScratchVolume(**document["volume"]), dict(document["process"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def reap() -> list[str]:
    """Remove what processes that are gone (kill -9, a power cut) left; one line per volume."""
    recorded = journal()
    if not recorded:
        return []  # the usual case, at every store's opening: the cleanup's code is not even loaded
    from stackbench.measure.abandoned import is_gone

    notes = []
    for volume, process in recorded:
        if not is_gone(process):
            continue
        existed, problem = _removed(volume)
        if problem or existed:
            notes.append(problem or f"removed the scratch {volume.kind} {volume.name} that stackbench process "
                                    f"{process.get('pid')} left when it died")
    return notes
