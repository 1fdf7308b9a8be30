#!/bin/sh
# perfdsl matrix cpu-fleet-abcdef0123, machine any:
# one array task per cell. The task reads its cell from the cell file ($2) by
# SLURM_ARRAY_TASK_ID and runs `perfdsl run` with it; nothing from the study is in this file.
#SBATCH --job-name=perfdsl-cpu-fleet-abcdef0123
#SBATCH --array=5
#SBATCH --output=slurm-%A_%a.out
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=8
#SBATCH --exclusive
exec "$1" -m perfdsl.matrix.task "$2" "$SLURM_ARRAY_TASK_ID"
