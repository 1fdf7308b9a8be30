"""Value = frequency x saved time x scale, only from an established end-to-end effect.

The saved time comes from the application's measured time ratio M (change /
baseline) and its baseline time per unit of work: baseline x (1 - M). It is
"not established", with every reason that applies, when the end-to-end
verdict is inconclusive or no meaningful change (below the threshold), when
Amdahl's reconciliation finds that the numbers do not add up (accounting
broken, opposite sign, beyond the bound with the rest unmeasured), or when the
declared share is contradicted: those are not effects to multiply a fleet by.

The saving is split by the measured decomposition of the request: the part
the named operation explains, f (1 - r), and the cross-effect on the rest of
the request, (1 - f) (1 - rho). Only the first is the stated mechanism's, and
only it scales with the operation's share of production time; the value says
how much of the saving each part is, so a fleet figure never multiplies an
effect the study's mechanism does not explain without saying so.

Capped at what Amdahl allows at the declared production share: production may
spend a different share of its time in the operation than the test
application, so the saving claimed may not exceed (1 - B_prod), where
B_prod = (1 - share) rho_low + share x r_low with the operation's most
favourable time ratio and, where the rest of the request was measured to
move, its most favourable ratio too (rho = 1 when it was not: Amdahl's
premise). The cap raises the interval's favourable end only; a loss (M > 1) is
never capped, so a cost is not made to look smaller. The cap takes the
operation's ratio on its own, not through Amdahl's reconciliation, because an
application timed by imported request times has a ratio for its operation
and a declared share but no measured f to reconcile with
(`evaluate.imported_end_to_end`): one rule serves both.

When the measured f contradicts the declared share, the value is not
established at all. Capping at the declared share would rest the claim on a
number the run has just shown wrong; capping at the measured f instead would
extrapolate the test application to production, which is what the declared
share exists to avoid. So the study has to reconcile its share first.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.end_to_end import CONTRADICTIONS, Decomposition, Reconciliation, ShareCheck
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.value import Value
from perfdsl.bundle.evaluation.verdicts import Verdict


def value(
    measured: Estimate,
    verdict: Verdict,
    baseline_time: float,
    *,
    frequency: float,
    scale: float,
    unit: str,
    reconciliation: Reconciliation | None = None,
    production_share: float | None = None,
    op_ratio: Estimate | None = None,
    share_check: ShareCheck | None = None,
    decomposition: Decomposition | None = None,
) -> Value:
    """The value of the end-to-end effect, or "not established" with the reason.

    `measured` is the application's time ratio with its interval and
    `verdict` its verdict; `baseline_time` the baseline's seconds per unit of
    work; `frequency` units per period; `scale` turns seconds into the value
    unit (1 / 3600 for GPU-hours with one GPU per unit). `reconciliation`
    withholds the value when Amdahl contradicts the effect. The cap needs the
    declared production share and `op_ratio`, the operation's time ratio;
    `share_check`, that share against the measured f, withholds the value when
    they disagree. `decomposition` splits the saving into the operation's part
    and the cross-effect on the rest of the request.
    """
    if not baseline_time > 0 or frequency < 0 or scale < 0:
        raise ValueError("baseline time must be positive, frequency and scale non-negative")
    reasons = _why_not(verdict, reconciliation, share_check)
    if reasons:
        return Value(False, "; ".join(reasons), None, None, unit, False)
    low, value_, high = measured.low, measured.value, measured.high
    capped = False
    rest_moved = reconciliation is not None and reconciliation.status == "cross_effect"
    if op_ratio is not None and production_share is not None:
        rest_low = decomposition.rest_ratio.low if decomposition is not None and rest_moved else 1.0
        floor = (1.0 - production_share) * rest_low + production_share * op_ratio.low
        capped = low < floor and floor < 1.0
        if floor < 1.0:
            low, value_, high = max(low, floor), max(value_, floor), max(high, floor)
    # Saved time falls as the ratio rises, so the interval's ends swap.
    saved = Estimate(
        baseline_time * (1.0 - value_),
        baseline_time * (1.0 - high),
        baseline_time * (1.0 - low),
        measured.level,
    )
    k = frequency * scale
    worth = Estimate(k * saved.value, k * saved.low, k * saved.high, measured.level)
    return Value(True, None, saved, worth, unit, capped, *_explained(decomposition, rest_moved))


def _explained(decomposition: Decomposition | None, rest_moved: bool) -> tuple[float | None, float | None]:
    """The shares of the saving the operation explains and the rest's cross-effect is, or None.

    1 - D = f (1 - r) + (1 - f) (1 - rho), the share pass's own saving; split only
    when the rest was measured to move (otherwise the whole is the operation's).
    """
    if decomposition is None or not rest_moved:
        return None, None
    f, r, rho = decomposition.f.value, decomposition.op_ratio.value, decomposition.rest_ratio.value
    saved = f * (1.0 - r) + (1.0 - f) * (1.0 - rho)
    if saved == 0.0:
        return None, None
    return f * (1.0 - r) / saved, (1.0 - f) * (1.0 - rho) / saved


def _why_not(
    verdict: Verdict, reconciliation: Reconciliation | None, share_check: ShareCheck | None
) -> list[str]:
    """Every reason the value is not established, not only the first: fixing one must not
    leave the reader to discover the next."""
    reasons = []
    if verdict == "inconclusive":
        reasons.append("the end-to-end effect is inconclusive")
    if verdict == "no meaningful change":
        reasons.append("the end-to-end effect is below the practical threshold")
    if reconciliation is not None and reconciliation.status in CONTRADICTIONS:
        reasons.append(
            f"the end-to-end effect does not add up against Amdahl's bound ({reconciliation.status})"
        )
    if share_check is not None and not share_check.compatible:
        f = share_check.measured
        reasons.append(
            f"the declared share {100 * share_check.declared:.4g}% is contradicted by the measured f "
            f"{f.value:.1%} [{f.low:.1%}, {f.high:.1%}]"
        )
    return reasons
