#!/usr/bin/env bash
# Capture outputs of old fio releases (2.1.4, 2.2.10, 3.1). Never edit the outputs.
#   FIO_2_1_4=/path/to/fio-2.1.4 FIO_2_2_10=/path/to/fio-2.2.10 FIO_3_1=/path/to/fio-3.1 \
#     tests/data/fio/old/capture.sh
# Each variable names a fio binary of that release (`fio --version` prints it); how you get one is up to you:
# this repository holds no fio code and no recipe to build it.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d /var/tmp/fiocapture.XXXXXX)"
trap 'rm -rf "$WORK"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null; true' EXIT
declare -A FIO=([fio-2.1.4]="${FIO_2_1_4:?a fio 2.1.4 binary}" [fio-2.2.10]="${FIO_2_2_10:?a fio 2.2.10 binary}"
                [fio-3.1]="${FIO_3_1:?a fio 3.1 binary}")
for tag in "${!FIO[@]}"; do
  "${FIO[$tag]}" --version | grep -qx "${tag}" || { echo "${FIO[$tag]} is not ${tag}" >&2; exit 1; }
done
RECORD="$HERE/CAPTURED.md"
{
  echo "# Outputs of old fio releases"
  echo
  echo "Made by \`tests/data/fio/old/capture.sh\` on $(uname -sr) ($(date -u +%Y-%m-%d)) with fio 2.1.4, 2.2.10 and"
  echo "3.1 (binaries of those releases)."
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
  "${FIO[$tag]}" "$@" > "$HERE/$file" 2> "$WORK/stderr" || { echo "fio failed for $file" >&2; cat "$WORK/stderr" >&2; exit 1; }
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
"${FIO[fio-3.1]}" --server=ip:127.0.0.1,18765 > "$WORK/server.log" 2>&1 & SERVER_PID=$!
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
