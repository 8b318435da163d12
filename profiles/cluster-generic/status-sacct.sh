#!/usr/bin/env bash
# The status command of profiles/cluster-generic on Slurm: prints running, success or failed
# for the job id Snakemake passes (what `sbatch --parsable` printed: "ID" or "ID;CLUSTER").
# For a failed job it also says, in one line on stderr, which job it was and Slurm's state and
# reason (e.g. "FAILED, reason JobLaunchFailure" for a job killed over its --mem).
set -u
id=${1%%;*}
# -X: the allocation's own line, not its steps; -P -n: "STATE|REASON|NAME" ("CANCELLED by 0": first word)
line=$(sacct -j "$id" -X -n -P -o State,Reason,JobName 2>/dev/null | head -n 1)
if [ -z "$line" ]; then
  # Accounting may lag behind a fresh job, or be off (accounting_storage/none: sacct fails). The
  # controller knows every job still queued, and a finished one for MinJobAge seconds: -t all,
  # since squeue shows only pending and running jobs by default.
  line=$(squeue -h -t all -j "$id" -o '%T|%r|%j' 2>/dev/null | head -n 1)
  if [ -z "$line" ]; then
    echo "status-sacct.sh: neither sacct nor squeue knows Slurm job $id" >&2
    echo failed
    exit 0
  fi
fi
IFS='|' read -r state reason name <<<"$line"
case "${state%% *}" in
  COMPLETED) echo success ;;
  PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED | REQUEUE_HOLD | REQUEUE_FED | RESIZING \
    | SUSPENDED | STAGE_OUT | SIGNALING | STOPPED | RESV_DEL_HOLD | SPECIAL_EXIT) echo running ;;
  *)  # FAILED, TIMEOUT, OUT_OF_MEMORY, CANCELLED, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE
    echo "status-sacct.sh: Slurm job $id ($name) ended $state, reason ${reason:-None}" >&2
    echo failed ;;
esac
