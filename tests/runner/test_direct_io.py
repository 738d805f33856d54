"""The O_DIRECT probe behind the quick preset's device numbers."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from stackbench.probe.direct_io import honours_o_direct


def test_a_disk_backed_directory_honours_o_direct_and_the_probe_leaves_nothing(scratch_dir: Path) -> None:
    assert honours_o_direct(scratch_dir) == (True, "")
    assert list(scratch_dir.iterdir()) == []


def test_a_refusing_file_system_is_reported_with_its_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fake: this machine's kernel (6.18) lets every local file system open O_DIRECT, including tmpfs
    (since 6.6), so the EINVAL that tmpfs on older kernels returns is simulated at os.open."""
    real_open = os.open

    def refusing(path, flags, *args):  # noqa: ANN001, ANN202
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing)
    assert honours_o_direct(tmp_path) == (False, "the file system refuses O_DIRECT (EINVAL)")
    assert list(tmp_path.iterdir()) == []
