"""Check every bundled CUDA variant and application under Numba's CUDA simulator.

Run by `test_kernels_simulator.py` in a subprocess, because NUMBA_ENABLE_CUDASIM
must be set before `numba.cuda` is first imported and the rest of the test
session imports it normally. Usage: `kernels_simulator_check.py kernels|apps`.
Prints one `ok ...` line per check; any failure raises, so the exit status is
non-zero.
"""

from __future__ import annotations

import functools
import os
import sys

import numpy as np


def check_kernels() -> None:
    from kernels_cases import CASES, check_outputs, draw, poisoned_outputs
    from numba import cuda

    stream = cuda.stream()
    for case in CASES.values():
        # single_launch and four_accumulators are one kernel: check it once.
        kernels = {id(v.cuda_kernels): v for v in case.variants}.values()
        for variant in kernels:
            for seed, shape in enumerate(case.simulator_shapes):
                inputs, expected = draw(case, shape, seed)
                device_in = {k: cuda.to_device(v) for k, v in inputs.items()}
                device_out = {k: cuda.to_device(v) for k, v in poisoned_outputs(case, shape).items()}
                variant.cuda(stream, **device_in, **device_out)
                stream.synchronize()
                outputs = {k: v.copy_to_host() for k, v in device_out.items()}
                label = f"{case.reference.name}.{variant.name} {dict(shape)}"
                check_outputs(label, outputs, expected, case.tolerance)
                print("ok", label, flush=True)


def check_apps() -> None:
    from kernels_apps_cases import APP_CASES, serve
    from numba import cuda

    stream = cuda.stream()
    for name, (app, _, variant, shape) in APP_CASES.items():
        on_device = serve(app, "cudasim", functools.partial(variant.cuda, stream), shape, np.float32)
        on_host = serve(app, "cpu", variant.cpu, shape, np.float32)
        error = np.linalg.norm(on_device - on_host) / np.linalg.norm(on_host)
        assert np.isfinite(on_device).all(), name
        assert error <= 1e-5, f"{name}: cudasim differs from cpu by {error:.3g}"
        print("ok", name, flush=True)


def main(group: str) -> None:
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
    {"kernels": check_kernels, "apps": check_apps}[group]()


if __name__ == "__main__":
    main(sys.argv[1])
