#!/usr/bin/env bash
# Optional Slurm Epilog step: diagnose the finished job's logs offline and note the verdict, e.g.
# for a site's job-summary mail. Install beside epilog.sh (Epilog=/etc/slurm/epilog.d/*).
# The verdict users see (`scontrol show job` / `sacct -o Comment`) is not written here: slurmctld
# refuses updates of a finished job, and every Epilog runs after the job ended. `cudawatch run`
# (cudawatch-srun) sets the job's Comment while the failing task still runs.
#
# `classify --fail-on error` exits 1 when it found an incident of severity error or critical,
# 0 when not, 2 when a log could not be read. An epilog that exits non-zero drains the node, so
# this one acts on the status and always exits 0.
set -u
conf="$(dirname "$0")/cudawatch-slurm.env"
# shellcheck disable=SC1090
[[ -r "$conf" ]] && . "$conf"
cudawatch=${CUDAWATCH_BIN:-/usr/bin/cudawatch}
logs="${CUDAWATCH_LOG_ROOT:-/var/log/training}/${SLURM_JOB_ID:-none}"
notes=${CUDAWATCH_DIAGNOSES:-/var/log/cudawatch/slurm-diagnoses.log}
# the job's own regular files only: a symlink the job planted must not make root read (and
# summarise, for the user's job-summary mail) a file the user may not read
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
  find "$logs" -maxdepth 1 -type f ${SLURM_JOB_UID:+-uid "$SLURM_JOB_UID"} \
    \( -name '*.log' -o -name '*.err' -o -name '*.out' \) -print0 2>/dev/null | sort -z)
[[ ${#files[@]} -gt 0 && -x "$cudawatch" ]] || exit 0
install -d -m 0755 "$(dirname "$notes")" 2>/dev/null || exit 0
[[ -L "$notes" ]] && exit 0
if report="$(timeout 60 "$cudawatch" classify --json --fail-on error "${files[@]}" 2>/dev/null)"; then
  echo "job=${SLURM_JOB_ID:-} verdict=ok time=$(date -Is)" >>"$notes"
else
  status=$?
  if [[ $status -eq 1 ]]; then
    classes="$(printf '%s\n' "$report" | sed -n 's/.*"class":"\([a-z_]*\)".*"root":true.*/\1/p' | sort -u | paste -sd, -)"
    echo "job=${SLURM_JOB_ID:-} verdict=failed classes=${classes:-unknown} time=$(date -Is)" >>"$notes"
  else
    echo "job=${SLURM_JOB_ID:-} verdict=unknown status=$status time=$(date -Is)" >>"$notes"
  fi
fi
exit 0
