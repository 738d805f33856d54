"""The agent runs on the hosts' own python3: every interpreter from 3.8 on that is installed here answers
the preflight (the shipped stackbench modules included); an older one is refused with the fix."""

from __future__ import annotations

import glob
import subprocess
from pathlib import Path

import pytest

from stackbench.fleet.agent import BOOTSTRAP
from stackbench.fleet.ssh import answer_in, explain, payload

PYTHONS = sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3") + glob.glob("/usr/bin/python3.*[0-9]"))


def _version(python: str) -> tuple[int, int]:
    out = subprocess.run([python, "-c", "import sys;print(sys.version_info[0], sys.version_info[1])"],
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])


@pytest.mark.parametrize("python", PYTHONS or ["/usr/bin/python3"])
def test_preflight_on_each_python(python: str, tmp_path: Path) -> None:
    if not Path(python).exists():
        pytest.skip(f"{python} is not installed")
    done = subprocess.run([python, "-c", BOOTSTRAP], input=payload(
        "preflight", {"target": str(tmp_path), "size": 1 << 20, "scratch_id": "x"}), capture_output=True, timeout=60)
    if _version(python) < (3, 8):
        assert done.returncode != 0
        failure = explain("h", done.returncode, done.stderr.decode())
        assert failure.what == "its python3 is older than 3.8"
        return
    answer = answer_in(done.stdout.decode())
    assert answer is not None, done.stderr.decode()
    assert answer["target"]["file"] == str(tmp_path / "stackbench-x.scratch")
    assert answer["system"]["kernel"] and answer["python"].startswith(".".join(map(str, _version(python))))
    assert list(tmp_path.iterdir()) == []  # the preflight writes nothing
