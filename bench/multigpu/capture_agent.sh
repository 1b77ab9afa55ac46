#!/usr/bin/env bash
# The node agent's own recording of a device assert under `run` (run from the repository root, as root, on a
# machine with >= 2 GPUs): the real agent (AgentMain) follows /dev/kmsg, samples the GPUs and adopts `run`'s
# spools; Kafka is unreachable (127.0.0.1:9), so everything it would ship stays in its disk spool under its
# state dir - that spool IS the recording. Two jobs, one after the other, every worker under `run`:
#   job-assert-run     faults.py assert 1 7         (as assert-rank1-under-run; the rank dies of the assert)
#   job-assert-linger  faults.py assert_linger 1 7  (rank 1 catches the error and lives LINGER_S more seconds)
# usage: bench/multigpu/capture_agent.sh OUTDIR [TARFILE]
# Needs .rt/rt.tar.xz and .rtjar/cudawatch-agent.jar.xz (see bench/multigpu/README.md).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$1; TAR=${2:-}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
NGPU=$(nvidia-smi -L | grep -c '^GPU')
PY=python3
$PY -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
TORCHRUN=$(dirname "$($PY -c 'import sys; print(sys.executable)')")/torchrun
[ -x "$TORCHRUN" ] || TORCHRUN=$(command -v torchrun)
CW=/tmp/cw
if [ ! -x $CW/rt/bin/java ]; then
  mkdir -p $CW
  $PY -c "import tarfile, lzma, shutil
tarfile.open('$ROOT/.rt/rt.tar.xz').extractall('$CW')
with lzma.open('$ROOT/.rtjar/cudawatch-agent.jar.xz') as f, open('$CW/cudawatch-agent.jar', 'wb') as g: shutil.copyfileobj(f, g)"
fi
JAVA=$CW/rt/bin/java JAR=$CW/cudawatch-agent.jar
STATE=/tmp/cwagent/state RUNROOT=/tmp/cwrun PORT=7461
rm -rf /tmp/cwagent "$RUNROOT"; mkdir -p "$STATE" "$RUNROOT"; chmod 1777 "$RUNROOT"
cat > "$OUT/agent.yaml" <<EOF
kafka:
  bootstrap_servers: 127.0.0.1:9
host: gpu-node-1
state_dir: $STATE
kernel_log: /dev/kmsg
gpu_sample_interval_ms: 2000
http_port: $PORT
run_spool_root: $RUNROOT
EOF
metrics() { $PY -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$PORT/metrics', timeout=5).read().decode())" > "$OUT/$1" 2>&1; }

nvidia-smi --query-gpu=index,pci.bus_id,uuid,name --format=csv > "$OUT/gpus.csv"
{ nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1; uname -r; hostname
  $PY -c 'import torch; print(torch.__version__, torch.version.cuda, ".".join(map(str, torch.cuda.nccl.version())))'; } > "$OUT/versions.txt" 2>&1
KBEFORE=$(dmesg | wc -l)
echo "agent start $(date -u +%FT%T.%3NZ) uptime $(cut -d' ' -f1 /proc/uptime)" | tee "$OUT/timeline.txt"
$JAVA -Xmx256m -XX:+UseSerialGC -cp "$JAR" dev.cudawatch.ingest.AgentMain --config "$OUT/agent.yaml" > "$OUT/agent.log" 2>&1 &
AGENT=$!
for i in $(seq 1 60); do metrics metrics-before.txt && grep -q '^cudawatch_agent' "$OUT/metrics-before.txt" && break; sleep 0.5; done
sleep 3; metrics metrics-before.txt
echo "agent pid $AGENT up; metrics lines $(grep -c '^cudawatch' "$OUT/metrics-before.txt")" | tee -a "$OUT/timeline.txt"

# every 0.2 s: uptime (the kernel's clock in dmesg) and the live python workers, to set the Xid against
( while :; do echo "$(cut -d' ' -f1 /proc/uptime) $(ps -eo pid=,stat=,comm=,args= | awk '/faults\.py/ && $3 ~ /^python/ {printf "%s:%s ", $1, $2}')"; sleep 0.2; done ) > "$OUT/procwatch.txt" &
WATCH=$!

job() {   # NAME JOBID MODE
  local name=$1 jobid=$2 mode=$3 rec=$OUT/$1 tmp=/tmp/capture/$1
  rm -rf "$rec" "$tmp"; mkdir -p "$rec" "$tmp/info" "$tmp/runlogs"
  local k0; k0=$(dmesg | wc -l)
  local start; start=$(date -u +%FT%T.%3NZ)
  echo "=== $name $jobid $mode start $start uptime $(cut -d' ' -f1 /proc/uptime)" | tee -a "$OUT/timeline.txt"
  local -a cmd=(timeout 150 "$TORCHRUN" --standalone --nproc-per-node "$NGPU" --log-dir "$tmp/logs" --redirects 3 --tee 3
       --no-python "$HERE/run_worker.sh" "$mode" 1 7)
  echo "${cmd[*]}" > "$tmp/commands.txt"
  ( env CAPTURE_INFO_DIR="$tmp/info" LINGER_S=20 CW_RT=$CW/rt CW_JAR=$JAR CW_SPOOL="$RUNROOT" CW_LOGS="$tmp/runlogs" \
      CW_PY="$PY" CW_PROG="$HERE/faults.py" CW_JOB="$jobid" "${cmd[@]}" 2>&1; echo $? > "$tmp/rc" ) | tee "$rec/console.log"
  echo "=== $name end $(date -u +%FT%T.%3NZ) uptime $(cut -d' ' -f1 /proc/uptime) rc $(cat "$tmp/rc")" | tee -a "$OUT/timeline.txt"
  for i in $(seq 1 40); do dmesg | tail -n +$((k0 + 1)) | grep -q 'Xid' && break; sleep 0.5; done
  sleep 6   # the agent reads the kernel line and adopts run's spools (scan every second)
  dmesg | tail -n +$((k0 + 1)) > "$rec/kmsg.log"
  cp "$tmp"/runlogs/*.log "$rec/" 2>/dev/null
  cat > "$tmp/meta.partial.json" <<EOF
{"start": "$start", "job": "$jobid", "host_config": "gpu-node-1", "hostname": "$(hostname)", "nproc_per_node": $NGPU,
 "under_run": 1, "under_agent": 1, "program": "bench/multigpu/faults.py", "program_args": "$mode 1 7",
 "env": "NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 LINGER_S=20",
 "commands": $($PY -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read().splitlines()))' "$tmp/commands.txt")}
EOF
  $PY "$HERE/finish.py" "$rec" "$tmp" "$name" 0 "$tmp/rc" -- "${cmd[@]}"
  metrics "metrics-after-$name.txt"
  grep -E 'pid_joins|kmsg|run_spool|adopt' "$OUT/metrics-after-$name.txt" | grep -v '^#' | tee -a "$OUT/timeline.txt"
}

job assert-run job-assert-run assert
job assert-linger job-assert-linger assert_linger
sleep 3; metrics metrics-after.txt
kill $WATCH 2>/dev/null
kill -TERM $AGENT; for i in $(seq 1 60); do kill -0 $AGENT 2>/dev/null || break; sleep 0.5; done
kill -0 $AGENT 2>/dev/null && { echo "agent still alive after 30 s: SIGKILL" | tee -a "$OUT/timeline.txt"; kill -KILL $AGENT; }
wait $AGENT; echo "agent exit $? $(date -u +%FT%T.%3NZ)" | tee -a "$OUT/timeline.txt"
dmesg | tail -n +$((KBEFORE + 1)) > "$OUT/kmsg-all.log"
dmesg > "$OUT/dmesg-full.log"
(cd /tmp/cwagent && find . -printf '%M %u %s %p\n' | sort -k4) > "$OUT/state-listing.txt"
(cd "$RUNROOT" && find . -printf '%M %u %s %p\n' | sort -k4) > "$OUT/runspool-listing.txt"
mkdir -p "$OUT/agent-state" "$OUT/run-spools"
cp -a "$STATE/." "$OUT/agent-state/"; cp -a "$RUNROOT/." "$OUT/run-spools/"
du -sh "$OUT"/*
[ -n "$TAR" ] && tar czf "$TAR" -C "$OUT" .
true
