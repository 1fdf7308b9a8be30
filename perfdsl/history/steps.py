"""Where each operation's ratio stepped over a study's runs, and what changed around the code there.

A run's ratio (change / baseline, weighted over shapes) comes with its own
interval; on the log scale its standard error is the interval's half-width
over the normal quantile of its level. The series of one operation, oldest
first, goes through `stats.change_points.find_steps` at a stated family-wise
false-alarm rate for the series. Runs without a ratio (a quick run's few
blocks, an invalid result) are left out of the series and named. Each step is
placed between the last run at the old level and the first at the new one,
with every environment difference recorded between them: the commits, package
versions, driver or machine that coincide with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import attrs

from perfdsl.stats.change_points import find_steps

FALSE_ALARM = 0.05
"""The default family-wise false-alarm rate of each operation's series."""


@attrs.frozen
class StepAt:
    """One step of an operation's ratio, between two runs of the timeline."""

    previous: int
    """Index (0-based, timeline order) of the last run at the old level."""
    run: int
    """Index of the first run at the new level."""
    ratio_before: float
    ratio_after: float
    p_value: float
    changes: tuple[str, ...]
    """Environment differences recorded between the two runs (the runs between included)."""

    @property
    def relative(self) -> float:
        """The step as a relative change of the ratio (+0.05: the ratio is 5 % higher after)."""
        return self.ratio_after / self.ratio_before - 1.0


@attrs.frozen
class OperationSteps:
    """The change-point search over one operation's runs."""

    operation: str
    steps: tuple[StepAt, ...]
    series: tuple[int, ...]
    """Indices of the runs in the series (those with a ratio and its interval)."""
    left_out: tuple[int, ...]
    false_alarm: float
    tau: float
    """The spread between runs (log scale) the search added to each run's own error."""
    simulations: int
    threshold: float
    """The practical threshold of the newest run's evaluation: a smaller step is said to be smaller."""


def operation_steps(
    operation: str,
    points: Sequence[tuple[float, float, float, float] | None],
    changes: Sequence[tuple[str, ...]],
    *,
    threshold: float,
    false_alarm: float = FALSE_ALARM,
) -> OperationSteps:
    """The steps of one operation: `points` are (ratio, low, high, level) per run, None without one.

    `changes[i]` are run i's environment differences from run i - 1.
    """
    series, y, se = [], [], []
    for i, point in enumerate(points):
        if point is None:
            continue
        ratio, low, high, level = point
        if not (0.0 < low < high and ratio > 0.0 and math.isfinite(high) and 0.0 < level < 1.0):
            continue
        z = NormalDist().inv_cdf(0.5 + level / 2.0)
        series.append(i)
        y.append(math.log(ratio))
        se.append((math.log(high) - math.log(low)) / (2.0 * z))
    found = find_steps(y, se, false_alarm=false_alarm)
    steps = []
    for step in found.steps:
        before, after = series[step.index - 1], series[step.index]
        between = tuple(dict.fromkeys(c for i in range(before + 1, after + 1) for c in changes[i]))
        steps.append(
            StepAt(before, after, math.exp(step.before), math.exp(step.after), step.p_value, between)
        )
    left_out = tuple(i for i in range(len(points)) if i not in series)
    return OperationSteps(
        operation, tuple(steps), tuple(series), left_out, false_alarm, found.tau, found.simulations, threshold
    )


def describe(result: OperationSteps, label: Sequence[str], missing: Sequence[str | None] = ()) -> list[str]:
    """One line per step (or one saying there is none), each run named by `label[index]`;
    `missing[index]` says why a run has no ratio, where the caller knows."""
    r = result
    rate = f"{r.false_alarm:.0%} false-alarm rate over the series"
    if len(r.series) < 3:
        count = f"{len(r.series)} run{'' if len(r.series) == 1 else 's'} with a ratio"
        why = [
            f"run {i + 1} {label[i]}: {(missing[i] if i < len(missing) else None) or 'no finite interval'}"
            for i in r.left_out
        ]
        left = f" ({'; '.join(why)})" if why else ""
        return [f"`{r.operation}`: {count}{left}: a step needs 3 to be searched for"]
    if not r.steps:
        return [f"`{r.operation}`: no step over {len(r.series)} runs ({rate})"]
    lines = []
    for step in r.steps:
        coincides = "; ".join(step.changes) if step.changes else "no recorded environment change"
        if abs(math.log1p(step.relative)) < math.log1p(r.threshold):
            coincides += f"; smaller than the practical threshold ({r.threshold:.1%})"
        lines.append(
            f"`{r.operation}`: step {step.relative:+.1%} in the ratio ({step.ratio_before:.4f} -> "
            f"{step.ratio_after:.4f}) between run {step.previous + 1} {label[step.previous]} and run "
            f"{step.run + 1} {label[step.run]} (p = {step.p_value:.4f}, {rate}); coincides with: {coincides}"
        )
    return lines
