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
