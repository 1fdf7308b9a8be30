"""The applications' cases, shared by the CPU tests and the simulator check.

Each application is paired with the operation it calls (its reference and a
variant) and a small operating point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from kernels import apps, reduction, rmsnorm, transpose
from perfdsl.kernel import AppContext, Application, Reference, Variant

APP_CASES: dict[str, tuple[Application, Reference, Variant, Mapping[str, int]]] = {
    "decoder_step": (apps.decoder_step, rmsnorm.reference, rmsnorm.fused, {"M": 3, "N": 20}),
    "transpose_pipeline": (
        apps.transpose_pipeline,
        transpose.reference,
        transpose.padded,
        {"R": 5, "C": 40},
    ),
    "reduction_pipeline": (
        apps.reduction_pipeline,
        reduction.reference,
        reduction.single_launch,
        {"N": 100},
    ),
}


def reference_op(reference: Reference, shape: Mapping[str, int]) -> Callable[..., None]:
    """The reference as an op: computes in float64 and writes the outputs in place."""
    input_names = set(reference.inputs(shape, np.random.default_rng(0), np.float64))

    def op(**arrays: Any) -> None:
        answer = reference.compute(**{k: np.asarray(arrays[k], np.float64) for k in input_names})
        for name, value in answer.items():
            arrays[name][...] = value

    return op


def serve(app: Application, target: str, op: Callable[..., None], shape, dtype) -> np.ndarray:
    """One request of `app` with a fixed seed, so every target draws the same data."""
    context = AppContext(target=target, op=op, shape=shape, rng=np.random.default_rng(5), dtype=dtype)
    return app.prepare(context)()
