"""Amdahl's law as a consistency test between the operation and the application, in time ratios.

If the operation holds a share f of the application's critical time and its
own time ratio (change / baseline) is r, the application's time ratio is

    B = (1 - f) + f r          (the speedup 1 / B is Amdahl's 1 / ((1 - f) + f / s), s = 1 / r)

when nothing else changes: f = 0.09, s = 1.12 gives B = 0.99039, a speedup
of 1.0097. Everything here is a time ratio; bounds below and above 1 go
through the same comparisons, with no mirrored frame (a mirror once turned
"faster than the change can explain" into a shortfall whenever B > 1).

B is the smallest application time ratio the change can produce: anything
else on the critical path can only add time (a bottleneck absorbing part of
the gain, or adding to a loss) unless something else also changed. So a
measured ratio wholly below B is a contradiction, and one well above it a
shortfall. This holds whether the operation got faster (B < 1) or slower
(B > 1: the application must slow by at least f (r - 1)).

The bound as a range: B is increasing in r and monotone in f, so over the f
and r intervals its extremes are at the corners, and the corner range is the
exact image of the two intervals. It holds the true B whenever both intervals
hold their truths, which at 95 % each happens at least 90 % of the time
(Bonferroni), the level the range carries; in practice more, because the
corners rarely bind together. Corners are chosen over a joint bootstrap
because r may come from a paired kernel comparison, a different sample from
f's, and because a wider range errs against declaring a contradiction.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from perfdsl.bundle.evaluation.end_to_end import Reconciliation, ShareCheck, Status, straddle_note
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES, index_chunks, studentized_interval

PredictionVerdict = Literal["confirmed", "refuted", "inconclusive"]

SHORTFALL_ALLOWANCE = 0.5
"""How much worse than the bound the application may be and still be consistent, as a fraction
of the bound's distance from 1: with B = 0.75 the application must reach 0.875 (half the gain
the bound allows). Some shortfall is normal (launch gaps, the rest of the pipeline); losing
more than half the allowed effect means another bottleneck absorbs it."""

SHARE_TOLERANCE = 0.10
"""A declared share is a round figure: one significant figure carries up to 10 % relative
rounding (0.5 stands for 0.45 to 0.55), so it is compared with the measured f interval widened
by that much."""


def amdahl_speedup(f: float, s: float) -> float:
    """Amdahl's bound on the application's speedup, 1 / ((1 - f) + f / s)."""
    return 1.0 / amdahl_time_ratio(f, 1.0 / _positive(s, "s"))


def amdahl_time_ratio(f: float, op_ratio: float) -> float:
    """The application's time ratio (1 - f) + f r when the operation's time ratio is r."""
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"the share f must be in [0, 1], got {f}")
    return (1.0 - f) + f * _positive(op_ratio, "the operation's time ratio")


def measure_share(
    op_time: np.ndarray,
    total_time: np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """f = sum(op time) / sum(total time) over units (requests or blocks), with an interval.

    A ratio of sums, so long requests weigh by their length. The interval is the
    studentized bootstrap over units with the ratio estimator's delta-method
    standard error, clipped to [0, 1].
    """
    op, total = np.asarray(op_time, dtype=float), np.asarray(total_time, dtype=float)
    if op.ndim != 1 or op.shape != total.shape or op.size < 2:
        raise ValueError("need at least two units, each with an operation time and a total time")
    if np.any(op < 0) or np.any(op > total) or not np.all(total > 0):
        raise ValueError("each unit's operation time must lie within its positive total time")

    def estimate(o: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = o.sum(axis=-1) / t.sum(axis=-1)
        n = o.shape[-1]
        resid = o - f[..., None] * t
        se = np.sqrt((resid**2).sum(axis=-1) / (n * (n - 1))) / t.mean(axis=-1)
        return f, se

    f, se = estimate(op[None, :], total[None, :])
    boot = [estimate(op[i], total[i]) for i in index_chunks(np.random.default_rng(seed), op.size, resamples)]
    lo, hi, _ = studentized_interval(
        float(f[0]),
        float(se[0]),
        np.concatenate([b[0] for b in boot]),
        np.concatenate([b[1] for b in boot]),
        level,
    )
    return Estimate(float(f[0]), max(0.0, lo), min(1.0, hi), level)


def operation_ratio_in_app(
    op_baseline: np.ndarray,
    op_change: np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """r at the application's own operating point: mean op time per request, change / baseline.

    The two arms' requests are separate samples, so each arm is resampled on
    its own. The interval is the percentile interval of the bootstrapped log r,
    not the studentized one: with a few dozen requests and one stalled request
    a resample can draw the stall with a tiny standard error, and bootstrap-t
    then stretched the interval to a ratio of 8.5e8; percentiles of the
    resampled ratio of means stay within what the requests could give.
    """
    b, c = (_positive_array(x, name) for x, name in ((op_baseline, "baseline"), (op_change, "change")))
    rng = np.random.default_rng(seed)
    point = float(np.log(c.mean()) - np.log(b.mean()))
    boot = np.concatenate(
        [
            np.log(c[ic].mean(axis=-1)) - np.log(b[ib].mean(axis=-1))
            for ib, ic in zip(
                index_chunks(rng, b.size, resamples), index_chunks(rng, c.size, resamples), strict=True
            )
        ]
    )
    alpha = 1.0 - level
    lo, hi = np.quantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0])
    lo, hi = min(float(lo), point), max(float(hi), point)
    return Estimate(float(np.exp(point)), float(np.exp(lo)), float(np.exp(hi)), level)


def bound_range(f: Estimate, op_ratio: Estimate) -> Estimate:
    """B over the f and r intervals: its corners, at the Bonferroni level of the pair."""
    corners = [amdahl_time_ratio(fi, ri) for fi in (f.low, f.high) for ri in (op_ratio.low, op_ratio.high)]
    return Estimate(
        amdahl_time_ratio(f.value, op_ratio.value),
        min(corners),
        max(corners),
        max(0.0, f.level + op_ratio.level - 1.0),
    )


def reconcile(
    f: Estimate,
    op_ratio: Estimate,
    measured: Estimate,
    *,
    theta: float,
    shortfall_allowance: float = SHORTFALL_ALLOWANCE,
) -> Reconciliation:
    """Classify the measured application time ratio M against the bound, first rule that holds:

    * beyond_bound: all of M lies below the band (faster than the change can
      make it: a contradiction; the end-to-end effect cannot come from this
      change). This includes an operation that got slower under an
      application that got faster, where B > 1 > M;
    * opposite_sign: the operation is faster beyond noise and the application
      slower beyond noise (the practical band [1/(1+theta), 1+theta]);
    * shortfall: all of M lies above the band (a bottleneck absorbs the gain);
    * not_established: M reaches past the band on both sides: too wide to tell;
    * consistent: otherwise; M meets the band and is not significantly outside it.

    The band is [B_low / (1 + theta), max(B_high (1 + theta), B_high + a |B_high - 1|)]
    with a the shortfall allowance.
    """
    if theta < 0 or shortfall_allowance < 0:
        raise ValueError(
            f"theta and the shortfall allowance must be non-negative: {theta}, {shortfall_allowance}"
        )
    bound = bound_range(f, op_ratio)
    low = bound.low / (1.0 + theta)
    high = max(bound.high * (1.0 + theta), bound.high + shortfall_allowance * abs(bound.high - 1.0))
    op_faster, op_slower = op_ratio.high < 1.0 / (1.0 + theta), op_ratio.low > 1.0 + theta
    app_faster, app_slower = measured.high < 1.0 / (1.0 + theta), measured.low > 1.0 + theta
    signs_disagree = (op_faster and app_slower) or (op_slower and app_faster)
    shown = f"application time ratio {_show(measured)} against Amdahl's {_show(bound)}"
    status: Status
    if measured.high < low:
        status = "beyond_bound"
        message = f"{shown}: faster than the change can make it; check f, s and what else changed"
    elif op_faster and app_slower:
        status = "opposite_sign"
        message = f"{shown}: the operation got faster but the application slower"
    elif measured.low > high:
        status = "shortfall"
        message = f"{shown}: short of the bound by more than the allowance; another bottleneck absorbs it"
    elif measured.low < low and measured.high > high:
        status = "not_established"
        message = f"{shown}: the interval is too wide to tell"
    else:
        status = "consistent"
        message = f"{shown}: consistent{straddle_note(measured, low, high)}"
    return Reconciliation(f, op_ratio, bound, low, high, measured, theta, status, signs_disagree, message)


def judge_prediction(reconciliation: Reconciliation) -> PredictionVerdict:
    """A `<= amdahl` (time) or `>= amdahl` (throughput) prediction: "consistent with Amdahl".

    Confirmed only when the whole measured interval lies inside the band;
    refuted when it is beyond the bound, short of it past the allowance, or of
    the opposite sign; inconclusive when it straddles an edge of the band. An
    impossible result (beyond the bound) can never confirm it.
    """
    r = reconciliation
    if r.status in ("beyond_bound", "shortfall", "opposite_sign"):
        return "refuted"
    if r.band_low <= r.measured.low and r.measured.high <= r.band_high:
        return "confirmed"
    return "inconclusive"


def throughput_as_time_ratio(throughput_ratio: Estimate) -> Estimate:
    """A throughput (or goodput) ratio as the time ratio per request it stands for, 1 / ratio.

    At a fixed amount of work per request, serving k times the requests is
    spending 1 / k the time on each, so a throughput prediction is judged
    against the bound itself: throughput ratio T against speedup 1 / B. An
    unbounded ratio (the change's goodput is only a lower bound) becomes 0.
    """

    def inverse(x: float) -> float:
        return 0.0 if x == np.inf else 1.0 / _positive(x, "throughput ratio")

    return Estimate(
        inverse(throughput_ratio.value),
        inverse(throughput_ratio.high),
        inverse(throughput_ratio.low),
        throughput_ratio.level,
    )


def check_declared_share(
    declared: float, measured: Estimate, tolerance: float = SHARE_TOLERANCE
) -> ShareCheck:
    """Whether a declared share lies in the measured f interval, widened by the rounding tolerance."""
    if not 0.0 <= declared <= 1.0:
        raise ValueError(f"a share must be in [0, 1], got {declared}")
    ok = measured.low / (1.0 + tolerance) <= declared <= measured.high * (1.0 + tolerance)
    verb = "is compatible with" if ok else "contradicts"
    return ShareCheck(
        declared, measured, ok, f"the declared share {declared:.3g} {verb} the measured f {_show(measured)}"
    )


def _show(e: Estimate) -> str:
    return f"{e.value:.4g}" if e.low == e.high else f"{e.value:.4g} [{e.low:.4g}, {e.high:.4g}]"


def _positive(x: float, name: str) -> float:
    if not x > 0.0:
        raise ValueError(f"{name} must be positive, got {x}")
    return float(x)


def _positive_array(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"the {name} arm needs at least two finite positive operation times")
    return arr
