#!/usr/bin/env bash
# Regenerate every captured fio output in this directory with real fio runs. Never edit the outputs by hand.
#   tests/data/fio/capture.sh            (needs fio; writes *.json, text/*.txt and CAPTURED.md here)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "${SERVER2_PID:-}" ] && kill "$SERVER2_PID" 2>/dev/null; true' EXIT
cd "$WORK"
JOBFILES="$WORK/jobfiles.md"; : > "$JOBFILES"
VERSION="$(fio --version)"
RECORD="$HERE/CAPTURED.md"
{
  echo "# Captured fio outputs"
  echo
  echo "Made by \`tests/data/fio/capture.sh\` with $VERSION on $(uname -sr) ($(date -u +%Y-%m-%d)). Each file is"
  echo "fio's own output, unedited. Only fio 3.33 was available here (Debian 12's package)."
  echo
  echo "\`\$WORK\` is a fresh \`mktemp -d\` directory, removed afterwards; \`\$HERE\` is this directory."
  echo "The job files the commands name are listed after the table. \"stderr\" is the first line fio wrote there"
  echo "(not part of the captured file)."
  echo
  echo "| file | command | fio version | exercises | stderr |"
  echo "|---|---|---|---|---|"
} > "$RECORD"

common=(--filename="$WORK/data" --size=8M --time_based --runtime=1)

record() {  # record FILE "what" STATUS fio-args...
  local file="$1" what="$2" status="$3"; shift 3
  local shown="fio $*" err
  shown="${shown//$WORK/\$WORK}"; shown="${shown//$HERE/\$HERE}"
  err="$(head -n 1 "$WORK/stderr" | cut -c1-100)"; err="${err//$WORK/\$WORK}"; err="${err//|/\\|}"
  echo "| \`$file\` | \`${shown}\` (exit $status) | $VERSION | $what | ${err:+\`$err\`} |" >> "$RECORD"
}

cap() {  # cap FILE "what it exercises" fio-args...   (fio's stdout becomes FILE)
  local file="$1" what="$2"; shift 2
  local status=0
  fio "$@" > "$HERE/$file" 2> "$WORK/stderr" || status=$?
  record "$file" "$what" "$status" "$@"
}

cap_output() {  # cap_output FILE "what it exercises" fio-args...   (fio writes FILE itself with --output)
  local file="$1" what="$2"; shift 2
  local status=0
  rm -f "$HERE/$file"
  fio "$@" --output="$HERE/$file" > "$WORK/stdout" 2> "$WORK/stderr" || status=$?
  record "$file" "$what" "$status" "$@" --output="\$HERE/$file"
}

jobfile() {  # jobfile NAME < content: write $WORK/NAME and list it in the record
  cat > "$WORK/$1"
  { echo; echo "\`\$WORK/$1\`:"; echo; echo '```ini'; sed "s|$WORK|\$WORK|g" "$WORK/$1"; echo '```'; } >> "$JOBFILES"
}

cap randwrite-fdatasync-libaio.jsonplus.json "json+ with bins, sync (fdatasync) latency object, libaio QD4" \
    --name=w --rw=randwrite --bs=4k --iodepth=4 --ioengine=libaio --fdatasync=1 "${common[@]}" --output-format=json+
cap randwrite-fdatasync-psync.json "plain json of randwrite with fdatasync=1: sync latency object with percentiles" \
    --name=w --rw=randwrite --bs=4k --ioengine=psync --fdatasync=1 "${common[@]}" --output-format=json
cap randread-psync.json "plain json, randread, psync engine" \
    --name=r --rw=randread --bs=4k --ioengine=psync "${common[@]}" --output-format=json
cap seqwrite-posixaio.jsonplus.json "json+, sequential write, posixaio QD8, 1M blocks" \
    --name=s --rw=write --bs=1m --iodepth=8 --ioengine=posixaio "${common[@]}" --output-format=json+
cap randrw-split-bs.json "randrw with read and write sections, --bs=4k,64k (per-direction block sizes)" \
    --name=m --rw=randrw --bs=4k,64k --ioengine=psync "${common[@]}" --output-format=json
cap randrw-bs-write-only.json "--bs=,64k: empty read block size means fio's default (4k) for reads, 64k for writes" \
    --name=m --rw=randrw --bs=,64k --ioengine=psync "${common[@]}" --output-format=json
cap randrw-bs-read-only.json "--bs=8k,: 8k reads, empty write block size means fio's default (4k) for writes" \
    --name=m --rw=randrw --bs=8k, --ioengine=psync "${common[@]}" --output-format=json
cap randrw-bs-seq-rand.json "--bs=4k,64k --bs_is_seq_rand=1: the two sizes are sequential/random, not read/write" \
    --name=m --rw=randrw --bs=4k,64k --bs_is_seq_rand=1 --ioengine=psync "${common[@]}" --output-format=json
cap unified-rw-both.json "unified_rw_reporting=both: read and write sections plus a 'mixed' one" \
    --name=u --rw=randrw --bs=4k --unified_rw_reporting=both --ioengine=psync "${common[@]}" --output-format=json
cap unified-rw-mixed.json "unified_rw_reporting=mixed: only a 'mixed' section (read and write zeroed)" \
    --name=u --rw=randrw --bs=4k --unified_rw_reporting=mixed --ioengine=psync "${common[@]}" --output-format=json
cap numjobs4-separate.json "numjobs=4 without group_reporting: four job entries with the same name" \
    --name=n --rw=randread --bs=4k --numjobs=4 --ioengine=psync "${common[@]}" --output-format=json
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
cap error-readonly-missing-file.json "--readonly read of a file that does not exist: ENOENT, two fio: lines before the {" \
    --name=ro --rw=read --bs=4k --readonly --ioengine=psync --filename="$WORK/missing" --size=1M --output-format=json
cap error-direct-unaligned.json "direct=1 with bs=1000: EINVAL on the first I/O, fio's notice and error line before the {" \
    --name=direct --rw=randread --bs=1000 --direct=1 --ioengine=psync --filename="$WORK/data" --size=1M --output-format=json
cap_output error-direct-unaligned-output-file.json "the same EINVAL failure written with --output: fio 3.33 sends the error lines to stderr, the file starts at {" \
    --name=direct --rw=randread --bs=1000 --direct=1 --ioengine=psync --filename="$WORK/data" --size=1M --output-format=json
cap error-setup-failed.json "fio cannot create the file's directory under /proc: exit 1 but error 0 and no I/O in the JSON" \
    --name=setup --rw=write --bs=4k --ioengine=psync --filename=/proc/stackbench-nonexistent/file --size=1M --output-format=json
cap error-trim-regular-file.json "trim on a regular file (ENOTTY): the failed I/O is counted (trim total_ios=1, io_bytes=0)" \
    --name=t --rw=randtrim --bs=4k --ioengine=psync --filename="$WORK/data" --size=1M --output-format=json
cap error-not-a-directory.json "a job whose file sits under a regular file (ENOTDIR): per-job error" \
    --name=bad --rw=write --bs=4k --filename="$WORK/afile/file" --size=1M --output-format=json
cap error-verify-stdout.json "a job failing during I/O (verify on an unwritten file) with json on stdout" \
    --name=vfail --rw=read --bs=4k --ioengine=psync --filename="$WORK/afile" --size=1M --verify=md5 --output-format=json

jobfile two.fio <<JOB
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
jobfile defaults.fio <<JOB
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
jobfile client.fio <<JOB
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
sed "s|data-\${HOSTNAME}|data2|" "$WORK/client.fio" | jobfile client2.fio
cap client-two-servers.json "client/server: two servers, per-host entries plus the 'All clients' aggregate" \
    --client=ip:127.0.0.1,$port "$WORK/client.fio" --client=ip:127.0.0.1,$port2 "$WORK/client2.fio" --output-format=json
jobfile client-sync.fio <<JOB
[csync]
rw=randwrite
bs=4k
ioengine=psync
fdatasync=1
size=8M
time_based=1
runtime=1
filename=$WORK/data-sync
JOB
cap client-fdatasync.json "client/server with fdatasync=1: sync latency in client_stats (fio PR #884)" \
    --client=ip:127.0.0.1,$port "$WORK/client-sync.fio" --output-format=json
jobfile client-group.fio <<JOB
[global]
ioengine=psync
size=8M
time_based=1
runtime=1
group_reporting=1
[reader]
rw=randread
bs=4k
filename=$WORK/data-group-r
[writer]
rw=randwrite
bs=16k
filename=$WORK/data-group-w
JOB
cap client-two-servers-group-reporting.json "client/server: two servers, two job sections with group_reporting (fio #1881)" \
    --client=ip:127.0.0.1,$port "$WORK/client-group.fio" --client=ip:127.0.0.1,$port2 "$WORK/client-group.fio" \
    --output-format=json
kill $SERVER_PID $SERVER2_PID 2>/dev/null || true
wait $SERVER_PID $SERVER2_PID 2>/dev/null || true
SERVER_PID=; SERVER2_PID=

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
{ echo; echo "## Job files"; cat "$JOBFILES"; } >> "$RECORD"
echo "captured into $HERE"
