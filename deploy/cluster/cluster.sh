#!/usr/bin/env bash
# A real multi-process cudawatch cluster on one machine, from the jars the Maven build made:
#   3 Kafka brokers in KRaft mode (broker+controller each; replication 3, min.insync.replicas 2),
#   a Flink JobManager and 2 TaskManagers as separate JVMs, configured by deploy/flink/config.yaml
#   (the file compose and Kubernetes use; what is specific to one machine is passed as -D overrides),
#   the processor job submitted with `bin/cudawatch processor --submit`, the alerts service, and two
#   agents (node-a, node-b) following WORK/logs/node-a/*.log and WORK/logs/node-b/*.log.
#
#   deploy/cluster/cluster.sh start WORK     start everything; ports in WORK/cluster.env
#   deploy/cluster/cluster.sh stop WORK      stop every process (by the pids in WORK/pids/)
#   deploy/cluster/cluster.sh restart WORK NAME   start one process again (e.g. after kill -9)
#   deploy/cluster/cluster.sh status WORK
#
# Processes: kafka-1..3, jobmanager, taskmanager-1..2, alerts, agent-a, agent-b; each logs to
# WORK/logs/NAME.log. Everything listens on 127.0.0.1 only.
# Build first: ./mvnw -q -DskipTests package
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
runtime_jar="$repo/launcher/target/cudawatch-local.jar" # Kafka's and Flink's own classes
names=(kafka-1 kafka-2 kafka-3 jobmanager taskmanager-1 taskmanager-2 alerts agent-a agent-b)

cmd="${1:-}"
work="${2:-}"
[[ -n "$cmd" && -n "$work" ]] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"

die() { echo "cluster: $*" >&2; exit 1; }

free_port() {
  local p
  while true; do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && ! grep -qx "$p" "$work/ports.used" 2>/dev/null; then
      echo "$p" >>"$work/ports.used"
      echo "$p"
      return
    fi
  done
}

wait_port() { # PORT SECONDS NAME
  local deadline=$((SECONDS + $2))
  until (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; do
    ((SECONDS < deadline)) || die "$3 did not listen on $1 within $2 s (see $work/logs/$3.log)"
    alive "$3" || die "$3 exited (see $work/logs/$3.log)"
    sleep 0.2
  done
}

alive() { [[ -f "$work/pids/$1.pid" ]] && kill -0 "$(cat "$work/pids/$1.pid")" 2>/dev/null; }

# launch NAME ARGS...: a process of its own session (so it can be stopped as a group), pid recorded
launch() {
  local name="$1"
  shift
  alive "$name" && die "$name is already running"
  mkdir -p "$work/pids" "$work/logs"
  setsid "$@" >>"$work/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$work/pids/$name.pid"
}

java_cmd() { # NAME "JVM OPTIONS" MAIN-OR-JAR... : a JVM with the cluster's log settings
  local name="$1" jvm="$2"
  shift 2
  # shellcheck disable=SC2086
  echo "$java_bin" $jvm -XX:+UseSerialGC "-Dlog4j2.configurationFile=$here/log4j2.xml" \
    "-Dcudawatch.cluster.process=$name" "$@"
}

# Flink's memory model, as the images' jobmanager.sh/taskmanager.sh compute it (BashJavaUtils):
# line 1 the JVM options, line 2 the dynamic properties the process must be started with
flink_resources() { # GET_JM_RESOURCE_PARAMS|GET_TM_RESOURCE_PARAMS OVERRIDES...
  "$java_bin" -cp "$runtime_jar" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" \
    --configDir "$work/flink-conf" "${@:2}" 2>&1 | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' |
    sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://' | tail -2
}

start_kafka() {
  local n="$1"
  # shellcheck disable=SC2046
  launch "kafka-$n" $(java_cmd "kafka-$n" -Xmx384m -cp "$runtime_jar" kafka.Kafka "$work/kafka-$n/server.properties")
}

start_jobmanager() {
  local overrides res
  overrides="$(flink_overrides) -Djobmanager.memory.process.size=1024m"
  # shellcheck disable=SC2086
  res="$(flink_resources GET_JM_RESOURCE_PARAMS $overrides)"
  [[ -n "$res" ]] || die "cannot compute the JobManager's memory"
  # shellcheck disable=SC2046,SC2086
  launch jobmanager $(java_cmd jobmanager "$(head -1 <<<"$res")" -cp "$runtime_jar" \
    org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
    --configDir "$work/flink-conf" $overrides $(tail -1 <<<"$res"))
}

start_taskmanager() {
  local n="$1"
  local overrides res
  mkdir -p "$work/taskmanager-$n/tmp"
  overrides="$(flink_overrides) -Dtaskmanager.resource-id=taskmanager-$n -Dio.tmp.dirs=$work/taskmanager-$n/tmp
    -Dtaskmanager.memory.process.size=1280m -Dtaskmanager.memory.managed.size=64m
    -Dmetrics.reporter.prom.port=$(port PROM_TM$n)"
  # shellcheck disable=SC2086
  res="$(flink_resources GET_TM_RESOURCE_PARAMS $overrides)"
  [[ -n "$res" ]] || die "cannot compute the TaskManager's memory"
  # shellcheck disable=SC2046,SC2086
  launch "taskmanager-$n" $(java_cmd "taskmanager-$n" "$(head -1 <<<"$res")" -cp "$runtime_jar" \
    org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
    --configDir "$work/flink-conf" $overrides $(tail -1 <<<"$res"))
}

start_alerts() {
  # shellcheck disable=SC2046
  launch alerts $(java_cmd alerts -Xmx384m -jar "$repo/alerts/target/cudawatch-alerts.jar" \
    --config "$work/alerts.yaml")
}

start_agent() {
  local n="$1"
  # shellcheck disable=SC2046
  launch "agent-$n" $(java_cmd "agent-$n" -Xmx128m -cp "$repo/ingest/target/cudawatch-agent.jar" \
    dev.cudawatch.ingest.AgentMain --config "$work/agent-$n.yaml")
}

port() { grep "^$1=" "$work/cluster.env" | cut -d= -f2; }

# what differs on one machine from deploy/flink/config.yaml (addresses, ports, sizes, directories)
flink_overrides() {
  cat <<ARGS
-Djobmanager.rpc.address=127.0.0.1
-Djobmanager.rpc.port=$(port FLINK_RPC_PORT)
-Djobmanager.bind-host=127.0.0.1
-Drest.address=127.0.0.1
-Drest.bind-address=127.0.0.1
-Drest.port=$(port FLINK_REST_PORT)
-Dtaskmanager.host=127.0.0.1
-Dtaskmanager.bind-host=127.0.0.1
-Dexecution.checkpointing.dir=file://$work/flink-data/checkpoints
-Dexecution.checkpointing.savepoint-dir=file://$work/flink-data/savepoints
-Dmetrics.reporter.prom.port=$(port PROM_JM)
-Dheartbeat.interval=1000
-Dheartbeat.timeout=8000
-Drestart-strategy.exponential-delay.max-backoff=10s
-Dclassloader.resolve-order=parent-first
ARGS
}

configure() {
  [[ -f "$runtime_jar" && -f "$repo/alerts/target/cudawatch-alerts.jar" && -f "$repo/ingest/target/cudawatch-agent.jar" \
    && -f "$repo/processor/target/cudawatch-processor.jar" ]] ||
    die "the jars are missing; build first: (cd $repo && ./mvnw -q -DskipTests package)"
  rm -f "$work/ports.used"
  {
    for n in 1 2 3; do
      echo "KAFKA_${n}_PORT=$(free_port)"
      echo "CONTROLLER_${n}_PORT=$(free_port)"
    done
    echo "FLINK_RPC_PORT=$(free_port)"
    echo "FLINK_REST_PORT=$(free_port)"
    echo "PROM_JM=$(free_port)"
    echo "PROM_TM1=$(free_port)"
    echo "PROM_TM2=$(free_port)"
    echo "ALERTS_PORT=$(free_port)"
    echo "AGENT_A_PORT=$(free_port)"
    echo "AGENT_B_PORT=$(free_port)"
  } >"$work/cluster.env"
  local bootstrap voters
  bootstrap="127.0.0.1:$(port KAFKA_1_PORT),127.0.0.1:$(port KAFKA_2_PORT),127.0.0.1:$(port KAFKA_3_PORT)"
  voters="1@127.0.0.1:$(port CONTROLLER_1_PORT),2@127.0.0.1:$(port CONTROLLER_2_PORT),3@127.0.0.1:$(port CONTROLLER_3_PORT)"
  echo "BOOTSTRAP=$bootstrap" >>"$work/cluster.env"

  local cluster_id
  cluster_id="$("$java_bin" -cp "$runtime_jar" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
  for n in 1 2 3; do
    mkdir -p "$work/kafka-$n"
    cat >"$work/kafka-$n/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(port KAFKA_${n}_PORT),CONTROLLER://127.0.0.1:$(port CONTROLLER_${n}_PORT)
advertised.listeners=PLAINTEXT://127.0.0.1:$(port KAFKA_${n}_PORT)
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$work/kafka-$n/data
num.partitions=4
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
unclean.leader.election.enable=false
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
PROPS
    "$java_bin" -cp "$runtime_jar" kafka.tools.StorageTool format -t "$cluster_id" \
      -c "$work/kafka-$n/server.properties" >>"$work/logs/kafka-$n.log" 2>&1 ||
      die "cannot format kafka-$n's log directory (see $work/logs/kafka-$n.log)"
  done

  # Flink: the deployment's own config.yaml, unchanged
  mkdir -p "$work/flink-conf" "$work/flink-data"
  cp "$repo/deploy/flink/config.yaml" "$work/flink-conf/config.yaml"

  cat >"$work/processor.yaml" <<YAML
kafka:
  bootstrap_servers: $bootstrap
group_id: cudawatch-processor
parallelism: 2
checkpoint_interval_ms: 1000
transactional_id_prefix: cudawatch-cluster
transaction_timeout_ms: 60000
YAML
  cat >"$work/alerts.yaml" <<YAML
kafka:
  bootstrap_servers: $bootstrap
http_host: 127.0.0.1
http_port: $(port ALERTS_PORT)
notifications:
  state_dir: $work/alerts/state
YAML
  for n in a b; do
    local upper
    upper="$(echo "$n" | tr a-z A-Z)"
    mkdir -p "$work/logs/node-$n"
    cat >"$work/agent-$n.yaml" <<YAML
kafka:
  bootstrap_servers: $bootstrap
host: node-$n
files: ["$work/logs/node-$n/*.log"]
state_dir: $work/agent-$n/state
gpu_sample_interval_ms: 0
http_host: 127.0.0.1
http_port: $(port AGENT_${upper}_PORT)
poll_interval_ms: 100
YAML
  done
}

case "$cmd" in
  start)
    mkdir -p "$work/logs"
    configure
    for n in 1 2 3; do start_kafka "$n"; done
    for n in 1 2 3; do wait_port "$(port KAFKA_${n}_PORT)" 90 "kafka-$n"; done
    "$java_bin" -cp "$runtime_jar" "$here/CreateTopics.java" "$(port BOOTSTRAP)" \
      >>"$work/logs/create-topics.log" 2>&1 || die "cannot create the topics (see $work/logs/create-topics.log)"
    start_jobmanager
    wait_port "$(port FLINK_REST_PORT)" 90 jobmanager
    start_taskmanager 1
    start_taskmanager 2
    start_alerts
    start_agent a
    start_agent b
    wait_port "$(port ALERTS_PORT)" 90 alerts
    # the TaskManagers register with the JobManager before the job asks for slots
    deadline=$((SECONDS + 90))
    until [[ "$( (exec 3<>/dev/tcp/127.0.0.1/"$(port FLINK_REST_PORT)" &&
        printf 'GET /overview HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2>/dev/null |
        grep -o '"taskmanagers":[0-9]*' | cut -d: -f2)" == 2 ]]; do
      ((SECONDS < deadline)) || die "the TaskManagers did not register within 90 s"
      sleep 0.5
    done
    JAVA_OPTS="-Dlog4j2.configurationFile=$here/log4j2.xml" "$repo/bin/cudawatch" processor \
      --config "$work/processor.yaml" --submit "127.0.0.1:$(port FLINK_REST_PORT)" | tee -a "$work/logs/submit.log"
    echo "cluster: started in $work (ports in $work/cluster.env)"
    ;;
  stop)
    for name in agent-a agent-b alerts taskmanager-1 taskmanager-2 jobmanager kafka-3 kafka-2 kafka-1; do
      if alive "$name"; then
        pid="$(cat "$work/pids/$name.pid")"
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
      fi
      rm -f "$work/pids/$name.pid"
    done
    echo "cluster: stopped"
    ;;
  restart)
    name="${3:?restart needs a process name: ${names[*]}}"
    case "$name" in
      kafka-[123]) start_kafka "${name#kafka-}" ;;
      jobmanager) start_jobmanager ;;
      taskmanager-[12]) start_taskmanager "${name#taskmanager-}" ;;
      alerts) start_alerts ;;
      agent-[ab]) start_agent "${name#agent-}" ;;
      *) die "no process $name (${names[*]})" ;;
    esac
    echo "cluster: $name started again (pid $(cat "$work/pids/$name.pid"))"
    ;;
  status)
    for name in "${names[@]}"; do
      if alive "$name"; then echo "$name running pid $(cat "$work/pids/$name.pid")"; else echo "$name stopped"; fi
    done
    ;;
  *) die "unknown command $cmd (start, stop, restart, status)" ;;
esac
