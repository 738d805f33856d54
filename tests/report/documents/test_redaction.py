"""Redaction (report/redact.py): identifiers become stable placeholders in every string, and no identifier
from a real run's facts survives in any format of `stackbench report`, charts included."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from io import BytesIO
from pathlib import Path

import pytest

from conftest import cli_here
from report.documents.shared import HOST, USER, Measured, draw_figures, leaks
from stackbench.load.report_contents import build_contents
from stackbench.report.documents import DOCUMENT_FORMATS
from stackbench.report.redact import Redactor, describe, redactor
from stackbench.store import open_store
from synthetic import cell, run

FACTS = {
    "system": {"hostname": "db7.example.org", "virtualization": "kvm", "is_vm": True},
    "process": {"host": "db7.example.org", "boot_id": "200a412d-b431-41f5-ae7f-db1098ad955d"},
    "target": {"path": "/home/bob/bench", "block_devices": [
        {"name": "nvme0n1", "model": "Samsung SSD 980 PRO 1TB", "serial": "S5GXNF0R123456X"},
        {"name": "sda", "model": "ST4000NM0035", "serial": "ZC1ABCDE"},
    ]},
    "command": ["/usr/bin/stackbench", "run", "-t", "/home/bob/bench", "--label", "db7 nvme"],
}


def _run(**changes: object):
    return replace(run([cell(rw="randread"), cell(rw="randwrite")], label="db7 before", facts=FACTS), **changes)


def test_known_fields_and_patterns_become_numbered_placeholders() -> None:
    redact = Redactor()
    redact.learn_run(_run())
    copy = redact.run(_run(target="/home/bob/bench"))
    assert copy.label == "host-2 before"  # the short name of db7.example.org
    assert copy.target == "/home/user-1/bench"
    assert copy.facts["system"]["hostname"] == "host-1"
    assert [d["serial"] for d in copy.facts["target"]["block_devices"]] == ["disk-A", "disk-B"]
    assert copy.facts["target"]["block_devices"][0]["model"] == "Samsung SSD 980 PRO 1TB"  # a model is kept
    assert copy.facts["process"]["boot_id"] == "id-1"
    assert copy.facts["command"][-1] == "host-2 nvme"
    assert redact.text("kvm on DB7 and db7.example.org") == "kvm on host-2 and host-1"  # words, any case
    assert redact.summary() == {"host": 2, "disk": 2, "user": 1, "id": 1}
    assert describe(redact.summary()) == ("2 host names, 2 disk serial numbers, 1 user name and 1 UUID replaced "
                                          "by placeholders")


@pytest.mark.parametrize("text, expected", [
    ("eth0 00:1A:2b:3c:4d:5e and 00-1a-2b-3c-4d-5f", "eth0 mac-1 and mac-2"),
    ("disk wwn-0x5000c500a1b2c3d4 naa.600508b1001c4d5e6f7a8b9c0d1e2f30", "disk wwn-1 wwn-2"),
    ("/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K1234567 is the log", "/dev/disk/by-id/disk-A is the log"),
    ("C:\\Users\\Carol\\fio and /Users/dave/x and /var/home/erin/", "C:\\Users\\user-1\\fio and /Users/user-2/x and "
     "/var/home/user-3/"),
    ("client 192.168.10.21, fio-3.33, kernel 6.1.0", "client ip-1, fio-3.33, kernel 6.1.0"),
    ("ssh root@pve1.lan zfs set sync=disabled; mail carol@example.org", "ssh root@host-1 zfs set sync=disabled; "
     "mail user-1@host-3"),  # host-2 is pve1, the short name
    ("4K QD1 rnd read @ 3 runs", "4K QD1 rnd read @ 3 runs"),
    ("client fe80::1ff:fe23:4567:890a%eth0 server 2001:db8:0:1::7. mapped ::ffff:192.0.2.1",
     "client ip-1 server ip-2. mapped ip-3"),
    ("nfs4 nfs-server.lan:/export/vm on /mnt/vm, [2001:db8::9]:/export and 10.0.0.5:/tank",
     "nfs4 host-1:/export/vm on /mnt/vm, [ip-1]:/export and ip-2:/tank"),  # host-2 is nfs-server, the short name
    # not addresses or servers: a MAC, a time, a version, a URL, a Windows drive, a PATH, a dataset
    ("00:1a:2b:3c:4d:5e at 12:30:45, fio-3.33 https://example.org/x C:/fio /usr/bin:/bin tank/vm:/x",
     "mac-1 at 12:30:45, fio-3.33 https://example.org/x C:/fio /usr/bin:/bin tank/vm:/x"),
])
def test_patterns_are_found_in_any_text(text: str, expected: str) -> None:
    assert Redactor().text(text) == expected


def test_an_nfs_mounted_target_keeps_neither_its_server_nor_its_addresses() -> None:
    """The target facts of a run on NFS over IPv6 as the probe records them (findmnt's source and options)."""
    facts = {**FACTS, "target": {"path": "/mnt/vm/bench", "fs_type": "nfs4", "mount_point": "/mnt/vm",
                                 "mount_source": "nfs-server.lan:/export/vm",
                                 "mount_options": "rw,relatime,vers=4.2,proto=tcp6,addr=fd00:10::5,"
                                                  "clientaddr=fd00:10::21,sec=sys",
                                 "block_devices": []}}
    redact = Redactor()
    original = _run(facts=facts, target="/mnt/vm/bench")
    redact.learn_run(original)
    copy = redact.run(original)
    target = copy.facts["target"]
    assert target["mount_source"] == "host-3:/export/vm"  # host-1, host-2: db7's full and short names
    assert target["mount_options"] == "rw,relatime,vers=4.2,proto=tcp6,addr=ip-1,clientaddr=ip-2,sec=sys"
    assert redact.text("waiting for nfs-server to answer") == "waiting for host-4 to answer"
    for secret in ("nfs-server", "fd00:10::5", "fd00:10::21"):
        assert secret not in repr(copy)


def test_a_fleet_runs_total_stays_the_total() -> None:
    """The total's cells of a fleet run carry the host TOTAL_HOST: a name of stackbench's, not a machine, so
    the redacted copy is still a fleet run with its total (its table and chart find it by that name)."""
    from stackbench.model.results import TOTAL_HOST

    cells = [replace(cell(rw="randread"), result=replace(cell(rw="randread").result, host=host))
             for host in ("node1", TOTAL_HOST)]
    fleet = run(cells, label="rack4", facts={"fleet": {"hosts": ["node1"], "total_host": TOTAL_HOST}})
    redact = Redactor()
    redact.learn_run(fleet)
    assert [c.result.host for c in redact.run(fleet).cells] == ["host-1", TOTAL_HOST]


def test_a_by_id_name_holding_a_known_serial_keeps_its_model() -> None:
    redact = Redactor()
    redact.learn_run(_run())
    assert redact.text("/dev/disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNF0R123456X") == \
        "/dev/disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_disk-A"


def test_placeholders_are_stable_and_in_a_fixed_order() -> None:
    first, second = Redactor(), Redactor()
    for redact in (first, second):
        redact.learn_run(_run())
    texts = ["/home/bob db7 ZC1ABCDE", "S5GXNF0R123456X"]
    assert [first.text(t) for t in texts] == [second.text(t) for t in texts] == ["/home/user-1 host-2 disk-B", "disk-A"]
    assert first.text("ZC1ABCDE") == first.text("zc1abcde") == "disk-B"


def test_keep_identifiers_changes_nothing() -> None:
    keep, original = redactor(keep_identifiers=True), _run()
    keep.learn_run(original)
    assert keep.run(original) == original
    assert keep.text("/home/bob on db7 00:1a:2b:3c:4d:5e") == "/home/bob on db7 00:1a:2b:3c:4d:5e"
    assert keep.summary() == {}


def _texts(fmt: str, main: bytes, beside: list[tuple[str, bytes]]) -> str:
    """Every text a document holds: the file, the names of the files beside it, and for XLSX every XML part
    of the workbook (cell values, shared strings, sheet names, charts, properties)."""
    if fmt == "xlsx":
        with zipfile.ZipFile(BytesIO(main)) as book:
            return "\n".join(book.read(name).decode("utf-8") for name in book.namelist())
    return main.decode("utf-8") + "\n" + "\n".join(name for name, _ in beside)


@pytest.mark.slow
def test_no_identifier_from_the_facts_survives_in_any_format(measured: Measured, tmp_path: Path) -> None:
    identifiers = measured.identifiers
    assert HOST in identifiers and USER in identifiers and len(identifiers) >= 4
    store = open_store(measured.db)
    refs = [measured.first["run_id"], measured.second["run_id"]]
    argv = ["report", *refs, "--compare", *refs, "--layers", ",".join(refs), "-o", str(measured.target / "r.html")]
    for keep in (False, True):
        contents = build_contents(store, refs, compare=refs, layers=refs, keep_identifiers=keep, argv=argv,
                                  figures=draw_figures)
        assert len(contents.figures) == 3
        figure_texts = "\n".join(f"{f.title}\n{f.alt}\n{f.render('svg').decode()}" for f in contents.figures)
        for fmt in DOCUMENT_FORMATS.values():
            main, beside = fmt.render(contents, "report")
            text = _texts(fmt.name, main, beside)
            if keep:  # the check sees identifiers when they are there
                assert HOST in leaks(text, identifiers) and USER in leaks(text, identifiers), fmt.name
            else:
                assert leaks(text, identifiers) == [], fmt.name
                assert "host-1" in text, fmt.name
        assert (leaks(figure_texts, identifiers) == []) != keep


@pytest.mark.slow
def test_the_command_writes_no_identifier_in_any_format(measured: Measured, tmp_path: Path) -> None:
    refs = [measured.first["run_id"], measured.second["run_id"]]
    for suffix in ("html", "md", "xlsx"):
        output = tmp_path / f"report.{suffix}"
        done = cli_here("report", *refs, "--compare", *refs, "-o", str(output), "--db", measured.db)
        assert done.returncode == 0, done.stderr
        assert leaks(done.stdout, measured.identifiers) == []
        data = output.read_bytes()
        assert leaks(_texts(suffix, data, [(p.name, b"") for p in tmp_path.iterdir()]), measured.identifiers) == []
