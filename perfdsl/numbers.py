"""Numbers with their units, as every message and the report print them: significant figures,
a unit chosen by magnitude, never exponent form.

Apart from the report's formatting (`report.formatting`, which re-exports these) so that the
evaluation's findings, written into evaluation.json, print a time or a bandwidth the way the
report's tables do, without the evaluation importing the report.
"""

from __future__ import annotations

import math

MISSING = "—"
"""What a cell shows for a number that does not exist (the reason is given beside it)."""


def sig(x: float, digits: int = 3) -> str:
    """`x` to `digits` significant figures, never in exponent form; thousands grouped.

    Whole digits are never rounded away (12417.4 prints as 12,417), so a
    number keeps its magnitude; below 1 the decimals grow with the leading zeros.
    """
    if not math.isfinite(x):
        return MISSING
    if x == 0:
        return "0"
    if abs(x) >= 1 and x == round(x):
        # A whole number (a count, a weight of 1, 80 per token) has no significant decimals.
        return f"{round(x):,}"
    exponent = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - exponent)
    shown = f"{x:,.{decimals}f}"
    # Rounding can carry into a new digit (9.996 -> 10.00): recount once.
    if decimals and len(shown.replace(",", "").replace("-", "").replace(".", "").lstrip("0")) > digits:
        shown = f"{x:,.{decimals - 1}f}"
    return shown


def estimate(value: float, low: float, high: float) -> str:
    """`1.15 [1.032, 1.281]`, four significant figures, the way the evaluation's messages quote a
    value with its interval (a point, `low == high`, prints alone)."""
    return f"{value:.4g}" if low == high else f"{value:.4g} [{low:.4g}, {high:.4g}]"


def duration(ns: float | None) -> str:
    """A time given in nanoseconds, in ns, µs, ms or s, three significant figures."""
    if ns is None or not math.isfinite(ns):
        return MISSING
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(ns) >= scale:
            return f"{sig(ns / scale)} {unit}"
    return f"{sig(ns)} ns"


def seconds(s: float | None) -> str:
    """A time given in seconds, as `duration` prints it."""
    return MISSING if s is None else duration(s * 1e9)


def data_size(count: float | None) -> str:
    """A byte count in decimal units (B, kB, MB, GB), three significant figures."""
    if count is None or not math.isfinite(count):
        return MISSING
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(count) >= scale:
            return f"{sig(count / scale)} {unit}"
    return f"{sig(count)} B"


def bandwidth(bytes_per_s: float | None) -> str:
    """A bandwidth in GB/s, three significant figures."""
    if bytes_per_s is None or not math.isfinite(bytes_per_s):
        return MISSING
    return f"{sig(bytes_per_s / 1e9)} GB/s"


def rate(per_s: float | None) -> str:
    """A request rate: `450 rps`, `1,329 rps`."""
    return MISSING if per_s is None else f"{sig(per_s)} rps"


def percentile_name(share: float) -> str:
    """How an SLO names its percentile: `p99` for 0.99, `p95` for 0.95, `p99.9` for 0.999."""
    return f"p{round(share * 100, 6):g}"


def intervals_at(level: float, stated: float) -> str:
    """`95% intervals`, or, where the comparisons share the study's level over their family,
    `98.75% intervals (the study's 95% shared over its comparisons)`: each interval's own level,
    which a heading of the study's level alone made read narrower than it is."""
    said = f"{sig(100.0 * level, 4)}% intervals"
    if abs(level - stated) > 1e-12:
        said += f" (the study's {sig(100.0 * stated, 4)}% shared over its comparisons)"
    return said
