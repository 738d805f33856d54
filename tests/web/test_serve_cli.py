"""`stackbench serve` and `stackbench user` as a user runs them: the real entry point in a subprocess."""

from __future__ import annotations

import io
import json
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from conftest import DATA, run_cli
from stackbench.cli import run_app
from stackbench.base.errors import UsageError
from stackbench.web.server import check_host, is_loopback
from web.site import PASSWORD, first_answer, free_port


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli_here(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The CLI's own entry point (`run_app`) in this process, with `input` as standard input: the same
    code path as the `stackbench` command without a second interpreter's start-up per call."""

    def run(*args: str, input: str = "") -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(input))
        capsys.readouterr()
        try:
            run_app(list(args))
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def _user_add(cli, db: str, name: str, *extra: str, password: str = PASSWORD) -> Result:  # noqa: ANN001
    return cli("user", "add", name, "--password-stdin", "--db", db, *extra, input=password + "\n")


def test_serve_refuses_a_public_address_until_an_account_exists(tmp_path: Path, cli_here) -> None:
    db = str(tmp_path / "r.db")
    refused = cli_here("serve", "--host", "0.0.0.0", "--db", db)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "no account" in refused.stderr and "user add" in refused.stderr
    assert refused.stdout == ""


def test_serve_on_a_port_in_use_is_one_line(tmp_path: Path, cli_here) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = cli_here("serve", "--port", str(port), "--db", str(tmp_path / "r.db"))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "--port" in refused.stderr


def test_serve_refuses_a_chart_directory_others_can_write(tmp_path: Path, cli_here) -> None:
    """Its files are served as the server's images: one another user can write is refused in one line."""
    shared = tmp_path / "charts"
    shared.mkdir()
    shared.chmod(0o777)
    refused = cli_here("serve", "--chart-cache", str(shared), "--db", str(tmp_path / "r.db"))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("Error: ") and "--chart-cache" in refused.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.53", "::1", "[::1]", "localhost"])
def test_loopback_is_always_allowed(host: str) -> None:
    assert is_loopback(host)
    check_host(host, accounts=0)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "bench.example.org", "localhost.example.org"])
def test_other_addresses_need_an_account(host: str) -> None:
    with pytest.raises(UsageError, match="no account"):
        check_host(host, accounts=0)
    check_host(host, accounts=1)


def test_user_commands_add_list_claim_remove(tmp_path: Path, cli_here) -> None:
    run_cli = cli_here
    db = str(tmp_path / "r.db")
    assert run_cli("import", str(DATA / "fio" / "randread-psync.json"), "--label", "cli-run", "--db", db).returncode == 0
    added = _user_add(run_cli, db, "alice", "--admin", "--json")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["account"]["admin"] is True
    assert _user_add(run_cli, db, "bob").returncode == 0
    again = _user_add(run_cli, db, "alice")
    assert again.returncode == 1 and "exists already" in again.stderr
    listed = json.loads(run_cli("user", "list", "--json", "--db", db).stdout)
    assert [(a["name"], a["admin"]) for a in listed["accounts"]] == [("alice", True), ("bob", False)]
    assert "password" not in json.dumps(listed)
    claimed = run_cli("user", "claim", "bob", "cli-run", "--json", "--db", db)
    assert claimed.returncode == 0 and len(json.loads(claimed.stdout)["claimed"]) == 1
    taken = run_cli("user", "claim", "alice", "cli-run", "--db", db)
    assert taken.returncode == 1 and "--take" in taken.stderr
    assert run_cli("user", "claim", "alice", "cli-run", "--take", "--db", db).returncode == 0
    changed = run_cli("user", "passwd", "bob", "--password-stdin", "--json", "--db", db, input="a new passphrase here\n")
    assert json.loads(changed.stdout) == {"account": "bob", "sessions_ended": True}
    assert run_cli("user", "passwd", "bob", "--password-stdin", "--db", db, input="short\n").returncode == 2
    removed = run_cli("user", "remove", "alice", "--json", "--db", db)
    assert json.loads(removed.stdout) == {"removed": "alice", "runs_unowned": 1, "scans_unowned": 0,
                                          "audits_unowned": 0, "tunes_unowned": 0}
    assert run_cli("user", "claim", "bob", "--all-unowned", "--db", db).stdout.startswith("bob now owns 1")


def test_user_claim_takes_scans_and_audits_too(tmp_path: Path, cli_here) -> None:
    """A store with six runs (two of them slog candidates) and an account alice, a stored smallblocks scan and an audit (tests/stored_runs.py): claimed by label
    and id prefix, all or none, unowned again when the account goes, and all claimed by --all-unowned."""
    from stored_runs import AUDIT_ID, SCAN_ID, build_store

    db = str(tmp_path / "r.db")
    build_store(f"sqlite:///{db}")
    assert _user_add(cli_here, db, "carol").returncode == 0
    claimed = cli_here("user", "claim", "carol", "tank-files", AUDIT_ID[:8], "--json", "--db", db)
    assert claimed.returncode == 0, claimed.stderr
    assert json.loads(claimed.stdout)["kinds"] == {"run": [], "scan": [SCAN_ID], "audit": [AUDIT_ID], "tune": []}
    assert _user_add(cli_here, db, "bob").returncode == 0
    refused = cli_here("user", "claim", "bob", "baseline", "tank-files", "--db", db)
    assert refused.returncode == 1 and f"scan {SCAN_ID[:12]} has an owner already" in refused.stderr
    assert "bob now owns 6" in cli_here("user", "claim", "bob", "--all-unowned", "--db", db).stdout  # the runs:
    # the refused claim above left the run `baseline` unowned (all or none)
    removed = cli_here("user", "remove", "carol", "--json", "--db", db)
    assert json.loads(removed.stdout) == {"removed": "carol", "runs_unowned": 0, "scans_unowned": 1,
                                          "audits_unowned": 1, "tunes_unowned": 0}
    again = cli_here("user", "claim", "bob", "--all-unowned", "--json", "--db", db)
    assert json.loads(again.stdout)["kinds"] == {"run": [], "scan": [SCAN_ID], "audit": [AUDIT_ID], "tune": []}


@pytest.mark.parametrize(("name", "password", "says"), [
    ("alice", "short", "fewer than 12"),
    ("al ice", PASSWORD, "not an account name"),
    ("<b>x</b>", PASSWORD, "not an account name"),
    ("alice", "", "no password"),
])
def test_user_add_refuses_bad_input(tmp_path: Path, cli_here, name: str, password: str, says: str) -> None:
    refused = _user_add(cli_here, str(tmp_path / "r.db"), name, password=password)
    assert refused.returncode == 2 and says in refused.stderr and refused.stderr.count("\n") == 1


def test_user_add_without_a_terminal_names_password_stdin(tmp_path: Path, cli_here) -> None:
    refused = cli_here("user", "add", "alice", "--db", str(tmp_path / "r.db"), input="")
    assert refused.returncode == 2 and "--password-stdin" in refused.stderr


def test_help_does_not_import_the_web_stack() -> None:
    """Start-up (issue 12): only `serve` and `user` load FastAPI, uvicorn and argon2."""
    loaded = subprocess.run([sys.executable, "-X", "importtime", "-m", "stackbench", "--help"],
                            capture_output=True, text=True).stderr
    assert " typer" in loaded  # the list is real
    for module in ("fastapi", "starlette", "uvicorn", "argon2", "jinja2"):
        assert f" {module}" not in loaded


@pytest.mark.slow
def test_serve_from_the_command_line_answers_on_loopback(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    assert run_cli("user", "add", "alice", "--password-stdin", "--db", db, input=PASSWORD + "\n").returncode == 0
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "stackbench", "serve", "--port", str(port), "--db", db],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        answer = first_answer(f"http://127.0.0.1:{port}/login", server, within_s=30)
        assert answer.status_code == 200 and "server" not in answer.headers
        assert answer.headers["x-content-type-options"] == "nosniff"
        httpx.get(f"http://127.0.0.1:{port}/s/{'A' * 43}", timeout=2)
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=20)
    assert f"on http://127.0.0.1:{port}" in stderr
    assert '"GET /s/[token]" 404' in stderr and "A" * 43 not in stderr  # the access log, without the token


def test_user_add_with_an_unreadable_stdin_is_one_line(tmp_path: Path) -> None:
    """Found by the CLI fuzz test: standard input that cannot be read (here a file opened for writing only,
    as `0>>file` in a shell makes it) was an internal error; it is a usage error naming the fix."""
    with (tmp_path / "write-only").open("a") as unreadable:
        result = subprocess.run([sys.executable, "-m", "stackbench", "user", "add", "zed", "--password-stdin",
                                 "--db", f"sqlite:///{tmp_path / 'r.db'}"], stdin=unreadable, capture_output=True,
                                text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("Error: cannot read the password from standard input")
    assert len(result.stderr.strip().splitlines()) == 1 and "internal error" not in result.stderr
