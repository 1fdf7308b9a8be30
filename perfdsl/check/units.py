"""Dimensions: numbers whose unit must fit where they are written, and formulas' units."""

from __future__ import annotations

from collections.abc import Sequence

from perfdsl.check.context import Context
from perfdsl.nodes import BinOp, Expr, Name, Num
from perfdsl.quantity import DIMENSIONLESS

FRACTION = "fraction"
# Ratios and tolerances are plain numbers; a percentage is a plain number too.
PLAIN = (DIMENSIONLESS, FRACTION)
# Dimensions as a message names them.
DIMENSION_WORDS = {
    DIMENSIONLESS: "a plain number",
    FRACTION: "a percentage",
    "time": "a time",
    "bytes": "a size in bytes",
    "bandwidth": "a bandwidth",
    "rate": "a rate",
    "frequency": "a frequency (`per token`, `per request`, ...)",
    "scale": "a scale (`gpu_hours per day`, ...)",
}
# Float comparisons of user numbers (weights summing to 1, Amdahl's bound).
EPSILON = 1e-6


def number(expr: Expr | None) -> float | None:
    """The plain value of a unitless number or percentage, else None."""
    if isinstance(expr, Num) and expr.quantity.dimension in PLAIN:
        return expr.quantity.base
    return None


def dimension(ctx: Context, num: Num, expected: Sequence[str], what: str, example: str) -> bool:
    """Report a number whose unit is of the wrong dimension; True when it fits."""
    if num.quantity.dimension in expected:
        return True
    wanted = " or ".join(DIMENSION_WORDS[d] for d in expected)
    ctx.report(
        "PD302",
        f"{what} must be {wanted}, not {DIMENSION_WORDS[num.quantity.dimension]}",
        num.span,
        label=f"`{num.quantity}`",
        help=f"write it like `{example}`",
    )
    return False


def fraction(ctx: Context, num: Num | None, what: str, example: str, *, whole: bool = True) -> None:
    """A share, confidence or threshold: a percentage between 0 and 100% (below 100% where the
    whole is no answer: `confidence 100%` checked clean, and the run then failed to plan)."""
    if num is None or not dimension(ctx, num, (FRACTION,), what, example):
        return
    value = num.quantity.base
    if not 0 < value <= 1:
        ctx.report(
            "PD409",
            f"{what} of {num.quantity} is outside 0 to 100%",
            num.span,
            label="not a fraction of the whole",
            help=f"write it like `{example}`",
        )
    elif value == 1 and not whole:
        ctx.report(
            "PD409",
            f"{what} of {num.quantity} leaves no interval: only an infinitely wide one holds at 100%",
            num.span,
            label="below 100% is needed",
            help=f"write it like `{example}`",
        )


def formula_dimension(ctx: Context, expr: Expr) -> str | None:
    """The dimension of a formula; None once a mismatch inside it has been reported."""
    if isinstance(expr, Name):
        return DIMENSIONLESS
    if isinstance(expr, Num):
        return expr.quantity.dimension
    if not isinstance(expr, BinOp):
        ctx.report(
            "PD005",
            "a formula is arithmetic over numbers and shape symbols",
            expr.span,
            label="not a number or a symbol",
            help="write a formula like `4*M*N`",
        )
        return None
    left, right = formula_dimension(ctx, expr.left), formula_dimension(ctx, expr.right)
    if left is None or right is None:
        return None
    result = _combine(expr.op, left, right)
    if result is None:
        verb = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}[expr.op]
        ctx.report(
            "PD302",
            f"cannot {verb} {left} and {right}",
            expr.span,
            label="units of different dimensions",
            help="write both sides in the same unit, or drop the units",
        )
    return result


def _combine(op: str, left: str, right: str) -> str | None:
    """The dimension of `left op right`, or None when it has no meaning."""
    if op in "+-":
        return left if left == right else None
    if op == "*":
        if DIMENSIONLESS in (left, right):
            return right if left == DIMENSIONLESS else left
        return None
    if right == DIMENSIONLESS:
        return left
    return DIMENSIONLESS if left == right else None
