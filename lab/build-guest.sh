#!/usr/bin/env bash
# Build (or refresh) an OpenZFS test guest: Debian bookworm with zfs-dkms, fio, python3, nvme-cli, lvm2,
# cryptsetup-bin and qemu-utils, booted by run-guest.sh under qemu software emulation (this project's
# machines cannot load kernel modules and cannot run KVM guests).
#
#   lab/build-guest.sh 2.1      # bookworm contrib: zfs-dkms/zfsutils-linux 2.1.11
#   lab/build-guest.sh 2.3      # bookworm-backports: zfs-dkms/zfsutils-linux 2.3.x
#   ZFS=2.3 lab/build-guest.sh  # same, the series from the environment
#
# Each series has its own cache directory, $LAB/openzfs-<series>/ (LAB defaults to /var/tmp/stackbench-lab):
# rootfs/ with one .phaseN-done stamp per finished phase, vmlinuz, initrd.img, root.img, build.log and
# build-times.txt (one line per phase, appended). A rerun skips finished phases and only reinstalls
# guest-init.sh and remakes root.img (seconds). A lock ($LAB/openzfs-<series>.lock) makes a second build of
# the same series wait for the first, then reuse its work; run-guest.sh takes the same lock shared.
#
# Needs root and the Debian mirror (MIRROR, default: the host's apt source, else deb.debian.org).
# Installs debootstrap and e2fsprogs on the host when missing. Output: progress lines on stdout; on failure
# one line `Error: ...` on stderr naming the fix, after the tail of build.log, and a non-zero exit.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SERIES=${1:-${ZFS:-2.1}}
SERIES=${SERIES#openzfs-}
LAB=${LAB:-/var/tmp/stackbench-lab}
IMG_SIZE=${IMG_SIZE:-3G}
LOCK_WAIT=${LOCK_WAIT:-2400}

die() { echo "Error: $*" >&2; exit 1; }
case "$SERIES" in
  2.1) ZFS_SUITE=bookworm ;;
  2.3) ZFS_SUITE=bookworm-backports ;;
  *) die "unknown OpenZFS series '$SERIES': use 2.1 (bookworm contrib) or 2.3 (bookworm-backports)" ;;
esac
[ "$(id -u)" -eq 0 ] || die "build-guest.sh needs root (debootstrap, chroot): run it as root"

if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
MIRROR=${MIRROR%/}
SECURITY=${SECURITY:-${MIRROR%/debian}/debian-security}

VDIR=$LAB/openzfs-$SERIES
ROOT=$VDIR/rootfs
LOG=$VDIR/build.log
mkdir -p "$VDIR"

# One build per series at a time; a second one waits, then finds the phases done.
exec 9>"$LAB/openzfs-$SERIES.lock"
if ! flock -n 9; then
  echo "another build of openzfs-$SERIES holds $LAB/openzfs-$SERIES.lock; waiting up to ${LOCK_WAIT}s"
  flock -w "$LOCK_WAIT" 9 || die "openzfs-$SERIES is still being built by another process after ${LOCK_WAIT}s: wait for it or raise LOCK_WAIT"
fi

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v mke2fs >/dev/null || need+=(e2fsprogs)
if [ ${#need[@]} -gt 0 ]; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >>"$LOG" 2>&1 \
    || die "could not install ${need[*]} on the host (see $LOG): install them with apt-get and rerun"
fi

PHASE=setup
T_START=$(date +%s)
stamp() { echo "$(date -u +%FT%TZ) openzfs-$SERIES $*" | tee -a "$VDIR/build-times.txt"; }
unmount_all() {
  for m in dev/pts dev sys proc; do
    if mountpoint -q "$ROOT/$m" 2>/dev/null; then umount "$ROOT/$m" 2>/dev/null || umount -l "$ROOT/$m" || true; fi
  done
}
on_exit() {
  rc=$?
  unmount_all
  if [ $rc -ne 0 ] && [ "$PHASE" != done ]; then
    echo "---- last lines of $LOG ----" >&2; tail -n 25 "$LOG" >&2 2>/dev/null || true
    echo "Error: openzfs-$SERIES guest build failed in phase '$PHASE' (full log: $LOG): fix the cause shown above and rerun; finished phases are kept (rm -rf $VDIR to start over)" >&2
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM HUP
# run PHASE-NAME COMMAND...: output to the log, timing to build-times.txt
run_phase() {
  local name=$1 s; shift
  PHASE=$name; s=$(date +%s)
  stamp "$name start"
  echo "==== $(date -u +%FT%TZ) $name" >>"$LOG"
  "$@" >>"$LOG" 2>&1
  stamp "$name done in $(( $(date +%s) - s ))s"
}

if [ ! -e "$ROOT/.phase1-done" ]; then
  if ! curl -fsS -o /dev/null --max-time 20 "$MIRROR/dists/bookworm/Release" 2>/dev/null \
     && ! wget -q -O /dev/null -T 20 "$MIRROR/dists/bookworm/Release" 2>/dev/null \
     && ! apt-get update -qq >/dev/null 2>&1; then
    die "Debian mirror $MIRROR is unreachable: set MIRROR to a reachable bookworm mirror"
  fi
  rm -rf "$ROOT"
  run_phase debootstrap debootstrap --variant=minbase --components=main,contrib \
      --include=ca-certificates,kmod,util-linux,procps,iproute2 bookworm "$ROOT" "$MIRROR"
  touch "$ROOT/.phase1-done"
fi

{
  echo "deb $MIRROR bookworm main contrib"
  echo "deb $MIRROR bookworm-updates main contrib"
  echo "deb $SECURITY bookworm-security main contrib"
  [ "$SERIES" = 2.3 ] && echo "deb $MIRROR bookworm-backports main contrib"
} > "$ROOT/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"; chmod +x "$ROOT/usr/sbin/policy-rc.d"
echo "zfsguest-$SERIES" > "$ROOT/etc/hostname"
unmount_all  # what a build killed outright (SIGKILL, power cut) left mounted: mounting again would fail
mount -t proc proc "$ROOT/proc"; mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"; mount --bind /dev/pts "$ROOT/dev/pts"
CH=(chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C)
APT=("${CH[@]}" apt-get -y -o Dpkg::Use-Pty=0 --no-install-recommends)

if [ ! -e "$ROOT/.phase2-done" ]; then
  run_phase apt-update "${CH[@]}" apt-get update
  run_phase kernel "${APT[@]}" install linux-image-amd64 linux-headers-amd64 initramfs-tools \
      build-essential dkms e2fsprogs udev
  touch "$ROOT/.phase2-done"
fi
if [ ! -e "$ROOT/.phase3-done" ]; then
  # zfs-dkms builds the module for every installed kernel with headers in its postinst.
  run_phase zfs-dkms "${APT[@]}" -t "$ZFS_SUITE" install zfs-dkms zfsutils-linux
  "${CH[@]}" dkms status | sed 's/^/dkms: /' | tee -a "$VDIR/build-times.txt"
  "${CH[@]}" dkms status | grep -q installed || { PHASE=zfs-dkms; die "zfs-dkms built no module (see $LOG): check the kernel headers match the kernel, then rm $ROOT/.phase2-done and rerun"; }
  touch "$ROOT/.phase3-done"
fi
if [ ! -e "$ROOT/.phase4-done" ]; then
  run_phase tools "${APT[@]}" install python3 fio nvme-cli lvm2 cryptsetup-bin qemu-utils
  touch "$ROOT/.phase4-done"
fi
if [ ! -e "$ROOT/.phase5-done" ]; then
  PHASE=initramfs
  printf 'virtio_pci\nvirtio_blk\nvirtio_scsi\nsd_mod\nnvme\next4\n' > "$ROOT/etc/initramfs-tools/modules"
  KVER=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
  run_phase initramfs "${CH[@]}" update-initramfs -u -k "$KVER"
  echo "/dev/vda / ext4 rw,relatime 0 1" > "$ROOT/etc/fstab"
  "${CH[@]}" apt-get clean
  rm -rf "$ROOT"/var/lib/apt/lists/*_Packages "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/*
  cp -L "$ROOT/boot/vmlinuz-$KVER" "$VDIR/vmlinuz"
  cp -L "$ROOT/boot/initrd.img-$KVER" "$VDIR/initrd.img"
  {
    echo "kernel $KVER"
    "${CH[@]}" dpkg-query -W -f='${Package} ${Version}\n' zfs-dkms zfsutils-linux python3 fio nvme-cli lvm2 \
        cryptsetup-bin qemu-utils util-linux linux-image-amd64
  } > "$VDIR/versions.txt"
  touch "$ROOT/.phase5-done"
fi
unmount_all

PHASE=root.img
if [ -e "$VDIR/root.img" ] && [ "$VDIR/root.img" -nt "$ROOT/.phase5-done" ] \
   && cmp -s "$HERE/guest-init.sh" "$ROOT/usr/local/sbin/guest-init"; then
  PHASE=done
  echo "openzfs-$SERIES guest up to date in $VDIR ($(sed -n 's/^zfs-dkms //p' "$VDIR/versions.txt"))"
  exit 0
fi
install -m 0755 "$HERE/guest-init.sh" "$ROOT/usr/local/sbin/guest-init"
s=$(date +%s)
rm -f "$VDIR/root.img.new"
mke2fs -q -t ext4 -L guestroot -d "$ROOT" "$VDIR/root.img.new" "$IMG_SIZE" >>"$LOG" 2>&1
mv -f "$VDIR/root.img.new" "$VDIR/root.img"   # atomic: a guest booting from the old image keeps its inode
stamp "root.img done in $(( $(date +%s) - s ))s (build total $(( $(date +%s) - T_START ))s)"
PHASE=done
echo "openzfs-$SERIES guest ready in $VDIR ($(sed -n 's/^zfs-dkms //p' "$VDIR/versions.txt"))"
