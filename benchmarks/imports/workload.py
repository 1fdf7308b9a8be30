"""The pair every fixture measures: the batch-norm study's NumPy baseline and its Numba change.

The shape (4096 x 1024 float32, 16 MiB per array) is larger than the
last-level cache of the machines this was run on, so the three extra sweeps
of the NumPy baseline are paid in memory traffic, as in the study. Inputs are
made once, outputs written in place: a call times the operation only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    # pyperf's worker processes do not inherit PYTHONPATH: find `kernels` from here.
    sys.path.insert(0, str(REPO))

from kernels import batchnorm  # noqa: E402

SHAPE = {"M": 4096, "N": 1024}
VARIANTS = {"numpy_passes": batchnorm.numpy_passes, "fused": batchnorm.fused}


def bound_call(name: str) -> Callable[[], None]:
    """A no-argument call of variant `name` on fixed inputs, compiled and run once already."""
    inputs = batchnorm.reference.inputs(SHAPE, np.random.default_rng(0), np.float32)
    output = np.empty((SHAPE["M"], SHAPE["N"]), np.float32)
    cpu = VARIANTS[name].cpu
    assert cpu is not None

    def call() -> None:
        cpu(**inputs, y=output)

    call()
    return call
