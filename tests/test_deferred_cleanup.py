"""The deferred-cleanup kernels: both variants correct, and the change really leaves its clearing behind.

The deferral is observed through the helper's state and the accumulator's
contents, never through time: a helper held at its first step shows the
change returning with the clearing still to do, and the next call waiting
for it.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from kernels_apps_cases import reference_op, serve

from kernels import deferred_cleanup as dc

SHAPES = ({"K": 1, "S": 1}, {"K": 3, "S": 1}, {"K": 31, "S": 3}, {"K": 4097, "S": 1}, {"K": 256, "S": 64})


def _draw(shape: dict[str, int], seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    inputs = dc.reference.inputs(shape, np.random.default_rng(seed), np.float32)
    expected = dc.reference.compute(**{k: v.astype(np.float64) for k, v in inputs.items()})["y"]
    return inputs, expected


def _rel_l2(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.linalg.norm(got - expected) / np.linalg.norm(expected))


@pytest.mark.parametrize("variant", [dc.synchronous, dc.deferred], ids=lambda v: v.name)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s['K']}x{s['S']}")
def test_variant_matches_reference_call_after_call(variant, shape):
    """Three calls in a row on fresh inputs: each starts from a clear accumulator, or its totals are wrong."""
    for seed in range(3):
        inputs, expected = _draw(shape, seed)
        y = np.full(shape["K"], np.nan, np.float32)
        variant.cpu(**inputs, y=y)
        assert np.isfinite(y).all()
        assert _rel_l2(y, expected) <= 1e-6


def test_keys_repeat_so_that_totals_sum_several_values():
    keys = dc.draw_keys(4096, 1 << 20, np.random.default_rng(0))
    assert keys.dtype == np.int32
    assert keys.min() >= 0 and keys.max() < 1 << 20
    assert np.bincount(keys).max() >= 10, "no key repeats: the totals would sum one value each"
    assert np.unique(keys).size > keys.size // 3, "the tail is missing: every key is hot"


class _HeldClear:
    """A clearing function that does not start until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, workspace: np.ndarray) -> None:
        self.release.wait()
        dc.clear(workspace)


def test_change_returns_with_the_clearing_still_to_do():
    shape = {"K": 64, "S": 8}
    inputs, expected = _draw(shape, 0)
    held = _HeldClear()
    cleaner = dc.Cleaner(held)
    workspace = dc.accumulator("deferred", dc.key_space(shape), np.float32)
    y = np.full(shape["K"], np.nan, np.float32)
    dc.deferred_call(cleaner, **inputs, y=y)
    assert _rel_l2(y, expected) <= 1e-6
    assert cleaner.pending
    assert np.count_nonzero(workspace) > 0, "the call cleared its accumulator itself"
    held.release.set()
    cleaner.wait()
    assert not cleaner.pending
    assert np.count_nonzero(workspace) == 0


def test_next_call_waits_for_the_clearing_before_it_touches_the_accumulator():
    shape = {"K": 64, "S": 8}
    first, _ = _draw(shape, 0)
    second, expected = _draw(shape, 1)
    held = _HeldClear()
    cleaner = dc.Cleaner(held)
    dc.deferred_call(cleaner, **first, y=np.empty(shape["K"], np.float32))
    y = np.full(shape["K"], np.nan, np.float32)
    call = threading.Thread(target=dc.deferred_call, args=(cleaner,), kwargs={**second, "y": y}, daemon=True)
    call.start()
    call.join(timeout=0.2)
    assert call.is_alive()
    assert np.isnan(y).all(), "the next call summed into an accumulator still being cleared"
    held.release.set()
    call.join(timeout=30)
    assert not call.is_alive()
    assert _rel_l2(y, expected) <= 1e-6


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_helper_clears_on_the_cpus_its_caller_may_run_on():
    shape = {"K": 8, "S": 2}
    inputs, _ = _draw(shape, 0)
    cleaner = dc.Cleaner(dc.clear)
    allowed = os.sched_getaffinity(0)
    one = {min(allowed)}
    seen = {}

    def pinned_call() -> None:
        os.sched_setaffinity(0, one)
        dc.deferred_call(cleaner, **inputs, y=np.empty(shape["K"], np.float32))
        seen["pinned"] = os.sched_getaffinity(cleaner._thread.native_id)
        dc.deferred_call(cleaner, **inputs, y=np.empty(shape["K"], np.float32))

    worker = threading.Thread(target=pinned_call)
    worker.start()
    worker.join(timeout=30)
    assert seen["pinned"] == one
    dc.deferred_call(cleaner, **inputs, y=np.empty(shape["K"], np.float32))
    assert os.sched_getaffinity(cleaner._thread.native_id) == allowed
    cleaner.wait()


@pytest.mark.parametrize("variant", [dc.synchronous, dc.deferred], ids=lambda v: v.name)
def test_scoring_step_is_close_to_its_float64_run_and_repeats(variant):
    shape = {"K": 256, "S": 16}
    out32 = serve(dc.scoring_step_one_core, "cpu", variant.cpu, shape, np.float32)
    out64 = serve(dc.scoring_step_one_core, "cpu", reference_op(dc.reference, shape), shape, np.float64)
    assert out32.shape == (dc.ROWS, dc.WIDTH)
    assert _rel_l2(out32, out64) <= 1e-5
    from perfdsl.kernel import AppContext

    request = dc.scoring_step_one_core.prepare(
        AppContext("cpu", variant.cpu, shape, np.random.default_rng(5), np.dtype(np.float32))
    )
    assert np.array_equal(request(), request())


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_one_core_request_leaves_the_calling_thread_as_it_found_it():
    shape = {"K": 64, "S": 4}
    before = os.sched_getaffinity(0)
    seen = []

    def op(**arrays):
        seen.append(os.sched_getaffinity(0))
        dc.synchronous.cpu(**arrays)

    serve(dc.scoring_step_one_core, "cpu", op, shape, np.float32)
    assert seen == [{min(before)}]
    assert os.sched_getaffinity(0) == before
