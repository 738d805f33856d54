"""Every numeric option is range-checked at the CLI: one line, exit 2, nothing created."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import MiB, _need_root, cli_here, run_cli


@pytest.mark.parametrize(
    "args, named",
    [
        (["compare", "a", "b", "--min-effect", "-5"], "--min-effect"),
        (["compare", "a", "b", "--min-effect", "0"], "--min-effect"),
        (["compare", "a", "b", "--alpha", "0"], "--alpha"),
        (["compare", "a", "b", "--alpha", "1.5"], "--alpha"),
        (["ab", "-t", "{scratch}", "--a", "true", "--b", "true", "--min-effect", "0"], "--min-effect"),
        (["ab", "-t", "{scratch}", "--a", "true", "--b", "true", "--min-effect", "-5"], "--min-effect"),
        (["ab", "-t", "{scratch}", "--a", "true", "--b", "true", "--alpha", "0.9"], "--alpha"),
        (["ab", "-t", "{scratch}", "--a", "true", "--b", "true", "--command-timeout", "0"], "--command-timeout"),
        (["ab", "-t", "{scratch}", "--a", "true", "--b", "true", "--command-timeout", "nan"], "--command-timeout"),
        (["run", "-t", "{scratch}", "--ci-target", "0"], "--ci-target"),
        (["run", "-t", "{scratch}", "--ci-target", "150"], "--ci-target"),
        (["run", "-t", "{scratch}", "--jobs", "0"], "--jobs"),
        (["run", "-t", "{scratch}", "--jobs", "100000"], "--jobs"),
        (["run", "-t", "{scratch}", "--qd", "0"], "--qd"),
        (["run", "-t", "{scratch}", "--qd", "100000"], "--qd"),
        (["run", "-t", "{scratch}", "--runtime", "-3"], "--runtime"),
        (["run", "-t", "{scratch}", "--runtime", "30d"], "--runtime"),
        (["run", "-t", "{scratch}", "--runtime", "100000"], "--runtime"),
        (["run", "-t", "{scratch}", "--size", "0"], "--size"),
        (["run", "-t", "{scratch}", "--size", "256"], "--size"),
        (["run", "-t", "{scratch}", "--bs", "100"], "--bs"),
        (["run", "-t", "{scratch}", "--bs", "1g", "--size", "2g"], "--bs"),
        (["run", "-t", "{scratch}", "--runs", "0"], "--runs"),
        (["run", "-t", "{scratch}", "--rate-iops", "0"], "--rate-iops"),
        (["run", "-t", "{scratch}", "--ramp", "2h"], "--ramp"),
        (["smallblocks", "{scratch}", "--recordsize", "3k"], "--recordsize"),
        (["smallblocks", "{scratch}", "--recordsize", "32M"], "--recordsize"),
        (["smallblocks", "{scratch}", "--metadata-share", "-1"], "--metadata-share"),
        (["runs", "--format", "xml"], "--format"),
        (["runs", "--limit", "0"], "--limit"),
        (["tune", "-t", "{scratch}", "--rounds", "1"], "--rounds"),
        (["tune", "-t", "{scratch}", "--calibrate-rounds", "101"], "--calibrate-rounds"),
        (["serve", "--port", "0"], "--port"),
        (["serve", "--port", "65536"], "--port"),
    ],
)
def test_out_of_range_values_are_one_line_usage_errors(tmp_path: Path, scratch_dir: Path, args: list[str], named: str) -> None:
    db = tmp_path / "r.db"
    store = [] if args[0] == "smallblocks" else ["--db", str(db)]
    done = cli_here(*[a.replace("{scratch}", str(scratch_dir)) for a in args], *store)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], lines
    assert list(scratch_dir.iterdir()) == []
    assert not db.exists()


@pytest.mark.parametrize("args, said", [
    (["run", "-t", "{scratch}", "--jobs", "10000000"], "10000000 is out of range: give one from 1 to 256"),
    (["runs", "--limit", "-3"], "-3 is out of range: give one of at least 1"),
    (["compare", "a", "b", "--alpha", "0.00001"], "1e-05 is out of range: give one from 0.0001 to 0.5"),
    (["compare", "a", "b", "--alpha", "nan"], "'nan' is not a number: give one from 0.0001 to 0.5"),
])
def test_a_value_out_of_range_is_told_with_the_range(tmp_path: Path, scratch_dir: Path, args: list[str],
                                                     said: str) -> None:
    """The range types the options declare (cli/common.py) say the value as typed and the range: an integer
    in digits (not 1e+07), the bounds as the option's help says them."""
    done = cli_here(*[a.replace("{scratch}", str(scratch_dir)) for a in args], "--db", str(tmp_path / "r.db"))
    assert done.returncode == 2 and said in " ".join(done.stderr.split()), done.stderr


def test_smallblocks_with_a_4k_recordsize_recommends_metadata_only(tmp_path: Path) -> None:
    """Was an IndexError: no special_small_blocks value lies below a 4K recordsize."""
    (tmp_path / "f").write_bytes(b"x" * 3000)
    done = run_cli("smallblocks", str(tmp_path), "--recordsize", "4k", "--special-size", "1G")
    assert done.returncode == 0, done.stderr
    assert "no special_small_blocks value is below the recordsize" in done.stdout
    assert "special_small_blocks=0" in done.stdout


def test_o_direct_block_size_below_the_device_sector_is_refused_before_any_cell(tmp_path: Path) -> None:
    """A blank loop device with 4096-byte logical sectors: --bs 2k with O_DIRECT is refused up front."""
    _need_root()
    backing = tmp_path / "4k.img"
    with open(backing, "wb") as handle:
        handle.truncate(64 * MiB)
    device = subprocess.run(["losetup", "-f", "--show", "-b", "4096", str(backing)], capture_output=True, text=True,
                            check=True).stdout.strip()
    try:
        db = tmp_path / "r.db"
        done = cli_here("run", "-t", device, "--destroy-data", "--direct", "--bs", "4k,2k", "--rw", "randwrite",
                       "--qd", "1", "--size", "16M", "--runtime", "1", "--runs", "1", "--db", str(db))
        assert done.returncode == 2, done.stderr
        assert "--bs 2K is not a multiple of 4096 bytes" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert backing.read_bytes() == b"\0" * (64 * MiB)  # not one cell ran
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True)
