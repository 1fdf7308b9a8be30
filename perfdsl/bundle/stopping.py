"""The stopping rules a run follows, and the stop it records: records of plan.json and results.json.

A sequential comparison's rule (`StoppingRule`) is fixed before the run, in
the plan; the sampler records, per shape, when and why it stopped
(`StopRecord`) beside the samples, which stay whole. The evaluation replays
the rule over the samples and must reach the same record. A load probe's
sequential rule (`ProbeRule`) is results.json's (`bundle.load.LoadRecord`),
and evaluation.json repeats it; the statistics take both rules as parameters,
which is why they live here, beside nothing but the plain walker.
"""

from __future__ import annotations

import math

import attrs

from perfdsl.bundle.plain import Plain, field
from perfdsl.vocabulary import STOPS

FIXED, SEQUENTIAL = STOPS
"""`stop fixed` (a stated count of blocks) or `stop sequential` (until the verdict is decided)."""

DECIDED = "decided"
CAP = "cap"
OPEN = "open"
"""Why a sequential comparison stopped: its interval was decided; it reached the cap
(inconclusive); or its pairs ended before either (an arm failed or the run was cut short)."""

RHO = 1.0
"""The mixture's spread on the standardised effect delta / sigma, the same for every rule: the
boundary is tightest at 8 pairs at 95 % (`perfdsl.stats.sequential.boundary` says why). Kept
with the records so that reading a rule loads no statistics."""

METHOD = "normal-mixture confidence sequence, variance mixed out (Lai 1976), on pair log-ratios"
"""The rule of plans before winsorizing (plan/3 and plan/4 sequential runs), replayed as it ran."""
WINSORIZED_METHOD = (
    "normal-mixture confidence sequence, variance mixed out (Lai 1976), on pair log-ratios "
    "winsorized at their median +- 5 scaled MADs"
)
"""The rule of sequential plans from plan/5 on (`stats.sequential.winsorize`)."""
PLANNED_METHOD = (
    "group-sequential design, O'Brien-Fleming boundaries at the planned looks, repeated confidence "
    "intervals at Student's t quantiles, on pair log-ratios"
)
PROBE_METHOD = (
    "one-sided beta-binomial mixture e-values (uniform prior each side of 1 - percentile) on the "
    "effective counts n / tau, tau the tail's autocorrelation time, looked at every window"
)

MIN_STRETCHES_TO_PASS = 25.0
"""The independent stretches (`stats.dependence.independent_stretches`) a load probe's requests
must hold before it may pass, fixed or sequential; calibrated by simulation (see there). Here,
with the figures the report quotes, so that wording the rule needs no statistics."""

PROBE_FALSE_PASSES = (
    ("a queue near saturation", 2, 300),
    ("latencies that drift over hundreds of requests", 1, 400),
)
"""The sequential probe's false passes (of so many probes) at a true p99 just above the SLO,
measured by seeded simulation (tests/test_stats_load_sequential.py: an M/M/1 queue at 91 %
utilisation over 300 probes; log-AR(1) latencies at lag-1 correlation 0.99 over 400), which the
report quotes beside the stated level. The tests measure them again and fail when they no
longer match, so the report's figures follow the rule that runs and are never edited by hand."""


@attrs.frozen
class StoppingRule(Plain):
    """The sequential rule as registered: level, practical band, and the window of looks."""

    confidence: float
    threshold: float
    """The practical threshold theta: the band is [1/(1+theta), 1+theta]."""
    min_pairs: int
    """The first look: no stop before this many block pairs."""
    max_pairs: int
    """The cap: the comparison stops inconclusive here."""
    rho: float
    """The mixture's spread on the standardised effect (`stats.sequential.boundary.RHO`)."""
    method: str = METHOD
    looks: tuple[int, ...] = field(default=(), absent=(), when=lambda rule: bool(rule.looks))
    """The planned looks' pair counts (`stats.sequential.planned`), the last the cap; empty
    (and not written) for the confidence sequence, which looks after every pair."""
    boundaries: tuple[float, ...] = field(default=(), absent=(), when=lambda rule: bool(rule.looks))
    """Each planned look's two-sided critical value on its z scale, fixed when the plan was made."""
    edges: tuple[float, ...] = field(default=(), absent=(), when=lambda rule: bool(rule.edges))
    """The registered predictions' numeric bounds on this comparison's time ratio (`perfdsl.plan`):
    a comparison whose verdict is decided keeps measuring while its interval straddles one, since
    a prediction still depends on it. Empty (and not written) when none does."""

    @property
    def planned(self) -> bool:
        """Whether this is the group-sequential design (a few planned looks), not the confidence sequence."""
        return bool(self.looks)

    @property
    def winsorized(self) -> bool:
        """Whether each look clips the pairs to their median +- 5 scaled MADs (`WINSORIZED_METHOD`)."""
        return self.method == WINSORIZED_METHOD

    def straddled(self, low: float, high: float) -> tuple[float, ...]:
        """The prediction bounds strictly inside the interval [low, high]: those still undecided."""
        return tuple(edge for edge in self.edges if low < edge < high)


@attrs.frozen
class StopRecord(Plain):
    """When and why one comparison stopped, and the interval it stopped on (ratios, change / baseline)."""

    rule: StoppingRule
    pairs: int
    """The stopping time: block pairs measured when it stopped."""
    reason: str
    """DECIDED, CAP or OPEN."""
    verdict: str
    ratio: float
    low: float
    """0 where the interval is unbounded (too few pairs)."""
    high: float = field(null=math.inf)
    """inf where the interval is unbounded (null in the file)."""
    sd_log: float
    """The pairs' log-ratio standard deviation; nan below two pairs (null in the file)."""
    p_value: float = 1.0
    """The anytime-valid p-value of ratio 1 at the stop: valid at this stopping time, so
    a family-wise adjustment takes it in place of a fixed-n one."""


@attrs.frozen
class ProbeRule(Plain):
    """How each load probe's SLO question was decided: sequentially (results/10 on), stopping at the
    first window whose evidence reaches 1 / (1 - confidence) (`stats.sequential.proportion`).

    None in its place (`LoadRecord.probe_rule`) is the fixed probe: a stated count of
    requests, then one binomial test over their effective number (`stats.load.dependent_p99_check`).
    """

    confidence: float
    """1 - the false-pass rate held under continuous monitoring (and the false-fail rate)."""
    percentile: float
    window: int
    """Requests between looks."""
    max_requests: int
    """The cap: a probe still open here is not passed."""
    method: str = PROBE_METHOD
