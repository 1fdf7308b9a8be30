"""The run's counters step: one Nsight Compute run per operation, written into its shape entries.

`perfdsl run` times every shape but profiles only the operation's largest one
(one Nsight Compute run per operation), only on cuda, and only when the variants
passed their correctness check. Every other shape, and a profiled shape where no
quantity was counted for both arms, says why in `counters_missing`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from perfdsl import targets
from perfdsl.bundle.results import ShapeRecord
from perfdsl.runtime.counters.names import foreign_kernel_names, variant_kernel_names
from perfdsl.runtime.counters.ncu import TIMEOUT_S, CounterRequest, collect
from perfdsl.runtime.static_code.cuda import DEFAULT_CC

if TYPE_CHECKING:
    from perfdsl.bundle.files import BundleWriter
    from perfdsl.bundle.plan import OperationPlan, Plan
    from perfdsl.kernel import Variant

NOT_CUDA = "counters need --target cuda and Nsight Compute (ncu)"
NOT_PASSED = "not profiled: a variant failed its correctness check"
NOT_LARGEST = "counted at the operation's largest shape only (one Nsight Compute run per operation)"


def attach_counters(
    plan: Plan,
    operation: OperationPlan,
    variants: Mapping[str, Variant],
    target: str,
    shapes: Sequence[ShapeRecord],
    passed: bool,
    bundle: BundleWriter,
    progress: Callable[[str], None],
    timeout_s: float = TIMEOUT_S,
) -> list[ShapeRecord]:
    """The operation's shape records with `counters` (the pairs), `counters_detail` and
    `counters_missing` added: counted at the largest shape on cuda, missing elsewhere.

    ncu's log goes into the bundle as `counters/<operation>.ncu.log`.
    """
    # The workload's largest shape: a limit's shape is timed to test the limit, not counted.
    workload = [i for i, s in enumerate(operation.shapes) if not s.limit] or range(len(operation.shapes))
    largest = max(workload, key=lambda i: math.prod(operation.shapes[i].sizes.values()))
    spec = targets.BY_NAME.get(target)
    reason = NOT_CUDA if spec is None or not spec.counts else None if passed else NOT_PASSED
    result = None
    if reason is None:
        shape = operation.shapes[largest]
        progress(f"counting {operation.name} {shape.label} with Nsight Compute")
        request = CounterRequest(
            study_dir=str(Path(plan.study_path).resolve().parent),
            reference=operation.reference,
            arms=tuple((arm, getattr(operation, arm)) for arm in variants),
            variants=tuple(v.name for v in variants.values()),
            kernels=variant_kernel_names(variants.values()),
            # Entry names do not depend on the GPU: the harness's process asks for them
            # without touching one (the profiled driver does).
            foreign_kernels=foreign_kernel_names(variants.values(), plan.dtype, DEFAULT_CC),
            sizes=dict(shape.sizes),
            dtype=plan.dtype,
            measures=plan.measures,
        )
        result = collect(request, timeout_s)
    out = []
    for index, entry in enumerate(shapes):
        if result is None or index != largest:
            out.append(attrs.evolve(entry, counters=None, counters_missing=reason or NOT_LARGEST))
            continue
        log = None
        if result.log:
            log = f"counters/{operation.name}.ncu.log"
            bundle.write_text(log, result.log)
        pairs = result.pairs()
        missing = None
        if not pairs:
            missing = (
                result.missing
                or "; ".join(f"{a.arm}: {a.missing}" for a in result.arms if a.missing)
                or "no quantity was counted for both arms"
            )
        out.append(
            attrs.evolve(
                entry,
                counters=pairs or None,
                counters_missing=missing,
                counters_detail=result.summary(),
                counters_log=log,
            )
        )
    return out
