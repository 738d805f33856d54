"""The facts table of a report: the rows a reader needs, only for facts the run holds."""

from __future__ import annotations

from dataclasses import replace

from stackbench.report.facts import facts_table
from synthetic import cell, run

MEASURED = {
    "fio_version": "fio-3.36",
    "stackbench_version": "0.1.0",
    "system": {"hostname": "host-1", "kernel": "6.8.12-4-pve", "arch": "x86_64", "cpu_model": "AMD EPYC 7302P",
               "cpu_count": 32, "cpu_flags_aes": False, "ram_bytes": 128 * 1024**3, "virtualization": "none",
               "is_vm": False, "container": "none"},
    "target": {"path": "/tank/bench", "kind": "directory", "file": "/tank/bench/x.scratch", "fs_type": "zfs",
               "mount_point": "/tank/bench", "mount_source": "tank/bench", "zfs_dataset": "tank/bench",
               "block_devices": [{"name": "nvme0n1", "vendor": None, "model": "Samsung SSD 980 PRO 1TB",
                                  "size_bytes": 1024**4, "logical_sector_size": 512, "physical_sector_size": 4096,
                                  "rotational": False, "scheduler": "none", "serial": "disk-A", "role": "disk"}]},
    "ab": {"session": "5" * 32, "arm": "B", "command": "zfs set compression=lz4 tank/bench", "rounds": 6},
}


def test_a_measured_run_on_bare_metal_with_zfs_and_an_ab_arm() -> None:
    rows = dict(facts_table(replace(run([cell()], facts=MEASURED), target="/tank/bench")).rows)
    assert rows["Machine"] == "host-1, bare metal"
    assert rows["Kernel"] == "6.8.12-4-pve x86_64"
    assert rows["CPU"] == "AMD EPYC 7302P, 32 logical CPUs"
    assert rows["AES-NI"].startswith("not visible")
    assert rows["RAM"] == "128.0 GiB"
    assert rows["File system"] == "zfs (mounted at /tank/bench, from tank/bench)"
    assert rows["ZFS dataset"] == "tank/bench"
    assert rows["Device nvme0n1"] == ("Samsung SSD 980 PRO 1TB, 1.0 TiB, sectors 512 B logical / 4096 B physical, "
                                      "non-rotational, scheduler none, serial disk-A")
    assert rows["ab command"] == "zfs set compression=lz4 tank/bench"
    assert "ab prepare" not in rows and "Imported from" not in rows


def test_an_imported_run_shows_its_file_and_nothing_it_does_not_know() -> None:
    facts = {"fio_version": "fio-3.33", "imported_from": "/data/old.json", "sha256": "ab" * 32,
             "diskinfo": {"device": "ada0", "ident": "disk-B", "sector_size": 512}}
    rows = dict(facts_table(replace(run([cell()], facts=facts), target=None)).rows)
    assert list(rows) == ["fio", "diskinfo device", "Imported from", "SHA-256 of the file"]
    assert rows["diskinfo device"] == "device ada0, ident disk-B, sector_size 512"
