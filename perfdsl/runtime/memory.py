"""What a run's buffers cost, and a refusal up front when the machine cannot hold them.

A full run of RMSNorm peaked at 3.8 GB with nothing said about it; a larger
study would be killed by the kernel's OOM killer halfway through, leaving no
bundle and no reason. So before anything runs, the largest shape's buffers are
estimated with `check`'s own static estimate (every arm's rotated inputs and
outputs, the host copies, the float64 reference), plus the roofs' buffers, with
the rotation the target will really use (sized from its cache), and compared
with the memory the machine has available now (MemAvailable, /proc/meminfo).
Shapes run one after another and free their buffers, so the peak is the largest shape's.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs

from perfdsl.bundle.plan import Plan
from perfdsl.check.runnable import ITEM_BYTES, estimated_bytes
from perfdsl.runtime.timing import MAX_BUFFER_SETS

PROC_MEMINFO = Path("/proc/meminfo")
ROOF_ITEMS = 6
"""Per element and buffer set, the roofs' items: read (x), write (y), copy (x, y), and the
host copies of the read and copy roofs' inputs."""
SET_ITEMS = 2
"""Per element, a typical arm's buffer set: one input and one output (sizes the rotation)."""


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


def buffer_cost(plan: Plan, rotation_bytes: int) -> BufferCost | None:
    """The largest shape's estimated buffers, or None when the plan has no shape."""
    item = ITEM_BYTES.get(plan.dtype, 1)
    worst: BufferCost | None = None
    for operation in plan.operations:
        for shape in operation.shapes:
            elements = math.prod(shape.sizes.values())
            set_bytes = SET_ITEMS * item * elements
            sets = min(max(plan.timing.rotate, rotation_bytes // max(set_bytes, 1) + 1), MAX_BUFFER_SETS)
            sets = max(sets, plan.timing.rotate)
            cost = estimated_bytes(elements, plan.dtype, sets) + ROOF_ITEMS * item * elements * sets
            if worst is None or cost > worst.peak_bytes:
                worst = BufferCost(cost, f"{operation.name} {shape.label}", sets)
    return worst


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
