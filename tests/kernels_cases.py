"""The bundled kernels' correctness cases, shared by the CPU tests and the simulator check.

Not a test module: `tests/test_kernels_*.py` and `tests/kernels_simulator_check.py`
import it. Each case names a module's reference, its variants, the shapes to
check on the CPU (awkward sizes included) and the tiny shapes the CUDA
simulator can afford (about 5,000 threads per second).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels import copy, reduction, rmsnorm, transpose
from perfdsl.kernel import Reference, Variant


@dataclass(frozen=True)
class Case:
    reference: Reference
    variants: tuple[Variant, ...]
    cpu_shapes: tuple[Mapping[str, int], ...]
    simulator_shapes: tuple[Mapping[str, int], ...]
    tolerance: float
    """Largest relative L2 error against the float64 reference."""


def _mn(*pairs: tuple[int, int]) -> tuple[dict[str, int], ...]:
    return tuple({"M": m, "N": n} for m, n in pairs)


def _rc(*pairs: tuple[int, int]) -> tuple[dict[str, int], ...]:
    return tuple({"R": r, "C": c} for r, c in pairs)


def _n(*sizes: int) -> tuple[dict[str, int], ...]:
    return tuple({"N": n} for n in sizes)


CASES = {
    "rmsnorm": Case(
        rmsnorm.reference,
        (rmsnorm.unfused, rmsnorm.fused),
        _mn((1, 1), (1, 4097), (3, 31), (33, 33), (4, 1023), (65, 64), (2, 8192)),
        _mn((1, 1), (3, 33), (2, 300)),
        1e-5,
    ),
    "transpose": Case(
        transpose.reference,
        (transpose.naive, transpose.tiled, transpose.padded),
        _rc((1, 1), (1, 4097), (4097, 1), (3, 31), (33, 65), (70, 2100), (1100, 37)),
        _rc((1, 1), (3, 33), (40, 7)),
        0.0,
    ),
    "reduction": Case(
        reduction.reference,
        (
            reduction.multi_launch,
            reduction.single_launch,
            reduction.one_accumulator,
            reduction.four_accumulators,
        ),
        _n(1, 3, 31, 1025, 4097, 1_000_003, 2_100_000),
        _n(33, 2500),
        1e-6,
    ),
    "copy": Case(
        copy.reference,
        (copy.copy,),
        ({"N": 1}, {"N": 4097}, {"M": 3, "N": 31}, {"N": 1_000_003}),
        ({"N": 1}, {"N": 1025}, {"M": 3, "N": 31}),
        0.0,
    ),
}


def draw(case: Case, shape: Mapping[str, int], seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fresh float32 inputs for a seed, and the float64 answer."""
    inputs = case.reference.inputs(shape, np.random.default_rng(seed), np.float32)
    for name, array in inputs.items():
        assert np.all(array != 0), f"input {name} has zeros"
    expected = case.reference.compute(**{k: v.astype(np.float64) for k, v in inputs.items()})
    return inputs, expected


def poisoned_outputs(case: Case, shape: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Output arrays filled with NaN, so an element the kernel skips cannot pass."""
    return {k: np.full(s, np.nan, np.float32) for k, s in case.reference.outputs(shape).items()}


def rel_l2(actual: np.ndarray, expected: np.ndarray) -> float:
    return float(np.linalg.norm(actual - expected) / np.linalg.norm(expected))


def check_outputs(
    label: str, outputs: Mapping[str, np.ndarray], expected: Mapping[str, Any], tolerance: float
) -> None:
    """Every element written and finite, and within `tolerance` of the reference."""
    assert outputs.keys() == expected.keys(), label
    for name, actual in outputs.items():
        assert np.isfinite(actual).all(), f"{label}: {name} has unwritten or non-finite elements"
        error = rel_l2(actual.astype(np.float64), expected[name])
        assert error <= tolerance, f"{label}: {name} relative L2 error {error:.3g} > {tolerance}"
