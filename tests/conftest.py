from __future__ import annotations

import atexit
import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from lab_guest import SERIES  # noqa: E402
from mounts import detach, unmount, unmount_all  # noqa: E402
from pg_server import postgres_server  # noqa: E402

DATA = Path(__file__).parent / "data"

# A suite started in the background by a shell without job control (`scripts/test ... &`, `(pytest &)`, some CI
# runners) inherits SIGINT ignored, and every `stackbench` it starts would inherit that too: the Ctrl-C tests
# then see a run that never stops (a failure) or an import that finishes (a skip). Ctrl-C as a terminal
# sends it: the children start with SIGINT at its default, as Python's own handler leaves it after exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# `serve` keeps its drawn charts in $XDG_CACHE_HOME/stackbench/charts (report/charts/files.py): the suite's servers
# keep theirs in a directory of the session's own, never in the home of whoever runs the tests.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="stackbench-tests-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)


@pytest.fixture(scope="session")
def pg_url():
    with postgres_server() as url:
        yield url


@pytest.fixture
def pg_database(pg_url: str) -> Iterator[str]:
    """A database of its own on the test PostgreSQL server, dropped afterwards."""
    import secrets

    from sqlalchemy import create_engine, text

    name = f"stackbench_test_{secrets.token_hex(4)}"
    admin = create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield pg_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def alembic(url: str, action: str, revision: str) -> None:
    """Alembic's `upgrade` or `downgrade` to `revision` of the store at `url`, on its own connection, as a
    test sets up a store at an older schema."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from stackbench.store.database_url import database_url
    from stackbench.store.database import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(database_url(url))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        getattr(command, action)(config, revision)
    engine.dispose()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def scratch_dir(tmp_path: Path) -> Path:
    """A directory on a real disk-backed file system (not tmpfs) for fio runs."""
    path = tmp_path / "scratch"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def fio_path() -> str:
    path = shutil.which("fio")
    if path is None:
        pytest.fail("fio is not installed: run scripts/test, which installs it (apt-get install fio)")
    return path


def run_cli(*args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 300):
    """Run the real `stackbench` entry point in a subprocess (as a user would)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=timeout,
    )


@dataclass(frozen=True)
class Result:
    returncode: int
    stderr: str
    stdout: str = ""


def cli_here(*args: str) -> Result:
    """The real CLI entry point (`run_app`: parsing, the one-line error handler, exit codes) in this process,
    so that the many error-path tests do not each pay an interpreter start; stdout and stderr captured.

    sys.argv is what `python -m stackbench ARGS` has (a run records it as its command, and a report shows
    it). Keep run_cli for what is about the process: signals and Ctrl-C (exit 130 leaves through os._exit),
    the environment, stdin, start-up imports, and commands that fork (smallblocks' workers)."""
    import stackbench
    from stackbench.cli import run_app

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    saved_argv = sys.argv
    stream, out = io.StringIO(), io.StringIO()
    code = 0
    try:
        sys.argv = [str(Path(stackbench.__file__).with_name("__main__.py")), *args]
        with contextlib.redirect_stderr(stream), contextlib.redirect_stdout(out):
            run_app(list(args))
    except SystemExit as done:
        code = int(done.code or 0)
    finally:
        sys.argv = saved_argv
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return Result(code, stream.getvalue(), out.getvalue())


@pytest.fixture
def cli():
    return run_cli


MiB = 1024**2


def _need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices and mounts")


@pytest.fixture
def blank_loop(tmp_path: Path) -> Iterator[Path]:
    """A real, blank 64 MiB loop device on a sparse file; afterwards every mount of it unmounted, swapped off
    and detached, each waited for while busy (tests/mounts.py: a device detached while mounted stays)."""
    _need_root()
    backing = tmp_path / "loop-backing.img"
    with open(backing, "wb") as handle:
        handle.truncate(64 * MiB)
    with contextlib.ExitStack() as undo:
        undo.callback(detach, backing)  # before it is attached: finds the device by its backing file
        device = Path(subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                                     check=True).stdout.strip())
        undo.callback(subprocess.run, ["swapoff", str(device)], capture_output=True)
        undo.callback(unmount_all, device)
        yield device


@pytest.fixture
def ext4_loop(tmp_path: Path, blank_loop: Path) -> Iterator[Path]:
    """ext4 made by mkfs.ext4 on a real loop device, mounted; a device that does no I/O while nobody uses it.
    Its inode tables and journal are zeroed by mkfs, not by the kernel's ext4lazyinit thread in the seconds
    after mount (4 MiB of writes up to 5 s in, which the conditions tests would read as I/O fio did not do).
    Unmounted afterwards, waited for while busy (tests/mounts.py)."""
    mount_point = tmp_path / "ext4"
    mount_point.mkdir()
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(blank_loop)],
                   check=True, capture_output=True)
    try:
        subprocess.run(["mount", str(blank_loop), str(mount_point)], check=True)
        yield mount_point
    finally:
        unmount(mount_point)


@pytest.fixture
def tmpfs_mount(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount real tmpfs file systems of a given size (`tmpfs_mount("8M")`); all unmounted afterwards."""
    _need_root()
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"tmpfs-{len(mounted)}"
        point.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], check=True)
        mounted.append(point)
        return point

    try:
        yield mount
    finally:
        for point in mounted:
            subprocess.run(["umount", "-l", str(point)], capture_output=True)


def fill(directory: Path) -> None:
    """Write a filler file (`filler`) until the file system under `directory` is full."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)


@pytest.fixture(scope="session")
def fleet_rig(tmp_path_factory: pytest.TempPathFactory):
    """Three real hosts (network namespaces with their own sshd); see tests/fleet_hosts.py."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces and run sshd")
    from fleet_hosts import fleet_rig as make_rig

    with make_rig(Path(tempfile.mkdtemp(prefix="sb-fleet-", dir="/tmp"))) as rig:
        yield rig


@pytest.fixture(scope="session", params=SERIES, ids=[f"openzfs-{s}" for s in SERIES])
def guest(request, tmp_path_factory):
    """The OpenZFS lab guest of one series, booted once per session for every test that reads what it
    captured (the audit's and the stack's): see tests/lab_guest.py."""
    import time

    from lab_guest import boot_guest, lab_dir

    run = boot_guest(request.param, tmp_path_factory.mktemp(f"guest-{request.param}"))
    with open(lab_dir() / "test-times.txt", "a") as log:
        log.write(f"{time.strftime('%FT%TZ', time.gmtime())} openzfs-{run.series} build {run.build_s:.0f}s "
                  f"boot+capture {run.run_s:.0f}s\n")
    return run


@pytest.fixture
def fleet(fleet_rig):
    """The shared hosts, each back to its real fio with an empty scratch directory."""
    fleet_rig.reset()
    yield fleet_rig
    fleet_rig.reset()


# With pytest-xdist (`scripts/test -n 2 -m "not slow"`, README "Development") every worker is a pytest session
# of its own: function fixtures, tmp_path, the session's PostgreSQL server (tests/pg_server.py: a free port,
# a directory of its own) and XDG_CACHE_HOME above are per worker. What must not be shared is one machine-wide
# thing two workers would set up twice at once: the lab guests (one qemu boot per series, one build directory,
# tests/lab_guest.py) and the fleet's network namespaces and sshds (tests/fleet_hosts.py). Their tests are
# grouped (`xdist_group`), and every -n run schedules by group, so each group runs on one worker, once.
SHARED_RIGS = {"guest": "lab-guest", "fleet_rig": "fleet-rig"}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """`-n N` alone means `--dist load`, which ignores the groups: the controller makes it `loadgroup` before
    its session reads it. A worker parses the command line again, without that: it is told in its
    `workerinput` (below) to name each grouped test by its group, which `loadgroup` schedules by."""
    if config.getoption("numprocesses", None) and config.getoption("dist", "no") == "load":
        config.option.dist = "loadgroup"
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get("stackbench_loadgroup"):
        config.option.loadgroup = True
    if "stackbench_columns" in workerinput:  # a worker starts with COLUMNS=80 where the suite had none
        if workerinput["stackbench_columns"] is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = workerinput["stackbench_columns"]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    node.workerinput["stackbench_loadgroup"] = node.config.getoption("dist") == "loadgroup"
    node.workerinput["stackbench_columns"] = os.environ.get("COLUMNS")  # the CLI's width off a terminal


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under `loadgroup` (which -n alone is, above): each rig's group on one worker, and each other test file
    on one worker, whole and in order, as a serial run has it: its module fixtures (a server, a store of
    runs) are made once rather than once per worker, and a file's tests see what its earlier ones left."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileOrGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # as xdist's loadgroup: an `@` in a parameter is not one
                return nodeid.rsplit("@", 1)[1]
            return nodeid.split("::", 1)[0]

    return FileOrGroup(config, log)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker names each grouped test by its group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        rigs = [group for fixture, group in SHARED_RIGS.items() if fixture in getattr(item, "fixturenames", ())]
        if not rigs:
            continue
        item.add_marker(pytest.mark.xdist_group(rigs[0]))
        if getattr(config.option, "loadgroup", False) and hasattr(item, "_id"):
            # `loadgroup` schedules by the group after an `@` in the test's id, which xdist (3.8) writes to
            # `_nodeid`; pytest 9 keeps the id in `_id`. tests/test_parallel.py fails if either moves again.
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(f"{item.nodeid}@{rigs[0]}")


_LEFT_BEHIND = pytest.StashKey[set | None]()


def _untracked(root: Path) -> set[str] | None:
    """Files in the checkout that git neither tracks nor ignores (None outside a git checkout)."""
    done = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
                          capture_output=True, text=True)
    return set(filter(None, done.stdout.split("\0"))) if done.returncode == 0 else None


def _xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _xdist_worker(session.config):  # under xdist the controller checks, around all the workers
        session.config.stash[_LEFT_BEHIND] = _untracked(session.config.rootpath)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The suite leaves nothing in the checkout it runs from: a test whose command wrote a relative path
    there (a fuzzed `facts save 64G` once did, and the files were committed) fails the whole run here."""
    if _xdist_worker(session.config):
        return
    before = session.config.stash.get(_LEFT_BEHIND, None)
    after = _untracked(session.config.rootpath)
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        session.config.get_terminal_writer().line(
            f"the tests left {len(new)} file(s) in the checkout: {', '.join(map(repr, new[:10]))}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
