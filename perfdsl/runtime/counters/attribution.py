"""From ncu's launches to each variant's counted evidence: which launch belongs to which call.

ncu's CSV does not say which call a launch belongs to, and two variants may share
a kernel, so the driver launches a marker kernel before each variant inside the
profiled range: launches are attributed to variants by their order. Each
variant's launches are then aggregated, in total and per kernel, and turned into
the study's quantities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from perfdsl.counter_metrics import TIME_METRIC, quantities
from perfdsl.runtime.counters.names import MARKER_KERNEL
from perfdsl.runtime.counters.ncu_csv import CounterError, Launch, RawTable


def aggregate(launches: Sequence[Launch], metrics: Sequence[str]) -> dict[str, float | None]:
    """Each metric over a set of launches: `.sum` counters add up; ratios and percentages
    are averaged weighted by each launch's duration (equal weights if one lacks it).

    A metric no launch reported is None.
    """
    times = [launch.metrics.get(TIME_METRIC) for launch in launches]
    weights = [t if t is not None and t > 0 else 0.0 for t in times]
    if 0.0 in weights:
        weights = [1.0] * len(launches)
    out: dict[str, float | None] = {}
    for metric in metrics:
        pairs = [
            (value, weight)
            for launch, weight in zip(launches, weights, strict=True)
            if (value := launch.metrics.get(metric)) is not None
        ]
        if not pairs:
            out[metric] = None
        elif metric.endswith(".sum"):
            out[metric] = sum(value for value, _ in pairs)
        else:
            out[metric] = sum(value * weight for value, weight in pairs) / sum(w for _, w in pairs)
    return out


@attrs.frozen
class KernelCounters:
    """One kernel's launches within one variant's call."""

    name: str
    launches: int
    metrics: dict[str, float | None]


@attrs.frozen
class ArmCounters:
    """What ncu counted for one variant's call, or why nothing was."""

    arm: str
    """"baseline" or "change"."""
    variant: str
    missing: str | None = None
    tool: str | None = None
    launches: int = 0
    metrics: dict[str, float | None] = attrs.field(factory=dict)
    units: dict[str, str] = attrs.field(factory=dict)
    quantities: dict[str, float | None] = attrs.field(factory=dict)
    kernels: tuple[KernelCounters, ...] = ()

    def summary(self) -> dict[str, Any]:
        """JSON: {"evidence": "counted", "tool", "launches", "metrics", ...}, or
        {"evidence": null, "missing"}."""
        if self.missing is not None:
            return {"evidence": None, "variant": self.variant, "missing": self.missing}
        return {
            "evidence": "counted",
            "variant": self.variant,
            "tool": self.tool,
            "launches": self.launches,
            "quantities": self.quantities,
            "metrics": self.metrics,
            "units": self.units,
            "kernels": {k.name: {"launches": k.launches, "metrics": k.metrics} for k in self.kernels},
        }


def attribute(
    table: RawTable,
    arms: Sequence[tuple[str, str]],
    measures: Sequence[str],
    metrics: Sequence[str],
    tool: str,
    launch_cap: int,
) -> tuple[ArmCounters, ...]:
    """Split the launches at the marker rows, one segment per (arm, variant), in order.

    A launch before the first marker means the order is not what the driver made
    (raises CounterError). An arm without a segment, with an empty one, or whose
    segment may have been cut by ncu's --launch-count, is missing.
    """
    segments: list[list[Launch]] = []
    for launch in table.launches:
        if launch.kernel == MARKER_KERNEL:
            segments.append([])
        elif not segments:
            raise CounterError(f"launch {launch.id} of `{launch.kernel}` came before the first marker")
        else:
            segments[-1].append(launch)
    capped = len(table.launches) >= launch_cap
    out = []
    for index, (arm, variant) in enumerate(arms):
        if index >= len(segments):
            missing = "ncu recorded no launch of this variant"
        elif capped and index == len(segments) - 1:
            missing = f"ncu stopped at --launch-count {launch_cap}: this variant's launches may be partial"
        elif not segments[index]:
            missing = "no launch of this variant matched the kernel filter"
        else:
            out.append(_counted(arm, variant, segments[index], table.units, measures, metrics, tool))
            continue
        out.append(ArmCounters(arm, variant, missing=missing))
    return tuple(out)


def _counted(
    arm: str,
    variant: str,
    launches: Sequence[Launch],
    units: Mapping[str, str],
    measures: Sequence[str],
    metrics: Sequence[str],
    tool: str,
) -> ArmCounters:
    """One variant's launches: totals over all of them, and each kernel's own."""
    kernels = tuple(
        KernelCounters(name, len(own), aggregate(own, metrics))
        for name in sorted({launch.kernel for launch in launches})
        for own in [[launch for launch in launches if launch.kernel == name]]
    )
    totals = aggregate(launches, metrics)
    return ArmCounters(
        arm,
        variant,
        tool=tool,
        launches=len(launches),
        metrics=totals,
        units={m: u for m, u in units.items() if m in metrics},
        quantities=quantities(measures, totals, len(launches)),
        kernels=kernels,
    )
