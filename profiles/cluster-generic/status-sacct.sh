#!/usr/bin/env bash
# The status command of profiles/cluster-generic on Slurm: prints running, success or failed
# for the job id Snakemake passes (what `sbatch --parsable` printed: "ID" or "ID;CLUSTER").
set -u
id=${1%%;*}
# -X: the allocation's own line, not its steps; -P -n: the state alone ("CANCELLED by 0": first word)
state=$(sacct -j "$id" -X -n -P -o State 2>/dev/null | head -n 1)
if [ -z "$state" ]; then
  # accounting may lag behind a fresh job, or be off: the queue knows every job still in it
  state=$(squeue -h -j "$id" -o %T 2>/dev/null | head -n 1)
  if [ -z "$state" ]; then
    echo "status-sacct.sh: neither sacct nor squeue knows job $id" >&2
    echo failed
    exit 0
  fi
fi
case "${state%% *}" in
  COMPLETED) echo success ;;
  PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED | REQUEUE_HOLD | REQUEUE_FED | RESIZING \
    | SUSPENDED | STAGE_OUT | SIGNALING | STOPPED | RESV_DEL_HOLD | SPECIAL_EXIT) echo running ;;
  *) echo failed ;;  # FAILED, TIMEOUT, OUT_OF_MEMORY, CANCELLED, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE
esac
