#!/usr/bin/env bash
# Capture more real fio normal/terse outputs for the text importers, each paired with the JSON of the same run
# (`--output-format=normal,json` / `terse,json` print one run twice). Never edit the outputs by hand.
#   tests/data/fio/text/capture-text.sh      (needs fio and root for the loop device; writes here and
#                                              CAPTURED-TEXT.md)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
LOOP=""
trap 'rm -rf "$WORK"; [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null; true' EXIT
cd "$WORK"
RECORD="$HERE/CAPTURED-TEXT.md"
{
  echo "# More captured fio text outputs"
  echo
  echo "Made by \`tests/data/fio/text/capture-text.sh\` with $(fio --version) on $(uname -sr) ($(date -u +%Y-%m-%d))."
  echo "Each file is fio's own stdout, unedited. Every file is a pair: one run printed as normal (or terse)"
  echo "and json, so the text parsers can be checked value by value against the JSON parser."
  echo
  echo "| file | command | exercises |"
  echo "|---|---|---|"
} > "$RECORD"

common=(--filename="$WORK/data" --size=8M --time_based --runtime=1)

cap() {  # cap FILE "what it exercises" fio-args...
  local file="$1" what="$2"; shift 2
  local status=0
  fio "$@" > "$HERE/$file" 2> "$WORK/stderr" || status=$?
  local shown="fio $*"
  shown="${shown//$WORK/\$WORK}"
  echo "| \`$file\` | \`${shown}\` (exit $status) | $what |" >> "$RECORD"
}

both() {  # both NAME "what" fio-args...: the normal,json and the terse,json pair of the same job
  local name="$1" what="$2"; shift 2
  cap "pair-$name-normal-json.txt" "$what" "$@" --output-format=normal,json
  cap "pair-$name-terse-json.txt" "$what (terse)" "$@" --output-format=terse,json
}

both msec-qd256 "libaio QD256 1 MiB direct writes: clat and percentiles in msec" \
    --name=big --rw=randwrite --bs=1m --iodepth=256 --ioengine=libaio --direct=1 \
    --filename="$WORK/big" --size=1G --time_based --runtime=2
both numjobs2-nogroup "numjobs=2 without group_reporting: two result blocks with the same job name" \
    --name=twin --rw=randread --bs=4k --numjobs=2 --ioengine=psync "${common[@]}"
both randrw-split "randrw with --bs=4k,16k: read and write sections with different block sizes" \
    --name=rw --rw=randrw --bs=4k,16k --ioengine=psync "${common[@]}"
both bs512 "512-byte blocks: io sizes not whole KiB in terse" \
    --name=small --rw=randwrite --bs=512 --ioengine=psync "${common[@]}"
both rate-fsync "--rate_iops=150 with fsync=1: low IOPS printed without k, sync latency block" \
    --name=slow --rw=randwrite --bs=4k --rate_iops=150 --fsync=1 --ioengine=sync "${common[@]}"
both bsrange "--bsrange=4k-16k: variable block size (bs cannot be known per I/O)" \
    --name=range --rw=randwrite --bsrange=4k-16k --ioengine=psync "${common[@]}"
both mixed "--rw=randrw --unified_rw_reporting=1: one 'mixed' section" \
    --name=mix --rw=randrw --bs=4k --unified_rw_reporting=1 --ioengine=psync "${common[@]}"
touch "$WORK/afile"
both error-enotdir "a job whose file sits under a regular file (ENOTDIR): err=20" \
    --name=bad --rw=write --bs=4k --filename="$WORK/afile/file" --size=1M
dd if=/dev/zero of="$WORK/zeros" bs=1M count=1 status=none
both error-verify "a job failing during I/O (verify of unwritten data): err=84 in the result line" \
    --name=vfail --rw=read --bs=4k --ioengine=psync --filename="$WORK/zeros" --size=1M --verify=md5
cap stderr-error-enotdir-normal.txt "normal output with stderr merged (2>&1 below): the ENOTDIR job prints no \
result block, only fio's 'fio: pid=0, err=20/...' line" --name=bad --rw=write --bs=4k \
    --filename="$WORK/afile/file" --size=1M
cat "$WORK/stderr" >> "$HERE/stderr-error-enotdir-normal.txt"

cat > "$WORK/three.fio" <<JOB
[global]
ioengine=psync
size=8M
time_based=1
runtime=1
filename=$WORK/data
[reader]
rw=randread
bs=4k
[writer]
stonewall
rw=write
bs=128k
[syncer]
stonewall
rw=randwrite
bs=8k
fdatasync=4
JOB
both three-jobs "job file with three jobs, one with fdatasync" "$WORK/three.fio"

truncate -s 64M "$WORK/loopfile"
if LOOP="$(losetup -f --show "$WORK/loopfile" 2>/dev/null)"; then
  both trim-loop "randtrim on a loop device: a trim section" \
      --name=tr --rw=randtrim --bs=64k --ioengine=psync --filename="$LOOP" --size=64M --time_based --runtime=1
fi
echo "captured into $HERE"
