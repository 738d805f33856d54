"""The host list refuses anything ssh could read as an option or a shell could expand, with the fix; the
per-client parser and the parallel merge give each host its own numbers and a total computed from them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from stackbench.engine.fio_json import parse_client_results
from stackbench.engine.merge import bins_of, merge_parallel, percentile_from_bins
from stackbench.base.errors import UsageError
from stackbench.fleet.hosts import check_host, parse_hosts
from stackbench.fleet.ssh import Ssh, explain


def test_good_names_pass_in_order(tmp_path: Path) -> None:
    listing = tmp_path / "hosts"
    listing.write_text("# the rack\nnode3\n\nadmin@10.0.0.7   # by address\nfe80::1\n")
    assert parse_hosts("node1, node2.example.org", listing) == [
        "node1", "node2.example.org", "node3", "admin@10.0.0.7", "fe80::1"]


@pytest.mark.parametrize("bad", [
    "-oProxyCommand=touch /tmp/x", "-p", "a b", "h;rm -rf /", "$(id)", "`id`", "host:22", "ssh://host",
    "a@b@c", "..", "host..x", "", "h\nx", "h'x", "h|x",
])
def test_names_that_are_not_destinations_are_refused(bad: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_hosts(bad or " ", None)
    assert "~/.ssh/config" in error.value.fix


def test_a_host_with_a_password_is_refused_without_printing_the_password() -> None:
    """ssh takes no password in a destination: `user:password@host` is refused, the password masked."""
    with pytest.raises(UsageError) as refused:
        check_host("alice:s3cret@node1")
    assert "alice:***@node1" in str(refused.value) and "s3cret" not in str(refused.value)


def test_a_bad_line_of_the_hosts_file_is_named(tmp_path: Path) -> None:
    listing = tmp_path / "hosts"
    listing.write_text("node1\n-oProxyCommand=sh\n")
    with pytest.raises(UsageError, match="line 2"):
        parse_hosts(None, listing)


def test_duplicates_missing_file_and_no_hosts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="twice"):
        parse_hosts("node1,NODE1", None)
    with pytest.raises(UsageError, match="cannot read"):
        parse_hosts(None, tmp_path / "missing")
    with pytest.raises(UsageError, match="no hosts"):
        parse_hosts(None, _empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty"
    path.write_text("# nothing\n")
    return path


def test_the_destination_comes_after_double_dash_and_no_user_text_is_remote() -> None:
    ssh = Ssh("/x/config", 7)
    argv = ssh.agent_command("node1", control="/tmp/ours/c")
    assert argv[:3] == ["ssh", "-F", "/x/config"]
    assert "BatchMode=yes" in argv and "ConnectTimeout=7" in argv
    assert "ControlMaster=yes" in argv and "ControlPath=/tmp/ours/c" in argv and "ControlPersist=no" in argv
    assert argv[-3:-1] == ["--", "node1"]
    assert argv[-1].startswith("python3 -c '")
    forward = ssh.forward_command("node1", "/tmp/ours/c", 4000, "/home/u/tmp/s/fio.sock")
    assert forward[:3] == ["ssh", "-F", "/x/config"] and "ControlPath=/tmp/ours/c" in forward
    assert forward[forward.index("-O") + 1] == "forward"
    assert forward[forward.index("-L") + 1] == "127.0.0.1:4000:/home/u/tmp/s/fio.sock"  # loopback on our side
    assert forward[-2:] == ["--", "node1"]


def test_the_ssh_control_directory_falls_back_to_tmp_when_tmpdir_is_too_long(tmp_path: Path, monkeypatch) -> None:
    """ssh refuses a ControlPath it cannot bind ("unix_listener: path ... too long"): a long $TMPDIR (a deep
    per-user directory) once made every host fail its checks."""
    import tempfile

    from stackbench.fleet.servers import SSH_BIND_SUFFIX, new_control_dir
    from stackbench.fleet.agent import SOCKET_PATH_MAX

    # `short` must fit whatever pytest's own directory is (/tmp/pytest-of-root/pytest-1083/... is 64
    # characters before this test's name: too long itself once pytest's counter has four digits)
    short, deep = Path(tempfile.mkdtemp(prefix="sb-", dir="/tmp")), tmp_path / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    made = Path(new_control_dir())
    try:
        assert made.parent == short and made.stat().st_mode & 0o777 == 0o700
    finally:
        made.rmdir()
        short.rmdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    fallback = Path(new_control_dir())
    try:
        assert fallback.parent == Path("/tmp") and fallback.stat().st_mode & 0o777 == 0o700
        assert len(f"{fallback}/c") + SSH_BIND_SUFFIX <= SOCKET_PATH_MAX
        assert list(deep.iterdir()) == []  # the directory first made there is gone
    finally:
        fallback.rmdir()


def test_the_socket_directory_is_in_tmpdir_when_it_is_set_and_fits(tmp_path: Path, monkeypatch) -> None:
    from stackbench.fleet.agent import SOCKET_PATH_MAX, socket_dir

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert socket_dir("stackbench-fleet-x-h0") == f"{tmp_path}/stackbench-fleet-x-h0"
    monkeypatch.delenv("TMPDIR")
    assert socket_dir("stackbench-fleet-x-h0") == "/tmp/stackbench-fleet-x-h0"
    for unusable in ("relative/dir", str(tmp_path / "missing")):
        monkeypatch.setenv("TMPDIR", unusable)
        assert socket_dir("s") == "/tmp/s"
    deep = tmp_path / ("d" * (SOCKET_PATH_MAX - len(str(tmp_path))))
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    assert socket_dir("s") == "/tmp/s"  # a Unix socket's path could not be that long


@pytest.mark.parametrize("stderr, words", [
    ("ssh: Could not resolve hostname x: Name or service not known", "unknown"),
    ("ssh: connect to host 1.2.3.4 port 22: Connection refused", "refused"),
    ("ssh: connect to host 1.2.3.4 port 22: Connection timed out", "timed out"),
    ("root@h: Permission denied (publickey).", "login failed"),
    ("bash: line 1: python3: command not found", "python3"),
    ("channel 2: open failed: administratively prohibited: open failed", "refuses the port forward"),
    ("bind [127.0.0.1]:4000: Address already in use", "local port"),
])
def test_ssh_failures_become_one_line_with_a_fix(stderr: str, words: str) -> None:
    failure = explain("h", 255 if "python3" not in stderr else 127, stderr)
    assert words in failure.what and failure.fix
    assert failure.line().startswith("h: ")


def _client_document() -> str:
    def entry(host: str, port: int, iops: float, bins: dict[str, int]) -> dict:
        total = sum(bins.values())
        return {
            "jobname": "x", "groupid": 0, "error": 0, "hostname": host, "port": port,
            "job options": {"rw": "randread", "bs": "4096"},
            "read": {"io_bytes": total * 4096, "total_ios": total, "iops": iops, "bw_bytes": iops * 4096,
                     "runtime": 1000, "clat_ns": {"N": total, "mean": 1000.0, "min": 100, "max": 9000,
                                                  "percentile": {"50.000000": 1000, "99.000000": 9000},
                                                  "bins": bins}},
            "usr_cpu": 1.0, "sys_cpu": 2.0,
        }
    document = {"fio version": "fio-3.33", "global options": {"ioengine": "psync"}, "client_stats": [
        entry("127.0.0.1", 4001, 100.0, {"1000": 90, "9000": 10}),
        entry("127.0.0.1", 4002, 300.0, {"2000": 300}),
        # fio's own aggregate, with a deliberately wrong total: it must never be used
        {**entry("127.0.0.1", 4002, 12345.0, {"5": 1}), "jobname": "All clients"},
    ]}
    return "<vm> notice\n" + json.dumps(document)


def test_each_client_is_parsed_alone_and_all_clients_is_skipped() -> None:
    clients = parse_client_results(_client_document())
    assert [(h, p, r.directions[0].iops) for h, p, r in clients] == [("127.0.0.1", 4001, 100.0),
                                                                      ("127.0.0.1", 4002, 300.0)]
    assert bins_of(clients[1][2].document, "read") == Counter({2000: 300})


def test_the_total_sums_rates_and_merges_histograms() -> None:
    clients = [r for _, _, r in parse_client_results(_client_document())]
    parts = [r.directions[0] for r in clients]
    bins = [bins_of(r.document, "read") for r in clients]
    total = merge_parallel(parts, bins, [None, None])
    assert total.iops == 400.0 and total.bw_bytes == 400.0 * 4096 and total.total_ios == 400
    merged = Counter({1000: 90, 9000: 10, 2000: 300})
    assert total.clat.p99_ns == percentile_from_bins(merged, 99.0) == 9000.0
    assert total.clat.p50_ns == percentile_from_bins(merged, 50.0) == 2000.0


@pytest.mark.parametrize("args, words", [
    (["--hosts", "-oProxyCommand=touch /tmp/pwned", "-t", "/tmp"], "is not a host name"),
    (["--hosts", "node1", "-t", "/tmp", "--destroy-data"], "--destroy-data cannot be used with --hosts"),
    (["--hosts", "node1", "-t", "relative/dir"], "is relative"),
    (["--hosts", "node1", "-t", "/tmp", "--ssh-config", "/nonexistent/config"], "is not a file"),
    (["--hosts-file", "/nonexistent/hosts", "-t", "/tmp"], "cannot read --hosts-file"),
])
def test_bad_fleet_input_is_refused_before_any_host_is_contacted(args: list[str], words: str,
                                                                  tmp_path: Path) -> None:
    """In process (the one-line printing of a UsageError is the CLI's, tested for every command elsewhere)."""
    from typer.testing import CliRunner

    from stackbench.cli import app

    result = CliRunner().invoke(app, ["run", *args, "--db", f"sqlite:///{tmp_path / 'r.db'}"],
                                env={"STACKBENCH_SSH_CONFIG": "/dev/null"})
    assert isinstance(result.exception, UsageError), result.output
    assert words in str(result.exception) and result.exception.fix
    assert not Path("/tmp/pwned").exists() and not (tmp_path / "r.db").exists()


def test_dry_run_lists_the_hosts_and_checks_their_names(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from stackbench.cli import app

    shown = CliRunner().invoke(app, ["run", "--hosts", "node1,admin@node2", "-t", "/srv/bench", "--dry-run"])
    assert shown.exit_code == 0 and "On 2 hosts at once (not contacted by --dry-run): node1, admin@node2" in shown.output
    refused = CliRunner().invoke(app, ["run", "--hosts", "-oProxyCommand=x", "-t", "/srv/bench", "--dry-run"])
    assert isinstance(refused.exception, UsageError)


@pytest.mark.parametrize("body", ['{"a": NaN}', '{"a": Infinity}', '{"a": 1e999}', '{"a": 1' + "0" * 25 + "}",
                                  '{"a": ' + "9" * 5000 + "}"])
def test_a_host_answer_with_numbers_the_agent_never_sends_is_not_an_answer(body: str) -> None:
    """A host's answer is data from elsewhere, like any file: strict JSON whose numbers fit 64 bits."""
    from stackbench.fleet.agent import MARK
    from stackbench.fleet.ssh import answer_in

    assert answer_in(f"login banner\n{MARK}{body}\n") is None
    assert answer_in(f'{MARK}{{"a": 18446744073709551615, "b": 0.5}}\n') == {"a": 2**64 - 1, "b": 0.5}


@pytest.mark.parametrize("change, named", [
    (lambda a: a["system"].update(ram_bytes="lots"), "system.ram_bytes='lots'"),
    (lambda a: a["system"].update(ram_bytes=1.5), "system.ram_bytes='1.5'"),
    (lambda a: a["target"].update(room=-1), "target.room='-1'"),
    (lambda a: a["direct"].update(alignment=0), "direct.alignment='0'"),
    (lambda a: a.update(timing={"python_s": -3}), "timing"),
])
def test_a_host_whose_answer_has_sizes_out_of_range_fails_the_checks(change, named: str) -> None:  # noqa: ANN001
    """A size the fleet run computes with (the file size from RAM and room, the O_DIRECT alignment) that is
    not a whole number in range failed later with a traceback (int('lots'), bs % 0.5); now the host fails
    its checks with one line."""
    from stackbench.fleet.preflight import _judge
    from stackbench.fleet.ssh import HostFailure

    answer = {"fio_path": "/usr/bin/fio", "fio_version": "fio-3.33", "system": {"ram_bytes": 2**33},
              "target": {"file": "/srv/x", "remove_after": True, "room": 2**40}, "direct": {"alignment": 512},
              "timing": {"python_s": 0.1}}
    judged = _judge("node1", 0, answer, "fio-3.33")
    assert not isinstance(judged, HostFailure)
    change(answer)
    judged = _judge("node1", 0, answer, "fio-3.33")
    assert isinstance(judged, HostFailure) and named in judged.what and judged.fix


def test_an_endless_line_from_a_host_is_read_in_pieces() -> None:
    """A host that writes without a line break is never held as one line (a /dev/zero behind ssh)."""
    import io

    from stackbench.fleet.servers import LINE_BYTES, _read_lines

    pieces: list[str] = []
    _read_lines(io.BytesIO(b"x" * (3 * LINE_BYTES + 5)), pieces.append)
    assert [len(piece) for piece in pieces] == [LINE_BYTES, LINE_BYTES, LINE_BYTES, 5]
