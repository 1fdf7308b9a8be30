"""Scratch buffers kept across calls, so that timing a variant measures its kernels.

A variant that materialises an intermediate (RMSNorm's M x N workspace, a
reduction's per-block partials) needs memory the contract does not pass in.
Allocating it on every call would time `cudaMalloc` or first-touch page faults
instead of the traffic the study is about, so each buffer is allocated once per
(name, shape, dtype) and reused. Calls that share a buffer must not overlap: the
harness runs one call at a time on one stream.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import cuda


def host_scratch(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A host array reused by every call with the same name, shape and dtype."""
    return _host_scratch(name, tuple(shape), np.dtype(dtype))


def device_scratch(name: str, shape: tuple[int, ...], dtype: Any, *, zeroed: bool = False) -> Any:
    """A device array of the current context, reused like `host_scratch`.

    `zeroed` buffers are zero once, when allocated: a kernel that relies on it
    (the reduction's ticket counter) must leave the buffer zero when it finishes.
    """
    return _device_scratch(cuda.current_context(), name, tuple(shape), np.dtype(dtype), zeroed)


@functools.lru_cache(maxsize=16)
def _host_scratch(name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(shape, dtype)


@functools.lru_cache(maxsize=16)
def _device_scratch(context: Any, name: str, shape: tuple[int, ...], dtype: np.dtype, zeroed: bool) -> Any:
    if zeroed:
        return cuda.to_device(np.zeros(shape, dtype))
    return cuda.device_array(shape, dtype)
