"""Value and capacity, from the measured end-to-end effect only.

    value = frequency x saved time x scale

The saved time comes from the application's end-to-end measurement, never from
the kernel speedup: multiplying a kernel speedup by the fleet is the error the
spec names first. The inputs are therefore an `EndToEndEffect`, a record whose
fields are named as end-to-end quantities, and `value` refuses anything else,
including a kernel `Comparison`. Capacity is the goodput change at the same SLO.
"""

from __future__ import annotations

import attrs

from perfdsl.stats.load import capacity_change


def _positive(_: object, attribute: attrs.Attribute, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be positive, got {value}")


def _ci_around(instance: EndToEndEffect, _: attrs.Attribute, ci: tuple[float, float]) -> None:
    lo, hi = ci
    if not 0 < lo <= instance.end_to_end_ratio <= hi:
        raise ValueError(f"end_to_end_ratio {instance.end_to_end_ratio} must lie in its positive CI {ci}")


@attrs.frozen(kw_only=True)
class EndToEndEffect:
    """The application's measured end-to-end effect of the change.

    `end_to_end_baseline_time` is the baseline application's time per unit of
    work (a request, a training step) in seconds; `end_to_end_ratio` is the
    application's time ratio change / baseline (below 1 is faster) with its CI.
    The baseline time is taken as known: its own uncertainty is small beside
    the ratio's and is not propagated.
    """

    end_to_end_baseline_time: float = attrs.field(validator=_positive)
    end_to_end_ratio: float = attrs.field(validator=_positive)
    end_to_end_ratio_ci: tuple[float, float] = attrs.field(validator=_ci_around)
    level: float = 0.95


@attrs.frozen
class Value:
    """Value per period, with the CI carried through from the end-to-end ratio."""

    saved_time_per_unit: float
    saved_time_per_unit_ci: tuple[float, float]
    """Seconds saved per unit of work; negative when the change is slower."""
    value: float
    value_ci: tuple[float, float]
    level: float
    unit: str


def value(effect: EndToEndEffect, *, frequency: float, scale: float, unit: str) -> Value:
    """Value = frequency x saved time x scale, from the end-to-end effect.

    `frequency` is units of work per period (requests per day); `scale` turns
    seconds saved into the value unit (for GPU-hours with one GPU per unit,
    1 / 3600). Example: 2e8 requests/day, 40 ms each, end-to-end ratio 0.97
    [0.96, 0.98] saves 1.2 ms a request, 66.7 [44.4, 88.9] GPU-hours per day.

    The saved time is baseline x (1 - ratio), so the CI's ends swap: the
    ratio's upper bound gives the smallest saving.
    """
    if not isinstance(effect, EndToEndEffect):
        raise TypeError(
            f"value needs an EndToEndEffect (the application's measured effect), "
            f"not {type(effect).__name__}: a kernel speedup is not a saving"
        )
    if frequency < 0 or scale < 0:
        raise ValueError("frequency and scale must be non-negative")
    base = effect.end_to_end_baseline_time
    lo, hi = effect.end_to_end_ratio_ci
    saved = base * (1.0 - effect.end_to_end_ratio)
    saved_ci = (base * (1.0 - hi), base * (1.0 - lo))
    k = frequency * scale
    return Value(
        saved_time_per_unit=saved,
        saved_time_per_unit_ci=saved_ci,
        value=k * saved,
        value_ci=(k * saved_ci[0], k * saved_ci[1]),
        level=effect.level,
        unit=unit,
    )


@attrs.frozen
class Capacity:
    """What the goodput change means for a fleet serving fixed demand at the SLO."""

    change: float
    """goodput(change) / goodput(baseline); above 1 serves more at the same SLO."""
    fleet_fraction_freed: float
    """1 - 1 / change: the share of machines no longer needed for the same load
    (negative: more machines needed)."""


def capacity(goodput_baseline: float, goodput_change: float) -> Capacity:
    """Capacity from the goodput change at the same SLO (both in requests per second)."""
    if goodput_change <= 0:
        raise ValueError("the change has no goodput: no load is served at the SLO")
    change = capacity_change(goodput_baseline, goodput_change)
    return Capacity(change=change, fleet_fraction_freed=1.0 - 1.0 / change)
