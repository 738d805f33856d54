#!/bin/sh
# PID 1 of the OpenZFS test guest: builds a pool with deliberate problems and captures the raw output of
# every command stackbench's probe parses, then powers off. Results go as a tar onto the raw disk /dev/vdd.
#   /dev/vdb, /dev/vdc: data disks presented with 4096-byte physical sectors (see run-guest.sh)
#   /dev/vde: a third disk for a single-disk special vdev
# Deliberate problems (for the audit's integration test):
#   ashift=9 on 4K-sector disks (ZP-ASHIFT-LOW); a single-disk special vdev (ZP-SPECIAL-SINGLE);
#   a dataset holding image files with atime=on, relatime=off (DS-ATIME); a zvol with sync=disabled
#   (DS-SYNC-DISABLED); compression=off on the image dataset (DS-COMPRESS-OFF).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /run /tmp; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
mount -o remount,rw /
/lib/systemd/systemd-udevd --daemon 2>/dev/null && udevadm trigger --action=add && udevadm settle -t 20
R=/results; rm -rf $R; mkdir -p $R
cap() { name=$1; shift; echo "== $name: $*"; "$@" > "$R/$name" 2>&1; echo "rc=$?" >> "$R/commands.txt.rc"; echo "$name	$*" >> "$R/commands.txt"; }
{
  modprobe zfs
  zpool create -f -o ashift=9 tank mirror /dev/vdb /dev/vdc special /dev/vde
  zfs create -o atime=on -o relatime=off -o compression=off tank/images
  zfs create -V 256M -o sync=disabled tank/vm-100-disk-0
  udevadm settle -t 20
  dd if=/dev/urandom of=/tank/images/disk.raw bs=1M count=8 2>/dev/null
  cap zfs-version.txt zfs version
  cap zfs-module-version.txt cat /sys/module/zfs/version
  cap zpool-get-Hp-all.txt zpool get -Hp all tank
  cap zpool-list-Hpv.txt zpool list -Hp -v
  cap zpool-status.txt zpool status -v tank
  cap zpool-status-P.txt zpool status -P tank
  cap zfs-get-Hp-all.txt zfs get -Hp all
  cap zdb-C.txt zdb -C tank
  cap arcstats.txt cat /proc/spl/kstat/zfs/arcstats
  cap zfs-module-parameters.txt sh -c 'cd /sys/module/zfs/parameters && grep -H . * 2>/dev/null'
  cap sys-block-queue.txt sh -c 'for d in /sys/block/*; do for f in physical_block_size logical_block_size rotational scheduler; do printf "%s/queue/%s\t%s\n" "$d" "$f" "$(cat $d/queue/$f 2>/dev/null)"; done; done'
  cap lsblk-J-O.txt lsblk -J -O
  cap cpuinfo.txt cat /proc/cpuinfo
  cap meminfo.txt cat /proc/meminfo
  cap cmdline.txt cat /proc/cmdline
  cap cryptsetup-benchmark.txt cryptsetup benchmark -c aes-xts-plain64 -s 512
  zpool export tank
  echo "== capture done"
} > $R/guest-log.txt 2>&1
cat $R/guest-log.txt
tar -C $R -cf /dev/vdd . && sync && echo "results tar written to /dev/vdd"
echo GUEST-DONE
echo o > /proc/sysrq-trigger
while :; do sleep 5; done
