#!/usr/bin/env bash
# Keeps the cudawatch job running on the compose Flink cluster (the job-submitter service).
# A standalone JobManager without HA forgets its jobs when it restarts, so this loop checks every
# 15 s and, when no cudawatch job is running, submits it again from the newest retained checkpoint
# on the shared flink-data volume (or fresh, the first time). Exactly-once holds across that: the
# job restores its Kafka offsets and state from the checkpoint and its transactions from there on.
set -u
jm=${JOBMANAGER:-jobmanager:8081}
data=${FLINK_DATA:-/opt/flink/data}
jar=/opt/flink/usrlib/cudawatch-processor.jar
while true; do
  if jobs=$(flink list -m "$jm" 2>/dev/null); then
    if grep -qE ': cudawatch-processor \((RUNNING|RESTARTING|CREATED|INITIALIZING)\)' <<<"$jobs"; then
      touch /tmp/job-running
    else
      rm -f /tmp/job-running
      latest=$(ls -1dt "$data"/checkpoints/*/chk-*/ 2>/dev/null | while read -r d; do
        [[ -f "$d/_metadata" ]] && { echo "$d"; break; }; done)
      from=()
      [[ -n "$latest" ]] && from=(-s "$latest")
      echo "job-submitter: no cudawatch job running; submitting${latest:+ from $latest}"
      flink run -d -m "$jm" "${from[@]}" -c dev.cudawatch.processor.ProcessorMain "$jar" \
        --config /etc/cudawatch/processor.yaml || echo "job-submitter: submit failed; retrying"
    fi
  else
    rm -f /tmp/job-running
    echo "job-submitter: jobmanager $jm not reachable yet"
  fi
  sleep 15
done
