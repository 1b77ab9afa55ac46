#!/usr/bin/env bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/cudawatch.sh), run as root on each node
# before a job starts. Makes sure the node agent runs, gives the job a log directory it owns under
# the directory the agent follows, and notes which job holds the node's GPUs.
#
# A prolog that exits non-zero drains the node, so nothing here may fail the job or the node: no
# `set -e`, every step reports its problem on stderr (slurmd's log) and the script exits 0.
# Root never writes into a path the job's user controls: the job directory is created owned by
# the user in a root-owned parent, and the node's job notes go to a root-owned file.
set -u
conf="$(dirname "$0")/cudawatch-slurm.env"
# shellcheck disable=SC1090
[[ -r "$conf" ]] && . "$conf"
log_root=${CUDAWATCH_LOG_ROOT:-/var/log/training}
events=${CUDAWATCH_EVENTS:-/var/log/cudawatch/slurm-jobs.log}
job=${SLURM_JOB_ID:-}
warn() { echo "cudawatch prolog: $*" >&2; }

if [[ "${CUDAWATCH_START_AGENT:-1}" == 1 ]] && command -v systemctl >/dev/null 2>&1; then
  systemctl is-active --quiet cudawatch-agent || systemctl start cudawatch-agent ||
    warn "cannot start cudawatch-agent"
fi

if [[ "$job" =~ ^[0-9]+$ && "${SLURM_JOB_UID:-}" =~ ^[0-9]+$ && "${SLURM_JOB_GID:-0}" =~ ^[0-9]+$ ]]; then
  dir="$log_root/$job"
  if [[ -L "$dir" || (-e "$dir" && ! -d "$dir") ]]; then
    warn "$dir exists and is not a directory; leaving it alone"
  elif [[ ! -d "$dir" ]]; then
    # created by root in the root-owned log root, then handed to the job's user
    install -d -m 0755 -o "$SLURM_JOB_UID" -g "${SLURM_JOB_GID:-$SLURM_JOB_UID}" "$dir" ||
      warn "cannot create $dir"
  fi
else
  warn "no numeric SLURM_JOB_ID/SLURM_JOB_UID; no job directory"
fi

# the node's job notes: root-owned directory and file, never one the user can replace
if install -d -m 0755 "$(dirname "$events")" 2>/dev/null && [[ ! -L "$events" ]]; then
  echo "job=$job user=${SLURM_JOB_USER:-} gpus=${SLURM_JOB_GPUS:-} event=start time=$(date -Is)" \
    >>"$events" || warn "cannot write $events"
else
  warn "cannot use $events"
fi
exit 0
