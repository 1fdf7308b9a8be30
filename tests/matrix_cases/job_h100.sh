#!/bin/sh
# perfdsl matrix fleet-0123456789, machine h100:
# one array task per cell. The task reads its cell from the cell file ($2) by
# SLURM_ARRAY_TASK_ID and runs `perfdsl run` with it; nothing from the study is in this file.
#SBATCH --job-name=perfdsl-fleet-0123456789
#SBATCH --array=0,2-3%2
#SBATCH --output=slurm-%A_%a.out
#SBATCH --ntasks=1
#SBATCH --partition=hopper
#SBATCH --constraint=h100|h200
#SBATCH --time=00:30:00
#SBATCH --gres=gpu:1
exec "$1" -m perfdsl.matrix.task "$2" "$SLURM_ARRAY_TASK_ID"
