"""The two kernels `time_to_verdict.py` measures, with a planted effect: numpy and numba only.

Kept apart from the script so that pyperf's worker processes
(`time_to_verdict_pyperf.py`) import nothing but what they time; numba's
on-disk cache spares each of them the compilation.

* `chain`, latency-bound: y[i] = 0.5 * y[i-1] + x[i], a dependency chain whose
  time is the core's add latency per element;
* `copy`, bandwidth-bound: y[:] = x[:], rotating over enough buffer sets that
  together they are larger than a 32 MiB last-level cache, so each call
  streams from memory though one call is short.

The change arm does (1 + effect) times the work: that many more elements.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def _chain(x, y, n):
    acc = x.dtype.type(0.0)
    for i in range(n):
        acc = acc * 0.5 + x[i]
        y[i] = acc


@numba.njit(nogil=True, cache=True)
def _copy(x, y, n):
    for i in range(n):
        y[i] = x[i]


@attrs.frozen
class Kernel:
    key: str
    name: str
    function: Callable[..., None]
    elements: int
    repeats: int
    """Calls per block of the sampler."""
    sets: int
    """Buffer sets each arm rotates over."""


def kernels(scale: float = 1.0) -> tuple[Kernel, ...]:
    """The two kernels, their element counts scaled by `scale` (the copy keeps its sets over the cache)."""
    chain = max(64, round(20_000 * scale))
    copy = max(64, round(131_072 * scale))
    return (
        Kernel("chain", "chain (latency-bound)", _chain, chain, 20, 1),
        # 24 sets of 2 x 1.3 MiB (at scale 1): 64 MiB per arm, twice a 32 MiB cache.
        Kernel("copy", "copy (bandwidth-bound)", _copy, copy, 5, 24),
    )


def calls(kernel: Kernel, effect: float, seed: int) -> dict[str, tuple[Callable[[], None], ...]]:
    """Each arm's call per buffer set; the change does (1 + effect) times the elements."""
    rng = np.random.default_rng(seed)
    size = int(kernel.elements * 1.31) + 1
    made = {}
    for arm, work in (("baseline", kernel.elements), ("change", round(kernel.elements * (1 + effect)))):
        drawn = rng.random(size)
        sets = []
        for _ in range(kernel.sets):
            # Each set its own copy of the drawn input: drawing 100 MiB per run would cost
            # more than measuring it.
            x, y = drawn.copy(), np.empty(size)

            def call(x=x, y=y, work=work) -> None:
                kernel.function(x, y, work)

            sets.append(call)
        made[arm] = tuple(sets)
    return made


def set_bytes(kernel: Kernel) -> int:
    """Bytes of one buffer set: x and y, float64."""
    return 2 * 8 * (int(kernel.elements * 1.31) + 1)


def compile_all() -> None:
    """Compile (or load from the cache) each kernel before anything is timed."""
    for function in (_chain, _copy):
        function(np.zeros(4), np.zeros(4), 4)
