"""A foreign CUDA implementation written against the contract alone, for tests without a GPU.

It reads its arrays through `__cuda_array_interface__` and nothing else (no
Numba, no GPU library), so it runs wherever the interface points at host
memory: under the simulator, and on the plain host objects below. It counts its
bindings, which is what the contract's "once per buffer set" is about. Host arrays are
handed over through `runtime.foreign.SimulatedCudaArray`, the same view the simulator uses.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from perfdsl.kernel import CudaStream, Variant

EPS = 1e-6
BINDINGS: list[int] = []
"""One entry per `cuda_bind` call (the stream handle it was given)."""


def cai_view(array: Any) -> np.ndarray:
    """A NumPy view of the memory an object's `__cuda_array_interface__` describes (host memory only)."""
    interface = array.__cuda_array_interface__
    dtype = np.dtype(interface["typestr"])
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is None:
        strides = tuple(dtype.itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape)))
    extent = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
    buffer = np.ctypeslib.as_array((ctypes.c_byte * max(extent, 1)).from_address(interface["data"][0]))
    return np.ndarray(shape, dtype, buffer=buffer, strides=strides)


def _rmsnorm_bind(stream: CudaStream, x: Any, w: Any, y: Any) -> Any:
    _version, handle = stream.__cuda_stream__()
    BINDINGS.append(handle)
    xv, wv, yv = cai_view(x), cai_view(w), cai_view(y)

    def call() -> None:
        mean_square = np.mean(xv.astype(np.float64) ** 2, axis=1, keepdims=True)
        yv[...] = xv * wv / np.sqrt(mean_square + EPS)

    return call


rmsnorm_cai = Variant(name="rmsnorm_cai", cuda_bind=_rmsnorm_bind)
"""RMSNorm through the array interface: kernels.rmsnorm's reference checks it."""


def _rmsnorm_bind_skips_last_row(stream: CudaStream, x: Any, w: Any, y: Any) -> Any:
    xv, wv, yv = cai_view(x), cai_view(w), cai_view(y)

    def call() -> None:
        mean_square = np.mean(xv[:-1].astype(np.float64) ** 2, axis=1, keepdims=True)
        yv[:-1] = xv[:-1] * wv / np.sqrt(mean_square + EPS)

    return call


rmsnorm_cai_partial = Variant(name="rmsnorm_cai_partial", cuda_bind=_rmsnorm_bind_skips_last_row)
"""Leaves the last row unwritten: the poison check must catch it through the interface too."""
