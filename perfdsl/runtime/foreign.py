"""Binding implementations beyond Numba: the arrays and stream a `Variant.cuda_bind` is given.

A foreign implementation (Triton, PyTorch, CuPy, cuda.core) is bound once per
buffer set, outside the timed region, to perfdsl's own device arrays and its
timing stream (`perfdsl.kernel` says the contract). Numba's device arrays already
expose `__cuda_array_interface__`, and a numba-cuda stream its raw handle, so on a
GPU nothing is copied or converted here: the arrays are handed over as they are.

The simulator's arrays are NumPy arrays in disguise and expose no interface; there
the binding is given views that expose one pointing at host memory, so code that
reads the interface itself (and no GPU library) can be checked for correctness
and for how often it is bound, without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from perfdsl.kernel import CudaStream, Variant


@attrs.frozen
class SimulatedCudaArray:
    """A simulator array seen through `__cuda_array_interface__`: same memory, host pointer."""

    array: Any
    """The simulator's array (numba.cuda.simulator's FakeCUDAArray); writes land in it."""

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def dtype(self) -> Any:
        return self.array.dtype

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # The simulator forwards attribute reads to the NumPy array it wraps.
        host = self.array.__array_interface__
        return {
            "shape": host["shape"],
            "typestr": host["typestr"],
            "data": (host["data"][0], False),
            "strides": host["strides"],
            "version": 3,
            "stream": None,
        }


def stream_of(numba_stream: Any) -> CudaStream:
    """perfdsl's stream as the contract hands it over: raw handle plus the numba stream.

    `int()` of a numba-cuda stream is its handle, except that the default
    stream's is its flag (0 too); the simulator's stream has none, so 0.
    """
    try:
        handle = int(numba_stream)
    except TypeError:
        handle = 0
    return CudaStream(handle=handle, numba=numba_stream)


def bind_foreign(
    variant: Variant, stream: CudaStream, arrays: Mapping[str, Any], simulated: bool
) -> Callable[[], None]:
    """`variant.cuda_bind(stream, **arrays)`, checked to return a call."""
    if variant.cuda_bind is None:
        raise ValueError(f"variant `{variant.name}` has no `cuda_bind`")
    given = {k: SimulatedCudaArray(v) for k, v in arrays.items()} if simulated else dict(arrays)
    call = variant.cuda_bind(stream, **given)
    if not callable(call):
        raise TypeError(
            f"`{variant.name}.cuda_bind` returned a `{type(call).__name__}`, not a call: "
            "return the function that launches one run"
        )
    return call
