"""The whole request in two parts, per arm: the operation's time inside it and the rest.

Amdahl's bound B = (1 - f) + f r holds "if every other part remains
unchanged", and that premise is measurable. The share pass times every
request and the operation's calls inside it, in both arms, so each request's
rest is its total less its operation time, and with rho the rest's time ratio
(change / baseline, of the mean rest per request)

    D = (1 - f) rho + f r

is exactly the share pass's own request time ratio (the ratio of the arms'
mean request times). rho = 1 is Amdahl's premise; rho below 1 means the change
also sped up what lies outside the operation (less cache pressure, a smaller
workspace), above 1 that it costs the rest something.

One estimand throughout: ratios of mean times per request (f a ratio of
sums), what a fleet pays for; the reconciliation sets D and B beside the
timed pass's ratio, which the report says is of block medians. Each arm's
per-request operation times and rests are first winsorized on the log scale at
their median +- 5 scaled MADs (`stats.sequential.winsorize`, as the sequential
rule clips its pairs): one baseline request whose operation took 290 ms among
requests of 0.5 ms (a preemption) carried f from 4.4 % to 23.6 % and r from 1.2
to 0.18, and with them an Amdahl bound of a 19 % speed-up for a planted slowdown.

Intervals resample rounds, not requests. The share pass alternates the arms
in rounds; within a round the requests are serially correlated (lag-1
autocorrelation 0.1-0.3 measured on a real bundle, more on a busy machine),
so treating them as independent made f's and r's intervals 1.3-1.4x too
narrow. Rounds are the independent units, and a round of one arm ran next to
the same round of the other, so the arms are paired by round. Each
statistic is a smooth function of per-round sums; its standard error is the
delta method's over the k rounds (the linearised influence of each round),
and the interval is a t interval with k - 1 degrees of freedom on the log
scale. With 10 rounds a bootstrap over rounds would under-cover (about
sqrt((k-1)/k) too narrow, normal tails); the t interval covers 94-96 % in
seeded simulations with correlated requests (tests/test_stats_decomposition.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from perfdsl.bundle.evaluation.end_to_end import Decomposition
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.sequential.winsorize import winsorized

MIN_ROUNDS = 2
"""The fewest rounds an interval can be drawn from (one degree of freedom)."""


class ArmRequests(Protocol):
    """One arm's instrumented requests, as the bundle's share record holds them (ns)."""

    @property
    def total_ns(self) -> Sequence[int]: ...

    @property
    def op_ns(self) -> Sequence[int]: ...

    @property
    def rounds(self) -> Sequence[int]: ...


class DecompositionError(ValueError):
    """The share pass cannot be split: too few rounds, or an arm without requests."""


def _round_sums(share: ArmRequests, rounds: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per round: the number of requests, their summed operation time and summed total time."""
    total = np.asarray(share.total_ns, dtype=float)
    op = np.asarray(share.op_ns, dtype=float)
    of = np.asarray(share.rounds, dtype=int)
    if total.shape != op.shape or total.shape != of.shape:
        raise DecompositionError("each request needs a total time, an operation time and a round")
    if np.any(op < 0) or np.any(op > total) or not np.all(total > 0):
        raise DecompositionError("each request's operation time must lie within its positive total time")
    rest = _clipped(total - op)
    op = _clipped(op)
    total = op + rest
    index = np.searchsorted(rounds, of)
    keep = (index < len(rounds)) & (np.asarray(rounds)[np.minimum(index, len(rounds) - 1)] == of)
    n = np.bincount(index[keep], minlength=len(rounds)).astype(float)
    return (
        n,
        np.bincount(index[keep], weights=op[keep], minlength=len(rounds)),
        np.bincount(index[keep], weights=total[keep], minlength=len(rounds)),
    )


def _clipped(times: np.ndarray) -> np.ndarray:
    """Times winsorized on the log scale (their median +- 5 scaled MADs); as they are where any is
    not positive, since a zero has no logarithm to clip."""
    if times.size == 0 or np.any(times <= 0):
        return times
    return np.exp(winsorized(np.log(times)))


def _t_quantile(level: float, k: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2.0, k - 1))


def _interval(log_point: float, influence: np.ndarray, level: float, cap: float = np.inf) -> Estimate:
    """exp(log point +- t se), se from the rounds' linearised influences (delta method)."""
    k = influence.size
    se = float(np.sqrt(k / (k - 1) * np.sum(influence**2)))
    q = _t_quantile(level, k)
    point = float(np.exp(log_point))
    return Estimate(
        min(point, cap), float(np.exp(log_point - q * se)), min(cap, float(np.exp(log_point + q * se))), level
    )


def _ratio_of_means(
    x_change: np.ndarray, n_change: np.ndarray, x_base: np.ndarray, n_base: np.ndarray, level: float
) -> Estimate:
    """(sum x_c / sum n_c) / (sum x_b / sum n_b) over paired rounds, with its t interval."""
    sums = [float(a.sum()) for a in (x_change, n_change, x_base, n_base)]
    if min(sums) <= 0:
        raise DecompositionError("an arm's rounds hold no time to compare")
    xc, nc, xb, nb = sums
    influence = x_change / xc - n_change / nc - x_base / xb + n_base / nb
    return _interval(np.log(xc / nc) - np.log(xb / nb), influence, level)


def _paired_rounds(*shares: ArmRequests) -> list[int]:
    common = set(shares[0].rounds)
    for share in shares[1:]:
        common &= set(share.rounds)
    if len(common) < MIN_ROUNDS:
        raise DecompositionError(
            f"the share pass has {len(common)} round(s) with every arm's requests; "
            f"an interval needs at least {MIN_ROUNDS}"
        )
    return sorted(common)


def share_of_time(baseline: ArmRequests, level: float) -> Estimate:
    """f = sum(operation time) / sum(request time) over the baseline's requests, resampled by round."""
    rounds = _paired_rounds(baseline)
    _, op, total = _round_sums(baseline, rounds)
    o, t = float(op.sum()), float(total.sum())
    if o <= 0:
        return Estimate(0.0, 0.0, 0.0, level)
    return _interval(np.log(o / t), op / o - total / t, level, cap=1.0)


def decompose(baseline: ArmRequests, change: ArmRequests, level: float) -> Decomposition:
    """f, r, the rest's ratio rho and the share pass's request ratio D, each with its interval."""
    rounds = _paired_rounds(baseline, change)
    nb, ob, tb = _round_sums(baseline, rounds)
    nc, oc, tc = _round_sums(change, rounds)
    rb, rc = tb - ob, tc - oc
    rest_b, rest_c = rb.sum() / nb.sum(), rc.sum() / nc.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        faster = int(np.sum(rc / nc < rb / nb))
    return Decomposition(
        f=share_of_time(baseline, level),
        op_ratio=_ratio_of_means(oc, nc, ob, nb, level),
        rest_ratio=_ratio_of_means(rc, nc, rb, nb, level),
        request_ratio=_ratio_of_means(tc, nc, tb, nb, level),
        baseline_rest_ns=float(rest_b),
        change_rest_ns=float(rest_c),
        rounds=len(rounds),
        rest_faster_rounds=faster,
        requests=(int(nb.sum()), int(nc.sum())),
    )
