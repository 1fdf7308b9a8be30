"""Does a block that follows the other arm's block run slower than one that follows its own arm's?

Not a test: a script that prints figures measured in one run. `perfdsl run`
rotates each arm's calls over buffer sets sized to exceed a multiple of the
last-level cache (`runtime.targets.CPUTarget.rotation_bytes`), so that every
call reads memory the cache no longer holds. If the sets do not defeat the
cache, an arm's next block finds part of its own sets still cached after its
own block, and not after the other arm's: in the ABBA order (A B B A A B ...)
the second block of every pair follows a switch, so the pair log-ratios
alternate in sign and their spread, which the interval pays for, grows.

Here both arms are the same loop (batch norm's fused sweep, `kernels.batchnorm`),
blocks of 20 calls in ABBA order, at rotations of 2, 4 and 8 times the
last-level cache, each run `--trials` times with fresh sets. Printed per run:
the mean log block median after a switch less after the same arm (the
carry-over), and the spread of the pair log-ratios.

Measured when written (2-core EPYC, 32 MiB L3, 2048 x 1024 float32, 16 MiB
sets, one core, 100-120 pairs, 8 runs at each rotation): at twice the L3 (4
sets) the carry-over was +0.015 to +0.152, positive in 8 of 8 runs, and the
pair spread 0.10-0.18; at four times (8 sets) -0.008 to +0.015 and 0.08-0.13;
at eight times (16 sets) -0.015 to -0.001 and 0.07-0.15.

    .venv/bin/python benchmarks/rotation_carryover.py [--rows 2048] [--multiples 2,4,8] [--trials 3]
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allocation_aa import COLUMNS, abba_block_medians, batchnorm_sets

CALLS_PER_BLOCK = 20


def one_run(rows: int, multiple: float, pairs: int, cache_bytes: int, rng: np.random.Generator) -> str:
    """The carry-over and the pair spread of one A/A run over fresh sets just over `multiple`
    times the cache."""
    set_bytes = sum(array.nbytes for array in batchnorm_sets(rows, 1, rng)[0].values())
    count = int(multiple * cache_bytes) // set_bytes + 1
    arms = {arm: batchnorm_sets(rows, count, rng) for arm in ("a", "b")}
    blocks = abba_block_medians(arms, pairs, CALLS_PER_BLOCK)
    logs = [math.log(median) for _, median in blocks]
    switched = [k for k in range(1, len(blocks)) if blocks[k][0] != blocks[k - 1][0]]
    stayed = [k for k in range(1, len(blocks)) if blocks[k][0] == blocks[k - 1][0]]
    carry_over = statistics.mean(logs[k] for k in switched) - statistics.mean(logs[k] for k in stayed)
    by_pair = [
        dict(zip((arm for arm, _ in blocks[k : k + 2]), logs[k : k + 2], strict=True))
        for k in range(0, len(blocks), 2)
    ]
    spread = statistics.stdev(pair["b"] - pair["a"] for pair in by_pair)
    return (
        f"  {multiple:g}x the cache, {count} sets of {set_bytes / 2**20:.1f} MiB per arm: "
        f"carry-over {carry_over:+.3f}, pair spread {spread:.3f}"
    )


def main() -> None:
    from perfdsl.runtime.targets import last_level_cache_bytes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--multiples", default="2,4,8")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=120)
    args = parser.parse_args()
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    cache_bytes = last_level_cache_bytes()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(
        f"batch norm fused, {args.rows} x {COLUMNS} float32, A/A, {args.pairs} ABBA pairs, "
        f"last-level cache {cache_bytes / 2**20:.0f} MiB:"
    )
    rng = np.random.default_rng(0)
    multiples = [float(m) for m in args.multiples.split(",")]
    for _ in range(args.trials):
        for multiple in multiples:
            print(one_run(args.rows, multiple, args.pairs, cache_bytes, rng), flush=True)


if __name__ == "__main__":
    main()
