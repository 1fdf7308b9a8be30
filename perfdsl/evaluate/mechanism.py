"""Mechanism evidence per shape: the quantity the change claims to move, and the roof.

Three kinds of numbers, each labelled with where it comes from:

* "modelled": the study's formulas evaluated per shape (results.json `models`);
* "counted": hardware counters, where the run recorded a `counters` entry
  (`{quantity: {"baseline": x, "change": y}}`; absent without Nsight Compute);
* "static": instruction counts read from the compiled code (results.json `static`).

Achieved bandwidth is modelled bytes over the arm's median block time; each
arm is held to the roof for its own read/write mix and cache regime
(`perfdsl.evaluate.roofs`), from the read, write and copy roofs measured in
the same interleaved run. Whether the time change is *explained* compares the
time ratio with the mechanism quantity's ratio (`stats.mechanism`, see `explain_change`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfdsl.bundle.arms import ARMS, ROOF_ARM
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.kernels import Comparison
from perfdsl.bundle.evaluation.mechanism import (
    Bandwidth,
    Explanation,
    KernelCounts,
    MechanismQuantity,
    MixRoof,
    Roof,
)
from perfdsl.bundle.results import ShapeRecord
from perfdsl.bundle.sampling import CACHE, MIXED
from perfdsl.bundle.static import CpuFunctionSummary, CudaKernelSummary, StaticCode
from perfdsl.evaluate.roofs import measure_roofs, mix_roof
from perfdsl.stats.mechanism import QuantityRatio, reconcile_mechanism


def preferred(found: tuple[MechanismQuantity, ...], name: str | None) -> MechanismQuantity | None:
    """The counted value of `name` if there is one, else the modelled one."""
    named = [q for q in found if q.name == name]
    return next((q for q in named if q.label == "counted"), named[0] if named else None)


def quantities(shape: ShapeRecord) -> tuple[MechanismQuantity, ...]:
    """Modelled quantities, then counted ones, from a results.json shape record."""
    out = []
    for label, pairs in (("modelled", shape.models), ("counted", shape.counters)):
        for name, arms in sorted((pairs or {}).items()):
            if not isinstance(arms, Mapping) or not all(isinstance(arms.get(a), int | float) for a in ARMS):
                continue
            base, change = float(arms["baseline"]), float(arms["change"])
            out.append(MechanismQuantity(name, base, change, change / base if base else None, label))
    return tuple(out)


def bandwidths(
    found: tuple[MechanismQuantity, ...],
    block_medians_ns: Mapping[str, Sequence[float]],
    shape: ShapeRecord,
) -> tuple[float | None, str | None, tuple[Bandwidth, ...], tuple[Roof, ...]]:
    """The copy roof (or why there is none), each arm's bandwidth against its mix's roof, every roof."""
    roofs = measure_roofs(block_medians_ns, shape.set_bytes, shape.regimes)
    copy = roofs.get(ROOF_ARM)
    missing = None if copy else _roof_missing(shape)
    model = next((q for q in found if q.name == "bytes" and q.label == "modelled"), None)
    out = []
    if model is not None:
        for arm, moved in (("baseline", model.baseline), ("change", model.change)):
            if not len(block_medians_ns.get(arm, ())):
                continue
            median = float(np.median(block_medians_ns[arm]))
            if median <= 0:
                continue  # calls the clock did not resolve have no rate (PQ003 says so)
            rate = moved / (median * 1e-9)
            share = shape.read_shares.get(arm)
            source = shape.read_share_sources.get(arm, "")
            if share is None:
                share, source = 0.5, "not recorded by this run: the copy roof's 1:1"
            regime = shape.regimes.get(arm)
            roof = mix_roof(float(share), roofs)
            why = _not_comparable(roof, regime) if roof else missing
            out.append(
                Bandwidth(
                    arm=arm,
                    bytes=moved,
                    median_ns=median,
                    bytes_per_s=rate,
                    roof_fraction=rate / roof.bytes_per_s if roof and why is None else None,
                    read_share=float(share),
                    read_share_source=source,
                    regime=regime,
                    roof=roof,
                    roof_missing=why,
                )
            )
    return (copy.bytes_per_s if copy else None), missing, tuple(out), tuple(roofs.values())


def _roof_missing(shape: ShapeRecord) -> str:
    """Why the copy roof has no time here: its own failure and cause, when it failed."""
    failed = shape.failure_of(ROOF_ARM)
    if failed is not None:
        return f"the copy roof failed: {failed}"
    return "no copy roof was timed with this shape"


def _not_comparable(roof: MixRoof, regime: str | None) -> str | None:
    """Why an arm is not held to this roof: they ran in different cache regimes."""
    if regime is None or roof.regime == regime:
        return None
    if regime == CACHE:
        return "cache-resident at this shape, and no cache-resident roof was measured here"
    if regime == MIXED:
        return (
            "its scratch is reused on every call and fits in the cache: part of its modelled "
            "bytes are cache traffic, so it is not held to a DRAM roof"
        )
    return "ran from DRAM, while the roofs at this shape fit in the cache"


BOUND_FRACTION = 0.5
"""The share of its roof an arm must reach for bytes to explain its time. A kernel at half its
roof or more spends most of its time moving them; far below it something else bounds it (a
dependency chain, launches, compute), and removing bytes need not make it faster: a serial max
chain at 16-21 % of the roof was once credited "realised 22 %" for bytes it did not wait on."""


def explain_change(
    comparison: Comparison | None,
    invalid: str | None,
    quantity: MechanismQuantity | None,
    mechanism_name: str | None,
    bandwidth: tuple[Bandwidth, ...] = (),
) -> Explanation:
    """Set the time ratio's interval against the mechanism quantity's ratio (`stats.mechanism`).

    realised (with the fraction of the quantity's change the time realised),
    not bound (bytes removed, and the time moved with them, but the baseline
    ran far below the roof of the resource the mechanism names, so bytes do
    not explain its time: `BOUND_FRACTION`), not realised (the time is
    inconclusive or unchanged), contradicted (the time moved against the
    quantity: flagged), unexplained (the time moved, the quantity did not:
    flagged), or no change. An invalid comparison explains nothing and says why.
    """
    if comparison is None:
        return Explanation(
            "not evidence", mechanism_name, None, None, None, None, False, "no timing evidence"
        )
    if invalid:
        return Explanation(
            "invalid", mechanism_name, None, None, comparison.ratio, None, False, f"invalid: {invalid}"
        )
    if quantity is None or quantity.ratio is None:
        return Explanation(
            "not evidence",
            mechanism_name,
            None,
            None,
            comparison.ratio,
            None,
            False,
            f"`{mechanism_name}` is neither modelled nor counted"
            if mechanism_name
            else "the study names no mechanism",
        )
    if comparison.interval is None:
        return Explanation(
            "not realised",
            quantity.name,
            quantity.ratio,
            quantity.label,
            comparison.ratio,
            None,
            False,
            f"the time is inconclusive: {comparison.interval_missing}",
        )
    time = Estimate(comparison.ratio, *comparison.interval, comparison.level)
    found = reconcile_mechanism(time, QuantityRatio(quantity.ratio, quantity.label), comparison.theta)
    unbound = _not_bound(quantity, bandwidth) if found.status == "realised" else None
    if unbound is not None:
        return Explanation(
            "not bound",
            quantity.name,
            quantity.ratio,
            quantity.label,
            comparison.ratio,
            None,
            True,
            unbound,
        )
    return Explanation(
        found.status,
        quantity.name,
        quantity.ratio,
        quantity.label,
        comparison.ratio,
        found.fraction_realised,
        found.status in ("contradicted", "unexplained"),
        found.message,
    )


def _not_bound(quantity: MechanismQuantity, bandwidth: tuple[Bandwidth, ...]) -> str | None:
    """Why bytes cannot explain the time, or None: the baseline ran far below its roof."""
    if quantity.name != "bytes":
        return None
    fractions = {b.arm: b.roof_fraction for b in bandwidth if b.roof_fraction is not None and not b.invalid}
    base = fractions.get("baseline")
    if base is None or base >= BOUND_FRACTION:
        return None
    shown = ", ".join(f"{arm} at {share:.0%}" for arm, share in fractions.items())
    return (
        f"the time moved, but bytes do not explain it: {shown} of the roof measured in this run for "
        f"its read/write mix (below {BOUND_FRACTION:.0%}), so the operation is not bound by memory "
        "traffic; something else bounds it (a dependency chain, launches, compute)"
    )


_SASS_GROUPS = ("global_loads", "global_stores", "shared_loads", "shared_stores")


def static_counts(static: StaticCode | None, variant: str) -> tuple[KernelCounts, ...]:
    """The static counts of every kernel the variant compiles to, CUDA then CPU."""
    if static is None or variant not in static.variants:
        return ()
    names = static.variants[variant]
    out = [_cuda_kernel(static.cuda[k]) for k in names.cuda if k in static.cuda]
    out += [_cpu_kernel(static.cpu[f]) for f in names.cpu if f in static.cpu]
    return tuple(out)


def _cuda_kernel(record: CudaKernelSummary) -> KernelCounts:
    """A CUDA kernel's counts; where it compiled to nothing countable, why (a kernel that the
    simulator ran and `compile_ptx` refused: its table row was dashes, the reason unsaid)."""
    counts = _cuda_counts(record)
    if record.ptx is None and record.sass is None and record.ptx_missing:
        return KernelCounts(record.name, "cuda", counts, f"no PTX: {record.ptx_missing}")
    return KernelCounts(record.name, "cuda", counts)


def _cpu_kernel(record: CpuFunctionSummary) -> KernelCounts:
    """A CPU function's counts; none where the archived code is not what the measured calls ran,
    so that no hypothesis rests on code nobody timed."""
    if record.as_measured is False:
        ran = ", ".join(record.measured) or "nothing (the measured calls never reached it)"
        why = f"the archived code is compiled for {record.signature}, but the measured calls compiled {ran}"
        return KernelCounts(record.name, "cpu", {}, why)
    return KernelCounts(record.name, "cpu", _cpu_counts(record))


def _cpu_counts(record: CpuFunctionSummary) -> dict[str, int]:
    counts: dict[str, int | None] = {"instructions": record.instructions}
    counts.update({f"simd_{k}": v for k, v in record.simd_instructions.items()})
    return {k: int(v) for k, v in counts.items() if isinstance(v, int)}


def _cuda_counts(record: CudaKernelSummary) -> dict[str, int]:
    counts: dict[str, int | None] = record.resources()
    # SASS is what runs; PTX stands in where no disassembler was found.
    code = record.sass or record.ptx
    counts["instructions"] = code.instructions if code else None
    for group in _SASS_GROUPS:
        found = code.groups.get(group) if code else None
        counts[group] = found.count if found else None
        counts[f"{group}_bits"] = found.bits if found else None
    return {k: int(v) for k, v in counts.items() if isinstance(v, int)}
