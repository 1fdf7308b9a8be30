"""Amdahl's bound, and its reconciliation with the measured end-to-end speedup.

If an operation holds a fraction f of the application's critical time and the
change speeds that operation up by s, the application can speed up by at most

    S = 1 / ((1 - f) + f / s)

(f = 0.09, s = 1.12 gives 1.0097, under 1 %). A measured end-to-end speedup is
checked against that bound. Speedups here are time ratios inverted
(baseline / change: above 1 is faster), so a `compare` time ratio r is 1 / r.
"""

from __future__ import annotations

from typing import Literal

import attrs
import numpy as np

Reconciled = Literal["within", "beyond", "far below"]

FAR_BELOW_FRACTION = 0.5
"""The measured gain is "far below" when even its optimistic CI end realises
less than half the gain the bound allows (log scale). Half is a judgement: a
small shortfall is normal (launch gaps, the rest of the pipeline moving), but
losing most of the predicted gain means some other bottleneck absorbed it."""


def amdahl_bound(f: float, s: float) -> float:
    """Amdahl's bound 1 / ((1 - f) + f / s) for fraction f sped up by s."""
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"fraction f must be in [0, 1], got {f}")
    if not s > 0.0:
        raise ValueError(f"speedup s must be positive, got {s}")
    return 1.0 / ((1.0 - f) + f / s)


@attrs.frozen
class Reconciliation:
    """The measured end-to-end speedup set against Amdahl's bound."""

    bound: float
    bound_low: float
    bound_high: float
    """Range of the bound over the f and s intervals (equal to `bound` without them)."""
    measured: float
    measured_low: float
    measured_high: float
    status: Reconciled
    flagged: bool
    """True for "beyond": the end-to-end gain is larger than the operation can explain,
    an accounting error (wrong f, a different workload, or a second change)."""
    message: str


def reconcile(
    f: float,
    s: float,
    measured: float,
    measured_ci: tuple[float, float],
    *,
    f_ci: tuple[float, float] | None = None,
    s_ci: tuple[float, float] | None = None,
    far_below_fraction: float = FAR_BELOW_FRACTION,
) -> Reconciliation:
    """Classify a measured end-to-end speedup (with CI) against Amdahl's bound.

    Working on log speedups g = ln S, with the bound's gain g* = ln bound:

    * beyond: the whole measured CI is past the most favourable bound (over the
      f and s intervals, if given); flagged as an accounting error;
    * far below: even the optimistic CI end realises less than
      `far_below_fraction` of the least favourable bound's gain, so another
      bottleneck absorbed the change;
    * within: otherwise.

    For a slowdown (s < 1) the same rules apply mirrored: "beyond" is a loss
    larger than the operation can cause.
    """
    lo, hi = measured_ci
    if not 0.0 < lo <= measured <= hi:
        raise ValueError(f"measured {measured} must lie in its positive CI [{lo}, {hi}]")
    bound = amdahl_bound(f, s)
    fs = f_ci if f_ci is not None else (f, f)
    ss = s_ci if s_ci is not None else (s, s)
    corners = [amdahl_bound(fi, si) for fi in fs for si in ss]
    b_lo, b_hi = min(corners), max(corners)

    sign = 1.0 if bound >= 1.0 else -1.0
    # In the mirrored frame a larger value is always "more effect than expected".
    g_lo, g_hi = sorted((sign * np.log(lo), sign * np.log(hi)))
    most = max(sign * np.log(b_lo), sign * np.log(b_hi))
    least = min(sign * np.log(b_lo), sign * np.log(b_hi))
    if g_lo > most:
        status: Reconciled = "beyond"
        msg = (
            f"end-to-end speedup {measured:.4f} [{lo:.4f}, {hi:.4f}] exceeds Amdahl's bound "
            f"{bound:.4f}: the operation cannot explain it; check f and what else changed"
        )
    elif g_hi < far_below_fraction * least:
        status = "far below"
        msg = (
            f"end-to-end speedup {measured:.4f} [{lo:.4f}, {hi:.4f}] realises less than "
            f"{far_below_fraction:.0%} of the bound {bound:.4f}: another bottleneck absorbs it"
        )
    else:
        status = "within"
        msg = f"end-to-end speedup {measured:.4f} [{lo:.4f}, {hi:.4f}] is within bound {bound:.4f}"
    return Reconciliation(
        bound=bound,
        bound_low=b_lo,
        bound_high=b_hi,
        measured=measured,
        measured_low=lo,
        measured_high=hi,
        status=status,
        flagged=status == "beyond",
        message=msg,
    )
