"""`stackbench stack` on a real chain built here: ext4 on a loop device over a file on ext4 on another loop
device over a file in tmp_path (tests/loop_chain.py). The tree expected is written from how the chain is
built; the file system under tmp_path is the machine's, named by findmnt (util-linux), not by stackbench.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from conftest import cli_here
from loop_chain import MiB, LoopChain, build, findmnt
from stackbench.stack.discover import discover, stack_facts
from stackbench.stack.layer import Layer, Stack

pytestmark = pytest.mark.root


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[LoopChain]:
    yield from build(tmp_path)


def _path(stack: Stack) -> list[Layer]:
    return stack.data_path()


def test_the_tree_is_the_chain_that_was_built(chain: LoopChain) -> None:
    target = chain.upper / "data.bin"
    target.write_bytes(b"x" * 4096)
    layers = _path(discover(target))
    inner, outer = chain.inner_device.name, chain.outer_device.name
    expected = [
        ("file", str(target), {"size_bytes": 4096}),
        ("filesystem", str(chain.upper), {"fs_type": "ext4", "source": str(chain.inner_device), "block_size": 1024}),
        ("loop", str(chain.inner_device), {"backing_file": str(chain.inner_image), "size_bytes": 48 * MiB}),
        ("file", str(chain.inner_image), {"size_bytes": 48 * MiB}),
        ("filesystem", str(chain.lower), {"fs_type": "ext4", "source": str(chain.outer_device), "block_size": 4096}),
        ("loop", str(chain.outer_device), {"backing_file": str(chain.outer_image), "size_bytes": 160 * MiB}),
        ("file", str(chain.outer_image), {"size_bytes": 160 * MiB}),
        ("filesystem", findmnt(chain.outer_image, "TARGET"), {"fs_type": findmnt(chain.outer_image, "FSTYPE")}),
    ]
    seen = [(layer.kind, layer.name, {key: layer.settings.get(key) for key in want})
            for layer, (_, _, want) in zip(layers, expected)]
    assert seen == expected
    assert [layers[2].devices, layers[5].devices] == [[inner], [outer]]  # their /proc/diskstats rows
    with open("/proc/diskstats") as stats:
        rows = {line.split()[2] for line in stats}
    assert {inner, outer} <= rows


def test_the_counter_names_are_each_layers_diskstats_rows_once(chain: LoopChain) -> None:
    """What the per-second sampler reads: the inner loop device, the outer one, then the host's device
    under the file system that holds the outer image; each a row of /proc/diskstats; no ZFS here."""
    names = discover(chain.upper).counter_names()
    with open("/proc/diskstats") as stats:
        rows = {line.split()[2] for line in stats}
    assert names.diskstats[:2] == (chain.inner_device.name, chain.outer_device.name)
    assert set(names.diskstats) <= rows and len(set(names.diskstats)) == len(names.diskstats)
    source = findmnt(chain.outer_image, "SOURCE")
    if source.startswith("/dev/"):
        assert names.diskstats[2] == os.path.basename(os.path.realpath(source))
    assert (names.pools, names.vdevs, names.datasets) == ((), (), ())


def test_the_bottom_is_the_device_findmnt_names(chain: LoopChain) -> None:
    """Under the host's file system: the device util-linux says it is mounted from, when it is one."""
    source = findmnt(chain.outer_image, "SOURCE")
    if not source.startswith("/dev/"):
        pytest.skip(f"{findmnt(chain.outer_image, 'TARGET')} is mounted from {source}, no block device")
    layers = _path(discover(chain.upper))
    host_fs = layers[7]
    assert host_fs.children and host_fs.children[0].name == "/dev/" + os.path.basename(os.path.realpath(source))


def test_a_block_device_target_starts_at_the_device(chain: LoopChain) -> None:
    stack = discover(chain.inner_device)
    assert [(layer.kind, layer.name) for layer in _path(stack)[:3]] == [
        ("loop", str(chain.inner_device)), ("file", str(chain.inner_image)), ("filesystem", str(chain.lower))]


def test_stack_json_is_the_documented_shape_and_reads_back(chain: LoopChain) -> None:
    done = cli_here("stack", str(chain.upper), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) == {"version", "target", "virtualization", "root"}
    assert set(document["root"]) == {"kind", "name", "settings", "devices", "zfs", "notes", "children"}
    again = Stack.from_json(document)
    assert again.to_json() == document
    assert [layer.kind for layer in again.data_path()][:4] == ["directory", "filesystem", "loop", "file"]


def test_the_tree_prints_paths_as_text_never_markup(chain: LoopChain) -> None:
    odd = chain.upper / "[bold red]x :ab: *y*"
    odd.mkdir()
    done = cli_here("stack", str(odd))
    assert done.returncode == 0, done.stderr
    assert f"directory {odd}" in done.stdout
    markdown = cli_here("stack", str(odd), "--format", "markdown")
    assert r"\[bold red\]x :ab: \*y\*" in markdown.stdout


def test_a_missing_target_is_one_line_and_exit_1(tmp_path: Path) -> None:
    done = cli_here("stack", str(tmp_path / "nothing"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "does not exist" in done.stderr


def test_a_new_file_of_a_run_gets_the_stack_of_its_directory(chain: LoopChain) -> None:
    facts = stack_facts(chain.upper / "not-yet.dat", virtualization=None)
    assert facts["target"] == str(chain.upper)
    assert Stack.from_json(facts).data_path()[2].name == str(chain.inner_device)
