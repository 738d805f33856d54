#!/usr/bin/env bash
# Capture outputs of old fio releases (2.1.4, 2.2.10, 3.1), built from their release tags. Never edit the outputs.
#   FIO_SRC=/path/to/fio/git tests/data/fio/old/capture.sh   (builds under /var/tmp/fiobuild, writes here)
# The tags do not build on a 2026 toolchain as they are; the build changes nothing fio prints:
#   - a stub <linux/raw.h> (the kernel dropped the raw driver's header), on the include path only;
#   - fio's own static gettid() removed from os/os-linux.h (glibc >= 2.30 declares gettid());
#   - EXTFLAGS -fcommon -include sys/sysmacros.h -include stdint.h (major()/minor(), uint8_t in libmtd.h).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD=/var/tmp/fiobuild
WORK="$(mktemp -d /var/tmp/fiocapture.XXXXXX)"
trap 'rm -rf "$WORK"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null; true' EXIT
mkdir -p "$BUILD/include/linux"
cat > "$BUILD/include/linux/raw.h" <<'H'
#ifndef __LINUX_RAW_H
#define __LINUX_RAW_H
#include <linux/types.h>
#define RAW_SETBIND _IO(0xac, 0)
#define RAW_GETBIND _IO(0xac, 1)
struct raw_config_request { int raw_minor; __u64 block_major; __u64 block_minor; };
#define MAX_RAW_MINORS 8192
#endif
H
for tag in fio-2.1.4 fio-2.2.10 fio-3.1; do
  if [ ! -x "$BUILD/$tag/fio" ]; then
    rm -rf "$BUILD/$tag"; mkdir -p "$BUILD/$tag"
    git -C "${FIO_SRC:?set FIO_SRC to a clone of https://github.com/axboe/fio}" archive "$tag" | tar -x -C "$BUILD/$tag"
    python3 - "$BUILD/$tag/os/os-linux.h" <<'P'
import sys
path = sys.argv[1]; text = open(path).read()
open(path, "w").write(text.replace("static inline int gettid(void)\n{\n\treturn syscall(__NR_gettid);\n}\n", ""))
P
    (cd "$BUILD/$tag" && ./configure --disable-native >/dev/null && make -j2 \
      EXTFLAGS="-fcommon -Wno-error -I$BUILD/include -include sys/sysmacros.h -include stdint.h" >/dev/null)
  fi
done
RECORD="$HERE/CAPTURED.md"
{
  echo "# Outputs of old fio releases"
  echo
  echo "Made by \`tests/data/fio/old/capture.sh\` on $(uname -sr) ($(date -u +%Y-%m-%d)) with fio 2.1.4, 2.2.10 and"
  echo "3.1 built from their release tags (the script says how, and that the build changes nothing fio prints)."
  echo "Each file is fio's own stdout, unedited; they show what the public corpus (../public) has no licensed file"
  echo "of: fio 2.x normal and terse output, fio 3.1's normal output, gtod_reduce and verify in every format."
  echo "\`\$WORK\` is a scratch directory under /var/tmp, removed afterwards."
  echo
  echo "| file | command | exercises |"
  echo "|---|---|---|"
} > "$RECORD"
cd "$WORK"
cap() {  # cap TAG FILE "what" fio-args...
  local tag="$1" file="$2" what="$3"; shift 3
  "$BUILD/$tag/fio" "$@" > "$HERE/$file" 2> "$WORK/stderr" || { echo "fio failed for $file" >&2; cat "$WORK/stderr" >&2; exit 1; }
  local shown="fio $*"; shown="${shown//$WORK/\$WORK}"
  echo "| \`$file\` | \`${tag#fio-}: ${shown}\` | $what |" >> "$RECORD"
}
# the five stonewalled jobs of PerfKitBenchmarker's default fio.job (seq write and read 512k QD64, random
# write and read 4k QD1, random read 4k QD64), on a small file; posixaio for libaio (no libaio headers here)
cat > "$WORK/pkb.fio" <<J
[global]
ioengine=posixaio
invalidate=1
direct=1
runtime=1
time_based
filename=$WORK/data
do_verify=0
verify_fatal=0
randrepeat=0
size=32m

[sequential_write]
stonewall
overwrite=0
rw=write
blocksize=512k
iodepth=64

[sequential_read]
stonewall
invalidate=1
rw=read
blocksize=512k
iodepth=64

[random_write_test]
stonewall
rw=randwrite
blocksize=4k
iodepth=1

[random_read_test]
stonewall
invalidate=1
rw=randread
blocksize=4k
iodepth=1

[random_read_test_parallel]
stonewall
invalidate=1
rw=randread
blocksize=4k
iodepth=64
J
for tag in fio-2.1.4 fio-2.2.10 fio-3.1; do
  v=${tag#fio-}
  cap "$tag" "$v-pkb-stonewall.json" "PerfKitBenchmarker's five stonewalled jobs, JSON" pkb.fio --output-format=json
  cap "$tag" "$v-pkb-stonewall-normal.txt" "the same five jobs, normal output" pkb.fio
  cap "$tag" "$v-pkb-stonewall-terse.txt" "the same five jobs, terse" pkb.fio --minimal
done
common=(--filename="$WORK/data" --size=16m --time_based --runtime=1 --ioengine=psync)
for tag in fio-2.2.10 fio-3.1; do
  v=${tag#fio-}
  cap "$tag" "$v-randrw-normal.txt" "randrw 70/30, normal output (3.1: 'issued rwt:' with three counts)" \
      --name=mixed --rw=randrw --rwmixread=70 --bs=4k "${common[@]}"
  cap "$tag" "$v-randrw-terse.txt" "randrw 70/30, terse: no rw, bs, iodepth in the format" \
      --name=mixed --rw=randrw --rwmixread=70 --bs=4k "${common[@]}" --minimal
  cap "$tag" "$v-gtod-reduce.json" "gtod_reduce=1: fio measures no latency" \
      --name=fast --rw=randread --bs=4k --gtod_reduce=1 "${common[@]}" --output-format=json
  cap "$tag" "$v-gtod-reduce-normal.txt" "gtod_reduce=1, normal output: no latency lines" \
      --name=fast --rw=randread --bs=4k --gtod_reduce=1 "${common[@]}"
  cap "$tag" "$v-verify.json" "a write job with verify=crc32c: its reads are the verify pass" \
      --name=check --rw=write --bs=64k --verify=crc32c --filename="$WORK/vdata" --size=4m --ioengine=psync --output-format=json
  cap "$tag" "$v-verify-normal.txt" "the same verify job, normal output" \
      --name=check --rw=write --bs=64k --verify=crc32c --filename="$WORK/vdata" --size=4m --ioengine=psync
done
# client/server with 3.1: one server on loopback
"$BUILD/fio-3.1/fio" --server=ip:127.0.0.1,18765 > "$WORK/server.log" 2>&1 & SERVER_PID=$!
sleep 1
cat > "$WORK/client.fio" <<J
[cs]
rw=randwrite
bs=8k
size=16m
time_based
runtime=1
ioengine=psync
filename=$WORK/csdata
J
cap fio-3.1 "3.1-client-server.json" "fio --client against one fio --server (3.1): client_stats" \
    --client=ip:127.0.0.1,18765 client.fio --output-format=json
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
