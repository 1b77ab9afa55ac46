#!/usr/bin/env bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/cudawatch.sh), run as root on each node
# before a job starts. Makes sure the node agent runs, gives the job a log directory it owns under
# the directory the agent follows, notes which job holds the node's GPUs, and writes the job's
# sidecar for the agent: $CUDAWATCH_SLURM_SIDECAR_DIR/<jobid>.json with the job, its user and uid,
# this node's GPU indexes and the job's output paths, so a plain slurm-%j.out (or any -o/-e path)
# is attributed to its job and GPUs (the agent's slurm.sidecar_dir) and, with
# slurm.follow_sidecar_paths, followed: only the output of jobs on this node.
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
sidecars=${CUDAWATCH_SLURM_SIDECAR_DIR:-/run/cudawatch/slurm}
scontrol=${CUDAWATCH_SCONTROL:-scontrol}
job=${SLURM_JOB_ID:-}
warn() { echo "cudawatch prolog: $*" >&2; }

# a JSON string: control characters dropped, backslash and quote escaped
json_str() {
  local s
  s=$(printf '%s' "$1" | tr -d '\000-\037')
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
# "1-2,5" as 1,2,5 (empty for anything else)
expand_idx() {
  local out="" part a b i
  local IFS=,
  for part in $1; do
    if [[ "$part" =~ ^([0-9]+)-([0-9]+)$ ]]; then
      a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]}
      ((b - a > 1024)) && return 0
      for ((i = a; i <= b; i++)); do out+="${out:+,}$i"; done
    elif [[ "$part" =~ ^[0-9]+$ ]]; then
      out+="${out:+,}$part"
    else
      return 0
    fi
  done
  printf '%s' "$out"
}

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

# the job's sidecar for the agent: root-owned directory, written to a temporary file and renamed,
# so the agent never reads half a file. GPUs: SLURM_JOB_GPUS when slurmd sets it, else this node's
# "GRES=gpu...(IDX:...)" line of `scontrol show job -d` (slurm-wlm 22.05 does not set it here);
# output paths from scontrol, which expands %j and the like (SLURM_JOB_STDOUT is unexpanded).
if [[ "$job" =~ ^[0-9]+$ ]]; then
  node=${SLURMD_NODENAME:-$(hostname -s)}
  details=$(timeout 10 "$scontrol" show job -d "$job" 2>/dev/null) || details=""
  std_out=$(sed -n 's/^ *StdOut=//p' <<<"$details" | head -n1)
  std_err=$(sed -n 's/^ *StdErr=//p' <<<"$details" | head -n1)
  work_dir=$(sed -n 's/^ *WorkDir=//p' <<<"$details" | head -n1)
  gpus="" gpus_from=""
  if [[ -n "${SLURM_JOB_GPUS:-}" ]]; then
    gpus=$(expand_idx "$SLURM_JOB_GPUS") gpus_from=SLURM_JOB_GPUS
  else
    while read -r nodes idx; do
      # "Nodes=dgx-[01-02]": is this node one of them?
      if [[ "$nodes" == "$node" ]] ||
        timeout 5 "$scontrol" show hostnames "$nodes" 2>/dev/null | grep -qx -- "$node"; then
        gpus=$(expand_idx "$idx") gpus_from="scontrol show job -d"
        break
      fi
    done < <(sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=[^ ]*gpu[^ ]*(IDX:\([^)]*\)).*/\1 \2/p' <<<"$details")
  fi
  array=""
  if [[ "${SLURM_ARRAY_JOB_ID:-}" =~ ^[0-9]+$ && "${SLURM_ARRAY_TASK_ID:-}" =~ ^[0-9]+$ ]]; then
    array="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
  fi
  if install -d -m 0755 "$sidecars" 2>/dev/null && [[ ! -L "$sidecars" ]]; then
    tmp=$(mktemp "$sidecars/.$job.XXXXXX") && {
      printf '{"job_id":"%s","array_job":%s,"user":%s,"node":%s,"gpus":[%s],' \
        "$job" "$([[ -n "$array" ]] && json_str "$array" || echo null)" \
        "$(json_str "${SLURM_JOB_USER:-}")" "$(json_str "$node")" "$gpus"
      printf '"std_out":%s,"std_err":%s,"work_dir":%s,"gpus_from":%s,"uid":%s,"written":"%s"}\n' \
        "$(json_str "$std_out")" "$(json_str "$std_err")" "$(json_str "$work_dir")" \
        "$(json_str "$gpus_from")" "$([[ "${SLURM_JOB_UID:-}" =~ ^[0-9]+$ ]] && echo "$SLURM_JOB_UID" || echo null)" \
        "$(date -Is)"
    } >"$tmp" && chmod 0644 "$tmp" && mv -f "$tmp" "$sidecars/$job.json" ||
      { warn "cannot write $sidecars/$job.json"; rm -f "${tmp:-}"; }
  else
    warn "cannot use $sidecars"
  fi
fi

# the run-spool handoff root (docs/agent.md: the run-spool handoff): the job's `cudawatch run` spools there when
# Kafka is away and the agent (group cudawatch) ships it; made here too in case the agent's unit
# has not run yet. Root-owned, never a link; only where the agent's group exists.
handoff=${CUDAWATCH_RUN_SPOOL_ROOT:-/var/spool/cudawatch/run}
if getent group cudawatch >/dev/null 2>&1; then
  if [[ -L "$handoff" ]] || ! install -d -o root -g cudawatch -m 3773 "$handoff" 2>/dev/null; then
    warn "cannot create the run-spool root $handoff"
  fi
fi

# the node's job notes: root-owned directory and file, never one the user can replace
if install -d -m 0755 "$(dirname "$events")" 2>/dev/null && [[ ! -L "$events" ]]; then
  echo "job=$job user=${SLURM_JOB_USER:-} gpus=${SLURM_JOB_GPUS:-} event=start time=$(date -Is)" \
    >>"$events" || warn "cannot write $events"
else
  warn "cannot use $events"
fi
exit 0
