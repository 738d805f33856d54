"""smallblocks: identical bins to the real awk pipeline, the walker's edge cases, the recommendation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli
from stackbench.scan.histogram import SizeHistogram, bin_of
from stackbench.scan.special_vdev import recommend
from stackbench.scan.walker import walk_histogram

PIPELINE = (
    "find . -type f -print0 | xargs -0 ls -l | awk '{ n=int(log($5)/log(2)); if (n<10) { n=10; } size[n]++ } "
    "END { for (i in size) printf(\"%d %d\\n\", 2^i, size[i]) }' | sort -n"
)


def _pipeline(root: Path, *, print_exponent: bool = False) -> dict[int, int]:
    """The practitioners' pipeline, run for real (bash, find, xargs, ls, mawk/gawk).

    Verbatim it prints each bin with printf("%d", 2^i), which mawk clamps to 2147483647 for bins of 2 GiB and
    more; `print_exponent` changes only that printf (to the exponent i) so huge bins can be compared too.
    """
    command = PIPELINE.replace('printf(\"%d %d\\n\", 2^i, size[i])', 'printf(\"%d %d\\n\", i, size[i])') \
        if print_exponent else PIPELINE
    assert print_exponent is False or command != PIPELINE
    done = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, check=True)
    pairs = [(int(float(b)), int(n)) for b, n in (line.split() for line in done.stdout.splitlines())]
    return {(1 << b if print_exponent else b): n for b, n in pairs}


def _make_tree(root: Path, sizes: list[int], names_with_spaces: bool = True) -> None:
    for index, size in enumerate(sizes):
        directory = root / f"d{index % 7}" / f"sub {index % 3}" if names_with_spaces else root / f"d{index % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        name = f"file {index}.bin" if names_with_spaces else f"f{index}"
        with open(directory / name, "wb") as handle:
            handle.truncate(size)  # sparse: huge sizes cost no space


def test_bins_equal_the_real_pipeline_with_empty_sparse_spaced_linked_files(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    sizes = [0, 0, 1, 1023, 1024, 1025, 2047, 2048, 4096, 65535, 65536, 10**6, 2**30, 2**40 + 5, 3 * 2**33]
    _make_tree(root, sizes)
    (root / "d0" / "link to file").symlink_to(root / "d1" / "sub 1" / "file 1.bin")
    (root / "d0" / "dangling").symlink_to(root / "nowhere")
    (root / "d0" / "dirlink").symlink_to(root / "d2", target_is_directory=True)
    os.link(root / "d2" / "sub 2" / "file 2.bin", root / "d3" / "hardlink.bin")
    result = walk_histogram([root], workers=2)
    verbatim = _pipeline(root)
    assert {b: n for b, n in verbatim.items() if b < 2**31 - 1} == {
        b: n for b, n in result.histogram.counts.items() if b < 2**31
    }
    assert result.histogram.counts == _pipeline(root, print_exponent=True)
    assert result.histogram.files == len(sizes) + 1  # the hard link counts once more, as in find
    assert result.histogram.sizes[1024] == sum(s for s in sizes if s < 2048) + sizes[2]  # + the hard link


def test_newline_names_match_a_find_printf_reference(tmp_path: Path) -> None:
    """`ls -l | awk` splits names with newlines into garbage lines, so the pipeline itself is wrong there;
    the reference here is `find -printf '%s\\n'` binned with the same formula."""
    root = tmp_path / "tree"
    root.mkdir()
    for index, size in enumerate([0, 5000, 70000, 2**20]):
        with open(root / f"new\nline {index}", "wb") as handle:
            handle.truncate(size)
    sizes = subprocess.run(["find", str(root), "-type", "f", "-printf", "%s\\n"], capture_output=True, text=True,
                           check=True).stdout.split()
    reference = SizeHistogram()
    for size in sizes:
        reference.add(int(size))
    assert walk_histogram([root]).histogram == reference


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**47))
def test_bin_is_the_largest_power_of_two_not_above_the_size_with_a_1k_floor(size: int) -> None:
    b = bin_of(size)
    if size < 1024:
        assert b == 1024
    else:
        assert b <= size < 2 * b and b & (b - 1) == 0


def test_a_plain_file_argument_counts_itself_and_a_missing_path_is_an_error(tmp_path: Path) -> None:
    single = tmp_path / "one"
    single.write_bytes(b"x" * 5000)
    assert walk_histogram([single]).histogram.counts == {4096: 1}
    result = run_cli("smallblocks", str(tmp_path / "missing"))
    assert result.returncode == 1 and "does not exist" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_unreadable_directories_are_counted_and_reported_never_fatal(tmp_path: Path) -> None:
    """The scan runs in a forked child that drops to user nobody, for whom one directory is unreadable."""
    root = tmp_path / "tree"
    _make_tree(root, [10, 5000], names_with_spaces=False)
    secret = root / "secret"
    secret.mkdir()
    (secret / "hidden").write_bytes(b"x")
    secret.chmod(0o000)
    for parent in [tmp_path, *tmp_path.parents]:
        if parent != Path("/"):
            parent.chmod(parent.stat().st_mode | 0o005)  # nobody may traverse down to the tree
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            result = walk_histogram([root], workers=2)
            payload = json.dumps([result.histogram.files, result.unreadable, result.unreadable_examples])
            os.write(write_end, payload.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        files, unreadable, examples = json.loads(pipe.read())
    os.waitpid(child, 0)
    assert files == 2 and unreadable == 1 and examples == [str(secret)]


def test_json_shape_and_recommendation(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    _make_tree(root, [100, 3000, 5000, 9000, 70000, 2**22], names_with_spaces=False)
    result = run_cli("smallblocks", str(root), "--special-size", "1M", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["files"] == 6 and data["partial"] is False and data["seconds"] > 0
    assert data["bins"]["1024"] == {"count": 1, "bytes": 100}
    assert data["bins"]["2048"] == {"count": 1, "bytes": 3000}
    assert data["recommendation"]["special_small_blocks"] == 64 * 1024
    table = run_cli("smallblocks", str(root), "--special-size", "1M")
    assert "Recommendation: special_small_blocks=64K" in table.stdout and "files/s" in table.stdout


def test_recommendation_stays_below_recordsize_and_inside_75_percent() -> None:
    histogram = SizeHistogram()
    for size in [500] * 100 + [6000] * 100 + [10_000] * 100 + [100_000] * 10 + [10**9]:
        histogram.add(size)
    big = recommend(histogram, 100 * 2**30, metadata_share=0.003)
    assert big.special_small_blocks == 64 * 1024  # never >= recordsize 128K, however large the vdev
    small = recommend(histogram, int((histogram.bytes_below(8192) + histogram.total_bytes * 0.003) / 0.75) + 1)
    assert small.special_small_blocks == 8192 and small.estimated_usage_bytes <= small.usable_bytes
    tiny = recommend(histogram, 1000)
    assert tiny.special_small_blocks == 0 and tiny.fits is False


def test_bad_special_size_is_one_line_error(tmp_path: Path) -> None:
    result = run_cli("smallblocks", str(tmp_path), "--special-size", "lots")
    assert result.returncode != 0 and "cannot read 'lots' as a size" in result.stderr


def _descendants(pid: int) -> list[int]:
    """A process's children, theirs, and so on (the walk's readers are forked worker processes)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                children = [int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
                found += children
                pending += children
        except OSError:
            continue  # ended meanwhile
    return found


def _open_directories(pid: int) -> set[str]:
    """What a process and its descendants hold open."""
    found: set[str] = set()
    for current in [pid, *_descendants(pid)]:
        try:
            for fd in os.listdir(f"/proc/{current}/fd"):
                found.add(os.readlink(f"/proc/{current}/fd/{fd}"))
        except OSError:
            continue  # ended meanwhile
    return found


def _wait_until_two_subdirectories_are_read(process: subprocess.Popen, root: Path) -> None:
    prefix, subdirectories = str(root) + "/", set()
    deadline = time.monotonic() + 60
    while len(subdirectories) < 2:
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail("the walk ended (or never began) before two subdirectories were seen open; "
                        f"seen: {sorted(subdirectories)}")
        subdirectories |= {path for path in _open_directories(process.pid) if path.startswith(prefix)}


@pytest.mark.slow  # over 5 s of real fio / a real interrupt: CI runs it, the quick subset does not
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop the page cache so the scan is slow enough")
def test_ctrl_c_prints_the_partial_histogram(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for a in range(150):
        directory = root / str(a)
        directory.mkdir(parents=True)
        for b in range(1000):
            os.close(os.open(directory / str(b), os.O_CREAT | os.O_WRONLY, 0o644))
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")  # cold metadata: a slower walk
    process = subprocess.Popen([sys.executable, "-m", "stackbench", "smallblocks", str(root), "--workers", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Interrupted mid-walk, not after a fixed sleep: a new machine walked all 150,000 files (cold) within the
    # 1 s this test used to wait, and exited 0. Two subdirectories seen open means at least one is counted;
    # the readers are then held (SIGSTOP) while the command finishes loading and waits for them, so that the
    # Ctrl-C lands in that wait, as a user's does, and not in the CLI's start (the walk begins before it).
    _wait_until_two_subdirectories_are_read(process, root)
    readers = _descendants(process.pid)
    for reader in readers:
        os.kill(reader, signal.SIGSTOP)
    time.sleep(2.0)
    process.send_signal(signal.SIGINT)
    for reader in readers:
        os.kill(reader, signal.SIGCONT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, (stdout[-500:], stderr)
    assert "PARTIAL" in stdout and "histogram above is PARTIAL" in stderr
    counted = int(stdout.split("File sizes: ")[1].split(" files")[0].replace(",", ""))
    assert 0 < counted < 150_000


def test_a_symlink_to_a_directory_named_on_the_command_line_is_followed_but_not_links_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a").write_bytes(b"x" * 5000)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"x" * 70000)
    (real / "inner-link").symlink_to(outside)  # met during the walk: not followed
    link = tmp_path / "link"
    link.symlink_to(real)
    done = run_cli("smallblocks", str(link), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["files"] == 1 and data["bytes"] == 5000


def _deep_tree(root: Path, levels: int, name_length: int, sizes: list[int]) -> int:
    """Directories nested `levels` deep with names of `name_length` bytes, files of `sizes` at the bottom;
    made with *at() calls, since the full path may be longer than the kernel takes (PATH_MAX). Returns the
    length of the deepest path."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    length = len(str(root))
    for level in range(levels):
        name = f"{level:03d}".ljust(name_length, "d")
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd, length = inner, length + 1 + len(name)
    for index, size in enumerate(sizes):
        handle = os.open(f"file {index}", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
        os.ftruncate(handle, size)
        os.close(handle)
    os.close(fd)
    return length


def _find_reference(root: Path) -> SizeHistogram:
    """`find -printf '%s'` binned with the pipeline's formula: find reaches any depth (the pipeline's `ls -l`
    refuses a path over PATH_MAX, as it garbles names with newlines)."""
    sizes = subprocess.run(["find", str(root), "-type", "f", "-printf", "%s\\n"], capture_output=True, text=True,
                           check=True).stdout.split()
    reference = SizeHistogram()
    for size in sizes:
        reference.add(int(size))
    return reference


def test_files_below_paths_longer_than_path_max_are_counted(tmp_path: Path) -> None:
    """A directory whose path is over PATH_MAX (4096) cannot be opened by path: it is opened one component
    at a time, as `du` and `find` reach it, instead of being reported unreadable and its files missed."""
    root = tmp_path / "deep"
    deepest = _deep_tree(root, levels=24, name_length=250, sizes=[0, 5000, 70000, 2**20])
    assert deepest > 4096
    result = walk_histogram([root], workers=2)
    assert result.unreadable == 0, result.unreadable_examples
    assert result.histogram == _find_reference(root) and result.histogram.files == 4


@pytest.mark.slow
def test_a_large_directory_is_read_by_several_readers_with_the_pipelines_bins(tmp_path: Path) -> None:
    """One directory of many files is split into batches that idle readers stat, rather than left to the
    reader that listed it; every file still counts once. The batches go to readers that are idle when a batch
    fills, so the directory is large enough for the other readers to have started by then."""
    root = tmp_path / "big"
    root.mkdir()
    sizes = [(index * 7919) % (3 * 2**20) for index in range(30_000)]
    for index, size in enumerate(sizes):
        handle = os.open(root / f"file {index}", os.O_CREAT | os.O_WRONLY, 0o644)
        os.ftruncate(handle, size)
        os.close(handle)
    (root / "a link").symlink_to(root / "file 1")
    os.link(root / "file 2", root / "a hard link")
    odd = os.open(os.fsencode(root) + b"/not utf-8 \xff\xfe", os.O_CREAT | os.O_WRONLY, 0o644)  # sent as bytes
    os.ftruncate(odd, 70000)
    os.close(odd)
    result = walk_histogram([root], workers=4)
    assert result.histogram.counts == _pipeline(root, print_exponent=True)
    assert result.histogram.files == len(sizes) + 2
    assert sum(1 for files in result.files_per_reader if files) >= 2, result.files_per_reader


def test_the_walk_starts_before_the_report_the_store_and_the_progress_display_are_imported(tmp_path: Path) -> None:
    """What loads before the walk is start-up time on every scan (and cold, a read from disk per module):
    the report's modules, the store and the progress bar (only shown on a terminal) load after it, and the
    store only with --db."""
    probe = ("import runpy, sys, stackbench.scan.walker as walker\n"
             "walk = walker.walk_histogram\n"
             "def record(*args, **kwargs):\n"
             "    sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
             "    return walk(*args, **kwargs)\n"
             "walker.walk_histogram = record\n"
             "sys.argv = ['stackbench', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('stackbench', run_name='__main__')\n"
             "except SystemExit:\n    pass\n")
    (tmp_path / "tree").mkdir()
    for extra in ([], ["--db", str(tmp_path / "r.db")]):
        done = subprocess.run([sys.executable, "-c", probe, "smallblocks", str(tmp_path / "tree"), "--json", *extra],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        before_walk = set(done.stderr.split("MODULES ", 1)[1].split("\n", 1)[0].split())
        assert "stackbench.cli.smallblocks" in before_walk  # the probe is real
        late = {"stackbench.report.smallblocks", "stackbench.scan.special_vdev", "rich.progress"}
        assert not late & before_walk
        store = {"sqlalchemy", "stackbench.store", "stackbench.model.results"}
        assert not store & before_walk if not extra else "sqlalchemy" in before_walk


@pytest.mark.slow
def test_readers_double_while_they_wait_and_not_on_a_warm_cache(tmp_path: Path) -> None:
    """A cold cache cannot be made here without emptying the whole machine's page cache, so the readers'
    wait for the device is stood in for by SIGSTOP: a stopped reader, like one waiting for a read, is neither
    on a CPU nor runnable. Stopped for 0.7 s while both hold work, they are joined by as many more readers;
    the same walk left alone (warm: always on a CPU) keeps one reader per CPU."""
    import threading

    roots = []
    for part in ("a", "b"):
        root = tmp_path / part
        for directory in range(30):
            (root / str(directory)).mkdir(parents=True)
            for index in range(500):
                os.close(os.open(root / str(directory) / str(index), os.O_CREAT | os.O_WRONLY, 0o644))
        roots.append(root)
    cpus = len(os.sched_getaffinity(0))
    assert walk_histogram(roots).workers == cpus

    def children() -> list[int]:
        found = []
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            found += [int(pid) for pid in (task / "children").read_text().split()]
        return found

    def pause_the_readers() -> None:
        deadline = time.monotonic() + 10
        while len(children()) < cpus and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.02)  # each reader has taken one of the two trees
        stopped = children()
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(0.7)
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)

    pauser = threading.Thread(target=pause_the_readers)
    pauser.start()
    result = walk_histogram(roots)
    pauser.join()
    assert result.workers == 2 * cpus and result.histogram.files == 30_000


def test_the_early_reading_of_the_command_line_knows_every_smallblocks_option() -> None:
    """scan/early.py reads smallblocks' command line before the CLI loads; an option it did not know would
    only make every scan that uses it start late, so nothing else would notice."""
    import typer.main

    from stackbench.cli import app
    from stackbench.scan.early import FLAGS, VALUE_OPTIONS, walk_arguments

    command = typer.main.get_command(app).commands["smallblocks"]
    options = [param for param in command.params if param.param_type_name == "option"]
    assert {name for param in options if param.is_flag for name in param.opts} == FLAGS
    assert {name for param in options if not param.is_flag for name in param.opts} == VALUE_OPTIONS
    assert walk_arguments(["/a", "-l", "-x", "/b", "--workers=3", "--json"]) == (["/a", "/b"], 3, False)
    assert walk_arguments(["/a", "--one-file-system", "-f", "csv"]) == (["/a"], None, True)
    for unread in (["/a", "--help"], ["/a", "--bogus"], ["/a", "--workers", "0"], ["--json"], ["/a", "--db"]):
        assert walk_arguments(unread) is None


def test_the_readers_start_before_the_command_line_framework_loads(tmp_path: Path) -> None:
    """The walk begins before Typer and Rich load (about 0.1 s of CPU, and cold a read per module), so
    they load while the readers work; a command line the early reading does not understand starts nothing
    early and gets Typer's own error."""
    probe = ("import os, runpy, sys\n"
             "os.register_at_fork(before=lambda: sys.stderr.write('\\nFORK ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
             "sys.argv = ['stackbench', *sys.argv[1:]]\n"
             "runpy.run_module('stackbench', run_name='__main__')\n")
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "file").write_bytes(b"x" * 5000)
    done = subprocess.run([sys.executable, "-c", probe, "smallblocks", str(tmp_path / "tree"), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["files"] == 1, done.stderr
    first_fork = set(done.stderr.split("FORK ", 1)[1].split("\n", 1)[0].split())
    assert "stackbench.scan.walker" in first_fork  # the probe is real
    assert not {"typer", "rich", "stackbench.cli"} & first_fork
    wrong = subprocess.run([sys.executable, "-c", probe, "smallblocks", str(tmp_path / "tree"), "--bogus"],
                           capture_output=True, text=True)
    assert wrong.returncode == 2 and "FORK" not in wrong.stderr and "--bogus" in wrong.stderr
