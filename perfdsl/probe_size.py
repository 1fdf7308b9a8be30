"""How many requests a load probe measures, and how many it needs to pass: `math` alone.

A probe with no request over the SLO is the best a probe can do, so the number
of requests such a probe needs to pass is the floor of every probe's size. Both
tests have a closed form there, which lets `perfdsl check` warn about a probe
too short to pass without importing numpy or scipy, and gives `plan` the cap it
prints and the run the cap it measures to, from one function.

- The fixed probe's one-sided binomial test (`stats.load.p99_check`) passes n
  requests with no miss when (1 - q0)^n <= 1 - confidence, q0 = 1 - percentile:
  459 for p99 at 99 %.
- The sequential probe's e-value with no miss (`stats.sequential.proportion`,
  a = 1, b = N + 1 in its beta-binomial mixture) is
  E_pass = (1 - (1 - q0)^(N+1)) / ((N + 1) q0 (1 - q0)^N), which grows with N:
  644 for p99 at 99 %.

Both count independent requests. Requests under load are serially correlated,
and each test counts n / tau of them (`stats.dependence.tail_dependence`), so a
probe whose cap holds exactly the clean count passes only if tau is 1: a coin
flip on the machine's drift, whatever the SLO's margin. `DEPENDENCE_ROOM` is the
tau a probe's cap should leave room for.

Beside `plan_rules`, not in `perfdsl.stats`: the plan and `check` need it, and a
report built from an evaluated bundle loads no statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from perfdsl.bundle.stopping import FIXED

PROBE_CONFIDENCE = 0.99
"""1 - each probe's false-pass rate (and false-fail rate), held under continuous monitoring."""

DEPENDENCE_ROOM = 2.0
"""The tail's dependence tau a probe's cap should allow a probe with no miss to pass at.

A probe far inside the SLO still has a tail that clusters: the few requests above a
quarter of the SLO come together when the machine is briefly busy, so tau exceeds 1
on probes that never come near a miss. A cap of twice the clean count passes those.
"""


def one_shot_clean(percentile: float, confidence: float = PROBE_CONFIDENCE) -> int:
    """The fewest independent requests, none over the SLO, the fixed probe's test passes (459 for p99)."""
    return _fewest(lambda n: n * math.log1p(-(1.0 - percentile)) <= math.log1p(-confidence))


def sequential_clean(percentile: float, confidence: float = PROBE_CONFIDENCE) -> int:
    """The fewest independent requests, none over the SLO, the sequential probe passes (644 for p99)."""
    q0 = 1.0 - percentile
    threshold = -math.log1p(-confidence)

    def passes(n: int) -> bool:
        log_pass = math.log(-math.expm1((n + 1) * math.log1p(-q0))) - math.log(n + 1)
        return log_pass - math.log(q0) - n * math.log1p(-q0) >= threshold

    return _fewest(passes)


def _fewest(passes: Callable[[int], bool]) -> int:
    """The smallest n >= 1 for which `passes(n)`, which once true stays true: double, then bisect."""
    low, high = 0, 1
    while not passes(high):
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if passes(mid) else (mid, high)
    return high


def probe_cap(requests: int, probe: str, percentile: float) -> int:
    """The most requests a probe of this load test measures.

    The study's `requests` is the fixed probe's count: one test after that many, or
    after the fewest it can pass on, where the count is smaller. Looking after every
    window costs evidence, so the sequential rule needs more requests than the one-shot
    test to pass with the same misses: 644 against 459 with none, and 1.25 to 1.35 times
    as many with one to seven. Its cap is the stated count times the largest of those
    ratios (no miss: 644 / 459), so a probe the fixed test would pass at the stated count
    can still pass before the cap (with the count itself as the cap, a rate the fixed
    probe passed with three misses stayed open, and an open probe is not passed);
    probes far from the goodput stop long before it.
    """
    one_shot = one_shot_clean(percentile)
    if probe == FIXED:
        return max(requests, one_shot)
    clean = sequential_clean(percentile)
    return max(math.ceil(requests * clean / one_shot), clean)


def clean_count(probe: str, percentile: float) -> int:
    """The independent requests with no miss the probe's own test needs to pass."""
    return one_shot_clean(percentile) if probe == FIXED else sequential_clean(percentile)


def requests_for_room(probe: str, percentile: float) -> int:
    """The fewest `requests` whose cap lets a probe with no miss pass at a dependence of
    `DEPENDENCE_ROOM`, rounded up to a hundred for the suggestion a study can copy."""
    return requests_for_cap(math.ceil(DEPENDENCE_ROOM * clean_count(probe, percentile)), probe, percentile)


def requests_for_cap(needed: int, probe: str, percentile: float) -> int:
    """The fewest `requests`, rounded up to a hundred, whose probe cap holds `needed` requests."""
    fewest = _fewest(lambda n: probe_cap(n, probe, percentile) >= needed)
    return 100 * math.ceil(fewest / 100)
