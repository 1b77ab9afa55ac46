#!/usr/bin/env bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/cudawatch.sh), run as root on each node
# before a job starts. Makes sure the node agent runs, so the job's logs, the kernel log and GPU
# memory are watched, and records which job holds the node's GPUs in the agent's log directory.
set -euo pipefail
systemctl is-active --quiet cudawatch-agent || systemctl start cudawatch-agent
install -d -m 0755 /var/log/training/"$SLURM_JOB_ID"
echo "job=$SLURM_JOB_ID user=$SLURM_JOB_USER gpus=${SLURM_JOB_GPUS:-} start=$(date -Is)" \
  >> /var/log/training/"$SLURM_JOB_ID"/slurm-job.log
