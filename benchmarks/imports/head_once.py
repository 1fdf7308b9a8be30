"""One process for hyperfine: `python head_once.py VARIANT REQUESTS` serves REQUESTS classifier-head requests.

The application of studies/batchnorm_numpy.perf (`kernels.batchnorm:classifier_head`)
at the imported study's shape, with the operation bound to VARIANT's CPU
implementation. hyperfine times the whole process, so start-up, imports and
Numba's compilation are in every sample, on both arms.
"""

from __future__ import annotations

import sys

import numpy as np
from workload import SHAPE, VARIANTS

from kernels import batchnorm
from perfdsl.kernel import AppContext

if __name__ == "__main__":
    cpu = VARIANTS[sys.argv[1]].cpu
    assert cpu is not None
    context = AppContext(target="cpu", op=cpu, shape=SHAPE, rng=np.random.default_rng(0), dtype=np.float32)
    request = batchnorm.classifier_head.prepare(context)
    for _ in range(int(sys.argv[2])):
        request()
