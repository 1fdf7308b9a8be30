"""What a run's buffers cost: one estimate for the refusal before the run and for each worker's limit.

A full run of RMSNorm peaked at 3.8 GB with nothing said about it; a larger
study would be killed by the kernel's OOM killer halfway through, leaving no
bundle and no reason. So before anything runs, the largest shape's buffers are
estimated and compared with the memory the machine has available now
(MemAvailable, /proc/meminfo); and each CPU worker caps its address space by
the same estimate of its own operation (perfdsl/runtime/worker.py). One
estimate for both, so a study the refusal lets through is not one its worker's
limit was sized for differently: `check`'s static estimate
(`check.runnable.estimated_bytes`) stays `check`'s, as `check` never imports
a kernel and cannot know the buffers.

What it counts, at each shape, from the reference's own declarations (one
input set drawn, as the sampler draws it, and freed; a fraction of the peak it
guards) and with the rotation the target really uses (`timing.rotation_sets`,
sized from its cache), as `timing.prepare_arms` allocates them:

* the operation's arms (baseline and change): the host input sets they share,
  and each arm's own copies of every set, inputs and outputs;
* each roof the plan really has (`resolve.resolve_roof`: the copy roof the study
  names, and the read and write roofs its module defines), timed beside the
  arms on its own problem's sets, with their host inputs;
* the correctness check's float64 copies (`CORRECTNESS_SETS`).

An adversarial shape (`OperationPlan.adversarial`) is checked for correctness
and never timed, so it counts the correctness term alone. Shapes run one after another and free their
buffers, so the peak is the largest shape's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.plan import OperationPlan, Plan
from perfdsl.kernel import Reference, Shape
from perfdsl.runtime.timing import rotation_sets

PROC_MEMINFO = Path("/proc/meminfo")
CORRECTNESS_SETS = 4
"""An allowance, in buffer sets widened to float64, for the correctness check's copies: the inputs
and the answer it keeps for the next arm, and the arm's output widened to compare."""


class BuffersTooLarge(Exception):
    """The run's buffers do not fit in the memory available (one line for the user)."""


@attrs.frozen
class BufferCost:
    """The estimated peak of a run's buffers, at its largest shape."""

    peak_bytes: int
    shape: str
    rotate: int
    """Buffer sets per arm at that shape (the study's `rotate`, raised to defeat the cache)."""


def available_bytes(meminfo: Path | None = None) -> int | None:
    """MemAvailable in bytes (from PROC_MEMINFO by default), or None where it does not say (not Linux)."""
    try:
        for line in (meminfo or PROC_MEMINFO).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def shape_cost(
    plan: Plan,
    reference: Reference,
    roof: Mapping[str, tuple[Reference, Any]],
    sizes: Shape,
    rotation_bytes: int,
    *,
    timed: bool = True,
) -> tuple[int, int]:
    """The bytes one shape's buffers take (the module docstring says what is counted), and the
    buffer sets per arm; `timed` false counts only the correctness check (an adversarial shape)."""
    dtype = np.dtype(plan.dtype)
    set_bytes, input_bytes, sets = _buffer_sets(reference, sizes, dtype, rotation_bytes, plan.timing.rotate)
    cost = CORRECTNESS_SETS * set_bytes * 8 // dtype.itemsize
    if timed:
        cost += sets * (input_bytes + len(ARMS) * set_bytes)
        for problem, _ in roof.values():
            roof_set, roof_inputs, roof_sets = _buffer_sets(
                problem, sizes, dtype, rotation_bytes, plan.timing.rotate
            )
            cost += roof_sets * (roof_inputs + roof_set)
    return cost, sets


def _buffer_sets(
    problem: Reference, sizes: Shape, dtype: np.dtype, rotation_bytes: int, rotate: int
) -> tuple[int, int, int]:
    """One buffer set's bytes (inputs and outputs), its inputs' bytes, and the sets the sampler
    rotates over at this shape."""
    inputs = problem.inputs(sizes, np.random.default_rng(0), dtype)
    input_bytes = sum(np.asarray(a).nbytes for a in inputs.values())
    set_bytes = input_bytes + sum(math.prod(s) * dtype.itemsize for s in problem.outputs(sizes).values())
    return set_bytes, input_bytes, rotation_sets(set_bytes, rotation_bytes, rotate)


def operation_cost(
    plan: Plan,
    operation: OperationPlan,
    reference: Reference,
    roof: Mapping[str, tuple[Reference, Any]],
    rotation_bytes: int,
) -> BufferCost | None:
    """The operation's largest shape and what its buffers take (None: no shape at all).

    The estimate calls the study's own `inputs` and `outputs`, in the parent, before any
    worker starts. A shape they raise at (a generator that cannot build an adversarial
    shape) is left out of it: that shape cannot allocate what it cannot build, and its
    case, run in a worker, fails and says why, as any case whose reference raises does.
    """
    shapes = [(s.sizes, s.label, True) for s in operation.shapes]
    shapes += [(sizes, "x".join(str(v) for v in sizes.values()), False) for sizes in operation.adversarial]
    worst: BufferCost | None = None
    for sizes, label, timed in shapes:
        try:
            cost, sets = shape_cost(plan, reference, roof, sizes, rotation_bytes, timed=timed)
        except Exception:
            continue
        if worst is None or cost > worst.peak_bytes:
            worst = BufferCost(cost, f"{operation.name} {label}", sets)
    return worst


def buffer_cost(
    plan: Plan,
    references: Mapping[str, Reference],
    roof: Mapping[str, tuple[Reference, Any]],
    rotation_bytes: int,
) -> BufferCost | None:
    """The run's peak: the largest of its operations' (`references` by operation name), or None
    when the plan has no shape."""
    return peak(operation_cost(plan, op, references[op.name], roof, rotation_bytes) for op in plan.operations)


def peak(costs: Iterable[BufferCost | None]) -> BufferCost | None:
    """The largest of these operations' costs: operations run one after another."""
    return max((c for c in costs if c is not None), key=lambda c: c.peak_bytes, default=None)


def check_fits(cost: BufferCost | None, available: int | None, study: str) -> str:
    """One line saying what the buffers cost; BuffersTooLarge when they exceed `available`."""
    if cost is None:
        return "buffers: no shape to time"
    said = f"buffers: about {_gib(cost.peak_bytes)} at {cost.shape} ({cost.rotate} buffer sets per arm)"
    if available is None:
        return f"{said}; the memory available is unknown here"
    if cost.peak_bytes > available:
        raise BuffersTooLarge(
            f"{study}: the buffers of {cost.shape} need about {_gib(cost.peak_bytes)}, more than the "
            f"{_gib(available)} this machine has available: use a smaller shape or a lower `rotate`, "
            "or free memory"
        )
    return f"{said}, of {_gib(available)} available"


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"
