#!/usr/bin/env bash
# Build (or refresh) the OpenZFS test guest: Debian bookworm with zfs-dkms from contrib, fio, cryptsetup,
# booted by run-guest.sh under qemu software emulation (this project's machines cannot load kernel modules
# and cannot run KVM guests). Phases are cached in $LAB/guest/rootfs, so a second build only reinstalls
# guest-init.sh and remakes root.img (seconds). Measured here: debootstrap 35 s, kernel 64 s,
# zfs-dkms 237 s, image 8 s.
#
#   sudo LAB=/var/tmp/stackbench-lab lab/build-guest.sh
#
# Needs root and Debian packages debootstrap, e2fsprogs (installed here when missing).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
LAB=${LAB:-/var/tmp/stackbench-lab}
GUEST=$LAB/guest
ROOT=$GUEST/rootfs
MIRROR=${MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
IMG_SIZE=${IMG_SIZE:-4G}
mkdir -p "$GUEST"
command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap e2fsprogs; }
stamp() { echo "$(date -u +%FT%TZ) $*" | tee -a "$GUEST/build-times.txt"; }
unmount_all() { for m in dev/pts dev proc sys; do mountpoint -q "$ROOT/$m" && umount "$ROOT/$m" || true; done; }
trap unmount_all EXIT

if [ ! -e "$ROOT/.phase1-done" ]; then
  stamp "debootstrap start"
  debootstrap --variant=minbase --components=main,contrib \
      --include=ca-certificates,kmod,util-linux,procps,iproute2 bookworm "$ROOT" "$MIRROR"
  touch "$ROOT/.phase1-done"; stamp "debootstrap done"
fi
printf 'deb %s bookworm main contrib\ndeb %s bookworm-updates main contrib\n' "$MIRROR" "$MIRROR" > "$ROOT/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"; chmod +x "$ROOT/usr/sbin/policy-rc.d"
echo zfsguest > "$ROOT/etc/hostname"
mount -t proc proc "$ROOT/proc"; mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"; mount --bind /dev/pts "$ROOT/dev/pts"
CH=(chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C)
if [ ! -e "$ROOT/.phase2-done" ]; then
  stamp "kernel and tools start"
  "${CH[@]}" apt-get update
  "${CH[@]}" apt-get install -y --no-install-recommends linux-image-amd64 linux-headers-amd64 initramfs-tools \
      fio e2fsprogs build-essential dkms
  touch "$ROOT/.phase2-done"; stamp "kernel and tools done"
fi
if [ ! -e "$ROOT/.phase3-done" ]; then
  stamp "zfs-dkms start"
  "${CH[@]}" apt-get install -y --no-install-recommends zfs-dkms zfsutils-linux
  touch "$ROOT/.phase3-done"; stamp "zfs-dkms done: $("${CH[@]}" dkms status | tr '\n' ' ')"
fi
if [ ! -e "$ROOT/.phase4-done" ]; then
  "${CH[@]}" apt-get install -y --no-install-recommends cryptsetup-bin
  printf 'virtio_pci\nvirtio_blk\nvirtio_scsi\nsd_mod\next4\n' > "$ROOT/etc/initramfs-tools/modules"
  KVER=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
  "${CH[@]}" update-initramfs -u -k "$KVER"
  echo "/dev/vda / ext4 rw,relatime 0 1" > "$ROOT/etc/fstab"
  "${CH[@]}" apt-get clean
  cp -L "$ROOT/boot/vmlinuz-$KVER" "$GUEST/vmlinuz"
  cp -L "$ROOT/boot/initrd.img-$KVER" "$GUEST/initrd.img"
  touch "$ROOT/.phase4-done"
fi
unmount_all
install -m 0755 "$HERE/guest-init.sh" "$ROOT/usr/local/sbin/guest-init"
stamp "root.img start"
rm -f "$GUEST/root.img"
mke2fs -q -t ext4 -L guestroot -d "$ROOT" "$GUEST/root.img" "$IMG_SIZE"
stamp "root.img done"
