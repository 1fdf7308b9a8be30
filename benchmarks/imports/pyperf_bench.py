"""pyperf suite of the pair: `python pyperf_bench.py -o FILE` (pyperf's own options apply)."""

from __future__ import annotations

import pyperf
from workload import VARIANTS, bound_call

if __name__ == "__main__":
    runner = pyperf.Runner()
    for name in VARIANTS:
        runner.bench_func(f"batchnorm_{name}", bound_call(name))
