"""The applications on the CPU: one request with a variant, and in float64 with the reference."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_apps_cases import APP_CASES, reference_op, serve

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", APP_CASES)
def test_request_with_variant_is_close_to_float64_run(name):
    app, reference, variant, shape = APP_CASES[name]
    out32 = serve(app, "cpu", variant.cpu, shape, np.float32)
    out64 = serve(app, "cpu", reference_op(reference, shape), shape, np.float64)
    assert out32.dtype == np.float32
    assert out64.dtype == np.float64
    assert np.isfinite(out32).all()
    assert np.isfinite(out64).all()
    error = np.linalg.norm(out32 - out64) / np.linalg.norm(out64)
    assert error <= 1e-5


@pytest.mark.parametrize("name", APP_CASES)
def test_requests_repeat_and_do_not_accumulate_state(name):
    app, _, variant, shape = APP_CASES[name]
    from perfdsl.kernel import AppContext

    request = app.prepare(AppContext("cpu", variant.cpu, shape, np.random.default_rng(5), np.float32))
    first, second = request(), request()
    assert np.array_equal(first, second)


@pytest.mark.parametrize("name", APP_CASES)
def test_operation_is_called_only_through_the_context(name):
    app, _, variant, shape = APP_CASES[name]
    calls = []

    def counting_op(**arrays):
        calls.append(sorted(arrays))
        variant.cpu(**arrays)

    serve(app, "cpu", counting_op, shape, np.float32)
    assert calls


def test_unknown_target_is_rejected():
    app, _, variant, shape = APP_CASES["transpose_pipeline"]
    with pytest.raises(ValueError, match="unknown target"):
        serve(app, "tpu", variant.cpu, shape, np.float32)


def test_one_core_decoder_step_runs_the_operation_on_the_calling_thread_alone():
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread in all: nothing to restrict")
    from kernels import apps, rmsnorm

    shape = {"M": 3, "N": 20}
    threads = []

    def watching_op(**arrays):
        threads.append(numba.get_num_threads())
        rmsnorm.fused.cpu(**arrays)

    numba.set_num_threads(2)  # what a thread starts with on a 2-core machine
    try:
        one_core = serve(apps.decoder_step_one_core, "cpu", watching_op, shape, np.float32)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert threads == [1, 1, 1]
    both_cores = serve(apps.decoder_step, "cpu", rmsnorm.fused.cpu, shape, np.float32)
    assert np.array_equal(one_core, both_cores)
