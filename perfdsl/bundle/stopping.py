"""The stopping rule a study registers, and the stop a run records: records of plan.json and results.json.

A sequential comparison's rule (`StoppingRule`) is fixed before the run, in
the plan; the sampler records, per shape, when and why it stopped
(`StopRecord`) beside the samples, which stay whole. The evaluation replays
the rule over the samples and must reach the same record.
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
