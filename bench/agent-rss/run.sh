#!/usr/bin/env bash
# The agent's steady RSS and CPU following 100 files at 10,000 lines/s in all, shipping to a real
# broker (the local jar's BrokerMain). The agent runs as bin/cudawatch runs it (its JVM flags; add
# some with JAVA_OPTS); --jar JAR and --launcher FILE run another agent jar and launcher script (a
# "before": git show REV:bin/cudawatch >FILE).
# After a warm-up it samples VmRSS from /proc/PID/status every second and prints one line:
#   label rss_median_mb rss_max_mb cpu_pct lines_per_s_written records_per_s_acked jar_mb
#   bench/agent-rss/run.sh [--label NAME] [--jar JAR] [--launcher FILE] [--files 100] [--rate 10000]
#                          [--warmup 30] [--seconds 60]
# Needs the built jars: ./mvnw -q -DskipTests package -pl ingest,launcher -am
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
label=after jar="" launcher_src="" files=100 rate=10000 warmup=30 seconds=60
while [[ $# -gt 0 ]]; do
  case "$1" in
    --label) label="$2"; shift 2 ;;
    --jar) jar="$2"; shift 2 ;;
    --launcher) launcher_src="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
local_jar="$root/launcher/target/cudawatch-local.jar"
[[ -f "$local_jar" ]] || { echo "missing $local_jar: build first" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# the launcher in a tree of its own when another jar is measured: it finds ingest/target/ beside it
launcher="$root/bin/cudawatch"
if [[ -n "$jar" || -n "$launcher_src" ]]; then
  mkdir -p "$work/tree/bin" "$work/tree/ingest/target"
  cp "${launcher_src:-$root/bin/cudawatch}" "$work/tree/bin/cudawatch"
  chmod +x "$work/tree/bin/cudawatch"
  cp "${jar:-$root/ingest/target/cudawatch-agent.jar}" "$work/tree/ingest/target/cudawatch-agent.jar"
  launcher="$work/tree/bin/cudawatch"
fi
agent_jar="$(dirname "$launcher")/../ingest/target/cudawatch-agent.jar"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
bp=$(free_port) cp_=$(free_port) hp=$(free_port)

java -Xmx1g -cp "$local_jar" dev.cudawatch.kafka.embedded.BrokerMain "$work/kafka" "$bp" "$cp_" \
  >"$work/broker.out" 2>&1 &
pids+=($!)
for _ in $(seq 600); do grep -q '^broker ' "$work/broker.out" && break; sleep 0.1; done
grep -q '^broker ' "$work/broker.out" || { cat "$work/broker.out" >&2; exit 1; }

mkdir -p "$work/logs"
: >"$work/kmsg"
cat >"$work/agent.yaml" <<YAML
kafka:
  bootstrap_servers: 127.0.0.1:$bp
host: bench-node
files: ['$work/logs/*.log']
state_dir: $work/state
kernel_log: $work/kmsg
nvidia_smi: $work/no-nvidia-smi
gpu_sample_interval_ms: 0
http_port: $hp
run_spool_root: $work/spools
slurm: {enabled: false}
kubernetes: {enabled: false}
YAML

# writers: every 100 ms, each file gets its share of the rate (training-log-like lines)
python3 - "$work/logs" "$files" "$rate" "$work/written" <<'PY' &
import os, sys, time
d, n, rate, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fs = [open(os.path.join(d, f"rank{i}.log"), "a", buffering=1 << 16) for i in range(n)]
per_tick = rate / 10.0 / n
owed = [0.0] * n
written, step, t0 = 0, 0, time.monotonic()
nxt = t0
while True:
    for i, f in enumerate(fs):
        owed[i] += per_tick
        k = int(owed[i])
        owed[i] -= k
        for _ in range(k):
            step += 1
            f.write(f"[rank{i}]:[2026-11-26 10:00:00,000] INFO step {step} loss {step % 997 / 100:.3f} lr 3.0e-4 tokens/s 182044 grad_norm 0.87\n")
        f.flush()
        written += k
    with open(out + ".tmp", "w") as w:
        w.write(f"{time.monotonic()} {written}\n")
    os.replace(out + ".tmp", out)
    nxt += 0.1
    time.sleep(max(0.0, nxt - time.monotonic()))
PY
pids+=($!)

env JAVA_HOME="${JAVA_HOME:-}" "$launcher" agent --config "$work/agent.yaml" >"$work/agent.out" 2>&1 &
apid=$!
pids+=($apid)

metric() { # a counter's value from the agent's /metrics
  curl -s "http://127.0.0.1:$hp/metrics" | awk -v m="$1" '$1 == m {print $2}' | head -1
}
ticks() { awk '{print $14 + $15}' "/proc/$apid/stat"; }

sleep "$warmup"
kill -0 "$apid" 2>/dev/null || { cat "$work/agent.out" >&2; exit 1; }
clk=$(getconf CLK_TCK)
t0=$(date +%s.%N) c0=$(ticks) s0=$(metric cudawatch_agent_records_sent_total) w0=$(cut -d' ' -f2 "$work/written")
: >"$work/rss"
for _ in $(seq "$seconds"); do
  awk '/^VmRSS:/ {print $2}' "/proc/$apid/status" >>"$work/rss"
  sleep 1
done
t1=$(date +%s.%N) c1=$(ticks) s1=$(metric cudawatch_agent_records_sent_total) w1=$(cut -d' ' -f2 "$work/written")
python3 - "$work/rss" "$label" "$t0" "$t1" "$c0" "$c1" "$clk" "$s0" "$s1" "$w0" "$w1" "$agent_jar" <<'PY'
import os, statistics, sys
rss = [int(x) / 1024 for x in open(sys.argv[1]).read().split()]
label = sys.argv[2]
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
cpu = (int(sys.argv[6]) - int(sys.argv[5])) / int(sys.argv[7]) / (t1 - t0) * 100
sent = (float(sys.argv[9]) - float(sys.argv[8])) / (t1 - t0)
wrote = (int(sys.argv[11]) - int(sys.argv[10])) / (t1 - t0)
mb = os.path.getsize(sys.argv[12]) / 1e6
print(f"{label} rss_median_mb={statistics.median(rss):.0f} rss_max_mb={max(rss):.0f} "
      f"cpu_pct={cpu:.1f} lines_per_s_written={wrote:.0f} records_per_s_acked={sent:.0f} jar_mb={mb:.1f}")
PY
