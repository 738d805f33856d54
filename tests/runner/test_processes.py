"""base/processes.py's reading of /proc/PID/stat, the one parser the safety code, the conditions sampler and
the fleet's timing share, on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stackbench.base import processes
from stackbench.fleet.timing import process_age
from stackbench.probe import conditions

NAME = "a) (b c) d"  # what a process may call itself: spaces and parentheses, the last ')' not the name's end


def test_a_name_with_spaces_and_parentheses_does_not_shift_the_fields() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", f"open('/proc/self/comm', 'w').write({NAME!r}); print(flush=True); "
                               "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        child.stdout.readline()  # it has renamed itself
        assert processes.command_name(child.pid) == NAME
        fields = processes.stat_fields(f"/proc/{child.pid}/stat")
        assert fields is not None and fields[0] in ("S", "R")
        assert processes.parent_of(child.pid) == os.getpid() and processes.alive(child.pid)
        assert processes.start_ticks(child.pid) >= processes.start_ticks(os.getpid())
        ticks = conditions._stat_ticks(f"/proc/{child.pid}/stat")
        assert ticks is not None and ticks[0] == os.getpid() and ticks[1] >= 0 and ticks[2] == 0
    finally:
        child.stdin.close()
        child.wait(timeout=10)
    assert not processes.alive(child.pid) and processes.stat_fields(f"/proc/{child.pid}/stat") is None


def test_a_torn_or_missing_line_is_none(tmp_path: Path) -> None:
    torn = tmp_path / "stat"
    torn.write_text("301 (torn")
    assert processes.stat_fields(torn) is None and conditions._stat_ticks(str(torn)) is None
    assert processes.stat_fields(tmp_path / "gone") is None


def test_the_process_age_is_this_process_s() -> None:
    age = process_age()
    assert age is not None and 0 < age < 24 * 3600
