"""The Slurm job script of one machine's job array, rendered from validated values only.

The script is the reproduction artifact of a submission, so it holds every
scheduler option (`#SBATCH` lines) and one command that takes everything else
as arguments: `$1` the python that runs the task, `$2` the cell file, and the
array task id Slurm sets. A study's names, axis values and paths are not in it
at all; what is (the matrix id, partition, constraint, time, counts and array
indices) has been matched against a strict pattern by `spec` or is an integer,
and is checked again here so that no caller can render an unchecked value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from perfdsl.matrix.spec import CONSTRAINT, NAME, PARTITION, TIME, Machine, SlurmOptions
from perfdsl.ranges import format_ranges

MATRIX_ID = re.compile(NAME.pattern + r"-[0-9a-f]{10}")
"""What `cells.matrix_id` makes: a checked name, a dash and ten hexadecimal digits."""
LOG_PATTERN = "slurm-%A_%a.out"
"""Slurm's own output of each task, relative to the job's working directory (the matrix's logs/)."""


def job_name(matrix: str) -> str:
    """The array's job name: how squeue finds this matrix's tasks and no other matrix's."""
    return f"perfdsl-{_checked(matrix, MATRIX_ID)}"


def array_spec(indices: Sequence[int], throttle: int | None) -> str:
    """`0,2-4%2`: the indices as ranges, then the throttle."""
    ordered = sorted({int(i) for i in indices})
    if not ordered or ordered[0] < 0:
        raise ValueError("an array needs at least one index, none negative")
    return format_ranges(ordered) + (f"%{int(throttle)}" if throttle else "")


def render(matrix: str, machine: Machine, options: SlurmOptions, indices: Sequence[int]) -> str:
    """The job script for `machine`'s cells at `indices`."""
    lines = [
        "#!/bin/sh",
        f"# perfdsl matrix {_checked(matrix, MATRIX_ID)}, machine {_checked(machine.name, NAME)}:",
        "# one array task per cell. The task reads its cell from the cell file ($2) by",
        "# SLURM_ARRAY_TASK_ID and runs `perfdsl run` with it; nothing from the study is in this file.",
        f"#SBATCH --job-name={job_name(matrix)}",
        f"#SBATCH --array={array_spec(indices, options.throttle)}",
        f"#SBATCH --output={LOG_PATTERN}",
        "#SBATCH --ntasks=1",
    ]
    partition = machine.partition or options.partition
    if partition:
        lines.append(f"#SBATCH --partition={_checked(partition, PARTITION)}")
    if machine.constraint:
        lines.append(f"#SBATCH --constraint={_checked(machine.constraint, CONSTRAINT)}")
    if options.time:
        lines.append(f"#SBATCH --time={_checked(options.time, TIME)}")
    if options.gpus_per_cell:
        lines.append(f"#SBATCH --gres=gpu:{int(options.gpus_per_cell)}")
    if options.cpus_per_cell:
        lines.append(f"#SBATCH --cpus-per-task={int(options.cpus_per_cell)}")
    if options.exclusive:
        lines.append("#SBATCH --exclusive")
    lines += [
        'exec "$1" -m perfdsl.matrix.task "$2" "$SLURM_ARRAY_TASK_ID"',
        "",
    ]
    return "\n".join(lines)


def _checked(value: str, pattern: re.Pattern[str]) -> str:
    if not pattern.fullmatch(value):
        raise ValueError(f"{value!r} does not match {pattern.pattern}")
    return value
