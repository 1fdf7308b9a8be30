"""What the change is worth: value from an established end-to-end effect, and the capacity change.

A value that was not computed is said the same way (`not_computed`) in an
imported study's report.
"""

from __future__ import annotations

import math

from perfdsl.bundle.evaluation.value import Value, ValueResult
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext


def render_value(ctx: ReportContext, out: Blocks) -> None:
    """Value = frequency x saved time x scale, or why it is not established; the share it rests on."""
    value = ctx.evaluation.value
    if value is None:
        out.add(not_computed(ctx.evaluation.value_missing))
        return
    per, fleet = value.per_unit, value.fleet
    basis = fmt.code(value.basis)
    x = fmt.TIMES
    out.add(
        f"Value = frequency {x} saved time {x} scale, where the saved time is the measured end-to-end "
        f"saving of {basis} per run (baseline time {x} (1 {fmt.MINUS} end-to-end ratio)), never the "
        "kernel's, and only from an established effect that Amdahl's bound does not contradict."
    )
    out.add(f"Share of time the value extrapolates from: {fmt.message(value.share_basis)}.")
    if not fleet.established:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    f"**No value is claimed.** {fmt.sentence(fleet.reason)}: it is not an effect to "
                    "multiply a fleet by."
                ],
            )
        )
    else:
        out.add(fmt.bullets(_figures(value, per, fleet, ctx.interval_level)))
        if fleet.value.high < 0:
            # "may save nothing, or cost" under an interval wholly below zero understated a cost.
            said = (
                "**The change costs.** Its whole interval lies below zero: at this confidence the "
                "change adds time, and the figures above are what it costs."
            )
            out.add(fmt.callout("WARNING", [said]))
        elif fleet.value.low <= 0:
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        "**The value may be zero or negative.** Its interval reaches zero or below: at "
                        "this confidence the change may save nothing, or cost."
                    ],
                )
            )
    capacity = value.capacity
    if capacity is not None:
        low, high = capacity.fleet_fraction_freed
        # NaN: written as null, as the original infinity was.
        unconfirmed = "" if capacity.confirmed else "; unconfirmed: a goodput rests on a single pass"
        ratio = fmt.capacity_ratio(ctx.load) if ctx.load else fmt.MISSING
        out.add(
            f"Capacity at the same SLO: goodput ratio {ratio}; serving the "
            f"same demand needs {machines(low, 1.0 if math.isnan(high) else high)}{unconfirmed}."
        )
    else:
        reason = value.capacity_missing or ctx.evaluation.load_missing
        out.add(f"Capacity: no figure ({fmt.message(reason)}).")


def not_computed(reason: str | None, source: str | None = None) -> str:
    """Why no value was computed (from `source`, the application it would come from, where named)."""
    named = f" from {fmt.code(source)}" if source else ""
    return f"Value: not computed{named} ({fmt.message(reason)})."


def machines(low: float, high: float) -> str:
    """The fleet fraction freed over the capacity bracket, in words whose direction matches its signs.

    A negative fraction is machines added, so a bracket across zero is "from
    A more to B fewer", never "between -A to B fewer". A bracket, not an
    interval: its ends are rates the search tried (`formatting.capacity_ratio`).
    """
    if low >= 0:
        return f"between {fmt.percent(low)} and {fmt.percent(high)} fewer machines"
    if high <= 0:
        return f"between {fmt.percent(-high)} and {fmt.percent(-low)} more machines"
    return (
        f"from {fmt.percent(-low)} more to {fmt.percent(high)} fewer machines "
        "(the bracket includes no change)"
    )


def _figures(value: ValueResult, per: Value, fleet: Value, interval_level: float) -> list[str]:
    """The value per unit and per fleet, each with the interval of the end-to-end effect it scales,
    labelled at the level that interval holds (a sequential rule's share of the family: 98.33 %
    intervals were labelled 95 %)."""
    level = fmt.percent(interval_level, 4)
    saved = per.saved_time
    x = fmt.TIMES
    freq_unit, scale_unit = fmt.text(value.frequency_unit), fmt.text(value.scale_unit)
    capped = " (capped by Amdahl at the declared share)" if fleet.capped else ""
    whole = fleet.capped and saved.low == saved.high
    split = []
    if fleet.explained is not None and fleet.cross_effect is not None:
        split.append(
            f"Of the saving, {fmt.percent(fleet.explained)} is what the operation explains (f {x} "
            f"(1 {fmt.MINUS} r)) and {fmt.percent(fleet.cross_effect)} the change's effect on the rest of "
            "the request ((1 " + fmt.MINUS + f" f) {x} (1 {fmt.MINUS} {fmt.RHO})), which the stated "
            "mechanism does not explain and the declared share does not scale: these figures assume "
            "production's rest responds to the change as the test application's did."
        )
    return [
        f"Per unit of work: {fmt.sig(value.frequency)} runs {freq_unit} {x} {fmt.seconds(saved.value)} "
        f"saved a run = **{fmt.seconds(per.value.value)} {freq_unit}** "
        f"({_interval(level, fmt.seconds(saved.low), fmt.seconds(saved.high), whole, ' of the saving')})"
        f"{capped}.",
        f"At scale: {fmt.sig(value.scale)} {scale_unit} {x} (1 {fmt.MINUS} end-to-end ratio) = "
        f"**{fmt.sig(fleet.value.value)} {scale_unit}** "
        f"({_interval(level, fmt.sig(fleet.value.low), fmt.sig(fleet.value.high), whole)}){capped}.",
        *split,
    ]


def _interval(level: str, low: str, high: str, capped_whole: bool, of: str = "") -> str:
    """`95% interval [low, high]`, or what is left when the cap raised both ends of the interval.

    Where the whole measured interval lay past what Amdahl allows at the declared
    share, the cap alone remains: "[483 µs, 483 µs] (95% interval)" passed it off
    as a measurement.
    """
    if capped_whole:
        return (
            f"the whole {level} interval lay past what Amdahl allows at the declared share: "
            "the figure is that cap, not a measurement"
        )
    return f"{level} interval{of} [{low}, {high}]"
