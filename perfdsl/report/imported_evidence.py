"""The imported study's report sections for imported counters and imported application times.

Counted mechanism evidence from an imported Nsight Compute profile is printed
under its own label, "counted, imported", with the kernels and launches each
arm's rows matched, the profile's own environment and its hash; where the
counts describe another target than the timing, the reason they were not used
for the predictions is printed beside them. An imported application's section
prints its timing with the same labels as an operation's, then says plainly
that Amdahl was not established and why, what the declared share would
predict (as a claim), and why value and capacity were or were not computed.

Each helper is a function of the imported evaluation's record, as the rest of
`report.imported` is.
"""

from __future__ import annotations

from collections.abc import Callable

from perfdsl.bundle.evaluation.imported import ImportedEvaluation, ImportedTiming
from perfdsl.report import formatting as fmt
from perfdsl.report.value import not_computed

_HASH_CHARS = 16


def counted_blocks(ev: ImportedEvaluation) -> list[str]:
    """One table per operation with imported counters; nothing when there are none."""
    blocks = []
    for c in ev.counted:
        rows = [
            [
                f"`{q.name}`",
                _exact(q.baseline),
                _exact(q.change),
                fmt.ratio(q.ratio) if q.ratio is not None else "not counted",
            ]
            for q in c.quantities
        ]
        blocks.append(
            fmt.table(
                f"`{c.operation}`: {c.label} by {fmt.text(c.tool)} (per profiled call)",
                ["quantity", "baseline", "change", "ratio"],
                rows,
                numeric=(1, 2, 3),
            )
        )
        env = ", ".join(f"{fmt.text(k)} {fmt.text(v)}" for k, v in c.environment) or "none"
        arms = "; ".join(
            f"{name}: {arm.launches} launch{'es' if arm.launches != 1 else ''} of "
            + ", ".join(f"`{fmt.text(k)}`" for k in arm.kernels)
            for name, arm in (("baseline", c.baseline), ("change", c.change))
        )
        blocks.append(
            fmt.bullets(
                [
                    arms,
                    f"`{c.source}` (SHA-256 `{c.sha256[:_HASH_CHARS]}…`, copied to `{c.file}`): "
                    f"environment the profile records: {env}",
                    "Predictions on these quantities are judged on the counts."
                    if c.judged
                    else f"Not used for the predictions: {fmt.message(c.mismatch)}.",
                ]
            )
        )
    return blocks


def decision_lines(ev: ImportedEvaluation, ratio: Callable[[ImportedTiming], str]) -> list[str]:
    """Page 1's sentence per imported application, its time ratio shown by `ratio`."""
    return [
        f"Application `{a.application}`: end-to-end time ratio {ratio(a.timing)}, "
        "from imported request times; Amdahl not established."
        for a in ev.applications
    ]


def end_to_end_blocks(
    ev: ImportedEvaluation, timing_block: Callable[[ImportedTiming], list[str]]
) -> list[str]:
    """Each imported application: its timing (drawn by `timing_block`), Amdahl, and what follows."""
    blocks = []
    for a in ev.applications:
        blocks.extend(timing_block(a.timing))
        share = a.declared_share
        claim = (
            f" The study declares a share of {fmt.percent(share)}: with the operation's imported ratio "
            f"that claim predicts B = {fmt.ratio(a.claimed_bound)}, a claim and not a test."
            if share is not None and a.claimed_bound is not None
            else ""
        )
        blocks.append(f"Amdahl: **{fmt.message(a.amdahl)}**.{claim}")
        blocks.append(f"Capacity: {fmt.message(a.capacity_missing)}.")
    return blocks


def value_blocks(ev: ImportedEvaluation) -> list[str]:
    """The value from an imported application's effect, or why none was computed."""
    lines = []
    for a in ev.applications:
        worth = a.value
        if worth is not None and worth.established and worth.value is not None:
            v = worth.value
            lines.append(
                f"From `{a.application}`: {fmt.sig(v.value)} {fmt.text(worth.unit)} saved "
                f"{fmt.interval(v.low, v.high)}" + (" (capped at the declared share)" if worth.capped else "")
            )
        else:
            why = a.value_missing or (worth.reason if worth else None) or "not established"
            lines.append(not_computed(why, a.application))
    return lines


def _exact(value: float | None) -> str:
    """A count as the profiler gave it: every digit, so a reader can set it beside the model's."""
    if value is None:
        return "not counted"
    return f"{value:,.0f}" if float(value).is_integer() else fmt.sig(value, 4)
