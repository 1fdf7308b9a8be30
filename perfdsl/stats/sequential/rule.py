"""The sequential stopping rule: look after every block pair, stop when the verdict is decided.

At each look the confidence sequence (`boundary`) on the mean pair log-ratio
is mapped back to a ratio interval and judged against the practical band by
the one verdict rule every comparison uses (`perfdsl.stats.verdict.classify`):
wholly below the band, faster; wholly above, slower; wholly inside, no
meaningful change. The first look from `min_pairs` on that is decided, and
whose interval no registered prediction bound on the ratio still straddles
(`StoppingRule.edges`: a prediction that depends on the comparison keeps it
measuring), stops the comparison; at `max_pairs` it stops with the interval it
reached (inconclusive, or decided against the band but not against a
bound). Because the interval holds at every look at once, the error rate
stated before the run holds whatever the data did and however early it
stopped: an A/A comparison is called faster or slower with probability at
most 1 - confidence.

Under planned looks (`looks K`, `planned`), the interval is the repeated
confidence interval of the group-sequential design, and only the planned pair
counts are looks: between them nothing stops.

A look depends only on the pairs so far, and `boundary.moments` sums them
exactly, so `replay` over a bundle's recorded pairs reaches the run's own
stop, bit for bit: the run calls `look` after each pair, the evaluation calls
it again on every prefix.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from perfdsl.bundle.evaluation.kernels import Verdict
from perfdsl.bundle.stopping import CAP, DECIDED, OPEN, StoppingRule, StopRecord
from perfdsl.stats.paired import pair_blocks
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.boundary import fewest_pairs, half_width, moments, p_value, scalar_half_width
from perfdsl.stats.sequential.winsorize import winsorized
from perfdsl.stats.verdict import classify


def pair_log_ratios(
    baseline: np.ndarray, baseline_index: np.ndarray, change: np.ndarray, change_index: np.ndarray
) -> np.ndarray:
    """log(change / baseline) of each adjacent pair of block medians (`paired.pair_blocks`'s pairing).

    One `math.log` per value, not numpy's vectorised log, so that the values
    for the first t pairs are the same bits whether the array holds t pairs
    (the run, looking) or all of them (the evaluation, replaying).
    """
    pairs = pair_blocks(baseline, baseline_index, change, change_index)
    values = [math.log(c) - math.log(b) for b, c in zip(pairs.baseline, pairs.change, strict=True)]
    return np.array(values, dtype=float)


@attrs.frozen
class Look:
    """The interval after `pairs` pairs, as a ratio, and its verdict."""

    pairs: int
    ratio: float
    low: float
    high: float
    sd_log: float
    verdict: Verdict
    p_value: float
    """Anytime-valid p-value of ratio 1 at this look (`boundary.p_value`); under planned looks the
    repeated p-value (`planned.repeated_p_value`), 1 between them."""


def look(log_ratios: np.ndarray, rule: StoppingRule) -> Look:
    """The look after every pair in `log_ratios` (at least one), winsorized first where the rule
    says (`winsorize`: one spoiled pair must not hold the interval open for hundreds more)."""
    t = len(log_ratios)
    mean, variance = moments(winsorized(log_ratios) if rule.winsorized else log_ratios)
    if rule.planned:
        width = planned.width_at(variance, t, rule.looks, rule.boundaries)
        # Between planned looks no look is taken, so no evidence is claimed there.
        p = planned.repeated_p_value(mean, variance, t, rule.looks) if t in rule.looks else 1.0
    else:
        width = float(half_width(variance, t, rule.confidence, rule.rho)) if t >= 2 else math.inf
        p = p_value(mean, variance, t, rule.rho)
    low, high = math.exp(mean - width), math.exp(mean + width)
    sd = math.sqrt(variance) if t >= 2 else math.nan
    return Look(t, math.exp(mean), low, high, sd, judge(low, high, rule), p)


def judge(low: float, high: float, rule: StoppingRule) -> Verdict:
    """The verdict of a ratio interval under the rule's band.

    The one place the sequence meets the verdict band: repoint it here if the band's rule moves.
    """
    return classify(low, high, rule.threshold)


def pairs_to_decide(current: Look, rule: StoppingRule) -> int:
    """The pairs at which a comparison still open would stop, if its ratio and spread held.

    The rule's own boundary, not a fixed-n formula: the fewest pairs (under
    planned looks, the first planned look) whose half-width at the current
    standard deviation, about the current estimate, gives an interval `judge`
    calls decided, i.e. one that no longer straddles the band edge nearest the
    estimate, nor a prediction bound (`StoppingRule.edges`). At least one more
    pair (it is open now) and the rule's first look; at most its cap, which is
    also the answer when the spread is not known yet (one pair) or the estimate
    sits on an edge (no width separates it). The progress display multiplies
    the pairs left by the measured seconds per pair.
    """
    if current.pairs >= rule.max_pairs:
        return rule.max_pairs
    variance, centre = current.sd_log * current.sd_log, math.log(current.ratio)
    if not math.isfinite(variance):
        return rule.max_pairs

    def decided(t: int) -> bool:
        if rule.planned:
            width = planned.width_at(variance, t, rule.looks, rule.boundaries)
        else:
            width = scalar_half_width(variance, t, rule.confidence, rule.rho)
        low, high = math.exp(centre - width), math.exp(centre + width)
        return judge(low, high, rule) != "inconclusive" and not rule.straddled(low, high)

    if rule.planned:  # only a planned look can stop it
        return next((t for t in rule.looks if t > current.pairs and decided(t)), rule.max_pairs)
    found = fewest_pairs(decided, rule.max_pairs)
    if found is None:
        return rule.max_pairs
    return min(rule.max_pairs, max(found, current.pairs + 1, rule.min_pairs))


def settle(current: Look, rule: StoppingRule) -> StopRecord | None:
    """The stop this look makes, or None while the comparison stays open (or, under planned
    looks, at a pair count that is not one of them)."""
    if current.pairs < rule.min_pairs:
        return None
    if rule.planned and current.pairs not in rule.looks and current.pairs < rule.max_pairs:
        return None
    if current.verdict != "inconclusive" and not rule.straddled(current.low, current.high):
        return stop_record(current, rule, DECIDED)
    if current.pairs >= rule.max_pairs:
        return stop_record(current, rule, CAP)
    return None


def replay(log_ratios: np.ndarray, rule: StoppingRule) -> StopRecord | None:
    """The stop the rule makes over these pairs, looking after each one as the run did.

    OPEN when the pairs end before the rule stopped (an arm failed, or the run
    was cut short); None when there is no pair at all.
    """
    d = np.asarray(log_ratios, dtype=float)
    current = None
    for t in range(1, d.size + 1):
        current = look(d[:t], rule)
        stop = settle(current, rule)
        if stop is not None:
            return stop
    return None if current is None else stop_record(current, rule, OPEN)


def half_width_at(stop: StopRecord, confidence: float) -> float:
    """The log-scale half-width of the interval at this stop had the rule held `confidence`
    (the pairs, their spread and the looks as they were): how the weighted total over shapes
    shares its confidence among the shapes (`total`). Infinite without a spread."""
    rule, variance = stop.rule, stop.sd_log * stop.sd_log
    if not (stop.pairs >= 2 and math.isfinite(variance)):
        return math.inf
    if rule.planned:
        return planned.width_at(
            variance, stop.pairs, rule.looks, planned.z_boundaries(rule.looks, confidence)
        )
    return scalar_half_width(variance, stop.pairs, confidence, rule.rho)


def stop_record(current: Look, rule: StoppingRule, reason: str) -> StopRecord:
    """The record of stopping (or of the blocks ending, OPEN) at this look."""
    return StopRecord(
        rule=rule,
        pairs=current.pairs,
        reason=reason,
        verdict=current.verdict,
        ratio=current.ratio,
        low=current.low,
        high=current.high,
        sd_log=current.sd_log,
        p_value=current.p_value,
    )
