"""The API of `stackbench serve` against the real server on 127.0.0.1 (tests/web/site.py): API tokens,
POST /api/runs (what `stackbench push` sends) and GET /metrics (OpenMetrics, checked with
prometheus_client's parser)."""

from __future__ import annotations

import copy
import json
import secrets
import time
from datetime import timedelta
from pathlib import Path
from typing import Iterator

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from stackbench.load.importer import import_files
from stackbench.store import open_store
from stackbench.store.accounts import now
from stackbench.store.tokens import Tokens
from stackbench.store.uploads import run_document
from stackbench.web.context import keyed_digest
from stackbench.web.upload import MAX_BYTES, MAX_DEPTH
from web.site import FIO, SHARED, Site, Template, app_routes
from web import test_postgres

pg_database = test_postgres.pg_database  # the PostgreSQL fixture of the server's other PostgreSQL test
HOSTILE_TEXT = '<b>x</b> "quoted" back\\slash\nnew line'


@pytest.fixture(scope="module")
def web(template: Template) -> Iterator[Site]:
    """A server of this module's own (a copy of the populated store): the runs pushed here must not change
    what the shared server's page tests count."""
    with template.site(SHARED) as running:
        yield running


@pytest.fixture(scope="module")
def as_user(web: Site) -> dict:
    return {name: web.login(name) for name in ("alice", "bob", "carol")}


def make_token(web: Site, owner: str, scope: str, *, revoked: bool = False, expired: bool = False) -> str:
    """A token made as `stackbench token create` makes it (the CLI's own path is tested in tests/cli)."""
    secret = "sbt_" + secrets.token_urlsafe(32)
    expires = now() - timedelta(seconds=1) if expired else now() + timedelta(days=1)
    tokens = Tokens(web.store)
    token = tokens.add(token_hash=keyed_digest(web.accounts.server_secret(), secret), owner=web.ids[owner],
                       scope=scope, note="test", expires_at=expires)
    if revoked:
        tokens.revoke(token.id)
    return secret


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - the pushing machine's store
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('source') / 'results.db'}")
    yield store
    store.dispose()


def document(source, name: str = "randrw-bs-seq-rand.json", label: str = "pushed") -> dict:  # noqa: ANN001
    run = import_files(source, [FIO / name], label=label)[0]
    return run_document(source, run.id)


def test_a_pushed_run_is_stored_private_to_the_tokens_owner_with_its_raw_output(web: Site, source, as_user) -> None:
    doc = document(source)
    answer = web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "alice", "push")))
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]
    assert run_id == doc["run"]["id"] and answer.json()["url"] == f"{web.base}/runs/{run_id}"
    stored, original = web.store.get_run(run_id), source.get_run(run_id)
    assert [(c.workload, c.result) for c in stored.cells] == [(c.workload, c.result) for c in original.cells]
    assert stored.facts == original.facts and stored.label == original.label
    assert [o["raw_text"] for o in web.store.fio_outputs(run_id)] == [o["raw_text"] for o in source.fio_outputs(run_id)]
    assert web.accounts.access(_viewer(web, "alice"), "run", run_id) == (web.ids["alice"], "private")
    assert as_user["alice"].get(f"/runs/{run_id}").status_code == 200
    assert as_user["bob"].get(f"/runs/{run_id}").status_code == 404
    again = web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "alice", "push")))
    assert (again.status_code, again.json()["id"], again.json()["created"]) == (200, run_id, False)
    other = web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "bob", "push")))
    assert other.status_code == 409, other.text


def _viewer(web: Site, name: str):  # noqa: ANN202
    from stackbench.store.accounts import Viewer

    return Viewer(web.ids[name], False)


def test_unknown_revoked_expired_and_malformed_tokens_get_the_same_401(web: Site, source, as_user) -> None:
    doc = document(source)
    client = web.client()
    unknown = client.post("/api/runs", json=doc, headers=auth("sbt_" + secrets.token_urlsafe(32)))
    assert unknown.status_code == 401 and unknown.headers["www-authenticate"] == "Bearer"
    for token in (make_token(web, "alice", "push", revoked=True), make_token(web, "alice", "push", expired=True),
                  "sbt_short", "Basic", make_token(web, "alice", "push")[:-1] + "!"):
        answer = client.post("/api/runs", json=doc, headers=auth(token))
        assert (answer.status_code, answer.text) == (401, unknown.text), token
    assert client.post("/api/runs", json=doc).text == unknown.text  # no Authorization header at all
    # a logged-in browser session is not an API credential
    assert as_user["alice"].post("/api/runs", json=doc).status_code == 401
    assert client.get("/metrics", headers=auth(make_token(web, "alice", "metrics", revoked=True))).text == unknown.text
    assert not web.store.has_run(doc["run"]["id"])


def test_each_scope_opens_only_its_own_route(web: Site, source) -> None:
    doc = document(source)
    metrics_token, push_token = make_token(web, "alice", "metrics"), make_token(web, "alice", "push")
    refused = web.client().post("/api/runs", json=doc, headers=auth(metrics_token))
    assert refused.status_code == 403 and "scope metrics" in refused.json()["error"]
    assert web.client().get("/metrics", headers=auth(push_token)).status_code == 403
    assert not web.store.has_run(doc["run"]["id"])
    assert web.client().get("/metrics", headers=auth(metrics_token)).status_code == 200


def test_no_route_manages_tokens(tmp_path: Path) -> None:
    """Tokens are made only by the CLI on the server's machine: no route's path mentions them."""
    from stackbench.store import open_store as _open
    from stackbench.web.app import create_app

    store = _open(str(tmp_path / "results.db"))
    paths = [r.path for r in app_routes(create_app(store))]
    assert {"/api/runs", "/metrics", "/runs"} <= set(paths)
    assert not [p for p in paths if "token" in p.lower().replace("{token}", "")]


def test_an_upload_over_the_size_limit_is_refused_with_413(web: Site) -> None:
    token = make_token(web, "alice", "push")
    big = b"x" * (MAX_BYTES + 1)
    declared = web.client().post("/api/runs", content=big, headers=auth(token))
    assert declared.status_code == 413 and "32 MiB" in declared.json()["error"]

    def chunks():  # no Content-Length: the server counts what it reads
        for _ in range(MAX_BYTES // (1024**2) + 1):
            yield b" " * 1024**2

    streamed = web.client().post("/api/runs", content=chunks(), headers=auth(token))
    assert streamed.status_code == 413


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deeply_nested_uploads_are_refused(web: Site, source, depth: int) -> None:
    doc = document(source)
    body = json.dumps(doc).replace('"facts": {', '"facts": {"deep": ' + "[" * depth + "]" * depth + ", ", 1)
    answer = web.client().post("/api/runs", content=body, headers=auth(make_token(web, "alice", "push")))
    assert answer.status_code == 400 and "nested" in answer.json()["error"], answer.text
    assert not web.store.has_run(doc["run"]["id"])


def _broken(doc: dict, change) -> dict:  # noqa: ANN001
    copied = copy.deepcopy(doc)
    change(copied)
    return copied


BROKEN = {
    "iops is text": (lambda d: d["cells"][0]["result"].update(iops="fast"), "cells[0].result.iops"),
    "bs is a float": (lambda d: d["cells"][0]["workload"].update(bs=4096.5), "cells[0].workload.bs"),
    "unknown field": (lambda d: d["run"].update(admin=True), "run has unknown fields: admin"),
    "missing raw output": (lambda d: d["fio_outputs"][0].pop("raw_text"), "fio_outputs[0] lacks raw_text"),
    "raw output not text": (lambda d: d["fio_outputs"][0].update(raw_text=1), "fio_outputs[0].raw_text"),
    "bad id": (lambda d: d["run"].update(id="../../etc/passwd"), "run.id"),
    "running": (lambda d: d["run"].update(status="running"), "run.status"),
    "bad time": (lambda d: d["run"].update(created_at="yesterday"), "run.created_at"),
    "bad rw": (lambda d: d["cells"][0]["workload"].update(rw="rm -rf"), "cells[0]"),
    "bool as count": (lambda d: d["cells"][0].update(seq=True), "cells[0].seq"),
    "dangling output": (lambda d: d["cells"][0].update(fio_output_seq=99), "fio_output_seq"),
    "sample is a list": (lambda d: d["cells"][0].update(samples=[[1, 2]]), "samples[0]"),
    "long label": (lambda d: d["run"].update(label="x" * 201), "run.label"),
    "label on two lines": (lambda d: d["run"].update(label="a\nb"), "run.label cannot contain U+000A"),
    "label with a bidi override": (lambda d: d["run"].update(label="a\u202eb"), "run.label cannot contain U+202E"),
    "label with an isolate": (lambda d: d["run"].update(label="a\u2067b"), "run.label cannot contain U+2067"),
    "label with a zero-width space": (lambda d: d["run"].update(label="a\u200bb"), "run.label cannot contain U+200B"),
    "label with a line separator": (lambda d: d["run"].update(label="a\u2028b"), "run.label cannot contain U+2028"),
    "other format": (lambda d: d.update(format_version=99), "version 1"),
    # numbers in range, as an import checks them (engine/ranges.py): finite ones that break statistics too
    "latency past fio's counters": (lambda d: d["cells"][0]["result"]["clat"].update(mean_ns=1.7e308),
                                    "cells[0].result: clat mean_ns=1.7e+308"),
    "iops past fio's counters": (lambda d: d["cells"][0]["result"].update(iops=1e300), "cells[0].result: iops"),
    "io_bytes past 64 bits": (lambda d: d["cells"][0]["result"].update(io_bytes=2**70), "cells[0].result: io_bytes"),
    "iodepth fio refuses": (lambda d: d["cells"][0]["result"].update(iodepth=2**31), "cells[0].result: iodepth"),
    "negative sample time": (lambda d: d["cells"][0].update(samples=[{"t_s": -1.0, "iops": 1.0}]),
                             "cells[0].samples[0].t_s=-1.0"),
    "sample iops past 64 bits": (lambda d: d["cells"][0].update(samples=[{"t_s": 1.0, "iops": 1e300}]),
                                 "cells[0].samples[0].iops"),
    "count past the column": (lambda d: d["cells"][0].update(seq=2**40), "cells[0].seq"),
    "segment past the column": (lambda d: d["fio_outputs"][0].update(segment=2**63), "fio_outputs[0].segment"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_field_is_checked_before_anything_is_stored(web: Site, source, name: str) -> None:
    change, reason = BROKEN[name]
    doc = _broken(document(source), change)
    answer = web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "alice", "push")))
    assert answer.status_code == 400, answer.text
    assert reason in answer.json()["error"] and "\n" not in answer.json()["error"]
    assert not web.store.has_run(doc["run"]["id"]) or name == "bad id"


@pytest.mark.parametrize("body", [b"not json", b'{"format": NaN}', b"[]", b'{"a": Infinity}'])
def test_non_json_and_json_constants_are_refused(web: Site, body: bytes) -> None:
    answer = web.client().post("/api/runs", content=body, headers=auth(make_token(web, "alice", "push")))
    assert answer.status_code == 400 and answer.json()["error"]


def test_hostile_text_is_stored_as_data_and_exported_escaped(web: Site, source, as_user) -> None:
    doc = document(source, "randread-psync.json", label="hostile")
    label = HOSTILE_TEXT.replace("\n", " ")  # a label prints on one line (refused below); target and host may not
    doc["run"].update(label=label, target=HOSTILE_TEXT)
    doc["run"]["facts"]["system"] = {"hostname": HOSTILE_TEXT}
    answer = web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "bob", "push")))
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]
    stored = web.store.get_run(run_id)
    assert (stored.label, stored.target, stored.facts["system"]["hostname"]) == (label, HOSTILE_TEXT, HOSTILE_TEXT)
    page = as_user["bob"].get(f"/runs/{run_id}").text
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    text = web.client().get("/metrics", headers=auth(make_token(web, "bob", "metrics"))).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    info = [s for s in families["stackbench_run"].samples if s.labels["run_id"] == run_id]
    assert [(s.labels["host"], s.labels["target"], s.labels["label"]) for s in info] == [(HOSTILE_TEXT, HOSTILE_TEXT,
                                                                                           label)]


def test_metrics_are_the_latest_complete_runs_the_token_owner_may_see(web: Site, source) -> None:
    doc = document(source, "randread-psync.json", label="metrics")
    doc["run"]["target"] = "/metrics/only-carol"
    assert web.client().post("/api/runs", json=doc, headers=auth(make_token(web, "carol", "push"))).status_code == 201
    answer = web.client().get("/metrics", headers=auth(make_token(web, "carol", "metrics")))
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    families = {f.name: f for f in text_string_to_metric_families(answer.text)}
    assert {"stackbench_result_iops", "stackbench_result_bytes_per_second", "stackbench_result_latency_seconds",
            "stackbench_run", "stackbench_run_last_success_timestamp_seconds"} <= families.keys()
    assert families["stackbench_result_latency_seconds"].unit == "seconds"
    assert families["stackbench_result_bytes_per_second"].unit == "bytes_per_second"
    iops = [s for s in families["stackbench_result_iops"].samples if s.labels["target"] == "/metrics/only-carol"]
    cell = web.store.get_run(doc["run"]["id"]).cells[0]
    assert [s.value for s in iops] == [cell.result.iops]
    assert iops[0].labels["bs"] == str(cell.workload.bs) and iops[0].labels["iodepth"] == str(cell.workload.iodepth)
    quantiles = {s.labels["quantile"]: s.value for s in families["stackbench_result_latency_seconds"].samples
                 if s.labels["target"] == "/metrics/only-carol"}
    assert quantiles == {"0.5": cell.result.clat.p50_ns / 1e9, "0.99": cell.result.clat.p99_ns / 1e9,
                         "0.999": cell.result.clat.p999_ns / 1e9}
    alice = web.client().get("/metrics", headers=auth(make_token(web, "alice", "metrics"))).text
    assert "/metrics/only-carol" not in alice  # carol's private run is not alice's to monitor


@pytest.mark.postgres
@pytest.mark.slow
def test_push_and_metrics_on_postgresql(pg_database: str, source) -> None:
    from web.site import SHARED, site

    with site(pg_database, SHARED) as web:
        doc = document(source, "randread-psync.json", label="on-postgres")
        doc["run"]["target"] = HOSTILE_TEXT
        token = make_token(web, "alice", "push")
        answer = web.client().post("/api/runs", json=doc, headers=auth(token))
        assert answer.status_code == 201, answer.text
        run_id = answer.json()["id"]
        assert web.store.get_run(run_id).cells[0].result == source.get_run(run_id).cells[0].result
        assert [o["raw_text"] for o in web.store.fio_outputs(run_id)] == [o["raw_text"] for o in source.fio_outputs(run_id)]
        assert web.client().post("/api/runs", json=doc, headers=auth(token)).status_code == 200
        text = web.client().get("/metrics", headers=auth(make_token(web, "alice", "metrics"))).text
        targets = {s.labels["target"] for f in text_string_to_metric_families(text) for s in f.samples}
        assert HOSTILE_TEXT in targets
        made = Tokens(web.store).holder(keyed_digest(web.accounts.server_secret(), token))[0]
        Tokens(web.store).revoke(made.id)
        assert web.client().post("/api/runs", json=doc, headers=auth(token)).status_code == 401


def test_tokens_are_never_logged(web: Site, source, caplog: pytest.LogCaptureFixture) -> None:
    """The server's access log (web/headers.py) and anything else that logs while tokens are used."""
    import logging

    caplog.set_level(logging.DEBUG)
    tokens = [make_token(web, "alice", "push"), make_token(web, "alice", "metrics"), "sbt_" + "B" * 43]
    client = web.client()
    client.post("/api/runs", json=document(source), headers=auth(tokens[0]))
    client.get("/metrics", headers=auth(tokens[1]))
    client.get("/metrics", headers=auth(tokens[2]))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "/api/runs" in logged and "/metrics" in logged  # the requests were logged ...
    assert not [token for token in tokens if token[4:] in logged]  # ... without their tokens


def test_guessing_tokens_is_throttled_per_address(fresh_site) -> None:  # noqa: ANN001
    from stackbench.web.settings import Settings

    with fresh_site(Settings(misses_per_address=5)) as site:
        client = site.client()
        answers = [client.get("/metrics", headers=auth("sbt_" + secrets.token_urlsafe(32))).status_code
                   for _ in range(6)]
        assert answers == [401] * 5 + [429]
        refused = client.get("/metrics", headers=auth(make_token(site, "alice", "metrics")))
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0  # even a good token, for now


class _HeldSlot:
    """The server's only upload slot held by a push whose body is half sent, until `release()`."""

    def __init__(self, site: Site, token: str, body: bytes) -> None:
        import threading

        self.sent_half, self.finish, self.answers = threading.Event(), threading.Event(), {}

        def slowly():
            yield body[: len(body) // 2]
            self.sent_half.set()
            assert self.finish.wait(30)
            yield body[len(body) // 2:]

        self.thread = threading.Thread(target=lambda: self.answers.update(held=site.client().post(
            "/api/runs", content=slowly(), headers=auth(token))))
        self.thread.start()
        assert self.sent_half.wait(30)
        time.sleep(0.2)  # the server has the first half of the body by now

    def release(self) -> None:
        self.finish.set()
        self.thread.join(30)



def test_uploads_past_the_concurrent_limit_are_answered_503_and_memory_stays_bounded(fresh_site, source) -> None:  # noqa: ANN001
    """While `uploads_at_once` bodies are being read, another push is refused at once (503, Retry-After)
    instead of holding one more 32 MiB body in memory; the upload in progress is stored as usual."""
    from stackbench.web.settings import Settings

    with fresh_site(Settings(uploads_at_once=1)) as site:
        token = make_token(site, "alice", "push")
        held = _HeldSlot(site, token, json.dumps(document(source, label="slow upload")).encode())
        try:
            busy = site.client().post("/api/runs", content=json.dumps(document(source, label="other")).encode(),
                                      headers=auth(token))
        finally:
            held.release()
        assert busy.status_code == 503 and busy.headers["retry-after"] == "5", busy.text
        assert "other uploads" in busy.json()["error"]
        assert held.answers["held"].status_code == 201, held.answers["held"].text
        again = site.client().post("/api/runs", content=json.dumps(document(source, label="later")).encode(),
                                   headers=auth(token))
        assert again.status_code == 201  # the slot is free again


def _push_cli(site: Site, source, token: str, run_id: str, monkeypatch: pytest.MonkeyPatch, on_sleep) -> tuple:  # noqa: ANN001
    """`stackbench push` through the real entry point, its waits between attempts recorded instead of slept
    (the only thing replaced: the server, the 503 and its Retry-After are real)."""
    from types import SimpleNamespace

    from conftest import cli_here
    from stackbench.cli import push as push_command

    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        on_sleep()

    monkeypatch.setattr(push_command, "time", SimpleNamespace(sleep=sleep, monotonic=time.monotonic))
    monkeypatch.setenv("STACKBENCH_TOKEN", token)
    return cli_here("push", run_id, "--to", site.base, "--db", source.url), waits


def test_push_waits_as_a_busy_server_asks_and_tries_again(fresh_site, source, monkeypatch) -> None:  # noqa: ANN001
    from stackbench.web.settings import Settings

    run_id = document(source, label="retried")["run"]["id"]
    with fresh_site(Settings(uploads_at_once=1)) as site:
        token = make_token(site, "alice", "push")
        held = _HeldSlot(site, token, json.dumps(document(source, label="slow upload")).encode())
        result, waits = _push_cli(site, source, token, run_id, monkeypatch, on_sleep=held.release)
        assert result.returncode == 0, result.stderr
        assert waits == [5]  # the server's Retry-After, once: the second attempt found the slot free
        assert held.answers["held"].status_code == 201
        assert f"Pushed {run_id[:12]}" in result.stdout + result.stderr
        assert site.store.get_run(run_id).label == "retried"


def test_push_gives_up_on_a_server_that_stays_busy_in_one_line(fresh_site, source, monkeypatch) -> None:  # noqa: ANN001
    from stackbench.cli.push import BUSY_RETRIES
    from stackbench.web.settings import Settings

    run_id = document(source, label="refused")["run"]["id"]
    with fresh_site(Settings(uploads_at_once=1)) as site:
        token = make_token(site, "alice", "push")
        held = _HeldSlot(site, token, json.dumps(document(source, label="slow upload")).encode())
        try:
            result, waits = _push_cli(site, source, token, run_id, monkeypatch, on_sleep=lambda: None)
        finally:
            held.release()
        assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
        assert "busy storing other uploads" in result.stderr and "Push again later" in result.stderr
        assert waits == [5] * BUSY_RETRIES


@pytest.mark.slow  # real charts drawn by a real server
def test_a_pushed_runs_charts_are_drawn_at_once(template: Template, source, tmp_path: Path) -> None:
    """A push wakes the server's chart warmer (web/chart_warmer.py): the run's charts are on disk long before
    the warmer's next look (an hour here), so its page's first view draws nothing."""
    from dataclasses import replace

    directory = tmp_path / "charts"
    with template.site(replace(SHARED, chart_cache=directory, warm_runs=20, warm_interval_s=3600)) as site:
        warmer = site.app.state.server.warmer
        try:
            assert warmer.idle.wait(120)
            before = len(list(directory.glob("*.json")))
            answer = site.client().post("/api/runs", json=document(source, label="pushed-warm"),
                                        headers=auth(make_token(site, "alice", "push")))
            assert answer.status_code == 201
            deadline = time.monotonic() + 60
            while len(list(directory.glob("*.json"))) == before and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(list(directory.glob("*.json"))) == before + 1
        finally:
            warmer.stop()
