"""Mechanism evidence per shape: the quantity the change claims to move, and the roof.

Three kinds of numbers, each labelled with where it comes from:

* "modelled": the study's formulas evaluated per shape (results.json `models`);
* "counted": hardware counters, where the run recorded a `counters` entry
  (`{quantity: {"baseline": x, "change": y}}`; absent without Nsight Compute);
* "static": instruction counts read from the compiled code (results.json `static`).

Achieved bandwidth is modelled bytes over the arm's median block time; the
roof is the copy kernel's buffer-set bytes over its median time, measured in
the same interleaved run. Whether the time change is *explained* compares the
time ratio with the mechanism quantity's ratio (`stats.mechanism`, see `explain_change`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

from perfdsl.bundle.results import ShapeRecord
from perfdsl.bundle.static import CpuFunctionSummary, CudaKernelSummary, StaticCode
from perfdsl.evaluate.compare import Comparison
from perfdsl.stats.bootstrap import Estimate
from perfdsl.stats.mechanism import QuantityRatio, reconcile_mechanism

Label = Literal["modelled", "counted"]
ROOF_ARM = "copy"

Explained = Literal[
    "realised", "not realised", "contradicted", "unexplained", "no change", "not evidence", "invalid"
]


@attrs.frozen
class MechanismQuantity:
    """One mechanism quantity for both arms, and where the numbers come from."""

    name: str
    baseline: float
    change: float
    ratio: float | None
    """change / baseline; None when the baseline is zero."""
    label: Label


@attrs.frozen
class Bandwidth:
    """An arm's achieved bandwidth from modelled bytes and its median block time."""

    arm: str
    bytes: float
    median_ns: float
    bytes_per_s: float
    roof_fraction: float | None
    invalid: str | None = None
    """Set when the measurement shows this figure impossible (above the measured roof): it is then
    the byte model that is wrong, and the figure is no bandwidth."""


@attrs.frozen
class Explanation:
    """Whether the time change is what the mechanism quantity's change explains."""

    status: Explained
    quantity: str | None
    quantity_ratio: float | None
    label: str | None
    """Where the quantity comes from: "counted" or "modelled"."""
    time_ratio: float | None
    fraction_realised: Estimate | None
    """(1 - t) / (1 - q): how much of the change the quantity allows the time realised."""
    flagged: bool
    """The time moved against the mechanism, or moved while the quantity did not."""
    message: str


@attrs.frozen
class ShapeMechanism:
    """Mechanism evidence for one shape."""

    quantities: tuple[MechanismQuantity, ...]
    counters_missing: str | None
    """Why this shape has no counted quantities (not cuda, not the counted shape, no ncu)."""
    roof_bytes_per_s: float | None
    roof_missing: str | None
    bandwidth: tuple[Bandwidth, ...]
    explanation: Explanation


def preferred(found: tuple[MechanismQuantity, ...], name: str | None) -> MechanismQuantity | None:
    """The counted value of `name` if there is one, else the modelled one."""
    named = [q for q in found if q.name == name]
    return next((q for q in named if q.label == "counted"), named[0] if named else None)


def quantities(shape: ShapeRecord) -> tuple[MechanismQuantity, ...]:
    """Modelled quantities, then counted ones, from a results.json shape record."""
    out = []
    for label, pairs in (("modelled", shape.models), ("counted", shape.counters)):
        for name, arms in sorted((pairs or {}).items()):
            if not isinstance(arms, Mapping) or not all(
                isinstance(arms.get(a), int | float) for a in ("baseline", "change")
            ):
                continue
            base, change = float(arms["baseline"]), float(arms["change"])
            out.append(MechanismQuantity(name, base, change, change / base if base else None, label))
    return tuple(out)


def bandwidths(
    found: tuple[MechanismQuantity, ...],
    medians_ns: Mapping[str, float],
    set_bytes: Mapping[str, float],
) -> tuple[float | None, str | None, tuple[Bandwidth, ...]]:
    """The roof's bandwidth (or why there is none) and each arm's achieved bandwidth."""
    roof, missing = None, None
    if ROOF_ARM in medians_ns and set_bytes.get(ROOF_ARM):
        roof = float(set_bytes[ROOF_ARM]) / (medians_ns[ROOF_ARM] * 1e-9)
    else:
        missing = "no copy roof was timed with this shape"
    model = next((q for q in found if q.name == "bytes" and q.label == "modelled"), None)
    out = []
    if model is not None:
        for arm, moved in (("baseline", model.baseline), ("change", model.change)):
            if arm in medians_ns:
                rate = moved / (medians_ns[arm] * 1e-9)
                out.append(Bandwidth(arm, moved, medians_ns[arm], rate, rate / roof if roof else None))
    return roof, missing, tuple(out)


def explain_change(
    comparison: Comparison | None,
    invalid: str | None,
    quantity: MechanismQuantity | None,
    mechanism_name: str | None,
) -> Explanation:
    """Set the time ratio's interval against the mechanism quantity's ratio (`stats.mechanism`).

    realised (with the fraction of the quantity's change the time realised),
    not realised (the time is inconclusive or unchanged), contradicted (the
    time moved against the quantity: flagged), unexplained (the time moved, the
    quantity did not: flagged), or no change. An invalid comparison explains
    nothing and says why.
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


@attrs.frozen
class KernelCounts:
    """Counts read from one compiled kernel of an arm (labelled "static")."""

    kernel: str
    kind: Literal["cuda", "cpu"]
    counts: dict[str, int]


_SASS_GROUPS = ("global_loads", "global_stores", "shared_loads", "shared_stores")


def static_counts(static: StaticCode | None, variant: str) -> tuple[KernelCounts, ...]:
    """The static counts of every kernel the variant compiles to, CUDA then CPU."""
    if static is None or variant not in static.variants:
        return ()
    names = static.variants[variant]
    out = [KernelCounts(k, "cuda", _cuda_counts(static.cuda[k])) for k in names.cuda if k in static.cuda]
    out += [KernelCounts(f, "cpu", _cpu_counts(static.cpu[f])) for f in names.cpu if f in static.cpu]
    return tuple(out)


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
