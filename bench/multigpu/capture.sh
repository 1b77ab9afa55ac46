#!/usr/bin/env bash
# Captures real multi-GPU failure recordings on one machine with N GPUs (run from the repository root); every
# job runs one rank per GPU, N ranks (the two-node recording: two torchrun "nodes" of N/2 GPUs each).
# usage: bench/multigpu/capture.sh OUTDIR [RECORDING...]   (no RECORDING: the default set for N GPUs; "probe": the
# machine only). A recording's name says the culprit rank: hang-rank2-allreduce, hang-rank3-allgather,
# sigkill-rank1, exception-rank2, slow-rank1, oom-rank3, assert-rank3, two-nodes-hang-rank3,
# assert-rank3-under-run (any rank below N in place of the number).
# Each recording lands in OUTDIR/<recording>/: console.log (torchrun's stdout+stderr as a user sees them),
# rank<N>.{stdout,stderr}.log (torchrun --log-dir/--redirects 3/--tee 3), kmsg.log (new kernel lines),
# workers.json (pid, host, GPU of each rank, written by the ranks beside the console), meta.json, and
# flight_recorder/ (NCCL flight-recorder dumps, where it was on and dumped). truth.json is written by hand.
# With CAPTURE_TAR=FILE the whole OUTDIR is packed into FILE after each recording.
# The recording under cudawatch's `run` needs a jlink runtime in .rt/rt.tar.xz and the agent jar in
# .rtjar/cudawatch-agent.jar.xz (see bench/multigpu/README.md).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=$1; shift
mkdir -p "$OUTDIR"; OUTDIR=$(cd "$OUTDIR" && pwd)
NGPU=$(nvidia-smi -L | grep -c '^GPU')
if [ "$NGPU" -ge 4 ]; then
  ALL="hang-rank2-allreduce hang-rank3-allgather sigkill-rank1 exception-rank2 slow-rank1 oom-rank3 assert-rank3 two-nodes-hang-rank3 assert-rank3-under-run"
else
  ALL="hang-rank1-allreduce hang-rank0-allgather sigkill-rank1 exception-rank0 slow-rank1 oom-rank1 assert-rank1 two-nodes-hang-rank1 assert-rank1-under-run"
fi
RECS=${*:-$ALL}
HALF=$((NGPU / 2))
JOB_TIMEOUT=${JOB_TIMEOUT:-240}

PY=python3
$PY -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python
TORCHRUN=$(dirname "$($PY -c 'import sys; print(sys.executable)')")/torchrun
[ -x "$TORCHRUN" ] || TORCHRUN=$(command -v torchrun)
PROG=$HERE/faults.py

probe() {
  { echo "== date"; date -u +%FT%TZ; echo "== host"; hostname; uname -a
    echo "== nvidia-smi"; nvidia-smi
    echo "== topo"; nvidia-smi topo -m
    echo "== python $PY torchrun $TORCHRUN"
    $PY -c 'import torch, sys; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpus", torch.cuda.device_count())'
    echo "== java"; command -v java || echo "no java"
    echo "== dmesg"; dmesg | tail -n 5; echo "dmesg lines: $(dmesg | wc -l)"
  } > "$OUTDIR/probe.txt" 2>&1
  nvidia-smi --query-gpu=index,pci.bus_id,uuid,name --format=csv > "$OUTDIR/gpus.csv"
  nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1 > "$OUTDIR/driver.txt"
  $PY -c 'import torch; print(torch.__version__); print(".".join(map(str, torch.cuda.nccl.version())))' > "$OUTDIR/torch.txt"
  cat "$OUTDIR/probe.txt"
}

pack() { [ -n "${CAPTURE_TAR:-}" ] && tar czf "$CAPTURE_TAR" -C "$OUTDIR" . ; true; }

# one torchrun job: NAME FLIGHT_RECORDER(0|1) MODE ARGS...   (N ranks on N GPUs, one node)
# or, with NNODES=2: two torchrun "nodes" of N/2 GPUs each on this machine (4 GPUs: 0,1 and 2,3)
# or, with UNDER_RUN=1: every worker runs under cudawatch's `run` (java) wrapper
capture() {
  local name=$1 fr=$2; shift 2
  local rec=$OUTDIR/$name tmp=/tmp/capture/$name
  rm -rf "$rec" "$tmp"; mkdir -p "$rec" "$tmp/info" "$tmp/fr"
  local -a envs=(CAPTURE_INFO_DIR="$tmp/info")
  if [ "$fr" = 1 ]; then envs+=(TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$tmp/fr/nccl_trace_rank_"); fi
  local kbefore; kbefore=$(dmesg | wc -l)
  local start; start=$(date -u +%FT%T.%3NZ)
  echo "=== $name ($start): $*"
  local -a cmd rcs=()
  if [ "${NNODES:-1}" = 2 ]; then
    for node in 0 1; do
      local vis=$(seq -s, $((node * HALF)) $((node * HALF + HALF - 1)))
      cmd=(timeout "$JOB_TIMEOUT" "$TORCHRUN" --nnodes 2 --nproc-per-node $HALF --node-rank $node --rdzv-backend c10d
           --rdzv-endpoint 127.0.0.1:29400 --rdzv-id job8 --rdzv-conf is_host=$((1 - node)) --log-dir "$tmp/logs-node$node" --redirects 3 --tee 3 "$PROG" "$@")
      echo "node $node: CUDA_VISIBLE_DEVICES=$vis ${cmd[*]}" >> "$tmp/commands.txt"
      ( env "${envs[@]}" CUDA_VISIBLE_DEVICES=$vis "${cmd[@]}" 2>&1; echo $? > "$tmp/rc-node$node" ) | tee "$rec/console-node$node.log" &
      rcs+=("$tmp/rc-node$node")
      sleep 2   # node 0 hosts the rendezvous store
    done
    wait
  elif [ "${UNDER_RUN:-0}" = 1 ]; then
    local cw=/tmp/cw
    if [ ! -x $cw/rt/bin/java ]; then
      mkdir -p $cw
      $PY -c "import tarfile, lzma, shutil
tarfile.open('$ROOT/.rt/rt.tar.xz').extractall('$cw')
with lzma.open('$ROOT/.rtjar/cudawatch-agent.jar.xz') as f, open('$cw/cudawatch-agent.jar', 'wb') as g: shutil.copyfileobj(f, g)"
    fi
    mkdir -p "$tmp/spool" "$tmp/runlogs"
    envs+=(CW_RT=$cw/rt CW_JAR=$cw/cudawatch-agent.jar CW_SPOOL="$tmp/spool" CW_LOGS="$tmp/runlogs" CW_PY="$PY" CW_PROG="$PROG" CW_JOB=job9)
    cmd=(timeout "$JOB_TIMEOUT" "$TORCHRUN" --standalone --nproc-per-node $NGPU --log-dir "$tmp/logs" --redirects 3 --tee 3
         --no-python "$HERE/run_worker.sh" "$@")
    echo "${cmd[*]}" >> "$tmp/commands.txt"
    ( env "${envs[@]}" "${cmd[@]}" 2>&1; echo $? > "$tmp/rc" ) | tee "$rec/console.log"
    rcs+=("$tmp/rc")
  else
    cmd=(timeout "$JOB_TIMEOUT" "$TORCHRUN" --standalone --nproc-per-node $NGPU --log-dir "$tmp/logs" --redirects 3 --tee 3 "$PROG" "$@")
    echo "${cmd[*]}" >> "$tmp/commands.txt"
    ( env "${envs[@]}" "${cmd[@]}" 2>&1; echo $? > "$tmp/rc" ) | tee "$rec/console.log"
    rcs+=("$tmp/rc")
  fi
  local end; end=$(date -u +%FT%T.%3NZ)
  sleep 1
  dmesg | tail -n +$((kbefore + 1)) > "$rec/kmsg.log"
  cat > "$tmp/meta.partial.json" <<EOF
{"start": "$start", "end": "$end", "host": "$(hostname)", "torchrun": "$TORCHRUN", "python": "$PY",
 "nproc_per_node": $([ "${NNODES:-1}" = 2 ] && echo $HALF || echo $NGPU), "gpus_on_machine": $NGPU, "nnodes": ${NNODES:-1}, "under_run": ${UNDER_RUN:-0},
 "program": "bench/multigpu/faults.py", "program_args": "$*", "env": "NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 ${envs[*]//\"/}",
 "commands": $($PY -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read().splitlines()))' "$tmp/commands.txt"),
 "driver": "$(cat "$OUTDIR/driver.txt" 2>/dev/null)", "gpu": "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"}
EOF
  if [ "${UNDER_RUN:-0}" = 1 ]; then
    cp "$tmp"/runlogs/*.log "$rec/" 2>/dev/null
    (cd "$tmp" && tar czf "$rec/spool.tar.gz" spool)
    (cd "$tmp/spool" && find . -printf '%M %u %s %p\n' | sort -k4) > "$rec/spool-listing.txt"
  fi
  $PY "$HERE/finish.py" "$rec" "$tmp" "$name" "$fr" "${rcs[@]}" -- "${cmd[@]}"
  pack
}

[ -f "$OUTDIR/gpus.csv" ] || probe
for r in $RECS; do
  k=$(echo "$r" | sed -E 's/rank[0-9]+/rankN/'); n=$(echo "$r" | sed -nE 's/.*rank([0-9]+).*/\1/p')
  case $k in
    probe) ;;
    hang-rankN-allreduce)   capture $r 1 hang $n 15 ;;
    hang-rankN-allgather)   capture $r 0 hang_before_gather $n 8 --gather ;;
    sigkill-rankN)          capture $r 1 sigkill $n 10 ;;
    exception-rankN)        capture $r 0 exception $n 12 --record ;;
    slow-rankN)             capture $r 0 slow $n 5 ;;
    oom-rankN)              capture $r 0 oom $n 6 ;;
    assert-rankN)           capture $r 1 assert $n 7 ;;
    two-nodes-hang-rankN)   NNODES=2 capture $r 1 hang $n 15 ;;
    assert-rankN-under-run) UNDER_RUN=1 capture $r 0 assert $n 7 ;;
    *) echo "unknown recording $r" >&2 ;;
  esac
done
pack
