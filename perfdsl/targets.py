"""The targets a study runs on, each with what it can do, declared once.

The command-line choices, the check of a study's `target`, the runtime's
adapters and the evaluation's timer resolution all read these values, so a
new target is one entry here and cannot be judged with another target's clock.
Nothing heavy is imported: `perfdsl check` reads this module.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class TargetSpec:
    """One target and its capabilities."""

    name: str
    clock: str
    """What times one call (recorded in the report's method)."""
    resolution_ns: float
    """The finest duration the clock resolves: a sample near it measures the clock."""
    archives: tuple[str, ...]
    """The compiled code it archives: `cuda` (PTX, cubin, SASS) and/or `cpu` (LLVM IR, assembly)."""
    timings_are_evidence: bool
    """False where the timings are recorded but never judged (the simulator's)."""
    counts: bool
    """Whether a run counts the mechanism's quantities (`evidence mechanism { measure ... }`,
    with Nsight Compute): where it does not, a quantity is evidence only as the operation models it."""


CUDA = TargetSpec(
    name="cuda",
    clock="CUDA events",
    # CUDA events resolve about 0.5 us (CUDA programming guide).
    resolution_ns=500.0,
    archives=("cuda", "cpu"),
    timings_are_evidence=True,
    counts=True,
)
CPU = TargetSpec(
    name="cpu",
    clock="time.perf_counter_ns",
    # Linux's monotonic clock, read through perf_counter_ns, counts nanoseconds.
    resolution_ns=1.0,
    archives=("cuda", "cpu"),
    timings_are_evidence=True,
    counts=False,
)
CUDASIM = TargetSpec(
    name="cudasim",
    clock="time.perf_counter_ns",
    resolution_ns=1.0,
    # The simulator cannot compile PTX, so only the CPU functions are archived.
    archives=("cpu",),
    timings_are_evidence=False,
    counts=False,
)

TARGETS = (CUDA, CPU, CUDASIM)
BY_NAME = {target.name: target for target in TARGETS}
NAMES = tuple(BY_NAME)
AUTO = "auto"
"""Not a target: the command-line choice of cuda when a GPU is usable, else cpu."""
CHOICES = (AUTO, *NAMES)
