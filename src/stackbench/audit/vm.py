"""VM definitions from Proxmox qemu-server configs and libvirt domain XML, read into one shape.

KVM rules ask the same questions of both (cache mode, bus, iothread, CPU model, memory, discard), so both
formats are read into `Vm`/`VmDisk` with the *effective* settings: a value the file leaves out is replaced
by the default that applies (Proxmox: cache none, scsihw lsi, CPU kvm64; QEMU under libvirt: cache
writeback, CPU qemu64 on x86, the SCSI controller libvirt adds for the machine type), and `*_set` says
whether the file chose it. Where a disk lives (a storage id, a zvol, a Ceph image) is `audit.storage`'s
concern; a libvirt disk keeps the source type it was written with (`<disk type=...>`), which says whether
there is a host path at all.
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
X86 = ("x86_64", "i686", "i386", "i586", "i486")
IMAGE_SUFFIXES = (".qcow2", ".raw", ".img", ".vmdk", ".vdi", ".qed")
_SIZE_UNITS = {"b": 1, "bytes": 1, "kb": 1000, "k": 1024, "kib": 1024, "mb": 1000**2, "m": 1024**2, "mib": 1024**2,
               "gb": 1000**3, "g": 1024**3, "gib": 1024**3, "tb": 1000**4, "t": 1024**4, "tib": 1024**4}


@dataclass
class VmDisk:
    key: str  # scsi0, virtio1 (Proxmox) or the libvirt target dev (vda, sda)
    bus: str  # ide, sata, scsi, virtio, usb, ...
    volume: str  # as written: local-zfs:vm-100-disk-0, /dev/zvol/tank/vm, /var/lib/libvirt/images/a.qcow2
    controller: str | None = None  # SCSI controller model for bus scsi: virtio-scsi-single, lsi, megasas, ...
    controller_set: bool = False  # the config names the controller model (Proxmox `scsihw`, libvirt `model=`)
    controller_default: str | None = None  # when not set: whose default the controller is, for evidence
    cache: str = "none"
    cache_set: bool = False
    aio: str | None = None
    iothread: bool = False
    discard: bool = False
    image_format: str | None = None  # qcow2, raw, vmdk ... when known
    options: dict[str, str] = field(default_factory=dict)  # the raw options as written
    protocol: str | None = None  # libvirt network disks: rbd, iscsi, nbd, gluster, ... (QEMU's own driver, no file)
    pool_volume: bool = False  # libvirt <source pool= volume=>: a volume of a libvirt storage pool
    source_type: str | None = None  # libvirt <disk type=>: file, block, dir, network, volume, nvme, vhostuser
    shareable: bool = False  # libvirt <shareable/>: meant to be used by several guests at once
    readonly: bool = False  # libvirt <readonly/>


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
    arch: str | None = "x86_64"  # the guest architecture (libvirt <os><type arch>); None: the file does not say
    machine: str | None = None  # libvirt <os><type machine>: pc, q35, virt, pseries, s390-ccw-virtio, ...

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
            controller_default=None if "scsihw" in config or match[1] != "scsi" else "no scsihw: Proxmox's default",
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


def _libvirt_cpu(domain: ET.Element, x86: bool) -> tuple[str | None, str, bool]:
    """(as written, model, AES visible). AES-NI is an x86 question: another architecture's crypto extension
    belongs to its CPU model, which the audit does not judge, so it is never reported as hidden."""
    cpu = domain.find("cpu")
    if not x86:
        if cpu is None:
            return None, "default", True
        return cpu.get("mode", "custom"), (cpu.findtext("model") or "").strip() or "default", True
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


def _libvirt_arch(domain: ET.Element) -> tuple[str | None, str | None]:
    """(architecture, machine type): <os><type arch machine>, else what the emulator's name or the machine
    type implies (qemu-system-aarch64, pseries, s390-ccw-virtio); None when nothing says."""
    os_type = domain.find("os/type")
    arch = os_type.get("arch") if os_type is not None else None
    machine = os_type.get("machine") if os_type is not None else None
    if not arch:
        emulator = (domain.findtext("devices/emulator") or "").strip()
        match = re.search(r"qemu-system-([\w-]+)$", emulator)
        if match:
            arch = match[1]
        elif machine and machine.startswith("pseries"):
            arch = "ppc64"
        elif machine and machine.startswith("s390"):
            arch = "s390x"
    return arch or None, machine


def implicit_scsi_model(arch: str | None, machine: str | None) -> tuple[str | None, str]:
    """The SCSI controller model libvirt gives a domain whose controller names none (or that has no SCSI
    controller at all), and how that is known.

    libvirt's normalised XML (tests/qemuxmlconfdata, *-latest.xml) shows the model it fills in: spapr-vscsi
    (`ibmvscsi`) on pseries, virtio-scsi on s390x, lsilogic on x86 (disk-scsi-device-auto). On Arm, RISC-V and
    LoongArch `virt` machines it depends on how the domain was defined (aarch64-virt-default-models: lsilogic,
    but virtio-scsi for a new definition), so the model is unknown there."""
    if machine and machine.startswith("pseries"):
        return "ibmvscsi", "no model: libvirt's default on pseries, spapr-vscsi"
    if arch and arch.startswith("s390"):
        return "virtio-scsi", "no model: libvirt's default on s390x"
    if arch is None or arch in X86:
        return "lsilogic", "no model: libvirt's default on x86, lsilogic"
    return None, f"no model: libvirt chooses lsilogic or virtio-scsi on {arch} {machine or ''}".rstrip()


# libvirt derives a disk's bus from its target name when <target bus> is absent (virDomainDiskDefAssignAddress).
_BUS_OF_PREFIX = (("hd", "ide"), ("sd", "scsi"), ("vd", "virtio"), ("xvd", "xen"), ("ubd", "uml"), ("fd", "fdc"))


def _bus(target: ET.Element | None) -> str:
    if target is None:
        return "ide"
    if target.get("bus"):
        return target.get("bus", "ide")
    dev = target.get("dev", "")
    return next((bus for prefix, bus in _BUS_OF_PREFIX if dev.startswith(prefix)), "ide")


def _libvirt_source(disk: ET.Element) -> tuple[str, str, str | None]:
    """(source type, the source as written for evidence, network protocol) of a libvirt <disk>: the type says
    what QEMU opens (a host path only for file, block and dir), the source element is read by that type."""
    kind = disk.get("type", "file")
    source = disk.find("source")
    if source is None:
        return kind, "", None
    if kind == "network":
        host = source.find("host")  # an NBD export over a Unix socket has no name, only the socket
        server = "" if host is None else host.get("socket") or host.get("name") or ""
        return kind, source.get("name") or server, source.get("protocol") or None
    if kind == "volume":
        return kind, f"{source.get('pool', '')}/{source.get('volume', '')}", None
    if kind == "nvme":
        address = source.find("address")
        pci = "" if address is None else "{}:{}:{}.{}".format(*(address.get(k, "?") for k in (
            "domain", "bus", "slot", "function")))
        return kind, f"NVMe {pci} namespace {source.get('namespace', '?')}", None
    if kind in ("vhostuser", "vhostvdpa"):
        return kind, source.get("path") or source.get("dev") or "", None
    value = {"file": "file", "block": "dev", "dir": "dir"}.get(kind)
    return kind, (source.get(value) if value else None) or source.get("file") or source.get("dev") or "", None


def _scsi_controllers(domain: ET.Element) -> dict[str, ET.Element]:
    """SCSI controllers by index; one written without `index` gets the lowest free one, in document order, as
    libvirt numbers them (virDomainControllerFindUnusedIndex)."""
    scsi = [c for c in domain.findall("devices/controller") if c.get("type") == "scsi"]
    found = {c.get("index", ""): c for c in scsi if (c.get("index") or "").isdigit()}
    for controller in scsi:
        if not (controller.get("index") or "").isdigit():
            found[str(next(i for i in range(len(scsi) + len(found) + 1) if str(i) not in found))] = controller
    return found


def _has_iothread(element: ET.Element | None) -> bool:
    """An iothread by attribute (`<driver iothread='1'>`) or by mapping (`<driver><iothreads><iothread id=...>`),
    on a disk or on a virtio-scsi controller: every form libvirt accepts."""
    driver = element.find("driver") if element is not None else None
    return driver is not None and (driver.get("iothread") is not None or driver.find("iothreads/iothread") is not None)


def parse_libvirt_xml(text: str, name: str) -> Vm:
    """A libvirt domain (`virsh dumpxml` or /etc/libvirt/qemu/NAME.xml)."""
    try:
        domain = ET.fromstring(text)
    except ET.ParseError as error:
        raise FactsFormatError(name, error.position[0], f"not well-formed XML: {error}") from None
    if domain.tag != "domain":
        raise FactsFormatError(name, 1, f"expected a <domain> document, got <{domain.tag}>")
    arch, machine = _libvirt_arch(domain)
    cpu_text, model, aes = _libvirt_cpu(domain, arch is None or arch in X86)
    vm = Vm(name=name, kind="libvirt", vmid=(domain.findtext("name") or name).strip(),
            memory_bytes=_libvirt_bytes(domain.find("currentMemory")) or _libvirt_bytes(domain.find("memory")),
            cpu=cpu_text, cpu_model=model, aes_visible=aes,
            numa=True if domain.find("cpu/numa") is not None or domain.find("numatune") is not None else None,
            iothreads=int(domain.findtext("iothreads") or 0) if (domain.findtext("iothreads") or "0").strip().isdigit() else 0,
            uuid=(domain.findtext("uuid") or "").strip().lower() or None, arch=arch, machine=machine)
    controllers = _scsi_controllers(domain)
    default_model, default_said = implicit_scsi_model(arch, machine)
    for disk in domain.findall("devices/disk"):
        if disk.get("device", "disk") not in ("disk", "lun"):  # cdrom and floppy hold no data disk
            continue
        driver = disk.find("driver")
        driver = driver if driver is not None else ET.Element("driver")
        source_type, volume, protocol = _libvirt_source(disk)
        target = disk.find("target")
        bus = _bus(target)
        controller, controller_set, controller_default = None, False, None
        if bus == "scsi":
            address = disk.find("address")
            index = address.get("controller", "0") if address is not None else "0"
            scsi = controllers.get(index)  # absent: libvirt adds one with its default model
            controller_set = scsi is not None and bool(scsi.get("model"))
            controller = scsi.get("model") if controller_set and scsi is not None else default_model
            controller_default = None if controller_set else default_said
            iothread = _has_iothread(scsi)
        else:
            iothread = _has_iothread(disk)
        vm.disks.append(VmDisk(
            key=target.get("dev", "?") if target is not None else "?", bus=bus, volume=volume, controller=controller,
            controller_set=controller_set, controller_default=controller_default,
            cache=driver.get("cache", "writeback"), cache_set="cache" in driver.attrib, aio=driver.get("io"),
            iothread=iothread, discard=driver.get("discard") == "unmap",
            # libvirt never probes: without <driver type> QEMU is told raw (qemuDomainDeviceDiskDefPostParse)
            image_format=driver.get("type") or (None if source_type == "volume" else "raw"),
            options=dict(driver.attrib), protocol=protocol if source_type == "network" else None,
            pool_volume=source_type == "volume", source_type=source_type,
            shareable=disk.find("shareable") is not None, readonly=disk.find("readonly") is not None,
        ))
    return vm
