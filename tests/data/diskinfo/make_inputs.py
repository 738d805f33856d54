"""Write the diskinfo -wS test inputs that are built (not captured): see README.md in this directory.

The text follows the printf formats of FreeBSD usr.sbin/diskinfo/diskinfo.c (main() for the facts,
slogbench() and TS() for the table); the latencies are made up, the Mbytes/s column is computed from them
the way TS() does (size * count / elapsed / 2^20, i.e. size / usec * 1e6 / 2^20).
    python tests/data/diskinfo/make_inputs.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def facts(device: str, sector: int, media: int, human: str, extra: list[tuple[str, str]]) -> str:
    lines = [device, f"\t{sector:<12}\t# sectorsize", f"\t{media:<12}\t# mediasize in bytes ({human})",
             f"\t{media // sector:<12}\t# mediasize in sectors", f"\t{0:<12}\t# stripesize",
             f"\t{0:<12}\t# stripeoffset"]
    lines += [f"\t{value:<12}\t# {key}" for value, key in extra]
    return "\n".join(lines) + "\n\n"


def table(start: int, usec_of) -> str:
    lines = ["Synchronous random writes:"]
    size = start
    while size <= 8 * 1024 * 1024:
        usec = usec_of(size)
        lines.append("\t%4.4g kbytes: %8.1f usec/IO = %8.1f Mbytes/s" % (size / 1024, usec, size / usec * 1e6 / 2**20))
        size *= 2
    return "\n".join(lines) + "\n"


def main() -> None:
    nvme = facts("nvd0", 4096, 960197124096, "894G", [
        ("SAMSUNG MZ1LB960HAJQ-00007", "Disk descr."), ("S435NA0xxxxxxx", "Disk ident."),
        ("nvme0", "Physical path"), ("Yes", "TRIM/UNMAP support"), ("0", "Rotation rate in RPM"),
    ])
    nvme_table = table(4096, lambda size: 22.0 + size / 2900.0)
    (HERE / "nvme-4kn-start.txt").write_text(nvme + nvme_table)
    overhead = ("I/O command overhead:\n"
                "\ttime to read 10MB block      0.006101 sec\t=    0.000 msec/sector\n"
                "\ttime to read 20480 sectors   0.853590 sec\t=    0.042 msec/sector\n"
                "\tcalculated command overhead\t\t\t=    0.041 msec/sector\n\n")
    (HERE / "with-command-overhead.txt").write_text(nvme + overhead + nvme_table)
    spaces = (nvme + nvme_table).replace("\t", "    ")
    (HERE / "tabs-as-spaces.txt").write_text(spaces)
    cut = (nvme + nvme_table).splitlines()[:-4]
    cut[-1] = cut[-1].split(":")[0] + ": "  # diskinfo prints the size, then measures: a stopped run ends here
    (HERE / "interrupted.txt").write_text("\n".join(cut) + "\n")
    sata = facts("ada1", 512, 500107862016, "466G", [
        ("Samsung SSD 860 EVO 500GB", "Disk descr."), ("S3Z2NB0xxxxxxx", "Disk ident."),
        ("Yes", "TRIM/UNMAP support"), ("Unknown", "Rotation rate in RPM"),
    ])
    (HERE / "two-devices.txt").write_text(sata + table(512, lambda size: 1900.0 + size / 500.0) + nvme + nvme_table)


if __name__ == "__main__":
    main()
