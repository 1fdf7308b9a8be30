"""The contract for implementations beyond Numba (`Variant.cuda_bind`), without a GPU.

The simulator run goes through the harness's own code (`prepare_arms`,
`Target.time`, `check_variant`) in a child process, since the simulator must be
chosen before numba.cuda is imported; the rest needs no numba.cuda at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from foreign_fixtures import cai_view, rmsnorm_cai

from perfdsl.kernel import CudaStream, KernelCode, Variant
from perfdsl.runtime.foreign import SimulatedCudaArray, bind_foreign, stream_of

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def simulator_report() -> dict:
    env = {
        **os.environ,
        "NUMBA_ENABLE_CUDASIM": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
    }
    run = subprocess.run(
        [sys.executable, str(TESTS / "foreign_simulator_check.py")],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_bound_once_per_buffer_set_never_per_call(simulator_report: dict) -> None:
    assert simulator_report["sets"] == 3
    assert simulator_report["bound_after_prepare"] == 3
    # Twelve timed calls later, nothing was bound again.
    assert simulator_report["bound_after_timing"] == 3
    assert simulator_report["handles"] == [0]


@pytest.mark.slow
def test_harness_checks_a_foreign_variant_through_the_interface(simulator_report: dict) -> None:
    verdicts = simulator_report["verdicts"]
    assert verdicts["rmsnorm_cai"] == [True] * 4
    # The variant that leaves a row unwritten fails every case, the 1 x 1 ones included.
    assert verdicts["rmsnorm_cai_partial"] == [False] * 4


def test_simulated_array_interface_is_the_same_memory() -> None:
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = cai_view(SimulatedCudaArray(host))
    assert view.shape == (3, 4) and view.dtype == np.float32
    np.testing.assert_array_equal(view, host)
    view[2, 3] = -1.0
    assert host[2, 3] == -1.0


def test_bind_hands_over_arrays_as_they_are_with_the_stream() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 8).astype(np.float32)
    y = np.full((4, 8), np.nan, dtype=np.float32)
    stream = CudaStream(handle=1234)
    arrays = {name: SimulatedCudaArray(a) for name, a in (("x", x), ("w", w), ("y", y))}
    call = bind_foreign(rmsnorm_cai, stream, arrays, False)
    assert np.isnan(y).all()  # binding runs nothing
    call()
    expected = x * w / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert stream.__cuda_stream__() == (0, 1234)


def test_bind_that_returns_no_call_is_an_error_naming_the_variant() -> None:
    variant = Variant(name="launches_at_bind", cuda_bind=lambda stream, **arrays: None)
    with pytest.raises(TypeError, match=r"`launches_at_bind\.cuda_bind`"):
        bind_foreign(variant, CudaStream(0), {}, False)


def test_variant_takes_cuda_or_cuda_bind_not_both() -> None:
    with pytest.raises(ValueError, match="both `cuda` and `cuda_bind`"):
        Variant(name="both", cuda=lambda stream, **a: None, cuda_bind=lambda stream, **a: lambda: None)
    with pytest.raises(ValueError, match="`cuda_code` without `cuda_bind`"):
        Variant(name="code_only", cuda_code=lambda dtype, cc: (KernelCode("k"),))


def test_stream_of_takes_the_raw_handle_or_none() -> None:
    class NumbaLike:
        def __int__(self) -> int:
            return 99

    assert stream_of(NumbaLike()).handle == 99
    assert stream_of(object()).handle == 0
