"""Numbers, units and text as the report prints them, and the Markdown pieces that hold them.

One module so that every figure in the report is formatted one way, and so the
tests can format evaluation.json's numbers exactly as the report does and look
for them in the PDF's text.

Significant figures, not fixed decimals: a ratio is given to four (1.0097
prints as 1.010, so an Amdahl bound under 1 % still shows), times, bytes and
bandwidths to three with a unit chosen by magnitude, errors in scientific
notation. Study text is untrusted Markdown-wise as well as HTML-wise: `text`
escapes what CommonMark would read as markup (emphasis, links, images,
tables), so a study's words always print as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from perfdsl.numbers import MISSING as MISSING
from perfdsl.numbers import bandwidth as bandwidth
from perfdsl.numbers import data_size as data_size
from perfdsl.numbers import duration as duration
from perfdsl.numbers import percentile_name as percentile_name
from perfdsl.numbers import rate as rate
from perfdsl.numbers import seconds as seconds
from perfdsl.numbers import sig as sig

if TYPE_CHECKING:
    from perfdsl.bundle.evaluation.kernels import Comparison
    from perfdsl.bundle.evaluation.load import LoadEvaluation
    from perfdsl.nodes import Study
    from perfdsl.source import Span

TIMES = "\N{MULTIPLICATION SIGN}"
MINUS = "\N{MINUS SIGN}"
RHO = "\N{GREEK SMALL LETTER RHO}"

# Every character CommonMark gives meaning to inside a line (emphasis, code, links,
# images, autolinks and raw HTML, entities, GFM table cells and strikethrough).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|!~&])")


def ratio(x: float | None) -> str:
    """A ratio (change / baseline) or a speedup: four significant figures.

    An interval end below 0.001 (a bootstrap over a handful of pairs can reach
    1e-24) is written in exponent form: two dozen zeros say nothing more.
    """
    if x is not None and 0 < abs(x) < 1e-3:
        return f"{x:.3g}"
    return MISSING if x is None else sig(x, 4)


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval of ratios, `[0.3920, 0.4310]`; `[1.200, ∞)` when it has no upper end.

    evaluation.json writes an infinite end as null, which reads back as NaN; only an
    upper end can be infinite (a ratio known only from below, such as a capacity change).
    """
    if low is None:
        return MISSING
    return f"[{ratio(low)}, ∞)" if high is None or math.isnan(high) else f"[{ratio(low)}, {ratio(high)}]"


def percent(fraction: float | None, digits: int = 3) -> str:
    """A fraction as a percentage: 0.0847 -> `8.47%`."""
    return MISSING if fraction is None else f"{sig(100.0 * fraction, digits)}%"


def capacity_ratio(load: LoadEvaluation) -> str:
    """The capacity ratio as the bracket the goodputs allow: `in the bracket [1.24, 1.79) ...`.

    A bracket, not a confidence interval: its ends are rates the search tried
    (each arm's highest passing and lowest failing rate), set by single runs,
    and no confidence level backs them; it says so where it is printed. Never
    the quotient of the two passing rates alone: that is one point of the
    bracket, picked for no reason. The upper end is open (∞) when the change's
    goodput has no failing rate above it; "unconfirmed" when either goodput
    rests on a single pass or a non-monotone curve. A bracket that holds 1 says
    so: "[0.1152, 9.539)" alone reads as a figure, where the searches' rates
    show no capacity change either way.
    """
    found = load.capacity_range
    if found is None:
        return MISSING
    # An infinite upper end is written as null and reads back as NaN.
    high = found.high
    shown = (
        f"in the bracket [{ratio(found.low)}, {'∞' if not math.isfinite(high) else ratio(high)}) "
        "of the rates the search tried (no confidence level)"
    )
    if found.low <= 1.0 and not high <= 1.0:
        shown += ", which holds 1: no capacity change is shown either way"
    return shown if found.confirmed else f"{shown}, unconfirmed (a goodput passed once, or above a failure)"


def capacity_caveat(load: LoadEvaluation) -> str | None:
    """Why the capacity ratio is only a bound, in a clause; None when it is exact."""
    bound = load.capacity_bound
    if bound not in ("at most", "at least"):
        return None
    arm = "baseline" if bound == "at most" else "change"
    found = next((g for g in load.arms if g.arm == arm), None)
    if found is None:
        return None
    above = [p for p in found.curve if p.rate > found.goodput and not p.passed]
    why = (
        f"at {rate(above[0].rate)} the load generator fell behind its schedule"
        if above and "generator lag" in found.limited_by
        else "no higher rate failed on the SLO"
    )
    judged = rate(found.goodput)
    return f"the {arm}'s goodput is a lower bound: {why}, so the SLO was not judged above {judged}"


def criterion(name: str, share: float) -> str:
    """A load criterion as the study's SLO names it: the evaluation's `p99` and `p99 undecided`
    are the check of the SLO's own percentile, whichever it is."""
    return percentile_name(share) + name[3:] if name.startswith("p99") else name


def sci(x: float | None) -> str:
    """A small quantity such as an error or tolerance: `9.5e-8`, exact zero as `0`."""
    if x is None or math.isnan(x):  # NaN: a null in evaluation.json
        return MISSING
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def count(n: float | None) -> str:
    """A whole count with thousands grouped."""
    return MISSING if n is None else f"{int(n):,}"


def text(value: object) -> str:
    """Study (or bundle) text as literal Markdown: markup escaped, lines joined."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def message(value: object) -> str:
    """A message from the evaluation: literal text, except that `name` spans stay code spans.

    The evaluation writes names in backticks (rustc's style); anything else is
    escaped like study text. Unpaired backticks make the whole message literal.
    """
    pieces = str(value).split("`")
    if len(pieces) % 2 == 0:
        return text(value)
    # Text pieces keep their edge spaces: they sit between code spans.
    return "".join(
        code(piece) if i % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", piece))
        for i, piece in enumerate(pieces)
    )


def sentence(value: object) -> str:
    """An evaluation message as a sentence of its own, after a bold heading: `message`, its first
    letter capitalised (the evaluation writes clauses, "the declared share ...", to be quoted)."""
    shown = message(value)
    return shown[:1].upper() + shown[1:]


def code(value: object) -> str:
    """A code span that holds `value` literally, whatever backticks it contains."""
    body = " ".join(str(value).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def condition(snippet: str) -> str:
    """A condition's source text without its keyword: `objective p99 <= 25 ms` -> `p99 <= 25 ms`."""
    words = snippet.split()
    return " ".join(words[1:] if words and words[0] in ("objective", "correct") else words)


def table(
    caption: str, header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()
) -> str:
    """A captioned GFM table; columns listed in `numeric` are right-aligned (`---:`).

    Cells must already be Markdown (escaped with `text` where they hold study text).
    """
    align = ["---:" if i in numeric else ":---" for i in range(len(header))]
    lines = [f"Table: {caption}", "", _row(header), _row(align)]
    lines += [_row(row) for row in rows]
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def callout(kind: str, lines: Sequence[str]) -> str:
    """A `> [!WARNING]` or `> [!NOTE]` block whose paragraphs are `lines` (Markdown)."""
    body = "\n>\n".join(f"> {line}" for line in lines)
    return f"> [!{kind}]\n{body}"


def bullets(items: Sequence[str]) -> str:
    """A bulleted list of Markdown items."""
    return "\n".join(f"- {item}" for item in items)


def snippet(study: Study, span: Span) -> str:
    """The study's own text at `span`, on one line (a formula or condition as written)."""
    return " ".join(study.source.snippet(span).split())


RANK_CROSS_CHECK = (
    "The rank test of the same blocks (the cross-check) finds no difference at the study's level "
    "where the interval decided a verdict; the interval rests on few pairs, a skewed spread or a "
    "pair the winsorizing kept, and more pairs would settle it: "
)


def rank_disagreement(label: str, c: Comparison) -> str | None:
    """`label` and the rank test's p where it does not bear out a faster or slower verdict; else None.

    The verdict rests on where the interval lies; the rank test of the same pairs is
    the cross-check the specification asks for. Where it finds no difference at the
    study's level under a decided verdict, the interval rests on few pairs, on a
    skewed spread, or on a pair the winsorizing kept: the reader is told, not left to
    find `rank_disagrees` in evaluation.json.
    """
    if not c.rank_disagrees:
        return None
    return f"{label} ({c.verdict}, rank test p = {sig(c.rank_p_value, 2)})"
