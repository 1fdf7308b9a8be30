"""Google Benchmark (its Python bindings) of the pair.

python benchmarks/imports/google_bench.py --benchmark_format=json
"""

from __future__ import annotations

import google_benchmark as benchmark
from workload import bound_call

_CALLS = {name: bound_call(name) for name in ("numpy_passes", "fused")}


@benchmark.register(name="BM_batchnorm/numpy_passes")
@benchmark.option.unit(benchmark.kMicrosecond)
def numpy_passes(state: benchmark.State) -> None:
    call = _CALLS["numpy_passes"]
    while state:
        call()


@benchmark.register(name="BM_batchnorm/fused")
@benchmark.option.unit(benchmark.kMicrosecond)
def fused(state: benchmark.State) -> None:
    call = _CALLS["fused"]
    while state:
        call()


if __name__ == "__main__":
    benchmark.main()
