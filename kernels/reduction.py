"""Sum of a float32 vector x (N,): several launches against one, one add chain against four.

Accumulation is float64 on both targets. A float32 running sum stops growing
once it reaches 2^24 times the summands (a CPU thread sums N/2 elements in one
chain), and float64 costs nothing here: the kernels are bound by memory or by
add latency, and a float64 add is no slower a link in a chain than a float32
one on the CPU. The result is rounded to float32 once, when it is stored.

Every variant splits x into G = min(1024, ceil(N / 1024)) parts with a fixed
partition and sums them in a fixed order, so every variant is deterministic
(bit for bit from run to run, and independent of the CPU's thread count). G is
1024 for every N >= 2^20. Modelled device-memory bytes (x read once, the G
float64 partials written and read once, the float32 total written) and launches:

    multi_launch       bytes 4*N + 16*G + 4   launches 2
    single_launch      bytes 4*N + 16*G + 4   launches 1
    one_accumulator    bytes 4*N + 16*G + 4   launches 1
    four_accumulators  bytes 4*N + 16*G + 4   launches 1

On cuda the one-launch variants also touch a 4-byte ticket counter (one atomic
per block, in L2), left out of the model.

* cuda: G blocks of 256 threads. Each thread sums a grid-strided slice of x,
  blocks sum their threads in shared memory, and the G partials go to global
  memory. `multi_launch` sums them in a second launch; the one-launch variants
  let the last block to finish sum them (each block publishes its partial,
  `threadfence`, then takes a ticket from an atomic counter; the block that
  draws ticket G - 1 adds the partials in index order and resets the counter).
* cpu: G contiguous chunks summed in a parallel loop into partials, then a
  serial sum of the partials. `multi_launch` makes that two Numba calls,
  the one-launch variants one.

`single_launch` and `four_accumulators` are the same code: each thread keeps
four independent running sums, so four loads and adds are in flight. The
baseline `one_accumulator` keeps one, so every add waits for the previous one.
No function here uses fastmath, so LLVM may not reassociate one chain into many.
"""

from __future__ import annotations

from typing import Any

import attrs
import numba
import numpy as np
from numba import cuda, prange

from kernels.block_reduce import block_sum_f64
from kernels.workspace import device_scratch, host_scratch
from perfdsl.kernel import Reference, Shape, Variant

BLOCK = 256
PER_THREAD = 4
MAX_PARTS = 1024
"""G's cap: 1024 blocks of 256 threads fill an H200 (132 SMs x 2048 threads) about once."""

_SIG_PARTIALS = "void({dtype}[::1], float64[::1])"
_SIG_FINISH = "void(float64[::1], {dtype}[::1])"
_SIG_ONE_LAUNCH = "void({dtype}[::1], float64[::1], uint32[::1], {dtype}[::1])"
_SIG_CPU_ONE_PASS = "void({dtype}[::1], float64[::1], {dtype}[::1])"


def parts(n: int) -> int:
    """G, the number of partial sums for a vector of n elements."""
    return min(MAX_PARTS, -(-n // (BLOCK * PER_THREAD)))


# Summation chains, one source for both targets: x[start], x[start + step], ...
# below stop. Each is compiled twice, with `numba.njit` for the CPU and with
# `cuda.jit(device=True)` for CUDA, because an array argument cannot cross
# from a simulated CUDA kernel into a CPU-compiled function.


def _one_chain(x, start, stop, step):
    acc = 0.0
    for i in range(start, stop, step):
        acc += x[i]
    return acc


def _four_chains(x, start, stop, step):
    acc0 = acc1 = acc2 = acc3 = 0.0
    i = start
    while i + 3 * step < stop:
        acc0 += x[i]
        acc1 += x[i + step]
        acc2 += x[i + 2 * step]
        acc3 += x[i + 3 * step]
        i += 4 * step
    while i < stop:
        acc0 += x[i]
        i += step
    return (acc0 + acc1) + (acc2 + acc3)


sum_one_chain = numba.njit(inline="always")(_one_chain)
sum_four_chains = numba.njit(inline="always")(_four_chains)
_device_one_chain = cuda.jit(device=True, inline="always")(_one_chain)
_device_four_chains = cuda.jit(device=True, inline="always")(_four_chains)


# CUDA


@cuda.jit(device=True, inline="always")
def _grid_slice():
    """This thread's grid-strided slice: (first index, stride)."""
    return cuda.grid(1), cuda.gridsize(1)


@cuda.jit(device=True, inline="always")
def _finish_by_last_block(block_total, partials, counter, total):
    """Publish the block's partial; the last block to finish adds all of them in index order."""
    is_last = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        partials[cuda.blockIdx.x] = block_total
        # The partial must be visible device-wide before the ticket says it is there.
        cuda.threadfence()
        ticket = cuda.atomic.add(counter, 0, 1)
        is_last[0] = ticket == cuda.gridDim.x - 1
    cuda.syncthreads()
    if is_last[0]:
        acc = 0.0
        for i in range(t, cuda.gridDim.x, cuda.blockDim.x):
            # An atomic is served by L2, so it cannot return a stale L1 line of another
            # block's partial (Numba has no volatile load, and the simulator no ld.cg).
            acc += cuda.atomic.add(partials, i, 0.0)
        grand_total = block_sum_f64(acc)
        if t == 0:
            total[0] = grand_total
            counter[0] = 0


@cuda.jit
def reduce_partials_kernel(x, partials):
    """Multi-launch, launch 1: block b's partial sum of x, four chains per thread."""
    start, step = _grid_slice()
    block_total = block_sum_f64(_device_four_chains(x, start, x.size, step))
    if cuda.threadIdx.x == 0:
        partials[cuda.blockIdx.x] = block_total


@cuda.jit
def reduce_finish_kernel(partials, total):
    """Multi-launch, launch 2: one block adds the partials."""
    grand_total = block_sum_f64(
        _device_four_chains(partials, cuda.threadIdx.x, partials.size, cuda.blockDim.x)
    )
    if cuda.threadIdx.x == 0:
        total[0] = grand_total


@cuda.jit
def reduce_four_chains_kernel(x, partials, counter, total):
    """One launch, four chains per thread, the last block finishing."""
    start, step = _grid_slice()
    block_total = block_sum_f64(_device_four_chains(x, start, x.size, step))
    _finish_by_last_block(block_total, partials, counter, total)


@cuda.jit
def reduce_one_chain_kernel(x, partials, counter, total):
    """One launch, one chain per thread, the last block finishing."""
    start, step = _grid_slice()
    block_total = block_sum_f64(_device_one_chain(x, start, x.size, step))
    _finish_by_last_block(block_total, partials, counter, total)


def _partials_buffer(n: int) -> Any:
    return device_scratch("reduction.partials", (parts(n),), np.float64)


def _multi_launch_cuda(stream: Any, x: Any, total: Any) -> None:
    partials = _partials_buffer(x.size)
    reduce_partials_kernel[partials.size, BLOCK, stream](x, partials)
    reduce_finish_kernel[1, BLOCK, stream](partials, total)


def _one_launch_cuda(kernel: Any) -> Any:
    def run(stream: Any, x: Any, total: Any) -> None:
        partials = _partials_buffer(x.size)
        counter = device_scratch("reduction.counter", (1,), np.uint32, zeroed=True)
        kernel[partials.size, BLOCK, stream](x, partials, counter, total)

    return run


# CPU


@numba.njit(inline="always")
def _chunk(c, chunks, n):
    """Bounds of chunk c of `chunks` near-equal contiguous chunks of range(n)."""
    return c * n // chunks, (c + 1) * n // chunks


@numba.njit(parallel=True, nogil=True)
def reduce_partials_cpu(x, partials):
    """Multi-launch, call 1: the chunk sums, four chains each."""
    for c in prange(partials.size):
        lo, hi = _chunk(c, partials.size, x.size)
        partials[c] = sum_four_chains(x, lo, hi, 1)


@numba.njit(nogil=True)
def reduce_finish_cpu(partials, total):
    """Multi-launch, call 2: the sum of the partials."""
    total[0] = sum_four_chains(partials, 0, partials.size, 1)


@numba.njit(parallel=True, nogil=True)
def reduce_four_chains_cpu(x, partials, total):
    """One call: chunk sums with four chains each, then their sum."""
    for c in prange(partials.size):
        lo, hi = _chunk(c, partials.size, x.size)
        partials[c] = sum_four_chains(x, lo, hi, 1)
    total[0] = sum_four_chains(partials, 0, partials.size, 1)


@numba.njit(parallel=True, nogil=True)
def reduce_one_chain_cpu(x, partials, total):
    """One call: chunk sums with one chain each, then their sum."""
    for c in prange(partials.size):
        lo, hi = _chunk(c, partials.size, x.size)
        partials[c] = sum_one_chain(x, lo, hi, 1)
    total[0] = sum_four_chains(partials, 0, partials.size, 1)


def _host_partials(n: int) -> np.ndarray:
    return host_scratch("reduction.partials", (parts(n),), np.float64)


def _multi_launch_cpu(x: np.ndarray, total: np.ndarray) -> None:
    partials = _host_partials(x.size)
    reduce_partials_cpu(x, partials)
    reduce_finish_cpu(partials, total)


def _one_launch_cpu(function: Any) -> Any:
    def run(x: np.ndarray, total: np.ndarray) -> None:
        function(x, _host_partials(x.size), total)

    return run


# The operation.


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    # Positive summands: the relative error of the sum is then well conditioned
    # (no cancellation), so a tolerance on it means the same at every N.
    return {"x": rng.uniform(0.5, 1.5, shape["N"]).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"total": (1,)}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"total": np.array([np.sum(x)])}


reference = Reference(name="reduction", inputs=_inputs, outputs=_outputs, compute=_compute)

multi_launch = Variant(
    name="multi_launch",
    cpu=_multi_launch_cpu,
    cuda=_multi_launch_cuda,
    cuda_kernels=((reduce_partials_kernel, _SIG_PARTIALS), (reduce_finish_kernel, _SIG_FINISH)),
    cpu_kernels=((reduce_partials_cpu, _SIG_PARTIALS), (reduce_finish_cpu, _SIG_FINISH)),
)

single_launch = Variant(
    name="single_launch",
    cpu=_one_launch_cpu(reduce_four_chains_cpu),
    cuda=_one_launch_cuda(reduce_four_chains_kernel),
    cuda_kernels=((reduce_four_chains_kernel, _SIG_ONE_LAUNCH),),
    cpu_kernels=((reduce_four_chains_cpu, _SIG_CPU_ONE_PASS),),
)

four_accumulators = attrs.evolve(single_launch, name="four_accumulators")

one_accumulator = Variant(
    name="one_accumulator",
    cpu=_one_launch_cpu(reduce_one_chain_cpu),
    cuda=_one_launch_cuda(reduce_one_chain_kernel),
    cuda_kernels=((reduce_one_chain_kernel, _SIG_ONE_LAUNCH),),
    cpu_kernels=((reduce_one_chain_cpu, _SIG_CPU_ONE_PASS),),
)
