"""Amdahl's law as a consistency test between the operation and the application, in time ratios.

If the operation holds a share f of the application's critical time and its
own time ratio (change / baseline) is r, the application's time ratio is

    B = (1 - f) + f r          (the speedup 1 / B is Amdahl's 1 / ((1 - f) + f / s), s = 1 / r)

when nothing else changes: f = 0.09, s = 1.12 gives B = 0.99039, a speedup
of 1.0097. Everything here is a time ratio; bounds below and above 1 go
through the same comparisons, with no mirrored frame (a mirror once turned
"faster than the change can explain" into a shortfall whenever B > 1).

B is the smallest application time ratio the operation alone can produce, on
the premise that everything else on the critical path stays as it was. That
premise is measured, not assumed (`stats.decomposition`): the rest of the
request's ratio rho and the share pass's own request ratio D = (1 - f) rho + f r.
A measured ratio beyond B that D explains is a cross-effect of the change
outside the operation; one that D does not explain means the numbers do not
add up (f, r or the passes disagree). Only with no rest measured does a ratio
beyond B stay unexplained.

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

from perfdsl.bundle.evaluation.end_to_end import (
    Decomposition,
    Reconciliation,
    RestState,
    ShareCheck,
    Status,
    straddle_note,
)
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.verdict import classify

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


def bound_range(f: Estimate, op_ratio: Estimate) -> Estimate:
    """B over the f and r intervals: its corners, at the Bonferroni level of the pair."""
    corners = [amdahl_time_ratio(fi, ri) for fi in (f.low, f.high) for ri in (op_ratio.low, op_ratio.high)]
    return Estimate(
        amdahl_time_ratio(f.value, op_ratio.value),
        min(corners),
        max(corners),
        max(0.0, f.level + op_ratio.level - 1.0),
    )


def rest_state(rest_ratio: Estimate | None, theta: float) -> RestState:
    """The rest of the request against the practical band [1 / (1 + theta), 1 + theta]."""
    if rest_ratio is None:
        return "unmeasured"
    verdict = classify(rest_ratio.low, rest_ratio.high, theta)
    return {"faster": "faster", "slower": "slower", "no meaningful change": "unchanged"}.get(
        verdict, "undetermined"
    )


def agrees_within(measured: Estimate, predicted: Estimate, theta: float) -> bool:
    """Two intervals of one ratio meet once each is widened by the practical threshold."""
    return measured.low <= predicted.high * (1.0 + theta) and predicted.low / (1.0 + theta) <= measured.high


def reconcile(
    f: Estimate,
    op_ratio: Estimate,
    measured: Estimate,
    *,
    theta: float,
    decomposition: Decomposition | None = None,
    shortfall_allowance: float = SHORTFALL_ALLOWANCE,
) -> Reconciliation:
    """Classify the measured application time ratio M against the bound, with the rest in view.

    The band is [B_low / (1 + theta), max(B_high (1 + theta), B_high + a |B_high - 1|)]
    (a the shortfall allowance); the rest rho and the share pass's request ratio
    D = (1 - f) rho + f r come from `decomposition`. First rule that holds:

    * consistent: M meets the band and the rest did not move beyond the threshold;
    * not_established: M reaches past the band on both sides;
    * cross_effect: the rest moved beyond the threshold, or M lies beyond the bound,
      and M agrees with D: the change acts outside the named operation, by rho
      (a gain that the stated mechanism does not explain, or a cost);
    * shortfall: M lies above the band, agrees with D, and the rest was not shown
      to move: part of the gain is lost somewhere the split does not place;
    * opposite_sign: the operation is faster beyond noise and the application
      slower beyond noise, and D does not explain it;
    * accounting_broken: M disagrees with D too: f, r or the two passes disagree;
    * beyond_bound: only without a measured rest: M wholly below the band, which
      the operation alone cannot make and nothing measured explains.
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
    rest = rest_state(decomposition.rest_ratio if decomposition else None, theta)
    agrees = None if decomposition is None else agrees_within(measured, decomposition.request_ratio, theta)
    below, above = measured.high < low, measured.low > high
    moved = rest in ("faster", "slower")
    shown = f"application time ratio {_show(measured)} against Amdahl's {_show(bound)}"
    split = "" if decomposition is None else _split(decomposition, rest, theta)
    status: Status
    if not (below or above or moved):
        if measured.low < low and measured.high > high:
            status, message = "not_established", f"{shown}: the interval is too wide to tell{split}"
        else:
            status = "consistent"
            message = f"{shown}: consistent{straddle_note(measured, low, high)}{split}"
    elif decomposition is None:
        if below:
            status = "beyond_bound"
            message = (
                f"{shown}: faster than the operation alone can make it, and the rest of the request "
                "was not measured (the share pass lacks an arm), so nothing explains the difference"
            )
        elif op_faster and app_slower:
            status, message = "opposite_sign", f"{shown}: the operation got faster but the application slower"
        else:
            status = "shortfall"
            message = f"{shown}: short of the bound by more than the allowance; the rest was not measured"
    elif agrees and (moved or below):
        status = "cross_effect"
        message = f"{shown}: explained by the measured split{split}"
    elif agrees:
        status = "shortfall"
        message = f"{shown}: short of the bound by more than the allowance{split}"
    elif op_faster and app_slower:
        status = "opposite_sign"
        message = f"{shown}: the operation got faster but the application slower{split}"
    else:
        status = "accounting_broken"
        d = decomposition.request_ratio
        message = (
            f"{shown}: the share pass's own request time ratio is {_show(d)} "
            f"((1 - f) x rest + f x r), which the timed ratio misses by more than the "
            f"{theta:.3g} threshold{split}; f, r or the two passes disagree (instrumentation, "
            "preparation or drift between them)"
        )
    return Reconciliation(
        f,
        op_ratio,
        bound,
        low,
        high,
        measured,
        theta,
        status,
        signs_disagree,
        message,
        rest,
        agrees,
    )


def _split(d: Decomposition, rest: RestState, theta: float) -> str:
    """The rest of the request in words: its ratio, its interval and what it means."""
    rho = d.rest_ratio
    change = abs(1.0 - rho.value)
    size = f"{change:.1%} [{abs(1.0 - rho.high):.1%}, {abs(1.0 - rho.low):.1%}]"
    where = f"in {d.rest_faster_rounds} of {d.rounds} rounds"
    if rest == "faster":
        return (
            f"; the rest of the request (its time outside the operation) got {size} faster "
            f"(ratio {_show(rho)}, faster {where})"
        )
    if rest == "slower":
        size = f"{rho.value - 1.0:.1%} [{rho.low - 1.0:.1%}, {rho.high - 1.0:.1%}]"
        return (
            f"; the rest of the request (its time outside the operation) got {size} slower "
            f"(ratio {_show(rho)}, faster only {where})"
        )
    if rest == "unchanged":
        return f"; the rest of the request is unchanged within the {theta:.3g} threshold (ratio {_show(rho)})"
    return (
        f"; the rest of the request has ratio {_show(rho)}, not shown to lie inside or outside the "
        f"{theta:.3g} threshold"
    )


def untested_premise(reconciliation: Reconciliation) -> str | None:
    """Why a result inside the band does not yet confirm `<= amdahl`: Amdahl's bound holds only
    with the rest of the request unchanged, and that is shown, not assumed; None where it is."""
    rest = reconciliation.rest
    if rest == "unmeasured":
        return (
            "the rest of the request was not measured, so Amdahl's premise (the rest unchanged) is untested"
        )
    if rest == "undetermined":
        return (
            "the rest of the request is not shown unchanged within the threshold, which Amdahl's bound "
            "assumes"
        )
    return None


def judge_prediction(reconciliation: Reconciliation) -> PredictionVerdict:
    """A `<= amdahl` (time) prediction: "consistent with Amdahl", the operation explaining the whole.

    Confirmed only when the reconciliation is consistent, the whole measured
    interval lies inside the band, and the rest of the request is shown unchanged
    (`untested_premise`): a band widened by an uncertain f or r holds almost any
    ratio, and a quick run's 1.009 inside [0.756, 1.143], with the rest anywhere in
    [0.79, 1.27], was "confirmed". Refuted when the evidence points against it:
    short of the bound, of the opposite sign, or a cross-effect that made the
    rest of the request slower (a cost the operation does not explain).
    Inconclusive otherwise, including a cross-effect gain (the application did
    better than the operation explains: not against the prediction's intent,
    but not what it said) and numbers that do not add up (accounting broken,
    or beyond the bound with the rest unmeasured: no evidence either way).
    """
    r = reconciliation
    if r.status in ("shortfall", "opposite_sign") or r.cross_effect_loss:
        return "refuted"
    inside = r.band_low <= r.measured.low and r.measured.high <= r.band_high
    if r.status == "consistent" and inside and untested_premise(r) is None:
        return "confirmed"
    return "inconclusive"


def judge_throughput(
    f: Estimate, op_ratio: Estimate, throughput: Estimate, *, theta: float
) -> tuple[PredictionVerdict, str]:
    """A `throughput >= amdahl` prediction, one-sided: only a shortfall can refute it.

    Goodput under a latency SLO is not 1 / time ratio: queueing delay grows
    faster than linearly in utilisation, so a service time cut by exactly
    Amdahl's bound B raises the goodput by more than 1 / B (a FIFO queue at a
    5 ms SLO: 1.191 against 1 / B = 1.146). A goodput ratio above 1 / B is
    therefore no evidence against the bound, and is never called beyond it;
    one below the band's slow edge (1 / band_high) is a shortfall, and refutes.
    """
    time = throughput_as_time_ratio(throughput)
    r = reconcile(f, op_ratio, time, theta=theta)
    least = 1.0 / r.band_high
    shown = f"throughput ratio {_show(throughput)} against at least {least:.4g} (1 / the band's slow edge)"
    if time.low > r.band_high:
        return "refuted", f"{shown}: short of what the operation's gain allows"
    if time.high <= r.band_high:
        return "confirmed", (
            f"{shown}: at least what Amdahl's bound allows (goodput under a latency SLO may exceed "
            "1 / B, queueing being nonlinear, so only a shortfall would refute it)"
        )
    return "inconclusive", f"{shown}: the interval reaches below it"


def throughput_as_time_ratio(throughput_ratio: Estimate) -> Estimate:
    """A throughput (or goodput) ratio as the time ratio per request it stands for, 1 / ratio.

    Right for saturation throughput at a fixed amount of work per request; for a
    goodput under a latency SLO only one side of it holds (`judge_throughput`).
    An unbounded ratio (the change's goodput is only a lower bound) becomes 0.
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
        declared,
        measured,
        ok,
        f"the declared share {share_percent(declared)} {verb} the measured f {share_percent(measured.value)} "
        f"[{share_percent(measured.low)}, {share_percent(measured.high)}], widened by the "
        f"{tolerance:.0%} rounding tolerance a one-figure share carries",
    )


def share_percent(fraction: float) -> str:
    """A share as the study writes it: 0.25 is `25%`, 0.3802 `38.02%`."""
    return f"{100.0 * fraction:.4g}%"


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
