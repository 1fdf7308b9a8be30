"""The offered-load curve and the goodput, recomputed from each probe's raw records.

Every probe of the run's load search left one CSV of per-request timestamps;
each is summarised again here with `summarize_rate` (latency from the
*scheduled* arrival, p99 binomial check, throughput and generator lag), never
taken from what the run concluded. The goodput of an arm is the highest rate at
which every probe passed; it is "confirmed" when that rate passed more than once
(a repeat, as LoadGen's search confirms). When no rate was confirmed the best
single pass is reported, marked unconfirmed.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from perfdsl.evaluate.inputs import BundleInputs
from perfdsl.evaluate.load import RateResult, summarize_rate
from perfdsl.evaluate.value import Capacity, capacity

ARMS = ("baseline", "change")


@attrs.frozen
class CurvePoint:
    """One probe: the rate, why it ran, and its summary recomputed from raw records."""

    index: int
    rate: float
    phase: str
    result: RateResult | None
    missing: str | None
    """Why the probe has no summary (fewer than two requests)."""

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed


@attrs.frozen
class Goodput:
    """The highest passing rate of one arm."""

    arm: str
    goodput: float
    """Requests per second; 0.0 when no rate passed."""
    confirmed: bool
    curve: tuple[CurvePoint, ...]
    """Probes in rate order (ties in the order they ran)."""


@attrs.frozen
class LoadEvaluation:
    """Both arms' curves and goodputs, and the capacity change at the same SLO."""

    slo_seconds: float
    percentile: float
    arms: tuple[Goodput, ...]
    capacity: Capacity | None
    capacity_missing: str | None


def evaluate_load(inputs: BundleInputs, load: Mapping[str, Any]) -> LoadEvaluation:
    """Recompute every probe and each arm's goodput from results.json's `load` entry."""
    slo = float(load["slo_seconds"])
    probes = list(load.get("probes") or [])
    arms = tuple(
        goodput(arm, [_point(inputs, p, slo) for p in probes if p.get("arm") == arm]) for arm in ARMS
    )
    by_arm = {g.arm: g for g in arms}
    cap, missing = None, None
    if by_arm["baseline"].goodput <= 0:
        missing = "the baseline passed at no rate: capacity change undefined"
    elif by_arm["change"].goodput <= 0:
        missing = "the change passed at no rate: no load is served at the SLO"
    else:
        cap = capacity(by_arm["baseline"].goodput, by_arm["change"].goodput)
    return LoadEvaluation(slo, float(load.get("percentile", 0.99)), arms, cap, missing)


def goodput(arm: str, points: list[CurvePoint]) -> Goodput:
    """The highest rate at which every probe passed; confirmed if it passed twice or more."""
    curve = tuple(sorted(points, key=lambda p: (p.rate, p.index)))
    rates: dict[float, list[bool]] = {}
    for point in curve:
        rates.setdefault(point.rate, []).append(point.passed)
    passing = [r for r, results in rates.items() if all(results)]
    confirmed = [r for r in passing if len(rates[r]) > 1]
    if confirmed:
        return Goodput(arm, max(confirmed), True, curve)
    return Goodput(arm, max(passing, default=0.0), False, curve)


def _point(inputs: BundleInputs, probe: Mapping[str, Any], slo: float) -> CurvePoint:
    columns = _columns(inputs, probe["records"])
    rate = float(probe["rate"])
    index, phase = int(probe.get("index", 0)), str(probe.get("phase", ""))
    if columns["scheduled_ns"].size < 2:
        return CurvePoint(index, rate, phase, None, "fewer than two requests were recorded")
    result = summarize_rate(
        rate,
        columns["scheduled_ns"] / 1e9,
        columns["issued_ns"] / 1e9,
        columns["completed_ns"] / 1e9,
        slo,
        columns["ok"].astype(bool),
    )
    return CurvePoint(index, rate, phase, result, None)


def _columns(inputs: BundleInputs, relpath: str) -> dict[str, np.ndarray]:
    with open(inputs.path / relpath, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    names = ("scheduled_ns", "issued_ns", "started_ns", "completed_ns", "ok")
    return {n: np.array([int(r[n]) for r in rows], dtype=np.int64) for n in names}
