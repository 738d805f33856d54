#!/usr/bin/env bash
# Capture real `cryptsetup benchmark` outputs on THIS machine into host-<uname -r>/ (stdout, stderr and exit
# code of each command, unedited), with /proc/cpuinfo and the kernel's AF_ALG configuration.
#   tests/data/cryptsetup/capture-host.sh        (needs cryptsetup-bin: apt-get install cryptsetup-bin)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/host-$(uname -r)"
rm -rf "$OUT"; mkdir -p "$OUT"
export LC_ALL=C
cap() {  # cap NAME command...
  local name=$1; shift
  printf '%s\t%s\n' "$name" "$*" >> "$OUT/commands.txt"
  local rc=0; "$@" > "$OUT/$name.stdout" 2> "$OUT/$name.stderr" || rc=$?; echo "$rc" > "$OUT/$name.rc"
}
cap uname uname -r
cap cpuinfo cat /proc/cpuinfo
cap kernel-config-crypto sh -c '{ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)"; } | grep -E "CONFIG_CRYPTO_USER|CONFIG_CRYPTO_AES|CONFIG_CRYPTO_XTS"'
cap cryptsetup-version cryptsetup --version
cap benchmark cryptsetup benchmark
cap benchmark-aes-xts-plain64-512 cryptsetup benchmark --cipher aes-xts-plain64 --key-size 512
cap benchmark-aes-xts-plain64-256 cryptsetup benchmark --cipher aes-xts-plain64 --key-size 256
cap benchmark-pbkdf2-sha256 cryptsetup benchmark --pbkdf pbkdf2 --hash sha256
cap benchmark-pbkdf2-nosuchhash cryptsetup benchmark --pbkdf pbkdf2 --hash nosuchhash
cap benchmark-argon2id cryptsetup benchmark --pbkdf argon2id
# a usage error (stderr only): what a saved file holds when the command line was wrong
cap usage-bad-key-size cryptsetup benchmark --cipher aes-xts-plain64 --key-size 123
echo "captured into $OUT"
