"""`stackbench token`, `stackbench push` and `stackbench run --push` as a user runs them: the real entry
point in a subprocess, pushing over HTTP to the real server on 127.0.0.1 (tests/web/site.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

import pytest

from conftest import cli_here, run_cli
from web.site import FIO, SHARED, Site, Template, free_port, server_log_to_buffer


@pytest.fixture(scope="module")
def web(template: Template) -> Iterator[Site]:
    """A server of this module's own (a copy of the populated store): the runs pushed here must not change
    what the shared server's page tests count."""
    with template.site(SHARED) as running:
        yield running


def _server_db(web: Site) -> str:
    return web.store.url


def _token(web: Site, user: str, scope: str) -> str:
    made = cli_here("token", "create", "--scope", scope, "--user", user, "--note", "ci", "--db", _server_db(web),
                    "--json")
    assert made.returncode == 0, made.stderr
    return json.loads(made.stdout)["token"]


@pytest.mark.slow
def test_push_from_another_machines_store_and_read_the_run_back(web: Site, tmp_path: Path, scratch_dir: Path) -> None:
    """A measured run (samples, raw fio outputs) and an imported one, pushed by the CLI in a subprocess."""
    local = f"sqlite:///{tmp_path / 'local.db'}"
    token_file = tmp_path / "token"
    token_file.write_text(_token(web, "alice", "push") + "\n")
    assert cli_here("import", str(FIO / "randrw-bs-seq-rand.json"), "--label", "imported", "--db", local).returncode == 0
    measured = run_cli("run", "-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", "--runtime", "1",
                       "--size", "4M", "--runs", "2", "--label", "measured", "--db", local, "--json",
                       "--push", web.base, env={"STACKBENCH_TOKEN": token_file.read_text().strip()})
    assert measured.returncode == 0, measured.stderr
    run_id = json.loads(measured.stdout)["run_id"]
    assert f"Pushed {run_id[:12]} {web.base}/runs/{run_id}" in measured.stderr  # --json keeps stdout for the JSON
    pushed = run_cli("push", "imported", run_id, "--to", web.base, "--token-file", str(token_file), "--db", local,
                     "--json")
    assert pushed.returncode == 0, pushed.stderr
    answers = json.loads(pushed.stdout)["pushed"]
    assert [a["created"] for a in answers] == [True, False]  # the measured run was there already: idempotent
    from stackbench.store import open_store

    source = open_store(local)
    for answer in answers:
        mine, theirs = source.get_run(answer["id"]), web.store.get_run(answer["id"])
        assert [(c.workload, c.result, c.samples, c.measurement) for c in theirs.cells] == \
            [(c.workload, c.result, c.samples, c.measurement) for c in mine.cells]
        assert (theirs.facts, theirs.warnings, theirs.status, theirs.label) == \
            (mine.facts, mine.warnings, mine.status, mine.label)
        assert [(o["raw_text"], o["command"], o["job_file"]) for o in web.store.fio_outputs(answer["id"])] == \
            [(o["raw_text"], o["command"], o["job_file"]) for o in source.fio_outputs(answer["id"])]
    assert any(c.samples for c in web.store.get_run(run_id).cells)
    source.dispose()


def test_token_create_list_revoke(web: Site) -> None:
    made = cli_here("token", "create", "--scope", "metrics", "--user", "bob", "--note", "grafana", "--expires", "30",
                    "--db", _server_db(web))
    assert made.returncode == 0, made.stderr
    secret = re.search(r"^(sbt_[A-Za-z0-9_-]{43})$", made.stdout, re.M).group(1)
    listed = cli_here("token", "list", "--user", "bob", "--db", _server_db(web), "--json")
    tokens = json.loads(listed.stdout)["tokens"]
    mine = [t for t in tokens if t["note"] == "grafana"]
    assert len(mine) == 1 and mine[0]["scope"] == "metrics" and mine[0]["revoked_at"] is None
    assert secret not in listed.stdout and secret[4:] not in json.dumps(tokens)
    client = web.client()
    assert client.get("/metrics", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    used = json.loads(cli_here("token", "list", "--user", "bob", "--db", _server_db(web), "--json").stdout)["tokens"]
    assert [t["last_used_at"] is not None for t in used if t["id"] == mine[0]["id"]] == [True]
    revoked = cli_here("token", "revoke", mine[0]["id"][:12], "--db", _server_db(web))
    assert revoked.returncode == 0, revoked.stderr
    assert client.get("/metrics", headers={"Authorization": f"Bearer {secret}"}).status_code == 401


@pytest.mark.parametrize("args, message", [
    (["--scope", "admin", "--user", "bob"], "unknown scope 'admin'"),
    (["--scope", "push", "--user", "nobody"], "no account named 'nobody'"),
    (["--scope", "push", "--user", "bob", "--note", "x" * 501], "longer than 500"),
])
def test_token_create_refuses_bad_input_in_one_line(web: Site, args: list[str], message: str) -> None:
    result = cli_here("token", "create", *args, "--db", _server_db(web))
    assert result.returncode != 0 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_revoking_an_unknown_token_says_how_to_find_one(web: Site) -> None:
    result = cli_here("token", "revoke", "0123456789ab", "--db", _server_db(web))
    assert result.returncode != 0 and "stackbench token list" in result.stderr


@pytest.fixture
def local_run(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'local.db'}"
    assert cli_here("import", str(FIO / "randread-psync.json"), "--label", "one", "--db", db).returncode == 0
    return db


def _push(db: str, url: str, token: str, *extra: str):  # noqa: ANN202
    import os

    saved = os.environ.get("STACKBENCH_TOKEN")
    os.environ["STACKBENCH_TOKEN"] = token
    try:
        return cli_here("push", "one", "--to", url, "--db", db, *extra)
    finally:
        os.environ.pop("STACKBENCH_TOKEN")
        if saved is not None:
            os.environ["STACKBENCH_TOKEN"] = saved


def test_push_failures_are_one_line_naming_the_fix(web: Site, local_run: str, tmp_path: Path) -> None:
    good = _token(web, "alice", "push")
    cases = [
        (f"http://127.0.0.1:{free_port()}", good, (), "cannot connect to", "stackbench serve"),
        (web.base, "sbt_" + "A" * 43, (), "refused the token (unknown, revoked or expired)", "token create"),
        (web.base, _token(web, "alice", "metrics"), (), "scope metrics", "--scope push"),
        ("ftp://example.org", good, (), "is not an http(s) URL", "base URL"),
        (web.base, good, ("--ca-file", str(tmp_path / "missing.pem")), "as a CA certificate", "--ca-file"),
        (web.base.replace("http://", "https://"), good, (), "TLS with", "--ca-file"),
    ]
    for url, token, extra, what, fix in cases:
        result = _push(local_run, url, token, *extra)
        assert result.returncode != 0, (url, result.stdout)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and what in lines[0] and fix in lines[0], (url, result.stderr)
        assert token not in result.stderr  # a token is never printed back


def test_push_without_a_token_names_both_ways_to_give_one(local_run: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STACKBENCH_TOKEN", raising=False)
    result = cli_here("push", "one", "--to", "http://127.0.0.1:9", "--db", local_run)
    assert result.returncode != 0 and "--token-file" in result.stderr and "STACKBENCH_TOKEN" in result.stderr


@pytest.fixture(scope="module")
def tls_site(web: Site, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """The module's server app served over real TLS by uvicorn, with a self-signed certificate for
    127.0.0.1 made by the openssl command (as a TLS reverse proxy would present one)."""
    import subprocess
    import threading
    import time

    import uvicorn

    from stackbench.web.server import uvicorn_config

    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    port = free_port()
    config = uvicorn_config(web.app, "127.0.0.1", port)
    server_log_to_buffer()
    config.ssl_certfile, config.ssl_keyfile = str(cert), str(key)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn with TLS did not start"
        time.sleep(0.02)
    yield f"https://127.0.0.1:{port}", cert
    server.should_exit = True
    thread.join(10)


def test_push_over_tls_verifies_the_certificate(web: Site, tls_site, local_run: str) -> None:  # noqa: ANN001
    url, cert = tls_site
    token = _token(web, "alice", "push")
    untrusted = _push(local_run, url, token)
    assert untrusted.returncode != 0
    assert "TLS with" in untrusted.stderr and "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr
    assert "--ca-file" in untrusted.stderr and len(untrusted.stderr.strip().splitlines()) == 1
    trusted = _push(local_run, url, token, "--ca-file", str(cert), "--json")
    assert trusted.returncode == 0, trusted.stderr
    answer = json.loads(trusted.stdout)["pushed"][0]
    assert answer["created"] and answer["url"] == f"{url}/runs/{answer['id']}"
    assert web.store.has_run(answer["id"])
