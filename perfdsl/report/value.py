"""What the change is worth: value from the measured end-to-end effect, and the capacity change."""

from __future__ import annotations

from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext


def render_value(ctx: ReportContext, out: Blocks) -> None:
    """Value = frequency x saved time x scale, with the study's numbers filled in."""
    value = ctx.evaluation.get("value")
    if value is None:
        out.add(f"Value: not computed ({fmt.message(ctx.evaluation.get('value_missing'))}).")
        return
    per, fleet = value["per_unit"], value["fleet"]
    level = fmt.percent(per.get("level", ctx.level), 2)
    basis = fmt.code(value["basis"])
    saved = fmt.seconds(per["saved_time_per_unit"])
    saved_ci = per["saved_time_per_unit_ci"]
    freq_unit, x = fmt.text(value["frequency_unit"]), fmt.TIMES
    out.add(
        f"Value = frequency {x} saved time {x} scale, where the saved time is the measured end-to-end "
        f"saving of {basis} per run (baseline time {x} (1 {fmt.MINUS} end-to-end ratio)), never the kernel's."
    )
    scale_unit = fmt.text(value["scale_unit"])
    out.add(
        fmt.bullets(
            [
                f"Per unit of work: {fmt.sig(value['frequency'])} runs {freq_unit} {x} {saved} saved a run = "
                f"**{fmt.seconds(per['value'])} {freq_unit}** ({level} interval of the saving "
                f"[{fmt.seconds(saved_ci[0])}, {fmt.seconds(saved_ci[1])}]).",
                f"At scale: {fmt.sig(value['scale'])} {scale_unit} {x} (1 {fmt.MINUS} end-to-end ratio) = "
                f"**{fmt.sig(fleet['value'])} {scale_unit}** ({level} interval "
                f"[{fmt.sig(fleet['value_ci'][0])}, {fmt.sig(fleet['value_ci'][1])}]).",
            ]
        )
    )
    if fleet["value_ci"][0] <= 0:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**The value is not established.** Its interval reaches zero or below: at this "
                    "confidence the change may save nothing, or cost."
                ],
            )
        )
    capacity = value.get("capacity")
    if capacity:
        load = ctx.load or {}
        bound = load.get("capacity_bound") or "exact"
        fewer = fmt.percent(capacity["fleet_fraction_freed"])
        out.add(
            f"Capacity at the same SLO: goodput ratio {fmt.capacity_ratio(load)}; serving the same "
            f"demand needs {fewer if bound == 'exact' else f'{bound} {fewer}'} fewer machines"
            + (f" ({fmt.capacity_caveat(load)})." if bound != "exact" else ".")
        )
    else:
        reason = (ctx.load or {}).get("capacity_missing") or ctx.evaluation.get("load_missing")
        out.add(f"Capacity: not computed ({fmt.text(reason)}).")
