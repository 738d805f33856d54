"""Settings that buy speed with durability or correctness, declared once, and where to find them.

Why a table: `ab --a "mount -o remount,barrier=1 /mnt" --b "mount -o remount,barrier=0 /mnt"` proves a
large gain, and the gain is real; what the verdict did not say is that it was bought with the file
system's crash safety. The audit knows these settings (docs/audit.md: DS-SYNC-DISABLED,
KVM-CACHE's `cache=unsafe`), and so must every verdict: `compare`, `ab` and `report` read the table through
`analysis/tradeoff.py` and mark a verdict "faster because it is less safe". `tune` reads the same table for
what it must never try (`forbidden_for_tune`), so a setting is declared here once for both.

Each `UnsafeSetting` names a `setting` (a key such as `zfs:sync` or `mount:barrier`), the values of it that
trade safety, the risk in one line, the safe way to the same end, the audit rule it corresponds to, and
whether tune may try it. Entries whose `marks_verdicts` is false are there for tune only: they are not less
safe, but cannot be tried and undone as a setting (dedup, volblocksize, ashift, layout changes).

Where a setting is found (`SettingValue`, the value as read and what it was read from):

- in the user's shell commands (`ab --a/--b`), read as shell tokens, never as substrings: `zfs set
  sync=disabled tank/vm`, `mount -o remount,nobarrier /mnt`, `echo 1 >
  /sys/module/zfs/parameters/zfs_nocacheflush`, `qm set 100 --scsi0 local:vm-100-disk-0,cache=unsafe`;
  behind `sudo`, `env`, `ssh host "..."` and `sh -c "..."` too. A path that contains "nobarrier", an `echo
  sync=disabled` or `zfs get sync` set nothing and match nothing;
- in a run's facts: the target's mount options as the kernel listed them, and ZFS properties where the facts
  hold them (`facts.zfs`);
- in a run's workloads: fio's O_SYNC (`--sync`) and O_DIRECT (`--direct`).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

# What tune may do with an entry's setting.
FORBIDDEN_ANY_VALUE = "forbidden: any value"  # never a knob (zfs sync: safety fixes are applied by hand)
FORBIDDEN_UNSAFE_VALUE = "forbidden: the unsafe values"  # the knob may exist, these values never
ALLOWED = "allowed"

ZFS_PARAMETERS = "/sys/module/zfs/parameters/"
ZFS_TXG_TIMEOUT_DEFAULT = 5  # seconds, OpenZFS's default (zfs(4))


@dataclass(frozen=True)
class Values:
    """The values of a setting an entry matches, with the words people read ("disabled", "above 5")."""

    describe: str
    test: Callable[[str], bool]

    def __call__(self, value: str) -> bool:
        return self.test(value.strip().lower())


def one_of(*values: str) -> Values:
    chosen = frozenset(v.lower() for v in values)
    return Values(" or ".join(values), lambda value: value in chosen)


def above(limit: float) -> Values:
    def test(value: str) -> bool:
        try:
            return float(value) > limit
        except ValueError:
            return False

    return Values(f"above {limit:g}", test)


def nonzero() -> Values:
    def test(value: str) -> bool:
        try:
            return float(value) != 0
        except ValueError:
            return value not in ("", "off", "no", "false", "n")

    return Values("1 (any non-zero value)", test)


ANY_VALUE = Values("any value", lambda value: True)


@dataclass(frozen=True)
class UnsafeSetting:
    """One setting that trades durability or correctness for speed (or, for tune only, that cannot be tried)."""

    id: str
    setting: str  # the key `SettingValue`s carry: "zfs:sync", "mount:barrier", "zfs-param:zfs_nocacheflush", ...
    matches: str  # how it is written, for people
    unsafe: Values  # the values that trade safety (for tune-only entries: the values tune must not try)
    risk: str  # what is given up, in one line
    safer: str  # the safe way to the same end: the warning's fix
    audit_rule: str | None  # the audit rule that finds it on a machine, if any
    tune: str  # FORBIDDEN_ANY_VALUE, FORBIDDEN_UNSAFE_VALUE or ALLOWED
    silent_is_safe: bool  # an arm that does not set it counts as safe: the default is on the safe side
    marks_verdicts: bool = True  # False: listed for tune only, a compare never marks it

    def is_unsafe(self, value: str) -> bool:
        return self.unsafe(value)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "setting": self.setting, "matches": self.matches, "unsafe_values": self.unsafe.describe,
                "risk": self.risk, "safer": self.safer, "audit_rule": self.audit_rule, "tune": self.tune,
                "marks_verdicts": self.marks_verdicts}


UNSAFE_SETTINGS: tuple[UnsafeSetting, ...] = (
    UnsafeSetting(
        id="zfs-sync-disabled", setting="zfs:sync", matches="zfs set sync=disabled DATASET",
        unsafe=one_of("disabled"),
        risk="sync=disabled acknowledges fsync and O_SYNC writes before they are on disk: a power cut or crash "
             "loses the last seconds of writes that programs were told were safe",
        safer="keep sync=standard; a fast log device (SLOG) makes synchronous writes quick without the risk",
        audit_rule="DS-SYNC-DISABLED", tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="zfs-nocacheflush", setting="zfs-param:zfs_nocacheflush",
        matches=f"echo 1 > {ZFS_PARAMETERS}zfs_nocacheflush (or modprobe zfs zfs_nocacheflush=1)",
        unsafe=nonzero(),
        risk="zfs_nocacheflush stops ZFS from flushing the disks' write caches: on a power cut, writes ZFS "
             "counted as committed (fsynced ones too) can be lost and the pool damaged",
        safer="leave zfs_nocacheflush at 0; disks with power-loss protection make flushes cheap",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="zil-disable", setting="zfs-param:zil_disable", matches="zil_disable=1 (ZFS on Linux before 0.6.5)",
        unsafe=nonzero(),
        risk="zil_disable drops the intent log: fsync returns before the data is on disk, as sync=disabled",
        safer="leave zil_disable at 0; a fast log device makes synchronous writes quick without the risk",
        audit_rule="DS-SYNC-DISABLED", tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="mount-nobarrier", setting="mount:barrier", matches="mount -o nobarrier or barrier=0 (ext4, xfs, btrfs)",
        unsafe=one_of("off"),
        risk="without write barriers the journal is not flushed in order: a power cut can corrupt the file "
             "system, not only lose the last writes",
        safer="keep barriers on; a disk with power-loss protection makes the flushes cheap",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="vm-cache-unsafe", setting="vm-disk:cache",
        matches="cache=unsafe on a VM disk (qm set, virsh, virt-xml, qemu -drive; or cache.no-flush=on)",
        unsafe=one_of("unsafe"),
        risk="cache=unsafe ignores the guest's flushes: a host crash or power cut loses writes the guest's "
             "programs fsynced and can corrupt the guest's file systems",
        safer="cache=none (the Proxmox default), with aio=io_uring or native",
        audit_rule="KVM-CACHE", tune=FORBIDDEN_UNSAFE_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="zfs-checksum-off", setting="zfs:checksum", matches="zfs set checksum=off DATASET",
        unsafe=one_of("off", "noparity"),
        risk="checksum=off: ZFS can no longer detect silent corruption of the data blocks, nor repair it from "
             "redundancy",
        safer="keep checksum=on (fletcher4 costs little; a faster CPU path is checksum=edonr or blake3)",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="zfs-txg-timeout-raised", setting="zfs-param:zfs_txg_timeout",
        matches=f"zfs_txg_timeout above its default of {ZFS_TXG_TIMEOUT_DEFAULT} s",
        unsafe=above(ZFS_TXG_TIMEOUT_DEFAULT),
        risk="a longer transaction-group interval keeps more acknowledged asynchronous writes in RAM: a power "
             "cut loses up to that many seconds of them (5 s by default)",
        safer=f"leave zfs_txg_timeout at {ZFS_TXG_TIMEOUT_DEFAULT}; raise zfs_dirty_data_max instead if writes stall",
        audit_rule=None, tune=FORBIDDEN_UNSAFE_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="ext4-data-writeback", setting="mount:data", matches="mount -o data=writeback (ext4, ext3)",
        unsafe=one_of("writeback"),
        risk="data=writeback journals metadata only: after a crash, recently written files can hold stale data "
             "of other, deleted files",
        safer="keep data=ordered (the default)",
        audit_rule=None, tune=FORBIDDEN_UNSAFE_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="ext4-no-journal", setting="mount:journal", matches="tune2fs -O ^has_journal DEVICE",
        unsafe=one_of("off"),
        risk="without a journal, a crash leaves the file system inconsistent until fsck, and recent metadata can "
             "be lost",
        safer="keep the journal; put it on a faster device (an external journal) if its writes are the cost",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True,
    ),
    UnsafeSetting(
        id="zfs-sync-not-always", setting="zfs:sync",
        matches="zfs set sync=standard where the other side has sync=always",
        unsafe=one_of("standard", "disabled"),
        risk="without sync=always, writes of programs that do not fsync are acknowledged before they are on disk "
             "(as on any file system)",
        safer="sync=always only where programs rely on it; a fast log device makes it cheap",
        audit_rule="DS-SYNC-ALWAYS-HDD", tune=FORBIDDEN_ANY_VALUE, silent_is_safe=False,
    ),
    UnsafeSetting(
        id="mount-async", setting="mount:sync", matches="mount -o async where the other side has -o sync",
        unsafe=one_of("async"),
        risk="without the sync mount option, writes are acknowledged from the page cache before they are on disk "
             "(programs that fsync are still safe)",
        safer="keep sync where programs rely on it, or make those programs fsync",
        audit_rule=None, tune=ALLOWED, silent_is_safe=False,
    ),
    UnsafeSetting(
        id="fio-not-sync", setting="fio:sync", matches="fio without --sync where the other side has --sync",
        unsafe=one_of("off"),
        risk="writes without O_SYNC are acknowledged before they are durable: the number does not include "
             "waiting for the disk",
        safer="compare runs with the same --sync; measure synchronous writes with --sync on both sides",
        audit_rule=None, tune=ALLOWED, silent_is_safe=False,
    ),
    UnsafeSetting(
        id="fio-buffered", setting="fio:direct", matches="fio buffered (--buffered) where the other side has --direct",
        unsafe=one_of("off"),
        risk="buffered I/O goes through the page cache: writes are acknowledged from RAM and reads can be "
             "cache hits",
        safer="compare runs with the same --direct/--buffered",
        audit_rule=None, tune=ALLOWED, silent_is_safe=False,
    ),
    UnsafeSetting(
        id="zfs-copies-1", setting="zfs:copies", matches="zfs set copies=1 where the other side keeps more copies",
        unsafe=one_of("1"),
        risk="copies=1 keeps one copy of each block: a bad sector loses data the extra copies would have repaired",
        safer="keep the copies, or get the redundancy from the pool's mirrors or raidz",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=False,
    ),
    # For tune only: not less safe, but not a setting that can be tried and undone (tune-design.md 3.2).
    UnsafeSetting(
        id="zfs-dedup", setting="zfs:dedup", matches="zfs set dedup=...", unsafe=ANY_VALUE,
        risk="dedup needs RAM for every block written and slows writes badly once its table leaves RAM; blocks "
             "written stay deduplicated after it is turned off",
        safer="measure dedup on a copy of the data, never on the pool in use",
        audit_rule=None, tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
    UnsafeSetting(
        id="zfs-volblocksize", setting="zfs:volblocksize", matches="zfs create -b SIZE / -o volblocksize=SIZE",
        unsafe=ANY_VALUE, risk="volblocksize is fixed when a zvol is created: trying a value means recreating it",
        safer="create a test zvol per value and measure each", audit_rule="DS-VBS-GUEST",
        tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
    UnsafeSetting(
        id="zfs-xattr", setting="zfs:xattr", matches="zfs set xattr=...", unsafe=ANY_VALUE,
        risk="xattr is an on-disk format choice for extended attributes written afterwards",
        safer="choose it when the dataset is created", audit_rule=None,
        tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
    UnsafeSetting(
        id="zfs-special-small-blocks", setting="zfs:special_small_blocks", matches="zfs set special_small_blocks=...",
        unsafe=ANY_VALUE,
        risk="special_small_blocks moves new small blocks onto the special vdev, which can fill it for good",
        safer="size it from the file sizes first (docs/smallblocks.md)", audit_rule="DS-SSB-SIZE",
        tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
    UnsafeSetting(
        id="zpool-ashift", setting="zpool:ashift", matches="zpool create/add -o ashift=N", unsafe=ANY_VALUE,
        risk="ashift is fixed per vdev when it is created", safer="create the vdev with the right ashift once",
        audit_rule="ZP-ASHIFT-LOW", tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
    UnsafeSetting(
        id="pool-layout", setting="zpool:layout",
        matches="zpool create/add/attach/detach/remove/replace/split/destroy/labelclear, mkfs", unsafe=ANY_VALUE,
        risk="a layout change is not a setting: it cannot be undone by setting a value back",
        safer="measure layouts on separate test pools", audit_rule=None,
        tune=FORBIDDEN_ANY_VALUE, silent_is_safe=True, marks_verdicts=False,
    ),
)

FORBIDDEN_FOR_TUNE: tuple[UnsafeSetting, ...] = tuple(e for e in UNSAFE_SETTINGS if e.tune != ALLOWED)


def forbidden_for_tune(setting: str, value: str) -> UnsafeSetting | None:
    """The entry that forbids tune to set `setting` to `value`, or None when it may."""
    for entry in FORBIDDEN_FOR_TUNE:
        if entry.setting == setting and (entry.tune == FORBIDDEN_ANY_VALUE or entry.is_unsafe(value)):
            return entry
    return None


def entries_for(setting: str) -> list[UnsafeSetting]:
    """The entries about one setting, most serious first (the table's order)."""
    return [e for e in UNSAFE_SETTINGS if e.setting == setting]


# -- finding settings ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingValue:
    """A setting's value as one arm puts it, and where it was read: the simple command (`zfs set sync=disabled
    tank/vm`), the fact (`mount options rw,nobarrier`) or the workload (`fio --sync`)."""

    setting: str
    value: str
    evidence: str

    def to_json(self) -> dict[str, str]:
        return {"setting": self.setting, "value": self.value, "evidence": self.evidence}


_SEPARATORS = {";", "&&", "||", "&", "|", "\n", "(", ")", "{", "}", "|&", ";;"}
_WRAPPERS = {"sudo", "doas", "env", "nice", "ionice", "nohup", "exec", "command", "time", "stdbuf", "timeout"}
_WRAPPER_OPTIONS_WITH_ARGUMENT = {"-u", "-g", "-n", "-c", "-p", "-s", "-k", "-C", "-h", "-U", "-i", "-o", "-e"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
_VM_TOOLS = {"qm", "pct", "pvesh", "virsh", "virt-xml", "virt-install", "qemu-kvm", "kvm"}
_LAYOUT_VERBS = {"create", "add", "attach", "detach", "remove", "replace", "split", "destroy", "labelclear"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SSH_OPTIONS_WITH_ARGUMENT = set("BbcDEeFIiJLlmOoPpQRSWw")
_MAX_DEPTH = 3  # sh -c "ssh host 'sudo sh -c ...'" is as deep as anyone writes it


def settings_in_command(command: str) -> list[SettingValue]:
    """Every setting the shell command sets, in order (a later value of a setting overrides an earlier one)."""
    return list(_settings(command, 0))


def _settings(command: str, depth: int) -> Iterator[SettingValue]:
    if depth > _MAX_DEPTH:
        return
    previous: list[str] = []
    for words, piped in _simple_commands(command):
        yield from _settings_of_simple(words, previous if piped else [], depth)
        previous = words


def _simple_commands(command: str) -> Iterator[tuple[list[str], bool]]:
    """(words, whether it reads a pipe) of each simple command, split the way /bin/sh splits words."""
    lexer = shlex.shlex(command.replace("\\\n", " "), posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: /bin/sh would refuse it too; read the words plainly
        tokens = command.split()
    words: list[str] = []
    piped = False
    for token in tokens:
        if token in _SEPARATORS:
            if words:
                yield words, piped
            words, piped = [], token in ("|", "|&")
        else:
            words.append(token)
    if words:
        yield words, piped


def _split_redirections(words: list[str]) -> tuple[list[str], list[str]]:
    """The command's arguments, and the files its output is redirected to (`> F`, `>> F`)."""
    argv, targets = [], []
    index = 0
    while index < len(words):
        word = words[index]
        if word and set(word) <= set("<>&|") and ("<" in word or ">" in word) and index + 1 < len(words):
            if ">" in word and word != ">&":
                targets.append(words[index + 1])
            index += 2
            continue
        argv.append(word)
        index += 1
    return argv, targets


def _unwrap(argv: list[str]) -> list[str]:
    """The command behind `VAR=x`, `sudo -u root`, `env A=B`, `nice -n 5`, `timeout 60`, ..."""
    while argv:
        if _ASSIGNMENT.match(argv[0]):
            argv = argv[1:]
            continue
        name = os.path.basename(argv[0])
        if name not in _WRAPPERS:
            return argv
        rest = argv[1:]
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
            option = rest.pop(0)
            if name != "env" and option in _WRAPPER_OPTIONS_WITH_ARGUMENT and rest:
                rest.pop(0)
        if name == "timeout" and rest:
            rest = rest[1:]  # the duration
        argv = rest
    return argv


def _settings_of_simple(words: list[str], previous: list[str], depth: int) -> Iterator[SettingValue]:
    argv, targets = _split_redirections(words)
    argv = _unwrap(argv)
    if not argv:
        return
    name = os.path.basename(argv[0])
    evidence = shlex.join(words)
    if name in _SHELLS:
        for index, word in enumerate(argv[1:-1], 1):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and word.endswith("c")):
                yield from _settings(argv[index + 1], depth + 1)
                return
        return
    if name == "ssh":
        remote = _ssh_remote_command(argv[1:])
        if remote:
            yield from _settings(" ".join(remote), depth + 1)
        return
    if name == "zfs":
        yield from _zfs(argv[1:], evidence)
    elif name == "zpool":
        yield from _zpool(argv[1:], evidence)
    elif name == "mount":
        for options in _option_values(argv[1:], "-o", "--options"):
            yield from _mount_options(options, evidence)
    elif name == "tune2fs":
        yield from _tune2fs(argv[1:], evidence)
    elif name.startswith("mkfs") or name in ("mke2fs", "wipefs"):
        yield SettingValue("zpool:layout", name, evidence)
    elif name in ("echo", "printf"):
        value = _printed(argv)
        for target in targets:
            yield from _written(target, value, evidence)
    elif name == "tee" and previous:
        producer = _unwrap(_split_redirections(previous)[0])
        if producer and os.path.basename(producer[0]) in ("echo", "printf"):
            value = _printed(producer)
            for target in (a for a in argv[1:] if not a.startswith("-")):
                yield from _written(target, value, f"{shlex.join(previous)} | {evidence}")
    elif name == "modprobe":
        arguments = [a for a in argv[1:] if not a.startswith("-")]
        if arguments and arguments[0] == "zfs":
            yield from _zfs_parameters(arguments[1:], evidence)
    elif name == "sysctl":
        for word in argv[1:]:
            key, sep, value = word.partition("=")
            if sep and key.startswith("vfs.zfs."):  # FreeBSD's names of the module's parameters
                yield SettingValue("zfs-param:zfs_" + key[len("vfs.zfs."):].replace(".", "_"), value.strip(), evidence)
    elif name in _VM_TOOLS or name.startswith("qemu-system"):
        yield from _vm_cache(argv[1:], evidence)


def _ssh_remote_command(arguments: list[str]) -> list[str]:
    """What ssh runs on the other side: the words after its options and the host."""
    index = 0
    while index < len(arguments) and arguments[index].startswith("-"):
        option = arguments[index]
        index += 1
        if len(option) == 2 and option[1] in _SSH_OPTIONS_WITH_ARGUMENT:
            index += 1  # -p 22, -i key, -o Opt=x
    return arguments[index + 1:]


def _option_values(arguments: list[str], short: str, long: str | None = None) -> Iterator[str]:
    """The values of `-o X`, `-oX`, `--options X` and `--options=X`."""
    for index, word in enumerate(arguments):
        if word in (short, long) and index + 1 < len(arguments):
            yield arguments[index + 1]
        elif long and word.startswith(long + "="):
            yield word[len(long) + 1:]
        elif word.startswith(short) and len(word) > len(short) and not word.startswith("--"):
            yield word[len(short):]


def _zfs(arguments: list[str], evidence: str) -> Iterator[SettingValue]:
    if not arguments:
        return
    verb, rest = arguments[0], arguments[1:]
    if verb == "set":
        for word in rest:
            key, sep, value = word.partition("=")
            if sep and not word.startswith("-"):
                yield SettingValue(f"zfs:{key.lower()}", value.strip().lower(), evidence)
    elif verb == "create":
        for option in _option_values(rest, "-o"):
            key, sep, value = option.partition("=")
            if sep:
                yield SettingValue(f"zfs:{key.lower()}", value.strip().lower(), evidence)
        for size in _option_values(rest, "-b"):
            yield SettingValue("zfs:volblocksize", size.lower(), evidence)


def _zpool(arguments: list[str], evidence: str) -> Iterator[SettingValue]:
    if not arguments:
        return
    verb, rest = arguments[0], arguments[1:]
    if verb in _LAYOUT_VERBS:
        yield SettingValue("zpool:layout", verb, evidence)
    if verb in ("create", "add", "attach", "replace", "set"):
        pool_options = list(_option_values(rest, "-o")) if verb != "set" else [w for w in rest if "=" in w][:1]
        for option in pool_options:
            key, sep, value = option.partition("=")
            if sep and key == "ashift":
                yield SettingValue("zpool:ashift", value.strip(), evidence)
    if verb == "create":
        for option in _option_values(rest, "-O"):
            key, sep, value = option.partition("=")
            if sep:
                yield SettingValue(f"zfs:{key.lower()}", value.strip().lower(), evidence)


def _mount_options(options: str, evidence: str) -> Iterator[SettingValue]:
    """ext4/xfs/btrfs options that bear on durability, as settings; every other option is left alone."""
    for option in (o.strip().lower() for o in options.split(",")):
        key, sep, value = option.partition("=")
        if option == "nobarrier":
            yield SettingValue("mount:barrier", "off", evidence)
        elif key == "barrier":
            off = sep and value in ("0", "off", "no", "false")
            yield SettingValue("mount:barrier", "off" if off else "on", evidence)
        elif option in ("sync", "async"):
            yield SettingValue("mount:sync", option, evidence)
        elif key == "data" and sep:
            yield SettingValue("mount:data", value, evidence)


def _tune2fs(arguments: list[str], evidence: str) -> Iterator[SettingValue]:
    for options in _option_values(arguments, "-o"):  # default mount options: nobarrier, journal_data_writeback
        for option in options.split(","):
            cleared = option.startswith("^")
            name = option.lstrip("^")
            if name == "nobarrier":
                yield SettingValue("mount:barrier", "on" if cleared else "off", evidence)
            elif name == "journal_data_writeback":
                yield SettingValue("mount:data", "ordered" if cleared else "writeback", evidence)
    for features in _option_values(arguments, "-O"):
        for feature in features.split(","):
            if feature.lstrip("^") == "has_journal":
                yield SettingValue("mount:journal", "off" if feature.startswith("^") else "on", evidence)


def _printed(argv: list[str]) -> str:
    """What `echo`/`printf` writes, near enough for a module parameter (`echo 1`, `printf 30`)."""
    words = argv[1:]
    while words and os.path.basename(argv[0]) == "echo" and re.fullmatch(r"-[neE]+", words[0]):
        words = words[1:]
    return " ".join(words).strip()


def _written(target: str, value: str, evidence: str) -> Iterator[SettingValue]:
    """A value written to a file: a ZFS module parameter, or `options zfs ...` into modprobe.d."""
    if target.startswith(ZFS_PARAMETERS):
        name = target[len(ZFS_PARAMETERS):].strip("/")
        if name and "/" not in name:
            yield SettingValue(f"zfs-param:{name}", value, evidence)
    elif target.startswith("/etc/modprobe.d/"):
        words = value.split()
        if words[:2] == ["options", "zfs"]:
            yield from _zfs_parameters(words[2:], evidence)


def _zfs_parameters(assignments: Iterable[str], evidence: str) -> Iterator[SettingValue]:
    for word in assignments:
        key, sep, value = word.partition("=")
        if sep and key:
            yield SettingValue(f"zfs-param:{key}", value.strip(), evidence)


_DRIVE_OPTION = re.compile(r"^--?(scsi|virtio|sata|ide|efidisk|tpmstate|disk|drive|blockdev)\d*$")


def _vm_cache(arguments: list[str], evidence: str) -> Iterator[SettingValue]:
    """A VM disk's cache mode, read from drive specifications only (the value of `--scsi0`, `-drive`, `--disk`:
    `...,cache=unsafe`, `cache.no-flush=on`) and from `--cache unsafe`; a description that says cache=unsafe
    sets nothing."""
    for index, word in enumerate(arguments):
        if word == "--cache" and index + 1 < len(arguments):
            yield SettingValue("vm-disk:cache", arguments[index + 1].lower(), evidence)
        elif word.startswith("--cache="):
            yield SettingValue("vm-disk:cache", word[len("--cache="):].lower(), evidence)
        option, sep, inline = word.partition("=")
        if sep and _DRIVE_OPTION.match(option):
            spec = inline  # --scsi0=local:vm-100-disk-0,cache=unsafe
        elif index > 0 and _DRIVE_OPTION.match(arguments[index - 1]):
            spec = word
        else:
            continue
        for part in spec.split(","):
            key, sep, value = part.partition("=")
            value = value.strip().lower()
            if key.strip().lower() == "cache" and sep:
                yield SettingValue("vm-disk:cache", value, evidence)
            elif key.strip().lower() == "cache.no-flush" and value in ("on", "true", "yes"):
                yield SettingValue("vm-disk:cache", "unsafe", evidence)


def settings_in_facts(facts: Mapping[str, Any]) -> list[SettingValue]:
    """The settings a run's facts show: the target's mount options (complete as the kernel lists them, so an
    option that is absent has its default) and ZFS properties where the facts hold them."""
    found: list[SettingValue] = []
    target = facts.get("target") if isinstance(facts.get("target"), dict) else {}
    options = target.get("mount_options") if target else None
    if isinstance(options, str) and options:
        evidence = f"mount options {options}"
        listed = {s.setting: s for s in _mount_options(options, evidence)}
        fs_type = str(target.get("fs_type") or "")
        if fs_type in ("ext3", "ext4", "xfs", "btrfs"):
            listed.setdefault("mount:barrier", SettingValue("mount:barrier", "on", evidence))
        if fs_type in ("ext3", "ext4"):
            listed.setdefault("mount:data", SettingValue("mount:data", "ordered", evidence))
        listed.setdefault("mount:sync", SettingValue("mount:sync", "async", evidence))
        found += listed.values()
    zfs = facts.get("zfs")
    if isinstance(zfs, dict):
        for key, value in zfs.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                found.append(SettingValue(f"zfs:{str(key).lower()}", str(value).lower(), f"ZFS {key}={value}"))
    return found


def settings_of_workloads(sync: Iterable[bool], direct: Iterable[bool]) -> list[SettingValue]:
    """fio's O_SYNC and O_DIRECT as settings, when every workload of the run agrees on them."""
    found = []
    for setting, flags, on, off in (("fio:sync", set(sync), "fio --sync", "fio without --sync"),
                                    ("fio:direct", set(direct), "fio --direct", "fio --buffered")):
        if len(flags) == 1:
            flag = flags.pop()
            found.append(SettingValue(setting, "on" if flag else "off", on if flag else off))
    return found
