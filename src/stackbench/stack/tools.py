"""The volume managers' commands the discovery reads (dmsetup, lvs, zpool, zfs, zdb), each run once.

Read-only commands only, each through base/spawn with a timeout. A command that is missing, needs root or
fails gives None and the reason, which the layer that wanted it shows as a note: a stack discovered
without root still has every layer, with fewer settings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from stackbench.base import spawn

TIMEOUT_S = 20.0


@dataclass
class Tools:
    """Commands run for one discovery, cached by their arguments (zpool status of a pool is read once
    even when three datasets of the pool are in the tree)."""

    timeout: float = TIMEOUT_S
    _cache: dict[tuple[str, ...], tuple[str | None, str]] = field(default_factory=dict)

    def output(self, *argv: str) -> tuple[str | None, str]:
        """(stdout, "") when the command succeeded, else (None, why not)."""
        if argv not in self._cache:
            self._cache[argv] = self._run(argv)
        return self._cache[argv]

    def _run(self, argv: tuple[str, ...]) -> tuple[str | None, str]:
        tool = shutil.which(argv[0], path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
        if tool is None:
            return None, f"{argv[0]} is not installed"
        try:
            done = spawn.run([tool, *argv[1:]], capture_output=True, text=True, errors="replace",
                             timeout=self.timeout, check=False, env={**os.environ, "LC_ALL": "C"})
        except subprocess.TimeoutExpired:
            return None, f"`{' '.join(argv)}` did not answer within {self.timeout:g} s"
        except OSError as error:
            return None, f"`{argv[0]}` could not run ({error.strerror or error})"
        if done.returncode != 0:
            said = (done.stderr or "").strip().splitlines()
            root = "" if os.geteuid() == 0 else " (it may need root)"
            return None, f"`{' '.join(argv)}` failed{root}: {said[-1][:160] if said else f'exit {done.returncode}'}"
        return done.stdout, ""
