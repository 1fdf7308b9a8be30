"""A/A of one kernel, each arm with its own rotated buffer sets: does each allocation carry its own ratio?

Not a test: a script that prints ratios measured in one run. `perfdsl run`
gives each kernel arm its own copies of the rotated input sets and its own
outputs, allocated once for the whole run (`runtime.timing.prepare_arms`).
Here both arms are the same loop (batch norm's fused sweep, `kernels.batchnorm`),
timed in ABBA blocks of 10 calls over 4 sets, 60 pairs per allocation, and the
sets are allocated afresh several times. If where the arrays land did not
matter, every allocation's A/A ratio would sit at 1 within its interval.

Measured when written (2-core EPYC, 32 MiB L3, 8192 x 1024 float32, one core),
four runs of six allocations. In two runs a few minutes apart, after a dozen
`perfdsl run`s, four of six intervals excluded 1: 1.002, 1.008, 1.076, 1.068,
1.041, 1.056, and with numpy's huge-page advice off 1.002, 1.073, 1.011, 0.979,
1.039, 1.003. Fifteen minutes later two runs (this script and its draft) gave
none of six: 0.990-1.010 and 0.991-1.021. So on some machine states one
allocation per arm biases a DRAM-bound kernel comparison by several percent,
with an interval that does not show it, and on others it does not; a run
cannot tell which state it had. Allocating each arm's sets afresh before its
blocks (as the application's request now is prepared afresh:
`runtime.preparation`) was tried and is not in the code: within a quarter of
the time it took `make report` from 58-71 s to 104 s, within a tenth to 133 s
(its kernel comparisons then needed 35-36 pairs, not 10), and the next session
should weigh that against this script's answer on its own machine.

    .venv/bin/python benchmarks/allocation_aa.py [--rows 8192] [--allocations 6]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

# As `perfdsl run` sets it before numpy loads: one BLAS thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COLUMNS = 1024
SETS = 4
PAIRS = 60
CALLS_PER_BLOCK = 10


def batchnorm_sets(rows: int, count: int, rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
    """`count` fresh buffer sets of batch norm at `rows` x COLUMNS float32: inputs and outputs."""
    from kernels import batchnorm

    shape = {"M": rows, "N": COLUMNS}
    made = []
    for _ in range(count):
        inputs = batchnorm._inputs(shape, rng, np.float32)
        outputs = {name: np.empty(size, np.float32) for name, size in batchnorm._outputs(shape).items()}
        made.append({**inputs, **outputs})
    return made


def abba_block_medians(
    arms: dict[str, list[dict[str, np.ndarray]]], pairs: int, calls_per_block: int
) -> list[tuple[str, float]]:
    """Batch norm's fused loop timed in ABBA blocks over arms "a" and "b", each call on the arm's
    next set: (arm, median call ns) of every block, in run order, after one call per set."""
    from kernels.batchnorm import fused

    for sets in arms.values():
        for arrays in sets:
            fused.cpu(**arrays)
    cursor = dict.fromkeys(arms, 0)
    blocks = []
    for pair in range(pairs):
        for arm in ("a", "b") if pair % 2 == 0 else ("b", "a"):
            times = []
            for _ in range(calls_per_block):
                arrays = arms[arm][cursor[arm] % len(arms[arm])]
                cursor[arm] += 1
                start = time.perf_counter_ns()
                fused.cpu(**arrays)
                times.append(time.perf_counter_ns() - start)
            blocks.append((arm, statistics.median(times)))
    return blocks


def one_allocation(rows: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """The A/A ratio of one fresh allocation of both arms' sets, with its 95 % interval."""
    arms = {"a": batchnorm_sets(rows, SETS, rng), "b": batchnorm_sets(rows, SETS, rng)}
    blocks = abba_block_medians(arms, PAIRS, CALLS_PER_BLOCK)
    medians = {arm: [m for a, m in blocks if a == arm] for arm in arms}
    logs = [math.log(b / a) for a, b in zip(medians["a"], medians["b"], strict=True)]
    mean, error = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - 1.96 * error), math.exp(mean + 1.96 * error)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--allocations", type=int, default=6)
    args = parser.parse_args()
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(f"batch norm fused, {args.rows} x {COLUMNS} float32, A/A, {PAIRS} pairs per allocation:")
    rng = np.random.default_rng(0)
    outside = 0
    for index in range(args.allocations):
        ratio, low, high = one_allocation(args.rows, rng)
        outside += not low <= 1.0 <= high
        print(f"  allocation {index}: ratio {ratio:.4f} [{low:.4f}, {high:.4f}]", flush=True)
    print(f"  {outside} of {args.allocations} intervals exclude 1 (at 95 %, about 1 in 20 would by chance)")


if __name__ == "__main__":
    main()
