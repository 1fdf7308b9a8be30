"""The load probe decided sequentially: is the percentile within the SLO, looking after every window?

A probe asks one question: is the share q of requests over the SLO at most
q0 = 1 - percentile (for p99, 1 %)? The fixed probe answers it once, after a
stated count of requests. This one looks after every `WINDOW` requests and
stops at the first look that decides it, so a rate far from the goodput
(nothing near the SLO, or most requests over it) costs a few windows, not the
whole count. Looking often is paid for, not ignored: the test at each look is
an e-value, a nonnegative supermartingale under its null, and Ville's
inequality bounds the chance that it ever reaches 1/alpha, at any look,
however the run chose to stop, by alpha (Ville 1939; Howard, Ramdas,
McAuliffe and Sekhon 2021). Testing the fixed binomial at every look instead
would let the false passes grow with the number of looks (`tests` plant it).

The e-values are the one-sided beta-binomial mixtures of the likelihood ratio
(Robbins 1970), with the uniform prior on each side of q0. After N requests
with S over the SLO, L(q) = q^S (1 - q)^(N - S), and

    E_pass = mean over q ~ U(0, q0) of L(q) / L(q0)
           = B(S+1, N-S+1) I_q0(S+1, N-S+1) / (q0 L(q0)),
    E_fail = mean over q ~ U(q0, 1) of L(q) / L(q0)
           = B(S+1, N-S+1) (1 - I_q0(S+1, N-S+1)) / ((1 - q0) L(q0)),

with B the beta function and I its regularised incomplete form. For requests
missing independently at any q >= q0 (the percentile over the SLO), E_pass is
a supermartingale (each factor's mean under q is q u / q0 + (1 - u)(1 - q) /
(1 - q0) <= 1 for u < q0), so "pass" when E_pass >= 1/alpha is a false pass
with probability at most alpha; symmetrically "fail" when E_fail >= 1/alpha
is a false failure with probability at most alpha. Reading the decision as a
confidence sequence: pass is the sequence for q lying wholly below q0, fail
wholly above. With no miss at all a pass of p99 needs 644 independent requests at 99 %
(`probe_size.sequential_clean`; the fixed one-shot test's 459: 1.40x is what continuous
monitoring costs).

Dependence. Requests under load are serially correlated (one slow request
delays the next, misses come in runs), and both martingales assume they are
not. So the counts at each look are the effective ones, N = n / tau and
S = misses / tau, with tau the tail's integrated autocorrelation time over
every request so far (`stats.dependence.tail_dependence`; the design effect of a
clustered sample: a run of tau dependent requests carries about one request's
evidence). The windows are the looks, and tau is measured afresh over the
whole prefix at each one, so a run of slow requests seen late shrinks the
evidence of the requests before it too. This is an approximation, not a
theorem: tau is estimated, and a probe in which no request came near the SLO
cannot show how its misses would cluster: a service time that drifts over
hundreds of requests can spend the whole prefix in a quiet stretch, and
continuous monitoring stops on exactly such a stretch (at lag-1 correlation
0.99, 5.5 % of such probes passed, every one at the first look that could,
700 requests, before any request had come near the SLO). So a look passes only
once the requests hold `MIN_STRETCHES_TO_PASS` independent stretches of their
own drift (`stats.dependence.independent_stretches`). Measured by simulation
(tests/test_stats_load_sequential.py, probes capped at 2000 requests), false
passes at a true p99 just above the SLO, against the stated 1 % (the fixed
probe of 1000 requests in brackets): an M/M/1 queue at 91 % utilisation
0.67 % (0.0 %); log-AR(1) latencies at lag-1 correlation 0.9, 0.0 % (0.0 %);
at 0.99, 0.25 % (0.25 %); at 0.995, 0.25 % (0.0 %) (`bundle.stopping.PROBE_FALSE_PASSES`
holds those the report quotes, and the tests measure them again). The one-shot
test looked at after every window passes 9.8 % at 0.99. Power: an M/M/1 whose true p99 is 0.2 of the SLO
passes 77 % (69 %), at 0.5 of it 4.5 % (2 %); a rate far from the goodput is
decided in about a third of the cap (732 requests on average at 30 %
utilisation, 706 in overload, where the fixed probe spends all 2000).

A look depends only on the requests before it, in the order they were
scheduled, so `decide` over a bundle's recorded latencies reaches the run's
own decision bit for bit: the run stops issuing when a look decides (the
record keeps every request served, a prefix of the schedule that holds the
deciding look), and the evaluation looks again over the same prefixes.
"""

from __future__ import annotations

import math
from typing import Literal

import attrs
import numpy as np
from scipy import special

from perfdsl.bundle.stopping import MIN_STRETCHES_TO_PASS, ProbeRule
from perfdsl.stats.dependence import independent_stretches, tail_dependence

WINDOW = 100
"""Requests between looks. The looks cost nothing in error rate (the bound holds at every
request at once); the window only sets how soon after a decision the probe stops."""

Decision = Literal["pass", "fail", "open"]
"""The percentile shown within the SLO; shown over it; neither by the cap."""


@attrs.frozen
class ProbeLook:
    """The evidence after the first `requests` requests of a probe."""

    requests: int
    misses: int
    dependence: float
    """tau over these requests: n / tau of them count."""
    stretches: float
    """The independent stretches these requests hold (`stats.dependence.independent_stretches`):
    fewer than `MIN_STRETCHES_TO_PASS` and the look cannot pass, whatever E_pass says."""
    log_e_pass: float
    """log E_pass: the evidence that the share over the SLO is below 1 - percentile."""
    log_e_fail: float
    decision: Decision


def log_evidence(effective: float, missed: float, q0: float) -> tuple[float, float]:
    """(log E_pass, log E_fail) after `effective` requests of which `missed` were over the SLO.

    Real-valued counts (effective counts are n / tau); scipy's beta functions take them.
    """
    a, b = missed + 1.0, effective - missed + 1.0
    log_null = missed * math.log(q0) + (effective - missed) * math.log1p(-q0)
    log_beta = float(special.betaln(a, b))
    below = float(special.betainc(a, b, q0))
    above = float(special.betaincc(a, b, q0))
    log_pass = log_beta + _log(below) - math.log(q0) - log_null
    log_fail = log_beta + _log(above) - math.log1p(-q0) - log_null
    return log_pass, log_fail


def _log(x: float) -> float:
    return math.log(x) if x > 0.0 else -math.inf


def look(latency: np.ndarray, slo: float, rule: ProbeRule) -> ProbeLook:
    """The look over these latencies (seconds, inf for a failed request), all of them."""
    n = int(latency.size)
    misses = int(np.sum(latency > slo))
    tau = tail_dependence(latency, slo)
    stretches = independent_stretches(latency, slo)
    q0 = 1.0 - rule.percentile
    log_pass, log_fail = log_evidence(n / tau, misses / tau, q0)
    threshold = math.log(1.0 / (1.0 - rule.confidence))
    passes = log_pass >= threshold and stretches >= MIN_STRETCHES_TO_PASS
    decision: Decision = "pass" if passes else "fail" if log_fail >= threshold else "open"
    return ProbeLook(n, misses, tau, stretches, log_pass, log_fail, decision)


def look_points(n: int, rule: ProbeRule) -> list[int]:
    """The prefix lengths a probe of `n` recorded requests is looked at: every window up to
    the cap, and the last request (the cap, or where the probe's records end)."""
    end = min(n, rule.max_requests)
    points = list(range(rule.window, end, rule.window))
    return [*points, end] if end > 0 else []


def decide(latency: np.ndarray, slo: float, rule: ProbeRule) -> ProbeLook:
    """The look the rule stops at: the first decided one, else the last (open)."""
    lat = np.asarray(latency, dtype=float)
    points = look_points(lat.size, rule)
    if not points:
        raise ValueError("a probe without requests has no decision")
    for end in points:
        last = look(lat[:end], slo, rule)
        if last.decision != "open":
            break
    return last


def rule_for(percentile: float, max_requests: int, confidence: float = 0.99) -> ProbeRule:
    """The sequential rule for a probe of at most `max_requests` requests."""
    return ProbeRule(confidence=confidence, percentile=percentile, window=WINDOW, max_requests=max_requests)
