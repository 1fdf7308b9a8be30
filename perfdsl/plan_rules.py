"""What `check` and `plan` share: the settings a study may leave out, and formula arithmetic.

Apart from `perfdsl.plan` so that `perfdsl check`, which checks every formula
with the plan's own arithmetic, does not import the plan's records
(`perfdsl.bundle.plan`) and hashing to do it.
"""

from __future__ import annotations

import operator

from perfdsl.nodes import BinOp, Condition, Expr, Name, Num, TupleExpr
from perfdsl.vocabulary import STATISTICS, is_statistic

# The study's full settings, where it leaves one out.
DEFAULT_TIMING = {"warmup": 10, "repeats": 50, "blocks": 10, "rotate": 4}
DEFAULT_SEQUENTIAL = {"min_blocks": 6, "max_blocks": 400}
MAX_LOOKS = 20
"""The most planned looks (`looks K`) a study may declare: beyond a score, looking after every
pair (the confidence sequence) costs little more and needs no planned cap."""
DEFAULT_CONFIDENCE = 0.95
DEFAULT_THRESHOLD = 0.01
MIN_THRESHOLD = 0.01
"""The smallest practical threshold: criterion.rs's default noise threshold (1 %). A study's
smaller one is raised to it, and `check` says so (PD512)."""
DEFAULT_REQUESTS = 2000


DEFAULT_PERCENTILE = 0.99


def slo_percentile(slo: Condition) -> float:
    """The share of requests an SLO holds to its bound: `p99` is 0.99; 0.99 for a statistic that
    names no percentile (`mean`) or is none (`p100`), which `check` reports on its own."""
    word = slo.subject[0].id if slo.subject else "p99"
    if word not in STATISTICS and is_statistic(word):
        return float(word[1:]) / 100
    return DEFAULT_PERCENTILE


class PlanError(ValueError):
    """The study cannot be planned (it does not check); carries the message for the user."""


# One operator applied, not all four: a table of results would divide by every
# right-hand side, zero included, whatever the operator.
_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def evaluate_formula(expr: Expr, sizes: dict[str, int]) -> float:
    """The value of a byte or launch formula for one shape."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Name):
        if expr.id not in sizes:
            raise PlanError(f"formula symbol `{expr.id}` is not a shape symbol")
        return float(sizes[expr.id])
    if isinstance(expr, BinOp):
        left, right = evaluate_formula(expr.left, sizes), evaluate_formula(expr.right, sizes)
        if expr.op == "/" and right == 0:
            raise PlanError("formula divides by zero for this shape")
        return _OPERATORS[expr.op](left, right)
    if isinstance(expr, TupleExpr) and len(expr.items) == 1:
        return evaluate_formula(expr.items[0], sizes)
    raise PlanError("a formula holds only numbers, shape symbols and + - * /")
