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
from perfdsl.runtime.errors import describe_error
from perfdsl.runtime.estimate import Calibration, step_key

APPLICATION = "application"
"""`Calibration.raised`'s key for the application's requests."""

CALIBRATION_CALLS = 3
"""Timed calls per arm and shape (after one untimed call that compiles and warms)."""


Raised = dict[str, str]
"""Each arm whose call raised, with the error as `describe_error` words it."""


def calibrate_arms(
    target: Any, arms: Sequence[Any], calls: int = CALIBRATION_CALLS
) -> tuple[dict[str, float], Raised]:
    """Seconds per call of each prepared arm: one untimed call (compilation, first touch), then the
    median; and the arms whose call raised. Such an arm is left out of the estimate and its error
    kept: a kernel that raised on its second call and never again was reported correct, its error
    nowhere, when the correctness check was trusted to meet it."""
    out, raised = {}, {}
    for arm in arms:
        call = arm.calls[0]
        try:
            target.time(call)
            out[arm.name] = sorted(target.time(call).duration_ns for _ in range(calls))[calls // 2] / 1e9
        except Exception as error:
            raised[arm.name] = describe_error(error)
    return out, raised


def calibrate_requests(
    requests: Mapping[str, Callable[[], Any]], calls: int = CALIBRATION_CALLS
) -> tuple[dict[str, float], Raised]:
    """Seconds per application request of each arm (median of `calls`, after one untimed), and the
    arms whose request raised."""
    out, raised = {}, {}
    for arm, request in requests.items():
        times = []
        try:
            request()
            for _ in range(calls):
                start = time.perf_counter_ns()
                request()
                times.append(time.perf_counter_ns() - start)
        except Exception as error:
            raised[arm] = describe_error(error)
            continue
        out[arm] = sorted(times)[calls // 2] / 1e9
    return out, raised


def calibrate_operation(plan: Plan, operation: Any, target: Any, resolved: Any, roof: Any) -> Calibration:
    """Time a few calls of every arm of `operation` at every shape (in its worker).

    `resolved` is the operation's `resolve.Resolved`, `roof` maps each roof
    arm (read, write, copy) to its (reference, variant). Inputs are prepared as
    the timing prepares them, with one buffer set, and dropped before measuring
    starts. A variant whose call raises is left out of the estimate, and its error kept in
    `raised` (the run records it as a failing correctness case); inputs that cannot be prepared
    are the correctness check's to report, at its shape and seed.
    """
    from perfdsl.runtime.timing import prepare_arms

    kernels: dict[str, dict[str, float]] = {}
    raised: dict[str, Raised] = {}
    variants = list(resolved.variants.values())
    roles = {variant.name: arm for arm, variant in resolved.variants.items()}
    for shape in operation.shapes:
        try:
            arms = prepare_arms(target, resolved.reference, variants, shape.sizes, plan.dtype, 1)
            for problem, kernel in roof.values():
                arms += prepare_arms(target, problem, [kernel], shape.sizes, plan.dtype, 1)
        except Exception:  # the correctness check reports it, at its shape and seed
            continue
        key = step_key(operation.name, shape.label)
        kernels[key], failed = calibrate_arms(target, arms)
        # Prepared arms are named by their variants; a failure is kept by the role it plays.
        failed = {roles[name]: why for name, why in failed.items() if name in roles}
        if failed:
            raised[key] = failed
    return Calibration(kernels, {}, block_seconds(), raised)


def calibrate_application(plan: Plan, application: Any, target: Any, resolved: Any) -> Calibration:
    """Time a few requests of each application arm (in the application's worker)."""
    from perfdsl.runtime.end_to_end import build_requests

    requests: dict[str, float] = {}
    raised: dict[str, Raised] = {}
    if plan.application is not None and target.timings_valid:
        try:
            prepared = build_requests(
                application, target, resolved.variants, plan.application.shape, plan.dtype
            )
        except Exception:  # the model-level check reports it
            prepared = {}
        requests, failed = calibrate_requests(prepared)
        if failed:
            raised[APPLICATION] = failed
    return Calibration({}, requests, block_seconds(), raised)


def block_seconds() -> float:
    """What the sampler's garbage collection before each block costs in this process,
    with the objects alive now frozen out of it as the sampler freezes them."""
    with survivors_frozen():
        started = time.perf_counter()
        gc.collect()
        return time.perf_counter() - started
