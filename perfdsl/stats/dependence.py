"""How serially correlated a probe's latencies are: the requests' effective number for a test
on their misses, and whether the probe has sampled enough of its own drift to pass at all.

Both ways of deciding a load probe's SLO question rest on it: the fixed probe's
one binomial test over n / tau requests (`stats.load.dependent_p99_check`) and
the sequential probe's evidence on the effective counts
(`stats.sequential.proportion`), so it lives apart from either.
"""

from __future__ import annotations

import numpy as np

MAX_DEPENDENCE_LAG = 500
"""The longest lag the tail dependence sums autocorrelations to."""

TAIL_LEVEL = 0.25
"""The fraction of the SLO above which a latency counts as near it, for `tail_dependence`."""

STRETCH_RESOLUTION = 1e-4
"""The fraction of the SLO below which `independent_stretches` tells no two latencies apart."""


def tail_dependence(latency: np.ndarray, slo: float) -> float:
    """The integrated autocorrelation time of the tail, tau >= 1: n / tau requests are independent.

    Requests served by a queue are serially correlated: one slow request delays
    the next, so the misses of a p99 come in runs (the 10 misses of a real probe
    came in 3 to 7 runs, lag-1 autocorrelation of the latencies 0.986-0.997), and
    a binomial test over n treated as independent is far too sure. The p99
    misses are too few to measure their own clustering, and there may be none,
    so the dependence is measured lower: on the indicator of a latency above the
    higher of the probe's own 90th percentile and a quarter of the SLO
    (`TAIL_LEVEL`), tau = 1 + 2 sum_k rho_k over lags up to the first
    non-positive autocorrelation (Geyer's initial positive sequence, truncated).
    The floor, because what matters is how the requests that come near the SLO
    cluster: at a low rate every latency is a service time far below it, and the
    slow drift of service times (the machine's clock, its other work) correlates
    the 90th-percentile indicator without any request coming near a miss; there
    the check stays the plain binomial one. A quarter, not a half: a queue near
    saturation whose busy periods happen to stay under half the SLO throughout a
    probe showed no tail at a half and passed as if its requests were
    independent.

    Calibration (tests/test_stats_load_dependence.py, 300 seeded probes of 1000
    requests each), false passes at a true p99 just above the SLO, against the
    stated 1 % (the floor at a half, then at a quarter; the plain binomial check
    in brackets): an M/M/1 queue at 91 % utilisation 26 %, now 0.0 % (91 %);
    log-AR(1) latencies at lag-1 correlation 0.9, 0.0 % and 0.0 % (15 %); a
    log-AR(1) at 0.99, 27 %, then 3.0 % (68 %): a service time that drifts that
    slowly holds about five independent stretches in 1000 requests, and a probe
    in which all of them stay low shows no tail at all, which no measure of the
    tail can see (`independent_stretches` keeps such a probe from passing). The price is power,
    which only a longer probe buys back: an M/M/1 whose true p99 is 0.2 of the
    SLO passes 69 % of its probes (100 % plain), at 0.4 of it 9 % (100 %), so
    under a latency SLO the goodput found is the rate the probes can show, well
    below the rate at which the true p99 reaches the SLO.
    """
    lat = np.asarray(latency, dtype=float)
    finite = lat[np.isfinite(lat)]
    if finite.size < 10:
        return 1.0
    # Relative to the level, so that timestamps' float rounding (latencies equal to the
    # nanosecond, read as seconds) never passes for a tail.
    level = max(float(np.quantile(finite, 0.9)), slo * TAIL_LEVEL) * (1.0 + 1e-9)
    return _autocorrelation_time((np.where(np.isfinite(lat), lat, np.inf) > level).astype(float))


def independent_stretches(latency: np.ndarray, slo: float) -> float:
    """How many independent stretches the probe's latencies hold: n over their own
    integrated autocorrelation time, of their ranks (so that a failed request's infinite
    latency is only the slowest, and no transform of the scale changes it) after rounding
    them to `STRETCH_RESOLUTION` of the SLO (latencies closer than that are one level for the
    question whether the drift reaches the SLO, and timestamps' float rounding is no drift).

    `tail_dependence` measures how the requests near the SLO cluster, and a probe
    can only measure that once it has seen such requests. A service time that drifts
    over hundreds of requests (log-AR(1) latencies at lag-1 correlation 0.99: five
    independent stretches in 1000 requests) can spend the first 700 in a quiet
    stretch in which nothing comes near the SLO, and such a probe looks exactly like
    one far inside it: both probes passed at their first possible look, and at a
    true p99 just above the SLO the sequential probe passed 5.5-5.9 % of them, at
    0.995 19.8 %, against its stated 1 %. The whole series shows the drift, though:
    its autocorrelation time is the length of a stretch. So a probe may pass only
    once its requests hold `bundle.stopping.MIN_STRETCHES_TO_PASS` stretches: a
    count set by simulation, not a theorem, and the level it meets is measured.

    Calibration (1000 seeded probes of at most 2000 requests, looked at every 100, at a
    true p99 1.05 % over the SLO; the tests measure 300-400 of them again), false passes
    of the sequential probe asking 20, 25 and 30 stretches, with none asked in brackets:
    lag-1 0.98, 0.2 % at each (0.6 %); 0.99, 1.1, 0.5 and 0.3 % (5.9 %); 0.995, 1.7, 0.5
    and 0.2 % (19.8 %); 0.997, 1.5, 0.3 and 0.2 % (31.7 %): of the three, 25 is the
    fewest that holds the stated 1 % at every drift tried. The fixed probe of 1000 requests at 25: 0.1 % at
    0.99 (2.1 %), 0.0 % at 0.995 (12.3 %). What it costs: nothing measurable on M/M/1
    queues (their service times are independent: false passes 0.67 % at 91 %
    utilisation, passes 77 % at a true p99 of 0.2 of the SLO and 4.5 % at 0.5, each as
    without it). On a `make report` bundle of the CPU study, the 14 probes that had
    passed at their first possible look (700 requests, every latency under a fifth of the
    SLO) held 24.9-178 stretches there: one needs another window.
    """
    lat = np.asarray(latency, dtype=float)
    if lat.size < 10:
        return 0.0
    levels = np.unique(np.round(lat / (slo * STRETCH_RESOLUTION)), return_inverse=True)[1]
    return lat.size / _autocorrelation_time(levels.astype(float))


def _autocorrelation_time(x: np.ndarray) -> float:
    """tau = 1 + 2 sum_k rho_k of a series, over lags up to its first non-positive
    autocorrelation (Geyer's initial positive sequence, truncated); 1 for a constant series."""
    x = x - x.mean()
    variance = float(x @ x)
    if variance == 0.0:
        return 1.0
    tau = 1.0
    for k in range(1, min(x.size // 4, MAX_DEPENDENCE_LAG)):
        rho = float(x[:-k] @ x[k:]) / variance
        if rho <= 0.0:
            break
        tau += 2.0 * rho
    return tau
