"""VM definitions from Proxmox qemu-server configs and libvirt domain XML, read into one shape.

KVM rules ask the same questions of both (cache mode, bus, iothread, CPU model, memory, discard), so both
formats are read into `Vm`/`VmDisk` with the *effective* settings: a value the file leaves out is replaced
by the default that applies (Proxmox: cache none, scsihw lsi, CPU kvm64; QEMU under libvirt: cache
writeback, CPU qemu64), and `*_set` says whether the file chose it. Where a disk lives (a storage id, a zvol,
a Ceph image) is `audit.storage`'s concern.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from stackbench.audit.errors import FactsFormatError

PVE_DISK_KEY = re.compile(r"^(ide|sata|scsi|virtio)(\d+)$")
# CPU models that do not expose AES-NI unless +aes is added (Proxmox and QEMU names).
CPU_MODELS_WITHOUT_AES = frozenset({"kvm64", "qemu64", "kvm32", "qemu32", "x86-64-v2", "486", "pentium", "pentium2",
                                    "pentium3", "coreduo", "core2duo", "athlon", "phenom", "n270", "conroe", "penryn"})
IMAGE_SUFFIXES = (".qcow2", ".raw", ".img", ".vmdk", ".vdi", ".qed")
_SIZE_UNITS = {"b": 1, "bytes": 1, "kb": 1000, "k": 1024, "kib": 1024, "mb": 1000**2, "m": 1024**2, "mib": 1024**2,
               "gb": 1000**3, "g": 1024**3, "gib": 1024**3, "tb": 1000**4, "t": 1024**4, "tib": 1024**4}


@dataclass
class VmDisk:
    key: str  # scsi0, virtio1 (Proxmox) or the libvirt target dev (vda, sda)
    bus: str  # ide, sata, scsi, virtio, usb, ...
    volume: str  # as written: local-zfs:vm-100-disk-0, /dev/zvol/tank/vm, /var/lib/libvirt/images/a.qcow2
    controller: str | None = None  # SCSI controller model for bus scsi: virtio-scsi-single, lsi, megasas, ...
    controller_set: bool = False  # the config names the controller (Proxmox `scsihw`; otherwise the default lsi)
    cache: str = "none"
    cache_set: bool = False
    aio: str | None = None
    iothread: bool = False
    discard: bool = False
    image_format: str | None = None  # qcow2, raw, vmdk ... when known
    options: dict[str, str] = field(default_factory=dict)  # the raw options as written
    protocol: str | None = None  # libvirt network disks: rbd, iscsi, nbd, gluster, ... (QEMU's own driver, no file)
    pool_volume: bool = False  # libvirt <source pool= volume=>: a volume of a libvirt storage pool


@dataclass
class Vm:
    name: str  # where it came from: qemu-server/100.conf, libvirt/win.xml
    kind: str  # proxmox | libvirt
    vmid: str
    memory_bytes: int | None = None
    cpu: str | None = None  # as written (None: absent)
    cpu_model: str = "kvm64"
    aes_visible: bool = False
    numa: bool | None = None
    iothreads: int = 0  # libvirt <iothreads>
    disks: list[VmDisk] = field(default_factory=list)
    uuid: str | None = None  # Proxmox `smbios1: uuid=`, libvirt <uuid>: the VM across hosts and renames

    def fix(self, proxmox: str, libvirt: str) -> str:
        """The fix in this VM's own tooling."""
        return proxmox.replace("VMID", self.vmid) if self.kind == "proxmox" else libvirt.replace("NAME", self.vmid)


def image_format(volume: str) -> str | None:
    lower = volume.lower()
    for suffix in IMAGE_SUFFIXES:
        if lower.endswith(suffix):
            return "raw" if suffix == ".img" else suffix[1:]
    return None


def _pve_cpu(value: str | None) -> tuple[str, bool]:
    """(model, AES visible) for a Proxmox `cpu:` value such as `host`, `x86-64-v2-AES`, `cputype=kvm64,flags=+aes`."""
    if not value:
        return "kvm64", False
    model, flags = "kvm64", ""
    for part in value.split(","):
        key, sep, val = part.partition("=")
        if not sep:
            model = key.strip()
        elif key.strip() == "cputype":
            model = val.strip()
        elif key.strip() == "flags":
            flags = val
    flag_list = flags.split(";")
    if "-aes" in flag_list:  # a flag taken away hides it whatever the model has
        return model, False
    return model, model.lower() not in CPU_MODELS_WITHOUT_AES or "+aes" in flag_list


def _pve_memory(value: str | None) -> int | None:
    """`memory: 4096` or `memory: current=4096` (MiB); Proxmox's default is 512 MiB."""
    if value is None:
        return 512 * 1024**2
    match = re.search(r"(?:^|current=)(\d+)", value)
    return int(match[1]) * 1024**2 if match else None


def _smbios_uuid(value: str | None) -> str | None:
    """The `uuid=` of a Proxmox `smbios1:` line (Proxmox writes one for every VM it creates)."""
    for part in (value or "").split(","):
        key, _, uuid = part.partition("=")
        if key.strip() == "uuid" and uuid.strip():
            return uuid.strip().lower()
    return None


def parse_qm_conf(text: str, name: str) -> Vm:
    """A Proxmox `/etc/pve/qemu-server/VMID.conf`: the live section only.

    `[snapshot]`, `[PENDING]` and `[special:cloudinit]` sections hold other states of the VM and must not be
    audited as the running config; leading `#` lines are the description.
    """
    config: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("["):
            break
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not re.fullmatch(r"[a-z][a-z0-9_-]*", key.strip()):
            raise FactsFormatError(name, number, f"expected `key: value`, got {line[:60]!r}")
        config[key.strip()] = value.strip()
    model, aes = _pve_cpu(config.get("cpu"))
    stem = re.sub(r"\.conf$", "", name.rsplit("/", 1)[-1])
    vmid = re.match(r"\d*", stem)[0] or stem  # Proxmox names the file VMID.conf
    vm = Vm(name=name, kind="proxmox", vmid=vmid, memory_bytes=_pve_memory(config.get("memory")),
            cpu=config.get("cpu"), cpu_model=model, aes_visible=aes,
            numa=config["numa"] == "1" if "numa" in config else None,
            uuid=_smbios_uuid(config.get("smbios1")))
    scsihw = config.get("scsihw", "lsi")
    for key, value in config.items():
        match = PVE_DISK_KEY.match(key)
        if not match:
            continue
        volume, *rest = value.split(",")
        options = dict(part.split("=", 1) for part in rest if "=" in part)
        if volume.startswith("file="):
            volume = volume[5:]
        if options.get("media") == "cdrom" or volume in ("none", "cdrom"):
            continue
        vm.disks.append(VmDisk(
            key=key, bus=match[1], volume=volume, controller=scsihw if match[1] == "scsi" else None,
            controller_set="scsihw" in config,
            cache=options.get("cache", "none"), cache_set="cache" in options, aio=options.get("aio"),
            iothread=options.get("iothread") in ("1", "on", "yes"), discard=options.get("discard") == "on",
            image_format=image_format(volume) or ("raw" if ":" in volume and "/" not in volume else None),
            options=options,
        ))
    return vm


def _libvirt_bytes(element: ET.Element | None) -> int | None:
    if element is None or not (element.text or "").strip().isdigit():
        return None
    unit = element.get("unit", "KiB").lower()
    return int(element.text.strip()) * _SIZE_UNITS.get(unit, 1024)


def _libvirt_cpu(domain: ET.Element) -> tuple[str | None, str, bool]:
    cpu = domain.find("cpu")
    if cpu is None:
        return None, "qemu64", False  # QEMU's default CPU model on x86
    mode = cpu.get("mode", "custom")
    policies = {f.get("name"): f.get("policy", "require") for f in cpu.findall("feature")}
    if policies.get("aes") in ("disable", "forbid"):
        return f"{mode} -aes", mode, False
    if mode in ("host-passthrough", "host-model", "maximum"):
        return mode, mode, True
    model = (cpu.findtext("model") or "qemu64").strip()
    return f"{mode} {model}", model, model.lower() not in CPU_MODELS_WITHOUT_AES or policies.get("aes") in ("require", "force")


def parse_libvirt_xml(text: str, name: str) -> Vm:
    """A libvirt domain (`virsh dumpxml` or /etc/libvirt/qemu/NAME.xml)."""
    try:
        domain = ET.fromstring(text)
    except ET.ParseError as error:
        raise FactsFormatError(name, error.position[0], f"not well-formed XML: {error}") from None
    if domain.tag != "domain":
        raise FactsFormatError(name, 1, f"expected a <domain> document, got <{domain.tag}>")
    cpu_text, model, aes = _libvirt_cpu(domain)
    vm = Vm(name=name, kind="libvirt", vmid=(domain.findtext("name") or name).strip(),
            memory_bytes=_libvirt_bytes(domain.find("currentMemory")) or _libvirt_bytes(domain.find("memory")),
            cpu=cpu_text, cpu_model=model, aes_visible=aes,
            numa=True if domain.find("cpu/numa") is not None or domain.find("numatune") is not None else None,
            iothreads=int(domain.findtext("iothreads") or 0) if (domain.findtext("iothreads") or "0").strip().isdigit() else 0,
            uuid=(domain.findtext("uuid") or "").strip().lower() or None)
    controllers = {c.get("index", "0"): c for c in domain.findall("devices/controller") if c.get("type") == "scsi"}
    for disk in domain.findall("devices/disk"):
        if disk.get("device", "disk") not in ("disk", "lun"):  # cdrom and floppy hold no data disk
            continue
        driver = disk.find("driver")
        driver = driver if driver is not None else ET.Element("driver")
        source = disk.find("source")
        volume = "" if source is None else (source.get("file") or source.get("dev") or source.get("name")
                                             or f"{source.get('pool', '')}/{source.get('volume', '')}")
        protocol = source.get("protocol") if source is not None and disk.get("type") == "network" else None
        pool_volume = source is not None and source.get("pool") is not None and source.get("volume") is not None
        target = disk.find("target")
        bus = target.get("bus", "ide") if target is not None else "ide"
        controller = None
        if bus == "scsi":
            address = disk.find("address")
            index = address.get("controller", "0") if address is not None else "0"
            scsi = controllers.get(index)
            controller = scsi.get("model") if scsi is not None else None
            scsi_driver = scsi.find("driver") if scsi is not None else None
            iothread = scsi_driver is not None and scsi_driver.get("iothread") is not None
        else:
            iothread = driver.get("iothread") is not None or disk.find("driver/iothreads") is not None
        vm.disks.append(VmDisk(
            key=target.get("dev", "?") if target is not None else "?", bus=bus, volume=volume, controller=controller,
            controller_set=controller is not None,
            cache=driver.get("cache", "writeback"), cache_set="cache" in driver.attrib, aio=driver.get("io"),
            iothread=iothread, discard=driver.get("discard") == "unmap",
            image_format=driver.get("type") or image_format(volume), options=dict(driver.attrib),
            protocol=protocol, pool_volume=pool_volume,
        ))
    return vm
