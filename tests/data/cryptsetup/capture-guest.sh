#!/usr/bin/env bash
# Capture real `cryptsetup benchmark` outputs and /proc/cpuinfo inside small QEMU guests with different CPU
# models (the guest side of docs/method.md section 3: LUKS in a guest with CPU type kvm64 versus one that sees AES).
#   tests/data/cryptsetup/capture-guest.sh [SCENARIO...]   (default: all; root; needs qemu-system-x86,
#       busybox-static, kmod, cpio, cryptsetup-bin; downloads Debian 12's linux-image-amd64 .deb)
# The guests run under TCG (software emulation): nested KVM on the CI machine hangs at kernel entry. So the
# MiB/s below are emulation speeds and say nothing about hardware; what is real is cryptsetup's output format
# (full table, single cipher, N/A rows) and each CPU model's /proc/cpuinfo (hypervisor flag, aes or not).
# The guest is an initramfs only: busybox, kmod's modprobe, this machine's own cryptsetup and its libraries,
# and the crypto/virtio modules of Debian 12's stock kernel (which has CONFIG_CRYPTO_USER_API_SKCIPHER=m,
# AF_ALG). PID 1 runs the commands below and writes their stdout, stderr and exit codes as a tar onto a raw
# virtio disk, which this script unpacks into guest-<scenario>/. Nothing is edited afterwards.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
LAB=${LAB:-/var/tmp/stackbench-crypto-lab}
mkdir -p "$LAB"; cd "$LAB"

pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
ls "$pkg"_*.deb >/dev/null 2>&1 || apt-get download "$pkg"
rm -rf kernel root; mkdir -p kernel root
dpkg-deb -x "$pkg"_*.deb kernel
kver=$(ls kernel/lib/modules)

# --- the initramfs
mkdir -p root/{bin,sbin,proc,sys,dev,tmp,run,etc} root/lib/modules/"$kver"/kernel/drivers/block
cp /bin/busybox root/bin/busybox
for tool in sh mount mkdir cat tar sync sleep poweroff uname lsmod ls echo; do ln -s busybox root/bin/$tool; done
cp "$(command -v kmod)" root/sbin/kmod; ln -s kmod root/sbin/modprobe
cp "$(command -v cryptsetup)" root/sbin/cryptsetup
for lib in $(ldd "$(command -v cryptsetup)" "$(command -v kmod)" | awk '/=> \// {print $3} /^\t\// {print $1}' | sort -u); do
  mkdir -p "root$(dirname "$lib")"; cp -L "$lib" "root$lib"
done
# glibc dlopens libgcc_s.so.1 for pthread_exit/pthread_cancel: without it cryptsetup benchmark aborts
gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}'); mkdir -p "root$(dirname "$gcc_s")"; cp -L "$gcc_s" "root$gcc_s"
mods=kernel/lib/modules/$kver/kernel
cp -r $mods/crypto $mods/arch root/lib/modules/"$kver"/kernel/
mkdir -p root/lib/modules/"$kver"/kernel/lib root/lib/modules/"$kver"/kernel/drivers
cp -r $mods/lib/crypto root/lib/modules/"$kver"/kernel/lib/ 2>/dev/null || true
cp -r $mods/drivers/virtio root/lib/modules/"$kver"/kernel/drivers/
cp $mods/drivers/block/virtio_blk.ko root/lib/modules/"$kver"/kernel/drivers/block/
cp kernel/lib/modules/"$kver"/modules.{order,builtin,builtin.modinfo} root/lib/modules/"$kver"/ 2>/dev/null || true
depmod -b root "$kver"
cat > root/init <<'INIT'
#!/bin/sh
export PATH=/sbin:/bin LC_ALL=C
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
modprobe virtio_pci; modprobe virtio_blk
i=0; while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
R=/tmp/results; mkdir -p $R
cap() { name=$1; shift; printf '%s\t%s\n' "$name" "$*" >> $R/commands.txt
        "$@" > $R/$name.stdout 2> $R/$name.stderr; echo $? > $R/$name.rc; }
cap uname uname -r
cap cmdline cat /proc/cmdline
cap cpuinfo cat /proc/cpuinfo
cap cryptsetup-version cryptsetup --version
cap benchmark cryptsetup benchmark
cap benchmark-aes-xts-plain64-512 cryptsetup benchmark --cipher aes-xts-plain64 --key-size 512
cap benchmark-aes-xts-plain64-256 cryptsetup benchmark --cipher aes-xts-plain64 --key-size 256
cap benchmark-serpent-xts-plain64-512 cryptsetup benchmark --cipher serpent-xts-plain64 --key-size 512
cap lsmod lsmod
cap proc-crypto cat /proc/crypto
tar -C $R -cf /dev/vda . && sync
echo GUEST-DONE
poweroff -f
INIT
chmod +x root/init
(cd root && find . | cpio -o -H newc --quiet | gzip -1) > initrd.img

WANT=" $* "
run() {  # run SCENARIO QEMU-CPU [EXTRA-KERNEL-ARGS]
  local name=$1 cpu=$2 extra=${3:-} out="$HERE/guest-$1"
  [ "$WANT" = "  " ] || [[ "$WANT" == *" $name "* ]] || return 0
  truncate -s 0 results.img; truncate -s 64M results.img
  timeout 900 qemu-system-x86_64 -machine q35,accel=tcg -cpu "$cpu" -smp 2 -m 2048 -nographic -no-reboot \
    -kernel kernel/boot/vmlinuz-"$kver" -initrd initrd.img \
    -drive file=results.img,format=raw,if=none,id=res -device virtio-blk-pci,drive=res \
    -append "console=ttyS0 quiet panic=-1 $extra" < /dev/null > console-"$name".log 2>&1
  rm -rf "$out"; mkdir -p "$out"; tar -xf results.img -C "$out"; cp console-"$name".log "$out/console.log"
  printf 'qemu-system-x86_64 -machine q35,accel=tcg -cpu %s -smp 2 -m 2048 (kernel args: console=ttyS0 quiet panic=-1 %s)\n' \
    "$cpu" "$extra" > "$out/qemu.txt"
  echo "captured $name into $out"
}
run kvm64 kvm64            # Proxmox's old default CPU type: no aes flag
run kvm64-aes kvm64,+aes   # what Proxmox's `cpu: kvm64,flags=+aes` passes to QEMU
run max max                # every feature QEMU can emulate, aes included
run kvm64-no-hypervisor kvm64,-hypervisor  # no aes and no hypervisor flag: looks like an old bare-metal CPU
# The stock kernel with serpent and twofish kept from loading (kmod honours modprobe.blacklist= on the kernel
# command line): cryptsetup prints N/A rows for those ciphers.
run max-no-serpent-twofish max "modprobe.blacklist=serpent_generic,serpent_sse2_x86_64,serpent_avx_x86_64,serpent_avx2,twofish_generic,twofish_x86_64,twofish_x86_64_3way,twofish_avx_x86_64"
