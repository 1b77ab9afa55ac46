#!/bin/bash
# The flink image's entrypoint, for what docker-compose.yml and Kubernetes use:
#   jobmanager | taskmanager   a session cluster's JobManager or a TaskManager, in the foreground
#   anything else              run as a command
# As the official one: jobmanager.rpc.address is JOB_MANAGER_RPC_ADDRESS (default: this host's
# name), blob and query ports 6124/6125, TASK_MANAGER_NUMBER_OF_TASK_SLOTS and FLINK_PROPERTIES
# (lines of "key: value") override conf/config.yaml; root drops to the flink user.
# They are passed as dynamic properties (-Dkey=value), which win over the file as its edits would.
set -euo pipefail
conf=/opt/flink/conf

dynamic=(
  "-Djobmanager.rpc.address=${JOB_MANAGER_RPC_ADDRESS:-$(hostname -f)}"
  -Dblob.server.port=6124 -Dquery.server.port=6125
)
[[ -n "${TASK_MANAGER_NUMBER_OF_TASK_SLOTS:-}" ]] &&
  dynamic+=("-Dtaskmanager.numberOfTaskSlots=$TASK_MANAGER_NUMBER_OF_TASK_SLOTS")
while IFS= read -r line; do
  [[ "$line" =~ ^[[:space:]]*([^:#[:space:]]+)[[:space:]]*:[[:space:]]*(.*)$ ]] &&
    dynamic+=("-D${BASH_REMATCH[1]}=${BASH_REMATCH[2]}")
done <<<"${FLINK_PROPERTIES:-}"
# Kafka's classes are in lib/ too (the jar is cudawatch-local.jar): a job jar with its own copy
# must take them from there, as deploy/cluster/cluster.sh runs it
grep -q 'resolve-order' "$conf/config.yaml" || dynamic+=(-Dclassloader.resolve-order=parent-first)

as_flink=()
[[ "$(id -u)" == 0 ]] && as_flink=(setpriv --reuid=flink --regid=flink --init-groups)

# Flink's memory model, as bin/jobmanager.sh and bin/taskmanager.sh compute it (BashJavaUtils):
# line 1 the JVM options, line 2 the dynamic properties the process must start with
resources() {
  java -Xmx128m -cp '/opt/flink/lib/*' org.apache.flink.runtime.util.bash.BashJavaUtils "$1" \
    --configDir "$conf" "${dynamic[@]}" 2>&1 | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' |
    sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://' | tail -2
}

start() { # GET_JM_RESOURCE_PARAMS|GET_TM_RESOURCE_PARAMS MAIN
  local res
  res="$(resources "$1")"
  [[ -n "$res" ]] || { echo "docker-entrypoint: cannot compute Flink's memory from $conf/config.yaml" >&2; exit 1; }
  # shellcheck disable=SC2046
  FLINK_JVM_OPTS="$(head -1 <<<"$res")" exec "${as_flink[@]}" /opt/flink/bin/flink-class \
    "$2" --configDir "$conf" "${dynamic[@]}" $(tail -1 <<<"$res")
}

case "${1:-help}" in
  jobmanager) shift; start GET_JM_RESOURCE_PARAMS org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint ;;
  taskmanager) shift; start GET_TM_RESOURCE_PARAMS org.apache.flink.runtime.taskexecutor.TaskManagerRunner ;;
  help) echo "Usage: $(basename "$0") (jobmanager|taskmanager|help)"; exit 0 ;;
  *) exec "$@" ;;
esac
