#!/usr/bin/env bash
# Boot the OpenZFS test guest (built by build-guest.sh) under qemu TCG and collect what it captured.
#   LAB=/var/tmp/stackbench-lab lab/run-guest.sh OUT_DIR
# The data disks are presented with 4096-byte physical sectors (512 logical), like 512e drives, so a pool
# made with ashift=9 on them is a real ZP-ASHIFT-LOW case. Boot takes ~12 s, the capture ~40 s.
set -euo pipefail
LAB=${LAB:-/var/tmp/stackbench-lab}
GUEST=$LAB/guest
OUT=${1:?give an output directory}
command -v qemu-system-x86_64 >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-x86 qemu-utils; }
[ -e "$GUEST/root.img" ] || { echo "Error: $GUEST/root.img missing. Run lab/build-guest.sh first." >&2; exit 1; }
WORK=$(mktemp -d "$LAB/run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
truncate -s 1G "$WORK/d1.img" "$WORK/d2.img" "$WORK/d3.img"
truncate -s 64M "$WORK/results.img"
DISK="format=raw,if=none,cache=none,aio=threads"
SECT="physical_block_size=4096,logical_block_size=512"
timeout 600 qemu-system-x86_64 -machine q35,accel=tcg -cpu max -smp 2 -m 3072 -nographic -no-reboot \
  -serial mon:stdio -kernel "$GUEST/vmlinuz" -initrd "$GUEST/initrd.img" \
  -drive file="$GUEST/root.img",format=raw,if=none,id=root,cache=writeback,snapshot=on -device virtio-blk-pci,drive=root \
  -drive file="$WORK/d1.img",$DISK,id=d1 -device virtio-blk-pci,drive=d1,serial=zd1,$SECT \
  -drive file="$WORK/d2.img",$DISK,id=d2 -device virtio-blk-pci,drive=d2,serial=zd2,$SECT \
  -drive file="$WORK/results.img",format=raw,if=none,id=res -device virtio-blk-pci,drive=res \
  -drive file="$WORK/d3.img",$DISK,id=d3 -device virtio-blk-pci,drive=d3,serial=zd3 \
  -append "root=/dev/vda rw console=ttyS0 panic=1 init=/usr/local/sbin/guest-init" < /dev/null \
  | tee "$WORK/console.log" | grep -E "^== |GUEST-DONE|rc=|Error" || true
mkdir -p "$OUT"
tar -xf "$WORK/results.img" -C "$OUT"
cp "$WORK/console.log" "$OUT/console.log"
echo "captured into $OUT"
