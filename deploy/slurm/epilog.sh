#!/usr/bin/env bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/cudawatch.sh), run as root on each node
# after a job ends. Notes the end, so `cudawatch.logs` shows when the job left its GPUs; a job
# that failed and then went silent is already caught by the JobSilentAfterError rule.
set -euo pipefail
echo "job=$SLURM_JOB_ID end=$(date -Is)" >> /var/log/training/"$SLURM_JOB_ID"/slurm-job.log
