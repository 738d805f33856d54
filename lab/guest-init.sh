#!/bin/sh
# PID 1 of the OpenZFS test guest (installed as /usr/local/sbin/guest-init by build-guest.sh, booted by
# run-guest.sh). It builds a pool with deliberate problems, runs the project's probe on it, adds raw
# captures for parser tests, writes everything as a tar onto the results disk and powers off.
#
# Disks are found by the serial run-guest.sh gives them (see there), never by probe order.
#
# Deliberate problems (the audit's integration test asserts them; keep this list in step with
# tests/data/zfs/openzfs-*-probe/README.md):
#   - ZP-ASHIFT-LOW: data mirror of two 512e disks (4096 physical / 512 logical) with ashift 9. `zpool
#     create -o ashift=9 tank mirror A B` does NOT do it: the mirror's own nvlist gets no ashift, so the
#     kernel picks the physical ashift (12). Creating on one disk with -o ashift=9 (a single-disk top-level
#     vdev keeps it) and then `zpool attach -o ashift=9` makes the mirror, which keeps ashift 9; zdb -C shows it.
#   - ZP-SPECIAL-SINGLE, ZP-ASHIFT-FLASH512: special vdev of one non-rotational 512/512 disk, ashift 9.
#   - ZP-LOG-SINGLE: a single log device, an NVMe namespace in the 512-byte LBA format whose controller
#     also offers 4096 (HOST-NVME-LBA).
#   - L2ARC-WRITE-MAX: a non-rotational cache device with l2arc_write_max at its default; it is added by
#     its /dev/disk/by-id name, so zpool status shows that name, not sdX.
#   - DS-ATIME, DS-COMPRESS-OFF, DS-IMG-RECORDSIZE, DS-QCOW2-ON-ZFS: tank/images holds a raw and a qcow2
#     image file, atime=on, relatime=off, compression=off, recordsize=128K.
#   - atime=on, relatime=off (local) on tank, the parent of the zvols: zvols have no atime, the audit must
#     not flag tank/vm-100-disk-0 for it.
#   - DS-SYNC-DISABLED, DS-VBS-TINY/GUEST, KVM-DISCARD: sparse zvol tank/vm-100-disk-0 (-s, so
#     refreservation=none), volblocksize 4K, sync=disabled.
#   - swap on a zvol (tank/swap, in use), GUEST-LVM: a VG/LV with ext4 on a separate disk.
#   - a 5 s fio job on the zvol so arcstats are not empty.
# Stacks for `stackbench stack` (tests/stack/test_stack_guest.py; not problems): ext4 on LUKS2 (4096-byte
# sectors) on a second LV of the same VG, ext4 on an md raid1 of two disks; `python3 -m stackbench.stack`
# is captured for each of them, the LV, the dataset and the zvol, with `layers --auto`'s proposals and its
# scratch dataset, zvol and LV made and removed (one of them after a kill -9).
# Layer telemetry (tests/stack/test_layers_guest.py; step "layer telemetry", last): fio a few seconds on a scratch
# file or volume of each stack (and of ext4 on a dm-delay device: a slow layer) under the real sampler.
# Per-vdev I/O (tests/stack/test_vdev_iostat_guest.py; step "vdev iostat", after it): `zpool iostat -Hpv`'s
# real text during a sync=always write, the vdev sampler beside /proc/diskstats around one, and no zpool left
# after it stops, nor after a sampling process's Ctrl-C or kill -9.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sys /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /run /tmp; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
mount -o remount,rw / 2>/dev/null
echo "GUEST-INIT-START uptime=$(cut -d' ' -f1 /proc/uptime)"
R=/results
# sbcapture=quick (run-guest.sh CAPTURE=quick, used by the tests) leaves out the ~55 s cryptsetup benchmark
CAPTURE=full
for a in $(cat /proc/cmdline); do case "$a" in sbcapture=*) CAPTURE=${a#sbcapture=} ;; esac; done
rm -rf $R; mkdir -p $R/raw $R/lab

step() { echo "== $* (uptime $(cut -d' ' -f1 /proc/uptime))"; }
# run CMD...: show it, run it, report a failure (setup goes on: a partial capture still tells something)
run() { echo "\$ $*"; "$@"; rc=$?; [ $rc -eq 0 ] || echo "!! exit $rc: $*"; return $rc; }
# cap FILE CMD...: a raw capture, stdout unedited into raw/FILE, stderr into raw/FILE.stderr if any;
# raw/commands.txt gets FILE<TAB>command<TAB>exit status
cap() {
  f=$1; shift
  "$@" > "$R/raw/$f" 2> "$R/raw/$f.stderr"; rc=$?
  [ -s "$R/raw/$f.stderr" ] || rm -f "$R/raw/$f.stderr"
  printf '%s\t%s\t%s\n' "$f" "$*" "$rc" >> "$R/raw/commands.txt"
  echo "   $f: exit $rc"
}
# by_serial SERIAL: the kernel device whose /dev/disk/by-id name ends in SERIAL (waits up to 10 s)
by_id() {
  i=0
  while [ $i -lt 100 ]; do
    for l in /dev/disk/by-id/*"$1"; do [ -e "$l" ] && { echo "$l"; return 0; }; done
    sleep 0.1; i=$((i+1))
  done
  echo "!! no /dev/disk/by-id/*$1" >&2; echo /dev/null-$1
}
by_serial() { readlink -f "$(by_id "$1")"; }
wait_dev() { i=0; while [ ! -b "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -b "$1" ] || echo "!! $1 did not appear"; }

main() {
  step "kernel $(uname -r), cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus"
  # udev: libzfs waits for partition nodes through libudev, and it makes /dev/zvol/* and /dev/disk/by-id/*
  /lib/systemd/systemd-udevd --daemon 2>/dev/null && udevadm trigger --action=add && udevadm settle -t 20
  step "udev settled"
  SRC=$(by_serial sbsrc); RES=$(by_serial sbresults)
  D1=$(by_serial zdata1); D2=$(by_serial zdata2); LVMDISK=$(by_serial zlvm)
  SPECIAL=$(by_serial zspecial); CACHE=$(by_id zcache); NVME=$(by_serial znvme)
  MD1=$(by_serial zmd1); MD2=$(by_serial zmd2)
  echo "src=$SRC results=$RES data=$D1,$D2 special=$SPECIAL cache=$CACHE log=$NVME lvm=$LVMDISK md=$MD1,$MD2"
  # layout.txt: role<TAB>kernel device<TAB>the name the pool was given (tests read it for the leaf names)
  printf 'data\t%s\t%s\ndata\t%s\t%s\nspecial\t%s\t%s\nlog\t%s\t%s\ncache\t%s\t%s\nlvm\t%s\t%s\n' \
    "${D1#/dev/}" "$D1" "${D2#/dev/}" "$D2" "${SPECIAL#/dev/}" "$SPECIAL" "${NVME#/dev/}" "$NVME" \
    "$(basename "$(readlink -f "$CACHE")")" "$CACHE" "${LVMDISK#/dev/}" "$LVMDISK" > $R/lab/layout.txt
  printf 'md\t%s\t%s\nmd\t%s\t%s\n' "${MD1#/dev/}" "$MD1" "${MD2#/dev/}" "$MD2" >> $R/lab/layout.txt
  mkdir -p /opt/stackbench && run tar -xf "$SRC" -C /opt/stackbench
  # packages the image lacks come in the source tar (tests/lab_guest.py: mdadm), unpacked under /run, not installed
  for deb in /opt/stackbench/debs/*.deb; do [ -e "$deb" ] && run dpkg-deb -x "$deb" /run/debs; done
  export PATH=$PATH:/run/debs/sbin:/run/debs/usr/sbin

  step "modprobe zfs"
  run modprobe zfs
  echo "zfs module $(cat /sys/module/zfs/version)"

  step "pool"
  run zpool create -f -o ashift=9 tank "$D1"
  run zpool attach -f -o ashift=9 tank "$D1" "$D2"
  run zpool wait -t resilver tank
  run zpool add -f -o ashift=9 tank special "$SPECIAL"
  run zpool add -f tank log "$NVME"
  run zpool add -f tank cache "$CACHE"
  zdb -C tank | grep -E "^ {12}children|^ {16}(type|ashift|is_log):" | tr -s ' ' | paste -sd' '

  step "datasets"
  run zfs set atime=on tank
  run zfs set relatime=off tank
  run zfs create -o atime=on -o relatime=off -o compression=off -o recordsize=128K tank/images
  run dd if=/dev/urandom of=/tank/images/vm-101-disk-0.raw bs=1M count=16 status=none
  if command -v qemu-img >/dev/null; then
    run qemu-img convert -f raw -O qcow2 /tank/images/vm-101-disk-0.raw /tank/images/vm-102-disk-0.qcow2
  fi
  run zfs create -s -V 512M -o volblocksize=4K -o sync=disabled tank/vm-100-disk-0
  run zfs create -V 128M -b "$(getconf PAGESIZE)" -o compression=zle -o logbias=throughput -o sync=always \
      -o primarycache=metadata -o secondarycache=none -o com.sun:auto-snapshot=false tank/swap
  udevadm settle -t 20
  wait_dev /dev/zvol/tank/vm-100-disk-0; wait_dev /dev/zvol/tank/swap
  run mkswap -q /dev/zvol/tank/swap && run swapon /dev/zvol/tank/swap

  step "lvm"
  run pvcreate -q -y "$LVMDISK" && run vgcreate -q guestvg "$LVMDISK" && run lvcreate -q -y -L 128M -n data guestvg
  udevadm settle -t 20; wait_dev /dev/guestvg/data
  mkdir -p /mnt/lvdata && run mkfs.ext4 -q /dev/guestvg/data && run mount /dev/guestvg/data /mnt/lvdata
  printf 'zvol\t%s\t%s\n' "$(basename "$(readlink -f /dev/zvol/tank/vm-100-disk-0)")" /dev/zvol/tank/vm-100-disk-0 \
    >> $R/lab/layout.txt

  step "ext4 on LUKS2 on LVM, ext4 on md raid1"
  run lvcreate -q -y -L 64M -n secret guestvg
  udevadm settle -t 20; wait_dev /dev/guestvg/secret
  printf 'stackbench-lab' > /run/secret.key
  run cryptsetup luksFormat -q --type luks2 --cipher aes-xts-plain64 --key-size 512 --sector-size 4096 \
      --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file /run/secret.key /dev/guestvg/secret
  run cryptsetup open --key-file /run/secret.key /dev/guestvg/secret secret
  mkdir -p /mnt/secret && run mkfs.ext4 -q /dev/mapper/secret && run mount /dev/mapper/secret /mnt/secret
  if command -v mdadm >/dev/null; then
    run mdadm --create /dev/md0 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 --assume-clean "$MD1" "$MD2"
    wait_dev /dev/md0
    mkdir -p /mnt/md && run mkfs.ext4 -q /dev/md0 && run mount /dev/md0 /mnt/md
  else
    echo "!! no mdadm (tests/lab_guest.py could not fetch it): no md array"
  fi

  step "fio 5 s on the zvol"
  set -- --name=zvol-randrw --filename=/dev/zvol/tank/vm-100-disk-0 --rw=randrw --bs=4k --iodepth=4 \
      --ioengine=libaio --direct=1 --size=256M --runtime=5 --time_based --output-format=json
  run fio "$@" --output=$R/raw/fio-zvol.json
  printf '%s\t%s\t%s\n' fio-zvol.json "fio $*" $? >> $R/raw/commands.txt
  cat /tank/images/* > /dev/null; cat /tank/images/* > /dev/null
  run zpool sync tank

  step "stack"
  mkdir -p $R/stack
  for t in secret:/mnt/secret md:/mnt/md lvm:/mnt/lvdata dataset:/tank/images zvol:/dev/zvol/tank/vm-100-disk-0; do
    [ "${t%%:*}" != md ] || mountpoint -q /mnt/md || continue
    PYTHONPATH=/opt/stackbench python3 -m stackbench.stack "${t#*:}" > "$R/stack/${t%%:*}.json" 2> "$R/stack/${t%%:*}.stderr"
    echo "   stack ${t%%:*} ${t#*:}: exit $? (uptime $(cut -d' ' -f1 /proc/uptime))"
  done
  PYTHONPATH=/opt/stackbench python3 - "$R/stack" > $R/stack/auto.json 2> $R/stack/auto.stderr <<'PY'
# layers --auto's proposals for each captured stack, and its scratch volumes made and removed for real
import json, os, signal, subprocess, sys
from pathlib import Path
from stackbench.measure import scratch_volumes as sv
from stackbench.measure.layer_plan import propose
from stackbench.model.plan import build_plan
from stackbench.stack.layer import Stack

here = Path(sys.argv[1])
plan = build_plan("quick", bs=["4k"], qd=[1], rw=["randread", "randwrite"], size="16M", runtime=1.0, runs=2)
out = {"proposals": {name: [s.to_json() for s in propose(Stack.from_json(json.loads((here / f"{name}.json").read_text())),
                                                          plan).steps] for name in ("secret", "md", "lvm", "dataset", "zvol")
                     if (here / f"{name}.json").exists()}}


def exists(v):
    return subprocess.run(["lvs", v.name] if v.kind == "lvm" else ["zfs", "list", v.name], capture_output=True).returncode == 0


def journaled():
    return [v.name for v, _ in sv.journal()]


out["volumes"] = {}
for kind, make in (("zfs-dataset", lambda t: sv.create_dataset("tank", t)),
                   ("zvol", lambda t: sv.create_zvol("tank", t, 16 << 20, {"volblocksize": "4096", "sync": "always"})),
                   ("lvm", lambda t: sv.create_lv("guestvg", t, 16 << 20))):
    v = make(sv.new_token())
    entry = {"name": v.name, "exists": exists(v), "journaled": journaled(),
             "device": bool(v.device and os.path.exists(v.device)),
             "mounted": bool(v.mountpoint and os.path.ismount(v.mountpoint))}
    if v.kind == "zvol":
        entry["properties"] = subprocess.run(["zfs", "get", "-H", "-o", "value", "volblocksize,sync,stackbench:scratch",
                                              v.name], capture_output=True, text=True).stdout.split()
    entry.update(problem=sv.remove(v), exists_after=exists(v), journal_after=journaled())
    out["volumes"][kind] = entry
child = subprocess.Popen([sys.executable, "-c", "import time; from stackbench.measure import scratch_volumes as sv; "
                          "v = sv.create_zvol('tank', 'killed9', 16 << 20, {}); print(v.name, flush=True); time.sleep(600)"],
                         stdout=subprocess.PIPE, text=True)
name = child.stdout.readline().strip()
os.kill(child.pid, signal.SIGKILL)
child.wait()
victim = sv.ScratchVolume("zvol", name, "killed9")
out["kill9"] = {"name": name, "before": exists(victim), "journal": journaled(), "reaped": sv.reap(),
                "after": exists(victim), "journal_after": journaled()}
subprocess.run(["zfs", "create", "tank/stackbench-scratch-notours"], check=True)
stranger = sv.ScratchVolume("zfs-dataset", "tank/stackbench-scratch-notours", "notours")
out["not_ours"] = {"problem": sv.remove(stranger), "exists_after": exists(stranger)}
subprocess.run(["zfs", "destroy", stranger.name])
print(json.dumps(out, indent=1))
PY
  echo "   layers --auto proposals and scratch volumes: exit $?"

  step "probe"
  PYTHONPATH=/opt/stackbench python3 -m stackbench.audit.probe $R > $R/lab/probe-stdout.txt 2>&1
  echo "probe exit $?"; cat $R/lab/probe-stdout.txt

  step "raw captures"
  cap zfs-version.txt zfs version
  cap zpool-status.txt zpool status tank
  cap zpool-status-v.txt zpool status -v
  cap zpool-status-j.txt zpool status -j tank
  cap zpool-status-jp.txt zpool status -jp tank
  cap zpool-status-j-flat-int.txt zpool status -j --json-flat-vdevs --json-int tank
  cap zpool-list-v.txt zpool list -v tank
  cap zpool-list-j.txt zpool list -j -v tank
  cap zpool-get-ashift.txt zpool get ashift tank
  cap zpool-get-vdevs.txt zpool get all tank all-vdevs
  cap zpool-get-j.txt zpool get -j all tank
  cap zpool-get-j-vdevs-int.txt zpool get -j --json-int all tank all-vdevs
  cap zfs-get-j.txt zfs get -j all
  cap zfs-get-j-int-zvol.txt zfs get -j --json-int all tank/vm-100-disk-0
  cap zfs-list.txt zfs list -t all -o name,type,used,avail,volsize,volblocksize,recordsize,mountpoint
  cap zpool-iostat-v.txt zpool iostat -v tank
  cap zdb-C.txt zdb -C tank
  cap lsblk-J-O.txt lsblk -J -O
  cap lsblk-J-b-kb.txt lsblk -J -b -o NAME,TYPE,SIZE,PHY-SEC,LOG-SEC,MIN-IO,OPT-IO,ROTA,DISC-GRAN,MODEL,SERIAL,TRAN
  cap lsblk.txt lsblk -o NAME,TYPE,SIZE,PHY-SEC,LOG-SEC,ROTA,MODEL,SERIAL,TRAN
  cap nvme-list.json nvme list -o json
  cap nvme-id-ns-H.txt nvme id-ns -H "$NVME"
  cap nvme-id-ns.json nvme id-ns -o json "$NVME"
  cap lvs.json lvs --reportformat json -o +devices
  cap pvs.txt pvs
  cap swaps.txt cat /proc/swaps
  cap qemu-img-info.json qemu-img info --output=json /tank/images/vm-102-disk-0.qcow2
  cap arc_summary.txt arc_summary
  cap cpu-flags.txt grep -m1 ^flags /proc/cpuinfo
  if [ "$CAPTURE" = full ]; then
    step "cryptsetup benchmark (full default list)"
    cap cryptsetup-benchmark.txt timeout 300 cryptsetup benchmark
  fi
  cap dmesg.txt dmesg

  # After every capture, so the audit's and the stack's files see the pool as built. tests/tune/test_tune_guest.py
  step "tune"
  mkdir -p $R/tune
  PYTHONPATH=/opt/stackbench XDG_STATE_HOME=/run/tune-state python3 - > $R/tune/roundtrip.json 2> $R/tune/roundtrip.stderr <<'PY'
# Every ZFS property, ZFS module parameter and vm.dirty knob round-tripped through the journal on this guest's
# pool and kernel (apply, verify, undo by the declared strategy, verify), with `zfs get all` / the parameters
# / vm.dirty_* compared byte for byte before and after; the naive undos (zfs set of the original value,
# vm.dirty_bytes=0) tried the same way; and a kill -9 after a change, restored by the next process.
import dataclasses, json, os, signal, subprocess, sys
from pathlib import Path
from stackbench.measure.tune_changes import Changes, recover
from stackbench.measure.tune_journal import Journal
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Scope, Subject, Undo
from stackbench.tune.knobs import BY_ID, REGISTRY

DATASET = "tank/tunetest"


def zfs_all():
    """Every property that has a source (a user can set it): its value and where it comes from. Statistics
    (used, written, compressratio: source "-") move with any write to the pool and are left out."""
    lines = subprocess.run(["zfs", "get", "-Hp", "-o", "name,property,value,source", "all", DATASET],
                           capture_output=True, text=True).stdout.splitlines()
    return "\n".join(line for line in lines if not line.endswith("\t-"))


def differing(before, after):
    if isinstance(before, str):
        return sorted(set(before.splitlines()) ^ set(after.splitlines()))
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def parameters():
    root = Path("/sys/module/zfs/parameters")
    return {p.name: p.read_text().strip() for p in sorted(root.iterdir())}


def dirty():
    return {p.name: p.read_text().strip() for p in sorted(Path("/proc/sys/vm").glob("dirty_*"))}


WHERE = {Scope.DATASET: (Subject("dataset", DATASET), zfs_all), Scope.POOL_MODULE: (Subject("zfs-module", "zfs"), parameters),
         Scope.HOST_SYSCTL: (Subject("host", "sysctl"), dirty)}
subprocess.run(["zfs", "create", "-o", "compression=lz4", "-o", "logbias=throughput", DATASET], check=True)
changes = Changes(Journal.create("guest-roundtrip", {"target": DATASET}))


def round_trip(knob, subject, value):
    """None, or why the change or its undo did not come back to the original."""
    try:
        change = changes.apply(knob, subject, value)
        outcome = changes.undo(change)
        return None if outcome.result == "undone" else outcome.describe()
    except ActionFailed as error:
        changes.undo_all()
        return error.what


out = {"knobs": {}, "naive": {}}
for knob in REGISTRY:
    if knob.scope not in WHERE:
        continue
    subject, snapshot = WHERE[knob.scope]
    before = snapshot()
    original = knob.access.read(subject)
    values = [v for v in knob.values.candidates(subject, original) if v != knob.access.value_of(original)]
    failed = {value: round_trip(knob, subject, value) for value in values}
    after = snapshot()
    out["knobs"][knob.id] = {"original": original, "tried": values, "failed": {v: w for v, w in failed.items() if w},
                             "same_after": after == before, "differing": differing(before, after)}
naive = {"zfs.atime": (dataclasses.replace(BY_ID["zfs.atime"], undo=Undo.SET_ORIGINAL), "off"),
         "vm.dirty": (dataclasses.replace(BY_ID["vm.dirty"], undo=Undo.SET_ORIGINAL), "268435456/67108864")}
for name, (knob, value) in naive.items():
    subject, snapshot = WHERE[knob.scope]
    before = snapshot()
    said = round_trip(knob, subject, value)
    if knob.scope is Scope.DATASET:  # left as the naive undo made it: put the source back by hand
        subprocess.run(["zfs", "inherit", "atime", DATASET])
    else:
        Path("/proc/sys/vm/dirty_ratio").write_text(before["dirty_ratio"])
        Path("/proc/sys/vm/dirty_background_ratio").write_text(before["dirty_background_ratio"])
    out["naive"][name] = {"caught": said, "restored_by_hand": snapshot() == before}
changes.journal.append({"t": "closed", "how": "completed", "left_applied": sorted(changes.open)})
changes.journal.close()

before = zfs_all()
child = subprocess.Popen([sys.executable, "-c", """
import time
from stackbench.measure.tune_changes import Changes
from stackbench.measure.tune_journal import Journal
from stackbench.tune.knob import Subject
from stackbench.tune.knobs import BY_ID
changes = Changes(Journal.create("guest-kill9", {"target": "tank/tunetest"}))
changes.apply(BY_ID["zfs.recordsize"], Subject("dataset", "tank/tunetest"), "16384")
changes.apply(BY_ID["zfs.compression"], Subject("dataset", "tank/tunetest"), "off")
print("applied", flush=True)
time.sleep(600)
"""], stdout=subprocess.PIPE, text=True)
ready = child.stdout.readline().strip()
killed = zfs_all()
child.send_signal(signal.SIGKILL)
child.wait()
notes = []
recover(notes.append)
out["kill9"] = {"ready": ready, "changed": killed != before, "notes": notes, "same_after": zfs_all() == before,
                "differing": differing(before, zfs_all()),
                "journal": json.loads(Path("/run/tune-state/stackbench/tune/guest-kill9.jsonl").read_text().splitlines()[-1])}
subprocess.run(["zfs", "destroy", DATASET])
print(json.dumps(out, indent=1))
PY
  echo "   tune round trips: exit $?"
  # tests/tune/test_tune_guest.py, the child dataset (measure/tune_child.py): the lifecycle execute_tune runs,
  # with the session's own functions, on a dataset of this pool: the child made (journaled first, marked),
  # zfs.compression switched on it between rounds of real fio writes in its mountpoint while the parent's
  # `zfs get all` is compared after each, the kept value carried to the parent, the child destroyed; a kill -9
  # with fio writing in the child, then the next process's recovery; and children of the session's name that
  # it did not make (no mark, another session's mark), which the recovery must leave.
  step "tune child"
  PYTHONPATH=/opt/stackbench XDG_STATE_HOME=/run/tune-child-state python3 - > $R/tune/child.json 2> $R/tune/child.stderr <<'PY'
import json, os, shutil, signal, subprocess, sys, time
from pathlib import Path
from stackbench.measure.tune_changes import Changes, recover
from stackbench.measure.tune_child import SessionChild, child_name, choose_child, on_child
from stackbench.measure.tune_journal import Journal, journal_dir
from stackbench.measure.tune_plan import plan_knob
from stackbench.tune.knobs import BY_ID
from stackbench.tune.subjects import target_info

D, TARGET = "tank/childtest", Path("/tank/childtest")
subprocess.run(["zfs", "create", "-o", "compression=off", D], check=True)


def zfs_all(name):
    lines = subprocess.run(["zfs", "get", "-Hp", "-o", "property,value,source", "all", name],
                           capture_output=True, text=True).stdout.splitlines()
    return "\n".join(line for line in lines if not line.endswith("\t-"))


def prop(name, what):
    return subprocess.run(["zfs", "get", "-H", "-o", "value,source", what, name], capture_output=True,
                          text=True).stdout.strip()


def exists(name):
    return subprocess.run(["zfs", "list", "-H", "-o", "name", name], capture_output=True).returncode == 0


def fio(directory):
    subprocess.run(["fio", "--name=w", f"--filename={directory}/stackbench-guest.scratch", "--size=8M", "--rw=write",
                    "--bs=128k", "--end_fsync=1"], check=True, capture_output=True)


out = {}
before = zfs_all(D)
info = target_info(TARGET)
planned = [plan_knob(BY_ID["zfs.compression"], "lz4", info, frozenset())]
choice = choose_child(info, planned, TARGET, False)
out["plan"] = {"use": choice.use, "said": choice.describe(), "no_child": choose_child(info, planned, TARGET, True).describe()}
session = "5f0c" * 8
changes = Changes(Journal.create(session, {"target": str(TARGET), "child": child_name(D, session)}))
child = SessionChild(changes, D, session)
mountpoint = child.create()
made = {"name": child.name, "mountpoint": mountpoint, "mark": prop(child.name, "stackbench:session")}
on = [on_child(p, info, child.name, frozenset()) for p in planned]
rounds, kept = [], []
for arm in ("b", "a", "b"):
    if arm == "b":
        kept = [changes.apply(p.knob, s, p.value) for p in on for s in p.subjects]
    else:
        for change in reversed(kept):
            changes.undo(change)
        kept = []
    fio(mountpoint)
    rounds.append({"arm": arm, "child": prop(child.name, "compression"), "parent_same": zfs_all(D) == before,
                   "differing": sorted(set(before.splitlines()) ^ set(zfs_all(D).splitlines()))})
carried = child.finish(kept, {p.knob.id: p for p in planned})
adopted = prop(D, "compression")
out["session"] = {"plan_subjects": [s.name for p in on for s in p.subjects], "made": made, "rounds": rounds,
                  "adopted": adopted, "carried": [c.subject.name for c in carried],
                  "child_gone": not exists(child.name), "mountpoint_gone": not os.path.exists(mountpoint),
                  "record": child.to_json()}
for change in reversed(carried):
    changes.undo(change)
changes.journal.append({"t": "closed", "how": "completed", "left_applied": sorted(changes.open)})
changes.journal.close()
out["session"]["parent_back"] = zfs_all(D) == before

KILLED = """
import os, shutil, subprocess, sys, time
from stackbench.base import processes
from stackbench.measure.tune_changes import Changes
from stackbench.measure.tune_child import SessionChild, child_name
from stackbench.measure.tune_journal import Journal, record_scratch
from stackbench.tune.knob import Subject
from stackbench.tune.knobs import BY_ID
session, parent = sys.argv[1:3]
fio = shutil.which("fio")
changes = Changes(Journal.create(session, {"target": parent, "child": child_name(parent, session), "uid": os.geteuid()}))
child = SessionChild(changes, parent, session)
mountpoint = child.create()
scratch = mountpoint + "/stackbench-" + session + ".scratch"
record_scratch(changes.journal, scratch, fio)
changes.apply(BY_ID["zfs.compression"], Subject("dataset", child.name), "lz4")
stray = subprocess.Popen([fio, "--name=stray", "--filename=" + scratch, "--size=4M", "--rw=write", "--time_based",
                          "--runtime=300"], start_new_session=True, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while not any(scratch in processes.open_files(pid) for pid in [stray.pid, *processes.children_of(stray.pid)]):
    assert time.monotonic() < deadline and stray.poll() is None, "fio never opened the scratch file"
    time.sleep(0.05)
print(child.name, stray.pid, flush=True)
time.sleep(600)
"""
session = "dead" * 8
process = subprocess.Popen([sys.executable, "-c", KILLED, session, D], stdout=subprocess.PIPE, text=True)
line = process.stdout.readline().split()
name, fio_pid = (line[0], int(line[1])) if len(line) == 2 else ("", 0)
during = {"child_there": exists(name) if name else False, "child_compression": prop(name, "compression") if name else "",
          "parent_same": zfs_all(D) == before}
process.send_signal(signal.SIGKILL)
process.wait()
notes = []
recover(notes.append)
time.sleep(0.5)
out["kill9"] = {"name": name, "during": during, "notes": notes, "child_gone": bool(name) and not exists(name),
                "fio_gone": not fio_pid or not os.path.exists(f"/proc/{fio_pid}") or
                            "zombie" in Path(f"/proc/{fio_pid}/status").read_text().lower(),
                "parent_same": zfs_all(D) == before,
                "journal": json.loads((journal_dir() / f"{session}.jsonl").read_text().splitlines()[-1])}

MADE_BEFORE_DEATH = """
import sys
from stackbench.measure.tune_changes import Changes
from stackbench.measure.tune_child import SessionChild
from stackbench.measure.tune_journal import Journal
changes = Changes(Journal.create(sys.argv[1], {"target": sys.argv[2]}))
SessionChild(changes, sys.argv[2], sys.argv[1]).create()
"""
out["foreign"] = {}
for case, options in (("unmarked", []), ("another session's", ["-o", "stackbench:session=" + "0" * 32])):
    session = ("abc" if options else "def") * 10 + "00"
    died = subprocess.run([sys.executable, "-c", MADE_BEFORE_DEATH, session, D],
                          env={**os.environ, "STACKBENCH_TUNE_CRASH_AT": "after-intent:1"}, capture_output=True)
    name = child_name(D, session)
    made_by_tune = exists(name)
    subprocess.run(["zfs", "create", *options, name], check=True)
    notes = []
    recover(notes.append)
    out["foreign"][case] = {"died": died.returncode, "made_by_tune": made_by_tune, "notes": notes,
                            "still_there": exists(name)}
    subprocess.run(["zfs", "destroy", name])
subprocess.run(["zfs", "destroy", "-r", D])
print(json.dumps(out, indent=1))
PY
  echo "   tune child dataset: exit $?"
  # Layer telemetry on each stack (tests/stack/test_layers_guest.py): fio writes a few seconds to a scratch
  # file or volume made here and removed after (a file on /mnt/secret and /mnt/md, a dataset and a zvol of
  # tank with sync=always, a file on ext4 on a dm-delay over a loop device on /run), under the real sampler
  # (probe/conditions.ConditionSampler, the devices from measure/telemetry.sampled_layers of the discovered
  # stack). The host computes the layer tables from what this saves, with the real analysis code.
  step "layer telemetry"
  mkdir -p $R/layers
  PYTHONPATH=/opt/stackbench python3 - "$R/layers" > $R/layers/guest.log 2>&1 <<'PY'
import json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path
from stackbench.engine.fio_logs import log_options
from stackbench.measure.telemetry import sampled_layers
from stackbench.probe.conditions import ConditionSampler
from stackbench.stack.discover import discover

out = Path(sys.argv[1])
TXG = Path("/sys/module/zfs/parameters/zfs_txg_timeout")


def sh(*command):
    done = subprocess.run(command, capture_output=True, text=True)
    print("$", *command, "->", done.returncode, done.stderr.strip()[-300:], flush=True)
    return done.stdout.strip()


def measure(name, where, filename, size, bs, rw="randwrite", depth=4):
    """fio for 2 s of ramp and 3 s measured, direct, under the sampler of the stack under `where`, which reads
    the devices as fio's ramp ends (a ramp longer than its interval: it sees fio's job start in time)."""
    started = time.monotonic()
    stack = discover(where).to_json()
    devices, pools = sampled_layers({"stack": stack})
    command = ["fio", "--name=layers", f"--filename={filename}", f"--size={size}", f"--rw={rw}", f"--bs={bs}",
               f"--iodepth={depth}", "--ioengine=libaio", "--direct=1", "--ramp_time=2", "--runtime=3", "--time_based",
               "--output-format=json"]
    logs = Path(tempfile.mkdtemp(prefix=f"layers-{name}-"))
    command += [f"--{option}={value}" for option, value in log_options("samples")]
    sampler = ConditionSampler(devices, pools).start()
    fio = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=logs)
    sampler.watch(fio.pid, 2.0)
    stdout, stderr = fio.communicate()
    conditions = sampler.stop()
    (out / f"{name}.json").write_text(json.dumps({"stack": stack, "devices": devices, "pools": pools,
                                                  "command": command, "exit": fio.returncode, "stderr": stderr[-2000:],
                                                  "conditions": conditions, "fio": stdout,
                                                  "logs": {p.name: p.read_text() for p in logs.iterdir()}}))
    shutil.rmtree(logs)
    print(f"{name}: fio exit {fio.returncode}, {len(conditions['samples'])} samples of {devices} {pools}, "
          f"{time.monotonic() - started:.1f} s", flush=True)


def destroy(name):
    """zfs destroy, again while udev still holds a zvol's device after fio (`dataset is busy`)."""
    for _ in range(20):
        sh("udevadm", "settle", "-t", "20")
        if subprocess.run(["zfs", "destroy", name], capture_output=True).returncode == 0:
            return
        time.sleep(0.5)
    print(f"!! {name} not destroyed", flush=True)


txg = TXG.read_text().strip() if TXG.exists() else None
if txg is not None:  # a txg a second: the pool's disks get the data inside fio's few seconds, not after them
    TXG.write_text("1")
try:
    measure("secret", "/mnt/secret", "/mnt/secret/fio-layers", "24M", "64k")
    if os.path.ismount("/mnt/md"):
        measure("md", "/mnt/md", "/mnt/md/fio-layers", "16M", "64k")
    sh("zfs", "create", "tank/layers")
    if os.path.ismount("/tank/layers"):  # laid out before sync=always: fio's layout through the ZIL took 15 s
        with open("/dev/urandom", "rb") as source, open("/tank/layers/fio-layers", "wb") as scratch:
            scratch.write(source.read(16 << 20))
        sh("zfs", "set", "sync=always", "tank/layers")
        measure("dataset", "/tank/layers", "/tank/layers/fio-layers", "16M", "16k")
    destroy("tank/layers")
    sh("zfs", "create", "-V", "48M", "-o", "sync=always", "tank/layers-vol")
    sh("udevadm", "settle", "-t", "20")
    for _ in range(100):
        if os.path.exists("/dev/zvol/tank/layers-vol"):
            break
        time.sleep(0.1)
    if os.path.exists("/dev/zvol/tank/layers-vol"):
        measure("zvol", "/dev/zvol/tank/layers-vol", "/dev/zvol/tank/layers-vol", "48M", "16k")
    destroy("tank/layers-vol")
    # a layer slow for real: dm-delay (50 ms a request) over a loop device on tmpfs; ext4 on it
    sh("truncate", "-s", "32M", "/run/slow.img")
    sh("modprobe", "loop")
    sh("modprobe", "dm-delay")
    loop = sh("losetup", "-f", "--show", "/run/slow.img")
    if loop.startswith("/dev/loop"):
        sh("dmsetup", "create", "sbslow", "--table", f"0 65536 delay {loop} 0 50")
        sh("udevadm", "settle", "-t", "20")
        os.makedirs("/mnt/slow", exist_ok=True)
        if os.path.exists("/dev/mapper/sbslow"):
            sh("mkfs.ext4", "-q", "/dev/mapper/sbslow")
            sh("mount", "/dev/mapper/sbslow", "/mnt/slow")
        if os.path.ismount("/mnt/slow"):  # never the root file system's /mnt/slow
            measure("slow", "/mnt/slow", "/mnt/slow/fio-layers", "8M", "4k", depth=16)  # 4 deep: 83 % busy
            sh("umount", "/mnt/slow")
        sh("dmsetup", "remove", "sbslow")
        sh("losetup", "-d", loop)
    os.remove("/run/slow.img")
finally:
    for scratch in ("/mnt/secret/fio-layers", "/mnt/md/fio-layers"):
        if os.path.exists(scratch):
            os.remove(scratch)
    if txg is not None:
        TXG.write_text(txg)
PY
  echo "   layer telemetry: exit $? (uptime $(cut -d' ' -f1 /proc/uptime))"; cat $R/layers/guest.log
  # Per-vdev I/O (probe/vdev_iostat.py; tests/stack/test_vdev_iostat_guest.py, and the parser's tests in
  # tests/runner/test_vdev_iostat.py read the text captured here): `zpool iostat` as it prints while fio writes
  # with sync=always (-Hpv, -HpvP and the plain -pv with its class headers, 1 s reports after -y), then the real
  # sampler (probe/conditions.ConditionSampler, which runs the vdev sampler for the stack's pools) around a
  # write with idle seconds before and after it, so that zpool's reports and /proc/diskstats count the same I/O
  step "vdev iostat"
  mkdir -p $R/vdev
  PYTHONPATH=/opt/stackbench python3 - "$R/vdev" > $R/vdev/guest.log 2>&1 <<'PY'
import json, os, signal, subprocess, sys, time
from pathlib import Path
from stackbench.measure.telemetry import sampled_layers
from stackbench.probe.conditions import ConditionSampler
from stackbench.stack.discover import discover

out = Path(sys.argv[1])
TXG = Path("/sys/module/zfs/parameters/zfs_txg_timeout")
SCRATCH = "/tank/vdevs/fio-vdevs"


def sh(*command):
    done = subprocess.run(command, capture_output=True, text=True)
    print("$", *command, "->", done.returncode, done.stderr.strip()[-300:], flush=True)
    return done.stdout.strip()


def zpool_iostats():
    """The `zpool iostat` processes running now (a zombie has ended): pid -> its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] if argv else "X"
        except (OSError, IndexError):
            continue
        if len(argv) > 1 and argv[0].endswith(b"zpool") and argv[1] == b"iostat" and state not in ("Z", "X"):
            found[int(entry.name)] = " ".join(a.decode(errors="replace") for a in argv if a)
    return found


# A stackbench sampling the pool in a process of its own, ended as a user or the OOM killer would end it
SAMPLING = """
import time
from stackbench.probe.conditions import ConditionSampler
with ConditionSampler([], ["tank"]) as sampler:
    print(sampler.vdevs.pid, flush=True)
    time.sleep(60)
"""


def ended(how):
    """Start SAMPLING, let zpool report, send `how` (SIGINT to the process group: Ctrl-C at a terminal;
    SIGKILL to the process alone: no code of ours runs) and say whether its zpool outlived it."""
    child = subprocess.Popen([sys.executable, "-c", SAMPLING], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True, env={**os.environ, "PYTHONPATH": "/opt/stackbench"})
    try:
        return _ended(child, how)
    except Exception as error:  # the step goes on: the test says what went wrong
        child.kill()
        child.wait()
        return {"error": f"{type(error).__name__}: {error}", "alive_after": None}


def _ended(child, how):
    line = child.stdout.readline().strip()
    pid = int(line) if line.isdigit() else None
    running = pid in zpool_iostats()
    time.sleep(2.5)  # a report or two
    if how == signal.SIGINT:
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.kill()
    child.wait(timeout=30)
    started = time.monotonic()
    while pid in zpool_iostats() and time.monotonic() - started < 5:
        time.sleep(0.05)
    return {"zpool_pid": pid, "running_before": running, "child_exit": child.returncode,
            "stderr": child.stderr.read()[-500:], "alive_after": pid in zpool_iostats(),
            "gone_after_s": round(time.monotonic() - started, 2)}


def vdev_counters():
    """`zpool get -Hp` of every vdev's operations and bytes so far (vdev properties, OpenZFS 2.2+: counts,
    not rates, so no interval to time), or None where this zpool has none (2.1)."""
    done = subprocess.run(["zpool", "get", "-Hp", "read_ops,write_ops,read_bytes,write_bytes", "tank", "all-vdevs"],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def fio(seconds):
    return subprocess.Popen(["fio", "--name=vdevs", f"--filename={SCRATCH}", "--size=16M", "--rw=randwrite", "--bs=16k",
                             "--iodepth=4", "--ioengine=libaio", "--direct=1", f"--runtime={seconds}", "--time_based",
                             "--output-format=json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


BEFORE = zpool_iostats()  # the layer telemetry step's samplers have stopped: none should be left
txg = TXG.read_text().strip() if TXG.exists() else None
if txg is not None:  # a txg a second: the data reaches the disks within the seconds sampled
    TXG.write_text("1")
try:
    sh("zfs", "create", "tank/vdevs")
    if os.path.ismount("/tank/vdevs"):
        with open("/dev/urandom", "rb") as source, open(SCRATCH, "wb") as scratch:
            scratch.write(source.read(16 << 20))
        sh("zfs", "set", "sync=always", "tank/vdevs")
        writer = fio(16)
        time.sleep(1)
        for name, flags in (("zpool-iostat-Hpv-y.txt", "-Hpvy"), ("zpool-iostat-HpvP-y.txt", "-HpvPy"),
                            ("zpool-iostat-pv-y.txt", "-pvy")):
            started = time.monotonic()
            with open(out / name, "w") as text:
                done = subprocess.run(["zpool", "iostat", flags, "tank", "1", "2"], stdout=text, stderr=subprocess.PIPE,
                                      text=True)
            print(f"zpool iostat {flags} tank 1 2: exit {done.returncode} {done.stderr.strip()[-300:]}, "
                  f"{time.monotonic() - started:.1f} s", flush=True)
        writer.communicate()
        stack = discover("/tank/vdevs").to_json()
        devices, pools = sampled_layers({"stack": stack})
        started = time.monotonic()
        counters = [vdev_counters()]  # zpool's own counts since import, where it has them (2.2+)
        sampler = ConditionSampler(devices, pools).start()
        time.sleep(2)
        writer = fio(4)
        stdout, stderr = writer.communicate()
        time.sleep(3)  # the last txgs reach the disks while both samplers count
        conditions = sampler.stop()
        counters.append(vdev_counters())
        after = zpool_iostats()  # the sampler's zpool, once it stopped
        ends = {"ctrl-c": ended(signal.SIGINT), "kill-9": ended(signal.SIGKILL)}
        (out / "sampled.json").write_text(json.dumps({"stack": stack, "devices": devices, "pools": pools,
                                                      "exit": writer.returncode, "stderr": stderr[-2000:],
                                                      "fio": stdout, "conditions": conditions,
                                                      "zpool_iostat_left": {"before": BEFORE, "after_stop": after},
                                                      "vdev_counters": counters, "ends": ends}))
        print(f"zpool iostat left: {BEFORE} before, {after} after stop; ends {ends}", flush=True)
        vdevs = conditions.get("vdevs") or {}
        print(f"sampled: fio exit {writer.returncode}, {len(conditions['samples'])} seconds of {devices}, "
              f"{len(vdevs.get('samples') or ())} zpool reports of {pools}, zpool cpu {vdevs.get('cpu_s')} s "
              f"in {vdevs.get('seconds')} s, unavailable {vdevs.get('unavailable')}, "
              f"{time.monotonic() - started:.1f} s", flush=True)
finally:
    if txg is not None:
        TXG.write_text(txg)
    for _ in range(20):
        if subprocess.run(["zfs", "destroy", "tank/vdevs"], capture_output=True).returncode == 0:
            break
        time.sleep(0.5)
PY
  echo "   vdev iostat: exit $? (uptime $(cut -d' ' -f1 /proc/uptime))"; cat $R/vdev/guest.log
  step "capture done"
}

main 2>&1 | tee $R/lab/guest-log.txt
swapoff -a 2>/dev/null
RES=$(readlink -f /dev/disk/by-id/virtio-sbresults)
tar -C $R -cf "$RES" . && sync && echo "results tar written to $RES"
mkfifo /run/hold
echo "GUEST-DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
echo o > /proc/sysrq-trigger
# Wait for the power-off without touching the root disk (an external `sleep` would be read from vda while the
# power-off tears it down): opening a FIFO nobody writes blocks. If power-off never came, PID 1 would exit ->
# panic -> panic=1 reboots -> qemu -no-reboot exits.
read -r hold < /run/hold
