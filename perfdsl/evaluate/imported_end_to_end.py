"""An application timed by imported request times: its time ratio, Amdahl, and the value it supports.

The end-to-end ratio uses the statistics of imported operation timing
(`evaluate.imported.compare_sides`): paired when the file interleaved the arms,
unpaired otherwise, the files' medians with no interval when there is nothing
else, and "not evidence-grade: ..." whenever the method is not the paired one.

**Amdahl is not established.** SPEC §6 makes Amdahl a consistency test of the
measured end-to-end effect against f, the operation's share of critical time
*measured inside the application*. An imported file holds request times only:
nothing in it says how long the operation took within a request, so f cannot
be measured, and the test cannot be run. The study's declared `share` is a
claim (SPEC §6 checks it against the measured f, never the reverse), so it is
not promoted to a measurement: the bound it implies, B = (1 - share) +
share x r with the operation's imported ratio r, is printed as what the claim
predicts, and a `<= amdahl` prediction is "not evidence".

**Value** follows SPEC §6's rules: only from an established end-to-end effect
(evidence-grade, beyond the threshold), and never beyond what Amdahl allows at
the declared share: `stats.value` caps the favourable end at
(1 - share) + share x r_low with the operation's imported ratio, the one cap
rule that a measured application's value uses too. **Capacity** needs a load
test's goodput, which imported request times do not give (check refuses
`load`): not computed.
"""

from __future__ import annotations

from collections.abc import Callable

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.imported import ImportedEndToEnd, ImportedTiming
from perfdsl.bundle.evaluation.value import Value
from perfdsl.bundle.imported import ImportedApplication, ImportedSide
from perfdsl.nodes import Study
from perfdsl.stats.amdahl import amdahl_time_ratio
from perfdsl.stats.value import value

Compare = Callable[[str, ImportedSide, ImportedSide], ImportedTiming]
"""The imported timing comparison (`evaluate.imported.compare_sides`) bound to a bundle and a level."""

AMDAHL_NOT_ESTABLISHED = (
    "not established: f, the operation's share of a request, is measured inside the application, "
    "and an imported file holds request times only"
)
NO_CAPACITY = (
    "not computed: capacity comes from a load test's goodput, and imported request times are no load test"
)


def evaluate_applications(
    compare: Compare,
    applications: tuple[ImportedApplication, ...],
    operations: tuple[ImportedTiming, ...],
    study: Study,
    level: float,
) -> tuple[ImportedEndToEnd, ...]:
    """Every imported application of a wholly imported study's bundle."""
    found = []
    for app in applications:
        timing = compare(app.name, app.baseline, app.change)
        op = next((t for t in operations if t.operation in app.uses), None)
        claimed = (
            amdahl_time_ratio(app.share, op.ratio)
            if app.share is not None and op is not None and op.ratio is not None and op.ratio > 0
            else None
        )
        worth, missing = _value(study, app, timing, op, level)
        found.append(
            ImportedEndToEnd(
                application=app.name,
                uses=app.uses,
                timing=timing,
                amdahl=AMDAHL_NOT_ESTABLISHED,
                declared_share=app.share,
                claimed_bound=claimed,
                value=worth,
                value_missing=missing,
                capacity_missing=NO_CAPACITY,
            )
        )
    return tuple(found)


def _value(
    study: Study, app: ImportedApplication, timing: ImportedTiming, op: ImportedTiming | None, level: float
) -> tuple[Value | None, str | None]:
    """Frequency x saved time per unit, from an established effect only, capped at the declared share."""
    declared = study.value
    if declared is None or declared.frequency is None or declared.scale is None:
        return None, "the study states no frequency and scale"
    if declared.basis is not None and declared.basis.id != app.name:
        return None, f"the value is computed from `{declared.basis.id}`"
    if not timing.evidence_grade or timing.low is None or timing.high is None or timing.ratio is None:
        return None, f"no established end-to-end effect: the timing is {timing.verdict}"
    if not timing.baseline.median_ns:
        return None, "the baseline's request time is unknown"
    point = timing.ratio
    measured = Estimate(point, min(timing.low, point), max(timing.high, point), level)
    # The operation's imported ratio with its interval, for `stats.value`'s cap at the declared share;
    # with no interval (the files' medians only) there is no favourable end to cap at.
    op_ratio = (
        Estimate(op.ratio, min(op.low, op.ratio), max(op.high, op.ratio), level)
        if op is not None and op.ratio is not None and op.low is not None and op.high is not None
        else None
    )
    frequency = declared.frequency.quantity
    unit = f"s {frequency.unit.text}".strip() if frequency.unit else "s"
    return (
        value(
            measured,
            timing.indicated,  # type: ignore[arg-type]
            timing.baseline.median_ns * 1e-9,
            frequency=frequency.value,
            scale=1.0,
            unit=unit,
            production_share=app.share,
            op_ratio=op_ratio,
        ),
        None,
    )


def beyond_declared_share(
    app: ImportedEndToEnd, operations: tuple[ImportedTiming, ...], threshold: float
) -> str | None:
    """A finding when the application got faster than its declared share lets the change make it.

    With f unmeasurable, the declared share is the only Amdahl claim there is; an
    interval wholly below the fastest it allows (the share with the operation's
    most favourable ratio, less the practical threshold, as `stats.amdahl.reconcile`
    draws its band) contradicts the claim: the share is larger than declared, or
    something besides this change sped the application up. None otherwise.
    """
    share, high = app.declared_share, app.timing.high
    op = next((t for t in operations if t.operation in app.uses), None)
    if share is None or high is None or op is None or op.low is None or op.low <= 0:
        return None
    floor = amdahl_time_ratio(share, op.low) / (1.0 + threshold)
    if high >= floor:
        return None
    return (
        f"`{app.application}` is faster than its declared share allows: its time ratio interval ends at "
        f"{high:.4g}, below {floor:.4g}, the fastest a {share:.0%} share with `{op.operation}` at "
        f"{op.low:.4g} can make it; the share is larger than declared, or something besides this change "
        "sped it up"
    )
