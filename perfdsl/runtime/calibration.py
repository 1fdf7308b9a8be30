"""The calibration calls: a few timed calls of every arm, made in the worker that will measure it.

Measured code never runs in the `perfdsl run` process: each worker
(perfdsl/runtime/worker.py) makes the calibration calls of its own operation
(`calibrate_operation`) or of the application (`calibrate_application`) and
returns a `Calibration` for the run's estimate (perfdsl/runtime/estimate.py).
The workers then keep their compiled code for the measurement itself.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfdsl.bundle.plan import Plan
from perfdsl.collector import survivors_frozen
from perfdsl.runtime.estimate import Calibration, step_key

CALIBRATION_CALLS = 3
"""Timed calls per arm and shape (after one untimed call that compiles and warms)."""


def calibrate_arms(target: Any, arms: Sequence[Any], calls: int = CALIBRATION_CALLS) -> dict[str, float]:
    """Seconds per call of each prepared arm: one untimed call (compilation, first touch), then the median."""
    out = {}
    for arm in arms:
        call = arm.calls[0]
        try:
            target.time(call)
            out[arm.name] = sorted(target.time(call).duration_ns for _ in range(calls))[calls // 2] / 1e9
        except Exception:  # a failing variant is the correctness check's to report
            continue
    return out


def calibrate_requests(
    requests: Mapping[str, Callable[[], Any]], calls: int = CALIBRATION_CALLS
) -> dict[str, float]:
    """Seconds per application request of each arm (median of `calls`, after one untimed)."""
    out = {}
    for arm, request in requests.items():
        times = []
        try:
            request()
            for _ in range(calls):
                start = time.perf_counter_ns()
                request()
                times.append(time.perf_counter_ns() - start)
        except Exception:  # a failing application is the model-level check's to report
            continue
        out[arm] = sorted(times)[calls // 2] / 1e9
    return out


def calibrate_operation(plan: Plan, operation: Any, target: Any, resolved: Any, roof: Any) -> Calibration:
    """Time a few calls of every arm of `operation` at every shape (in its worker).

    `resolved` is the operation's `resolve.Resolved`, `roof` maps each roof
    arm (read, write, copy) to its (reference, variant). Inputs are prepared as
    the timing prepares them, with one buffer set, and dropped before measuring
    starts. A variant that raises here is left out of the estimate, not reported: it has not been
    checked yet, and the correctness check reports it with its shape and seed.
    """
    from perfdsl.runtime.timing import prepare_arms

    kernels: dict[str, dict[str, float]] = {}
    variants = list(resolved.variants.values())
    for shape in operation.shapes:
        try:
            arms = prepare_arms(target, resolved.reference, variants, shape.sizes, plan.dtype, 1)
            for problem, kernel in roof.values():
                arms += prepare_arms(target, problem, [kernel], shape.sizes, plan.dtype, 1)
        except Exception:  # the correctness check reports it, at its shape and seed
            continue
        kernels[step_key(operation.name, shape.label)] = calibrate_arms(target, arms)
    return Calibration(kernels, {}, block_seconds())


def calibrate_application(plan: Plan, application: Any, target: Any, resolved: Any) -> Calibration:
    """Time a few requests of each application arm (in the application's worker)."""
    from perfdsl.runtime.end_to_end import build_requests

    requests: dict[str, float] = {}
    if plan.application is not None and target.timings_valid:
        try:
            prepared = build_requests(
                application, target, resolved.variants, plan.application.shape, plan.dtype
            )
        except Exception:  # the model-level check reports it
            prepared = {}
        requests = calibrate_requests(prepared)
    return Calibration({}, requests, block_seconds())


def block_seconds() -> float:
    """What the sampler's garbage collection before each block costs in this process,
    with the objects alive now frozen out of it as the sampler freezes them."""
    with survivors_frozen():
        started = time.perf_counter()
        gc.collect()
        return time.perf_counter() - started
