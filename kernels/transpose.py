"""Matrix transpose, out = x.T for x (R, C): through a shared tile with and without padding.

Modelled device-memory bytes and launches, the same for every variant and target
(each element read once and written once; `{dtype}` is 4 bytes for float32):

    naive    bytes 8*R*C   launches 1
    tiled    bytes 8*R*C   launches 1
    padded   bytes 8*R*C   launches 1

The variants move the same bytes; they differ in how (the study's mechanism
is bank conflicts, not bytes):

* cuda: 32 x 8 thread blocks, each thread moving 4 rows of a 32 x 32 tile
  (NVIDIA's classic design). `naive` reads x coalesced and writes `out` with a
  stride of R elements. `tiled` stages the tile in shared memory so both sides
  are coalesced, but its column read of a [32][32] tile hits one bank 32 times
  (a 32-way conflict). `padded` declares the tile [32][33], so a column spans
  all 32 banks.
* cpu: `naive` is the strided loop. `tiled` and `padded` copy a panel of 32 rows
  by up to 1024 columns into a per-thread buffer, then read it down its columns
  to write `out` contiguously. The CPU's counterpart of a bank is an L1 set:
  a 32 KiB, 8-way L1 with 64-byte lines maps addresses 4 KiB apart to one set.
  `tiled` gives the buffer a power-of-two row stride of 1024 floats (4 KiB),
  so the 32 rows of a column fall in one set and evict each other; `padded`
  adds one cache line (16 floats), so they fall in 32 different sets. The CPU
  pads by a line for the reason the GPU pads by a word: a line is the unit
  that selects a set, as a 4-byte word selects a bank.

The cuda grid is (ceil(C/32), ceil(R/32)) blocks; CUDA caps the y dimension, so
R may be at most 65535*32 rows.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import cuda, prange

from perfdsl.kernel import Reference, Shape, Variant

TILE = 32
TILE_PADDED = TILE + 1
"""A padded tile row: a global constant, because a shared array's shape must be literal."""
ROWS = 8
"""A block is TILE x ROWS threads; each thread moves TILE // ROWS = 4 elements of a tile."""
MAX_GRID_Y = 65535

PANEL_COLS = 1024
"""Columns of a CPU panel; with float32 a row of it is 4 KiB, the L1 set-aliasing distance."""
POW2_STRIDE = PANEL_COLS
PADDED_STRIDE = PANEL_COLS + 16
"""One 64-byte line of float32 padding: consecutive buffer rows start in consecutive L1 sets."""

_SIG = "void({dtype}[:, ::1], {dtype}[:, ::1])"


# CUDA


@cuda.jit
def transpose_naive_kernel(x, out):
    """Reads coalesced along a row of x; writes R elements apart down a column of out."""
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    row0 = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    if col < x.shape[1]:
        for k in range(0, TILE, ROWS):
            if row0 + k < x.shape[0]:
                out[col, row0 + k] = x[row0 + k, col]


@cuda.jit(device=True, inline="always")
def _through_tile(tile, x, out):
    """Stage a TILE x TILE block of x in `tile`, then write it transposed, both sides coalesced."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row0 = cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if row0 + k < x.shape[0] and col < x.shape[1]:
            tile[ty + k, tx] = x[row0 + k, col]
    cuda.syncthreads()
    # The block's tile lands at the mirrored block of out: x's tile columns are out's rows.
    out_col = cuda.blockIdx.y * TILE + tx
    out_row0 = cuda.blockIdx.x * TILE + ty
    for k in range(0, TILE, ROWS):
        if out_row0 + k < out.shape[0] and out_col < out.shape[1]:
            # A warp reads down a tile column: lanes tx are one tile row stride apart.
            out[out_row0 + k, out_col] = tile[tx, ty + k]


@cuda.jit
def transpose_tiled_kernel(x, out):
    """Shared tile [32][32]: the column read is a 32-way bank conflict."""
    tile = cuda.shared.array((TILE, TILE), x.dtype)
    _through_tile(tile, x, out)


@cuda.jit
def transpose_padded_kernel(x, out):
    """Shared tile [32][33]: a tile column spans all 32 banks."""
    tile = cuda.shared.array((TILE, TILE_PADDED), x.dtype)
    _through_tile(tile, x, out)


def _launcher(kernel: Any) -> Any:
    def run(stream: Any, x: Any, out: Any) -> None:
        rows, cols = x.shape
        grid = (-(-cols // TILE), -(-rows // TILE))
        if grid[1] > MAX_GRID_Y:
            raise ValueError(f"transpose supports at most {MAX_GRID_Y * TILE} rows, got {rows}")
        kernel[grid, (TILE, ROWS), stream](x, out)

    return run


# CPU


@numba.njit(parallel=True, nogil=True)
def transpose_naive_cpu(x, out):
    """Reads x along rows; writes R elements apart, one cache line per element."""
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            out[j, i] = x[i, j]


@numba.njit(inline="always")
def _through_buffer(x, out, stride):
    """Transpose panel by panel through a per-thread buffer whose rows are `stride` apart."""
    rows, cols = x.shape
    panels = -(-rows // TILE)
    workers = numba.get_num_threads()
    for worker in prange(workers):
        buffer = np.empty((TILE, stride), x.dtype)
        for panel in range(worker, panels, workers):
            i0 = panel * TILE
            height = min(TILE, rows - i0)
            for j0 in range(0, cols, PANEL_COLS):
                width = min(PANEL_COLS, cols - j0)
                for r in range(height):
                    for j in range(width):
                        buffer[r, j] = x[i0 + r, j0 + j]
                # Down the buffer's columns: `height` loads `stride` elements apart.
                for j in range(width):
                    for r in range(height):
                        out[j0 + j, i0 + r] = buffer[r, j]


@numba.njit(parallel=True, nogil=True)
def transpose_tiled_cpu(x, out):
    """Buffer rows 4 KiB apart: a column of the buffer maps to one L1 set."""
    _through_buffer(x, out, POW2_STRIDE)


@numba.njit(parallel=True, nogil=True)
def transpose_padded_cpu(x, out):
    """Buffer rows one line more than 4 KiB apart: a column spreads over 32 L1 sets."""
    _through_buffer(x, out, PADDED_STRIDE)


# The operation.


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal((shape["R"], shape["C"])).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"out": (shape["C"], shape["R"])}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(x.T)}


reference = Reference(name="transpose", inputs=_inputs, outputs=_outputs, compute=_compute)

naive = Variant(
    name="naive",
    cpu=transpose_naive_cpu,
    cuda=_launcher(transpose_naive_kernel),
    cuda_kernels=((transpose_naive_kernel, _SIG),),
    cpu_kernels=((transpose_naive_cpu, _SIG),),
)

tiled = Variant(
    name="tiled",
    cpu=transpose_tiled_cpu,
    cuda=_launcher(transpose_tiled_kernel),
    cuda_kernels=((transpose_tiled_kernel, _SIG),),
    cpu_kernels=((transpose_tiled_cpu, _SIG),),
)

padded = Variant(
    name="padded",
    cpu=transpose_padded_cpu,
    cuda=_launcher(transpose_padded_kernel),
    cuda_kernels=((transpose_padded_kernel, _SIG),),
    cpu_kernels=((transpose_padded_cpu, _SIG),),
)
