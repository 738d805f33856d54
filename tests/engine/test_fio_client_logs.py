"""fio's client writes the per-second logs its servers send with the server's host name appended
(client.c, fio_client_handle_iolog); a fleet run tells its hosts' logs apart by the prefix of each host's job
file. The file names and line format here are those fio-3.33 wrote for `--client=127.0.0.1,PORT`."""

from __future__ import annotations

from pathlib import Path

from stackbench.engine.fio_logs import read_samples


def _log(directory: Path, name: str, *values: int) -> None:
    (directory / name).write_text("".join(f"{(i + 1) * 1000}, {v}, 0, 0, 0\n" for i, v in enumerate(values)))


def test_each_servers_logs_are_read_by_their_prefix_and_apart_from_a_local_runs(tmp_path: Path) -> None:
    _log(tmp_path, "host0_iops.1.log.127.0.0.1", 100, 110)
    _log(tmp_path, "host1_iops.1.log.127.0.0.1", 200, 210)
    _log(tmp_path, "host1_bw.1.log.127.0.0.1", 800, 840)
    _log(tmp_path, "cell_iops.1.log", 5, 6)
    host0 = read_samples(tmp_path, "host0", client=True)
    host1 = read_samples(tmp_path, "host1", client=True)
    assert [s.iops for s in host0["read"]] == [100, 110]
    assert [(s.iops, s.bw_bytes) for s in host1["read"]] == [(200, 800 * 1024), (210, 840 * 1024)]
    assert [s.iops for s in read_samples(tmp_path, "cell")["read"]] == [5, 6]
    assert read_samples(tmp_path, "cell", client=True) == {}
    assert read_samples(tmp_path, "host0") == {}  # a local run never takes a client's logs
