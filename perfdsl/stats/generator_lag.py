"""Is the load generator late by jitter, or falling behind its schedule?

The issue lag of a request is when the generator actually issued it minus when
the schedule said to. Two different things make it positive:

* **wake-up jitter**: the dispatcher sleeps until each arrival, and the OS wakes
  it a little late, more so when the application and other work share the
  cores. wrk2 states its accuracy as about 1 ms for this reason (research
  notes, measurement.md section 3). The lag is large now and then but does not
  grow: each request is late on its own account and the next starts afresh.
* **falling behind**: the dispatcher cannot issue as fast as the schedule asks
  (its own per-request cost exceeds the gap between arrivals, or it is starved
  of a core for the whole probe). Every request then inherits the lateness of
  the one before, and the lag grows through the probe: a growing backlog, which
  measurement.md section 5.5 lists as a reason a rate fails.

Only the second makes a probe say nothing about the system: the requests did
not arrive when the schedule said, so both the throughput check (completions
cannot outpace issues) and the latency (measured from the schedule) report
the generator. Jitter is recorded but judged as the system's: latency is
measured from the scheduled arrival, so a late issue can only make the system
look slower, never let a rate pass that should fail. The exception is jitter
that alone decides the p99 check (requests within the SLO from their issue,
over it from their schedule): `stats.load.summarize_rate` makes that probe the
generator's too.

The trend is Tukey's resistant line: the slope between the medians of the
first and last thirds of the probe (requests in schedule order). Medians of
thirds ignore the spikes that jitter makes, where a least-squares slope would
follow a single late wake-up near either end. The generator is falling behind
when both hold:

* the growth the slope implies over the probe (slope x its span) exceeds the
  lag budget of 5 % of the SLO (measurement.md section 5.5 gives that budget to
  the issue lag's p99; here it bounds the trend instead of the tail), so the
  backlog matters to the latencies; and
* the slope exceeds 2 %: the generator issued at less than 98 % of the
  scheduled rate, the shortfall the throughput check allows the system. A
  generator that cannot keep up has a slope of rate x its per-issue cost - 1,
  tens of percent; on a shared machine the wake-up delay also drifts as other
  work comes and goes, which over a 14 s probe at 150 rps moved the lag's level
  by 4 ms (slope 0.03 %) with the generator idle between arrivals. That is
  jitter changing its size, not a backlog, and the growth test alone would
  call it one.

The generator runs in the
application's process rather than its own: the requests are calls into the
application's prepared state, so a separate process would have to signal each
one across processes, adding a wake-up of its own on the same cores; what it
would remove (jitter) is what this criterion already tells apart.
"""

from __future__ import annotations

import numpy as np

from perfdsl.bundle.evaluation.load import GeneratorLag, LagVerdict

MAX_ISSUE_LAG_FRACTION = 0.05
"""The lag budget, as a fraction of the SLO: a p99 issue lag above it is jitter worth
reporting, a backlog growth above it (at a slope over `MAX_BACKLOG_SLOPE`) is a
generator that fell behind."""
MAX_BACKLOG_SLOPE = 0.02
"""Seconds of lag gained per second of schedule beyond which the generator issued at
less than 98 % of the scheduled rate: the shortfall the throughput check allows."""


def generator_lag(scheduled: np.ndarray, issued: np.ndarray, slo: float) -> GeneratorLag:
    """Judge one probe's issue lags (seconds, requests in schedule order) against the SLO's budget."""
    sched = np.asarray(scheduled, dtype=float)
    lag = np.asarray(issued, dtype=float) - sched
    if sched.size < 3:
        raise ValueError("need at least three requests to tell a trend from jitter")
    p50, p99 = (float(q) for q in np.quantile(lag, [0.5, 0.99], method="higher"))
    first, _, last = np.array_split(np.arange(sched.size), 3)
    run = float(np.median(sched[last]) - np.median(sched[first]))
    slope = float(np.median(lag[last]) - np.median(lag[first])) / run if run > 0 else 0.0
    growth = slope * float(np.ptp(sched))
    limit = MAX_ISSUE_LAG_FRACTION * slo
    behind = growth > limit and slope > MAX_BACKLOG_SLOPE
    verdict: LagVerdict = "behind" if behind else "jitter" if p99 > limit else "on time"
    return GeneratorLag(p50, p99, slope, growth, limit, verdict)
