"""A/A of one kernel on one allocation of buffer sets: each arm on its own sets, against arms taking turns.

Not a test: a script that prints ratios measured in one run. Both arms are the
same loop (batch norm's fused sweep, `kernels.batchnorm`) under two names, so
every ratio's truth is 1. For each fresh allocation of the two arms' rotated
buffer sets, the real sampler (`runtime.timing.prepare_arms` and `sample`)
times ABBA blocks of 10 calls over 4 sets, 60 pairs, twice: once with each arm
on its own sets only (how `perfdsl run` timed before results/14), once with the
arms taking turns on each other's sets block by block (`Arm.allocation_of`, how
it times now). Each prints the paired ratio of block medians with its 95 %
interval (mean of the pairs' log-ratios, t-free normal interval).

If where one allocation landed in memory mattered, the "own sets" ratios
would stray from 1 by allocation, with intervals that exclude 1, and the
"turns" ratios would not: their pairs alternate which arm holds the luckier
allocation, so the luck is spread between pairs, where the interval sees it.

Measured before the turns existed (2-core EPYC, 32 MiB L3, 8192 x 1024 float32,
one core): in two runs a few minutes apart, four of six "own sets" intervals
excluded 1 (1.002, 1.008, 1.076, 1.068, 1.041, 1.056), and fifteen minutes
later none of six did (0.990-1.010): a machine state a run cannot tell.
Allocating each arm's sets afresh before each block also removes the bias, but
took `make report` from 58-71 s to 104-133 s; taking turns costs no allocation.

Measured with both modes (2-core EPYC, 8 MiB L3, 8192 x 1024, six allocations, one
run): "own sets" 1.0078 [1.0050, 1.0105], 1.0096 [1.0029, 1.0164], 1.0010,
1.0148 [1.0090, 1.0206], 0.9988, 0.9994: three of six intervals exclude 1; "turns"
on the same allocations 0.9981, 0.9988, 1.0010, 1.0049 [1.0004, 1.0095], 0.9966,
0.9996: one of six, by 0.04 %. The bias on this machine was about 1 %, not the
4-8 % of the earlier one.

    .venv/bin/python benchmarks/allocation_aa.py [--rows 8192] [--allocations 6]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from pathlib import Path

# As `perfdsl run` sets it before numpy loads: one BLAS thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import attrs
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfdsl.bundle.sampling import TimingSettings
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import Arm, prepare_arms, sample

COLUMNS = 1024
SETS = 4
SETTINGS = TimingSettings(warmup_calls=SETS, warmup_ms=50.0, repeats=10, blocks=60)


def paired_ratio(arms: list[Arm]) -> tuple[float, float, float]:
    """The second arm's time over the first's: the pairs' geometric mean ratio of block medians, 95 %."""
    record = sample(Target(), arms, SETTINGS)
    medians: dict[str, list[float]] = {arm.name: [] for arm in arms}
    for block in record.timing.blocks:
        times = [s.duration_ns for s in record.samples if s.block == block.index]
        medians[block.arm].append(statistics.median(times))
    first, second = (medians[arm.name] for arm in arms)
    logs = [math.log(b / a) for a, b in zip(first, second, strict=True)]
    mean, error = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - 1.96 * error), math.exp(mean + 1.96 * error)


def main() -> None:
    from kernels import batchnorm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--allocations", type=int, default=6)
    args = parser.parse_args()
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(
        f"batch norm fused, {args.rows} x {COLUMNS} float32, A/A, "
        f"{SETTINGS.blocks} pairs of {SETTINGS.repeats} calls per mode and allocation:"
    )
    variants = [attrs.evolve(batchnorm.fused, name=name) for name in ("a", "b")]
    outside = {"own sets": 0, "turns": 0}
    for index in range(args.allocations):
        turns = list(
            prepare_arms(
                Target(),
                batchnorm.reference,
                variants,
                {"M": args.rows, "N": COLUMNS},
                np.float32,
                SETS,
                seed=index,
            )
        )
        own = [attrs.evolve(arm, allocations=()) for arm in turns]
        line = [f"  allocation {index}:"]
        for mode, arms in (("own sets", own), ("turns", turns)):
            ratio, low, high = paired_ratio(arms)
            outside[mode] += not low <= 1.0 <= high
            line.append(f"{mode} {ratio:.4f} [{low:.4f}, {high:.4f}]")
        print("  ".join(line), flush=True)
    for mode, count in outside.items():
        print(
            f"  {mode}: {count} of {args.allocations} intervals exclude 1 (at 95 %, 1 in 20 would by chance)"
        )


if __name__ == "__main__":
    main()
