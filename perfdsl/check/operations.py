"""The limiting operation and the change to it: implementations, modelled quantities, mechanism."""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.names import choice, names_in, one_of
from perfdsl.check.units import formula_dimension
from perfdsl.diagnostics import suggest
from perfdsl.nodes import BinOp, Expr, Model, Num, Operation
from perfdsl.quantity import DIMENSIONLESS

# Modelled quantities that carry a unit when the formula writes one.
MODEL_DIMENSIONS = {"bytes": ("bytes", DIMENSIONLESS)}


def check_operation(ctx: Context) -> None:
    if not ctx.study.operations:
        ctx.missing(
            "PD104",
            f"study `{ctx.study.name.id}` names no limiting operation",
            help="add `operation <name> { baseline pkg.mod:old; change pkg.mod:new; "
            "reference pkg.mod:reference }`",
        )
    for operation in ctx.study.operations:
        _implementations(ctx, operation)
        for model in operation.models:
            _model(ctx, model)


def _implementations(ctx: Context, operation: Operation) -> None:
    name = operation.name
    for part, ref in (("baseline", operation.baseline), ("change", operation.change)):
        if ref is None:
            ctx.report(
                "PD208",
                f"operation `{name.id}` has no {part}",
                name.span,
                label=f"`{part}` missing",
                help=f"add `{part} package.module:function`",
            )
    # An imported operation is never run, so there is nothing to check against a reference.
    if operation.reference is None and not operation.imported:
        ctx.report(
            "PD201",
            f"operation `{name.id}` has no reference implementation",
            name.span,
            label="nothing to check correctness against",
            help="add `reference package.module:reference`, computed in float64",
        )


def _model(ctx: Context, model: Model) -> None:
    """A modelled quantity: a known measure, formulas over shape symbols, one dimension."""
    if not choice(ctx, model.quantity, words.MEASURES, "modelled quantity"):
        return
    workload = ctx.study.workload
    symbols = (
        [s.id for s in workload.shapes.symbols]
        if workload is not None and workload.shapes is not None
        else None
    )
    dimensions = []
    for formula in (model.baseline, model.change):
        if symbols is not None:
            for name in names_in(formula):
                if name.id not in symbols:
                    ctx.report(
                        "PD307",
                        f"`{name.id}` is not a shape symbol",
                        name.span,
                        label="not among the workload's symbols",
                        help=suggest(name.id, symbols) or f"formulas use the shape symbols {one_of(symbols)}",
                    )
        dimensions.append(formula_dimension(ctx, formula))
    if model.quantity.id == "bytes":
        for formula in (model.baseline, model.change):
            _size_units_per_element(ctx, formula)
    allowed = MODEL_DIMENSIONS.get(model.quantity.id, (DIMENSIONLESS,))
    for formula, dimension in zip((model.baseline, model.change), dimensions, strict=True):
        if dimension is not None and dimension not in allowed:
            ctx.report(
                "PD302",
                f"a `{model.quantity.id}` formula gives {dimension}",
                formula.span,
                label=f"expected {' or '.join(allowed)}",
                help=f"`{model.quantity.id}` counts per call: drop the unit",
            )


def _size_units_per_element(ctx: Context, formula: Expr) -> None:
    """Warn of `4 KiB*(M*N)`: a size of a kilobyte or more for each unit of a count of elements."""
    if not isinstance(formula, BinOp):
        return
    if formula.op == "*":
        for size, count in ((formula.left, formula.right), (formula.right, formula.left)):
            if (
                isinstance(size, Num)
                and size.quantity.dimension == "bytes"
                and size.quantity.base >= 1000
                and next(names_in(count), None) is not None
            ):
                element, each = size.quantity.value, size.quantity.base
                ctx.report(
                    "PD509",
                    f"`{size.quantity}` for each unit of a count of elements: "
                    f"{size.quantity.base:.6g} bytes per element",
                    formula.span,
                    label=f"`{size.quantity}` times shape symbols",
                    help=f"if an element is {element:g} bytes, write `{element:g}*(...)`; "
                    f"to mean {each:.6g} bytes each, write the number `{each:.6g}*(...)`",
                )
                return
    _size_units_per_element(ctx, formula.left)
    _size_units_per_element(ctx, formula.right)


def check_mechanism(ctx: Context) -> None:
    change = ctx.study.change
    if change is None:
        ctx.missing(
            "PD105",
            f"study `{ctx.study.name.id}` states no mechanism",
            help='add `change { mechanism bytes_removed; summary "..." }`',
        )
        return
    if change.mechanism is None:
        ctx.report(
            "PD105",
            "the change states no mechanism",
            ctx.header(change.span),
            label="`mechanism` missing",
            help=f"add `mechanism <category>`, one of {one_of(words.MECHANISMS)}",
        )
    else:
        choice(ctx, change.mechanism, words.MECHANISMS, "mechanism")
    if change.summary is None:
        ctx.report(
            "PD218",
            "the change has no summary",
            ctx.header(change.span),
            label="`summary` missing",
            help='add `summary "..."`: which work the change removes, and how',
        )
