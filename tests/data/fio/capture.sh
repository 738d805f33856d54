#!/usr/bin/env bash
# Regenerate every captured fio output in this directory with real fio runs. Never edit the outputs by hand.
#   tests/data/fio/capture.sh            (needs fio; writes *.json, text/*.txt and CAPTURED.md here)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "${SERVER2_PID:-}" ] && kill "$SERVER2_PID" 2>/dev/null; true' EXIT
cd "$WORK"
VERSION="$(fio --version)"
RECORD="$HERE/CAPTURED.md"
{
  echo "# Captured fio outputs"
  echo
  echo "Made by \`tests/data/fio/capture.sh\` with $VERSION on $(uname -sr) ($(date -u +%Y-%m-%d)). Each file is"
  echo "fio's own output, unedited. Only fio 3.33 was available here (Debian 12's package)."
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

cap randwrite-fdatasync-libaio.jsonplus.json "json+ with bins, sync (fdatasync) latency object, libaio QD4" \
    --name=w --rw=randwrite --bs=4k --iodepth=4 --ioengine=libaio --fdatasync=1 "${common[@]}" --output-format=json+
cap randread-psync.json "plain json, randread, psync engine" \
    --name=r --rw=randread --bs=4k --ioengine=psync "${common[@]}" --output-format=json
cap seqwrite-posixaio.jsonplus.json "json+, sequential write, posixaio QD8, 1M blocks" \
    --name=s --rw=write --bs=1m --iodepth=8 --ioengine=posixaio "${common[@]}" --output-format=json+
cap randrw-split-bs.json "randrw with read and write sections, --bs=4k,64k (per-direction block sizes)" \
    --name=m --rw=randrw --bs=4k,64k --ioengine=psync "${common[@]}" --output-format=json
cap numjobs4-group.json "numjobs=4 with group_reporting (one job entry)" \
    --name=g --rw=randread --bs=4k --numjobs=4 --group_reporting --ioengine=psync "${common[@]}" --output-format=json
cap clat-percentiles-off.json "clat_percentiles=0: no percentile object" \
    --name=p --rw=randwrite --bs=4k --clat_percentiles=0 --ioengine=psync "${common[@]}" --output-format=json
cap lat-percentiles.json "lat_percentiles=1 (percentiles on lat_ns)" \
    --name=l --rw=randwrite --bs=4k --lat_percentiles=1 --ioengine=psync "${common[@]}" --output-format=json
cap status-interval.json "--status-interval=1: several concatenated JSON documents, the last is final" \
    --name=si --rw=randread --bs=4k --ioengine=psync --filename="$WORK/data" --size=8M --time_based --runtime=3 \
    --status-interval=1 --output-format=json
touch "$WORK/afile"
cap error-not-a-directory.json "a job whose file sits under a regular file (ENOTDIR): per-job error" \
    --name=bad --rw=write --bs=4k --filename="$WORK/afile/file" --size=1M --output-format=json
cap error-verify-stdout.json "a job failing during I/O (verify on an unwritten file) with json on stdout" \
    --name=vfail --rw=read --bs=4k --ioengine=psync --filename="$WORK/afile" --size=1M --verify=md5 --output-format=json

cat > "$WORK/two.fio" <<JOB
[global]
ioengine=psync
size=8M
time_based=1
runtime=1
filename=$WORK/data
[first]
rw=randread
bs=4k
[second]
stonewall
rw=write
bs=64k
JOB
cap two-jobs-defaults.json "job file with two jobs, no group_reporting; the first sets no iodepth" \
    "$WORK/two.fio" --output-format=json
cat > "$WORK/defaults.fio" <<JOB
[onlydefaults]
filename=$WORK/data
size=8M
JOB
cap defaults-only.json "a job that sets no rw, bs or iodepth (fio defaults: read, 4k, 1)" \
    "$WORK/defaults.fio" --output-format=json

# client/server on loopback
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fio --server=ip:127.0.0.1,$port > /dev/null 2>&1 & SERVER_PID=$!
fio --server=ip:127.0.0.1,$port2 > /dev/null 2>&1 & SERVER2_PID=$!
sleep 1
cat > "$WORK/client.fio" <<JOB
[cs]
rw=randwrite
bs=4k
ioengine=psync
size=8M
time_based=1
runtime=1
filename=$WORK/data-\${HOSTNAME}
JOB
cap client-one-server.json "client/server: client_stats with hostname (one server on loopback)" \
    --client=ip:127.0.0.1,$port "$WORK/client.fio" --output-format=json
sed "s|data-\${HOSTNAME}|data2|" "$WORK/client.fio" > "$WORK/client2.fio"
cap client-two-servers.json "client/server: two servers, per-host entries plus the 'All clients' aggregate" \
    --client=ip:127.0.0.1,$port "$WORK/client.fio" --client=ip:127.0.0.1,$port2 "$WORK/client2.fio" --output-format=json
kill $SERVER_PID $SERVER2_PID 2>/dev/null || true; SERVER_PID=; SERVER2_PID=

# human-readable and terse outputs, for the text importers
cap text/normal-randwrite-fdatasync.txt "normal (human) output with sync latency" \
    --name=w --rw=randwrite --bs=4k --ioengine=psync --fdatasync=1 "${common[@]}"
cap text/normal-two-jobs.txt "normal output of two jobs" "$WORK/two.fio"
cap text/normal-randrw.txt "normal output with read and write sections" \
    --name=m --rw=randrw --bs=4k --ioengine=psync "${common[@]}"
cap text/terse-two-jobs.txt "terse (v3) output of two jobs" "$WORK/two.fio" --output-format=terse
# pairs: the same run printed as normal+json and terse+json, so text parsers can be checked field by field
cap text/pair-two-jobs-normal-json.txt "one run printed as normal and json (json first, then the normal text)" \
    "$WORK/two.fio" --output-format=normal,json
cap text/pair-two-jobs-terse-json.txt "one run printed as terse and json (terse lines first)" \
    "$WORK/two.fio" --output-format=terse,json
cap text/pair-randwrite-fdatasync-normal-json.txt "sync latency block in normal output, with json of the same run" \
    --name=w --rw=randwrite --bs=4k --ioengine=psync --fdatasync=1 "${common[@]}" --output-format=normal,json
cap text/pair-libaio-qd8-normal-json.txt "libaio QD8 with slat lines, normal and json" \
    --name=q --rw=randread --bs=4k --iodepth=8 --ioengine=libaio --direct=1 "${common[@]}" --output-format=normal,json
cap text/pair-numjobs3-normal-json.txt "numjobs=3 group_reporting, normal and json" \
    --name=g3 --rw=randwrite --bs=8k --numjobs=3 --group_reporting --ioengine=psync "${common[@]}" --output-format=normal,json
echo "captured into $HERE"
