#!/usr/bin/env bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/cudawatch.sh), run as root on each node
# after a job ends. Notes the end in the node's root-owned job notes, so `cudawatch.logs` shows
# when the job left its GPUs; a job that failed and then went silent is already caught by the
# JobSilentAfterError rule. The job's sidecar (prolog.sh) stays, so lines the agent reads after the
# job ended are still attributed (and, with slurm.follow_sidecar_paths, its output still followed
# to its end); sidecars older than CUDAWATCH_SLURM_SIDECAR_DAYS are removed.
#
# An epilog that exits non-zero drains the node: no `set -e`, always exit 0, and nothing here
# depends on the job's own directory (it may be gone) or writes into it.
set -u
conf="$(dirname "$0")/cudawatch-slurm.env"
# shellcheck disable=SC1090
[[ -r "$conf" ]] && . "$conf"
events=${CUDAWATCH_EVENTS:-/var/log/cudawatch/slurm-jobs.log}
sidecars=${CUDAWATCH_SLURM_SIDECAR_DIR:-/run/cudawatch/slurm}
keep_days=${CUDAWATCH_SLURM_SIDECAR_DAYS:-7}
if install -d -m 0755 "$(dirname "$events")" 2>/dev/null && [[ ! -L "$events" ]]; then
  echo "job=${SLURM_JOB_ID:-} user=${SLURM_JOB_USER:-} event=end time=$(date -Is)" >>"$events" ||
    echo "cudawatch epilog: cannot write $events" >&2
else
  echo "cudawatch epilog: cannot use $events" >&2
fi
if [[ -d "$sidecars" && ! -L "$sidecars" && "$keep_days" =~ ^[0-9]+$ ]]; then
  find "$sidecars" -maxdepth 1 -type f -name '*.json' -mtime "+$keep_days" -delete 2>/dev/null ||
    echo "cudawatch epilog: cannot clean $sidecars" >&2
fi
exit 0
