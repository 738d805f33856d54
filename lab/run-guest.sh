#!/usr/bin/env bash
# Boot an OpenZFS test guest (built by build-guest.sh) under qemu TCG, let it build a pool with deliberate
# problems and capture it (guest-init.sh), and unpack what it captured.
#
#   lab/run-guest.sh 2.1 OUT_DIR [SRC_TAR]
#   lab/run-guest.sh 2.3 OUT_DIR [SRC_TAR]
#
# SRC_TAR: a tar holding stackbench/ (the package directory); without it this script tars the checkout's
# src/stackbench. It reaches the guest as a read-only raw disk, the results come back the same way.
# OUT_DIR receives the probe's files at its top (probe.json and the raw outputs it names, so
# `stackbench audit --from OUT_DIR` reads it), raw/ (extra captures for parser tests, listed with exit
# statuses in raw/commands.txt) and lab/ (guest-log.txt, layout.txt: role and device of each disk,
# probe-stdout.txt, console.log, run.txt: timings and the qemu command). An existing OUT_DIR must be empty.
# Scratch disk images live in $LAB/run.XXXXXX and are always removed.
#
# Disks (serial -> role; guest-init.sh finds them by serial):
#   virtio-blk zdata1, zdata2  1 GiB, 4096 physical / 512 logical (512e): the ashift=9 mirror
#   scsi-hd    zspecial        1 GiB, 512/512, rotation_rate=1 (non-rotational): single-disk special vdev
#   scsi-hd    zcache          512 MiB, 512/512, rotation_rate=1: cache vdev, added by its /dev/disk/by-id name
#   nvme       znvme           512 MiB namespace in the 512-byte LBA format (QEMU also offers 4096): log vdev
#   virtio-blk zlvm            256 MiB: an LVM volume group in the guest (ext4 on an LV; ext4 on LUKS2 on an LV)
#   virtio-blk zmd1, zmd2      64 MiB each: an md raid1 array with ext4 in the guest
#   virtio-blk sbsrc, sbresults: stackbench source in, results tar out
# CPU: -cpu max for 2.1; qemu64 for 2.3, a model without aes (the guest sees `hypervisor` and no `aes`).
# Env: LAB (/var/tmp/stackbench-lab), CPU, MEM (3072 MiB), SMP (2), TIMEOUT (900 s), QUIET=1 (no progress),
#      CAPTURE=full|quick (full; quick leaves out the ~55 s `cryptsetup benchmark`, which no test reads).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
die() { echo "Error: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: lab/run-guest.sh 2.1|2.3 OUT_DIR [SRC_TAR]"
SERIES=${1#openzfs-}
OUT=$2
SRC_TAR=${3:-}
LAB=${LAB:-/var/tmp/stackbench-lab}
VDIR=$LAB/openzfs-$SERIES
case "$SERIES" in
  2.1) CPU=${CPU:-max} ;;
  2.3) CPU=${CPU:-qemu64} ;;
  *) die "unknown OpenZFS series '$SERIES': use 2.1 or 2.3" ;;
esac
MEM=${MEM:-3072}; SMP=${SMP:-2}; TIMEOUT=${TIMEOUT:-900}; CAPTURE=${CAPTURE:-full}
case "$CAPTURE" in full|quick) ;; *) die "CAPTURE must be full or quick, not '$CAPTURE'" ;; esac
[ -e "$VDIR/root.img" ] || die "$VDIR/root.img missing: build the guest first with lab/build-guest.sh $SERIES"
if ! command -v qemu-system-x86_64 >/dev/null; then
  [ "$(id -u)" -eq 0 ] || die "qemu-system-x86_64 missing: install it (apt-get install qemu-system-x86) or run as root"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86; } >/dev/null 2>&1 \
    || die "could not install qemu-system-x86: apt-get install qemu-system-x86 and rerun"
fi
[ -z "$SRC_TAR" ] || [ -f "$SRC_TAR" ] || die "source tar $SRC_TAR not found: give a tar of src/stackbench or none"
[ ! -e "$OUT" ] || [ -z "$(ls -A "$OUT")" ] || die "$OUT is not empty: give a new or empty output directory"

# A rebuild of this series must not swap root.img under a guest; a shared lock lets runs go together.
exec 9>"$LAB/openzfs-$SERIES.lock"
flock -s -w 2400 9 || die "openzfs-$SERIES is being rebuilt by another process: wait for it and rerun"

WORK=$(mktemp -d "$LAB/run.XXXXXX")
QPID=
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ -n "$SRC_TAR" ]; then
  cp "$SRC_TAR" "$WORK/src.img"
else
  tar -C "$HERE/../src" --exclude=__pycache__ --exclude='*.pyc' -cf "$WORK/src.img" stackbench
fi
truncate -s %512 "$WORK/src.img"
truncate -s 1G "$WORK/data1.img" "$WORK/data2.img" "$WORK/special.img"
truncate -s 512M "$WORK/cache.img" "$WORK/nvme.img"
truncate -s 256M "$WORK/lvm.img"
truncate -s 64M "$WORK/md1.img" "$WORK/md2.img"
truncate -s 128M "$WORK/results.img"

RAW="format=raw,if=none,cache=unsafe,aio=threads"
E512="physical_block_size=4096,logical_block_size=512"
A=(qemu-system-x86_64 -machine q35,accel=tcg -cpu "$CPU" -smp "$SMP" -m "$MEM" -nographic -no-reboot
   -serial mon:stdio -kernel "$VDIR/vmlinuz" -initrd "$VDIR/initrd.img"
   -drive file="$VDIR/root.img",format=raw,if=none,id=root,cache=unsafe,snapshot=on -device virtio-blk-pci,drive=root
   -drive file="$WORK/src.img",format=raw,if=none,id=src,readonly=on -device virtio-blk-pci,drive=src,serial=sbsrc
   -drive file="$WORK/results.img",$RAW,id=res -device virtio-blk-pci,drive=res,serial=sbresults
   -drive file="$WORK/data1.img",$RAW,id=d1 -device virtio-blk-pci,drive=d1,serial=zdata1,$E512
   -drive file="$WORK/data2.img",$RAW,id=d2 -device virtio-blk-pci,drive=d2,serial=zdata2,$E512
   -drive file="$WORK/lvm.img",$RAW,id=lvm -device virtio-blk-pci,drive=lvm,serial=zlvm
   -drive file="$WORK/md1.img",$RAW,id=md1 -device virtio-blk-pci,drive=md1,serial=zmd1
   -drive file="$WORK/md2.img",$RAW,id=md2 -device virtio-blk-pci,drive=md2,serial=zmd2
   -device virtio-scsi-pci,id=scsi0
   -drive file="$WORK/special.img",$RAW,id=sp -device scsi-hd,bus=scsi0.0,drive=sp,serial=zspecial,rotation_rate=1
   -drive file="$WORK/cache.img",$RAW,id=ca -device scsi-hd,bus=scsi0.0,drive=ca,serial=zcache,rotation_rate=1
   -drive file="$WORK/nvme.img",$RAW,id=nv -device nvme,drive=nv,serial=znvme,logical_block_size=512
   -append "root=/dev/vda rw console=ttyS0 panic=1 quiet loglevel=4 init=/usr/local/sbin/guest-init zfs_series=$SERIES sbcapture=$CAPTURE")
printf '%q ' "${A[@]}" > "$WORK/qemu-cmd.txt"

T0=$(date +%s.%N)
: > "$WORK/console.log"
set +e
timeout "$TIMEOUT" "${A[@]}" < /dev/null > "$WORK/console.log" 2>&1 &
QPID=$!
if [ "${QUIET:-0}" != 1 ]; then
  tail -n +1 -f --pid=$QPID "$WORK/console.log" | grep --line-buffered -E '^== |GUEST-DONE|^!! |Error|Kernel panic' &
fi
wait $QPID; RC=$?; QPID=
set -e
T1=$(date +%s.%N)
mkdir -p "$OUT/lab"
cp "$WORK/console.log" "$OUT/lab/console.log"
if ! grep -q GUEST-DONE "$WORK/console.log"; then
  why="exited with status $RC"; [ $RC -eq 124 ] && why="was killed after ${TIMEOUT}s"
  die "the openzfs-$SERIES guest never printed GUEST-DONE (qemu $why); read $OUT/lab/console.log (raise TIMEOUT if it was only slow)"
fi
tar -xf "$WORK/results.img" -C "$OUT" || die "no results tar on the guest's results disk: read $OUT/lab/console.log"
{
  echo "series openzfs-$SERIES cpu $CPU mem ${MEM}M smp $SMP capture $CAPTURE qemu-rc $RC"
  echo "wall seconds $(awk "BEGIN{printf \"%.1f\", $T1 - $T0}")"
  grep -E 'GUEST-(INIT-START|DONE)' "$WORK/console.log" | tr -d '\r'
  echo "qemu: $(cat "$WORK/qemu-cmd.txt")"
} > "$OUT/lab/run.txt"
echo "openzfs-$SERIES captured into $OUT ($(sed -n 's/^wall seconds //p' "$OUT/lab/run.txt") s)"
