"""An operation's ratio over a study's runs as inline SVG: no script, no network, any browser.

The y axis is logarithmic, as ratios are (0.5 and 2 are equally far from 1),
with the practical band [1/(1+theta), 1+theta] shaded: a point whose interval
lies inside it is no meaningful change. The axis runs from a labelled tick at
or below every value to one at or above. Each run is a hollow point with its
interval, capped at both ends, coloured by verdict (a run without a ratio says
so at the foot of the plot); a run whose environment changed has a dashed line before
it, and a run where a regression entered a marker above it. Runs are spaced
evenly in time order and numbered as in the table below the figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

from perfdsl.history.timeline import Timeline

WIDTH, HEIGHT = 960, 280
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 24, 40
VERDICT_COLOURS = {
    "faster": "#1a7f37",
    "slower": "#cf222e",
    "no meaningful change": "#57606a",
    "inconclusive": "#bf8700",
}
STEP_COLOUR = "#bc4c00"
_TICK_GAP = 14.0
_CAP = 6.0
"""Half the width of an interval's end caps, in pixels: wider than the marker's radius."""
_TICKS = (0.1, 0.2, 0.25, 0.5, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0)


def ratio_figure(timeline: Timeline, operation: str, threshold: float) -> str:
    """The SVG element for one operation (an empty-state figure when no run has a ratio)."""
    entries = timeline.entries
    points = [(i, e.point(operation)) for i, e in enumerate(entries)]
    values = [
        v
        for _, p in points
        if p is not None and p.combined is not None
        for v in (p.combined.ci_low, p.combined.ci_high, p.combined.ratio)
        if v > 0 and math.isfinite(v)
    ]
    band = (1.0 / (1.0 + threshold), 1.0 + threshold)
    low, high, candidates = _axis(min([*values, band[0]]), max([*values, band[1]]))
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + plot_w * (i + 0.5) / max(len(entries), 1)

    def y(v: float) -> float:
        return _TOP + plot_h * (math.log(high) - math.log(v)) / (math.log(high) - math.log(low))

    title = f"{operation}: time ratio (change / baseline) per run, with its interval"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{_LEFT}" y="{y(band[1]):.1f}" width="{plot_w}" height="{y(band[0]) - y(band[1]):.1f}" '
        'fill="#eaeef2"/>',
    ]
    for tick in _ticks(low, high, candidates, y):
        parts.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            f'stroke="{"#8c959f" if tick == 1.0 else "#d0d7de"}" stroke-width="1"/>'
            f'<text x="{_LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{tick:g}</text>'
        )
    every = max(1, math.ceil(len(entries) / 24))
    for i, entry in enumerate(entries):
        if entry.changes:
            xc = x(i) - plot_w / max(len(entries), 1) / 2
            parts.append(
                f'<line x1="{xc:.1f}" x2="{xc:.1f}" y1="{_TOP}" y2="{HEIGHT - _BOTTOM}" stroke="#8250df" '
                f'stroke-dasharray="4 3"><title>environment changed: {escape("; ".join(entry.changes))}'
                "</title></line>"
            )
        if i % every == 0:
            parts.append(
                f'<text x="{x(i):.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle" font-size="11">'
                f"{i + 1}</text>"
            )
    found = timeline.steps_of(operation)
    for step in found.steps if found is not None else ():
        xs = x(step.run) - plot_w / max(len(entries), 1) / 2
        tip = escape(
            f"step {step.relative:+.1%} (ratio {step.ratio_before:.4f} -> {step.ratio_after:.4f}, "
            f"p = {step.p_value:.4f}); coincides with: {'; '.join(step.changes) or 'no recorded change'}"
        )
        parts.append(
            f'<g><title>{tip}</title><line x1="{xs:.1f}" x2="{xs:.1f}" y1="{_TOP}" y2="{HEIGHT - _BOTTOM}" '
            f'stroke="{STEP_COLOUR}" stroke-width="2"/><text x="{xs + 3:.1f}" y="{_TOP + 10}" font-size="10" '
            f'fill="{STEP_COLOUR}">step {step.relative:+.1%}</text></g>'
        )
    for i, point in points:
        if point is None or point.combined is None:
            # A run without a ratio (a quick run's few blocks) is marked, not silently skipped.
            why = point.missing if point is not None else "not in this run"
            parts.append(
                f'<text x="{x(i):.1f}" y="{HEIGHT - _BOTTOM - 6}" text-anchor="middle" font-size="10" '
                f'fill="#57606a">no ratio<title>run {i + 1}: {escape(why or "no ratio")}</title></text>'
            )
            continue
        c = point.combined
        colour = VERDICT_COLOURS.get(c.verdict, "#57606a")
        label = escape(
            f"run {i + 1} {entries[i].run.label}: {c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}] {c.verdict}"
        )
        # Caps wider than the marker, and a hollow marker, keep an interval narrower
        # than the marker visible: its ends are the caps.
        caps = "".join(
            f'<line x1="{x(i) - _CAP:.1f}" x2="{x(i) + _CAP:.1f}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
            f'stroke="{colour}" stroke-width="2"/>'
            for v in (c.ci_low, c.ci_high)
        )
        parts.append(
            f"<g><title>{label}</title>"
            f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(c.ci_high):.1f}" y2="{y(c.ci_low):.1f}" '
            f'stroke="{colour}" stroke-width="2"/>{caps}'
            f'<circle cx="{x(i):.1f}" cy="{y(c.ratio):.1f}" r="4" fill="none" stroke="{colour}" '
            'stroke-width="1.5"/></g>'
        )
        if point.entered:
            tip, left, right = y(c.ci_high) - 8, x(i) - 6, x(i) + 6
            parts.append(
                f'<path d="M{left:.1f},{tip - 10:.1f} L{right:.1f},{tip - 10:.1f} L{x(i):.1f},{tip:.1f} Z" '
                'fill="#cf222e"><title>a regression entered here</title></path>'
            )
    parts.append(
        f'<text x="{_LEFT + plot_w / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle" font-size="11">'
        "run (oldest first; numbered as in the table)</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


def _axis(smallest: float, largest: float) -> tuple[float, float, tuple[float, ...]]:
    """The y range and its candidate ticks: a labelled tick at or below every value, one at or above.

    Without the bracketing ticks a value outside the labelled ones (a point at
    0.55 under labels 0.75 to 1) cannot be read off the chart. Values beyond
    the fixed ticks get a power of ten.
    """
    below = max((t for t in _TICKS if t <= smallest), default=10.0 ** math.floor(math.log10(smallest)))
    above = min((t for t in _TICKS if t >= largest), default=10.0 ** math.ceil(math.log10(largest)))
    candidates = tuple(sorted({*_TICKS, below, above}))
    return below / 1.03, above * 1.03, candidates


def _ticks(
    low: float, high: float, candidates: tuple[float, ...], y: Callable[[float], float]
) -> list[float]:
    """The ticks in range at least _TICK_GAP pixels apart: the two outermost first, then 1, then by
    closeness to 1, so a wide range keeps the coarse ones and every value lies between labels."""
    inside = [t for t in candidates if low <= t <= high]
    outermost = {inside[0], inside[-1]}
    kept: list[float] = []
    for tick in sorted(inside, key=lambda t: (t not in outermost, t != 1.0, abs(math.log(t)))):
        if all(abs(y(tick) - y(k)) >= _TICK_GAP for k in kept):
            kept.append(tick)
    return kept
