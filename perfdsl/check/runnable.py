"""What `perfdsl run` will be asked to do, checked before it is asked.

A study that checks must run, or fail with a message: every number the run
plan reads (counts, the load sweep, each shape's size and memory, each byte or
launch formula at each shape) is checked here with the plan's own arithmetic,
so that `perfdsl.plan` never meets a value it cannot use.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from perfdsl.bundle.arms import ARMS
from perfdsl.check.context import Context
from perfdsl.check.names import names_in
from perfdsl.nodes import BinOp, Expr, Load, Model, Name, Num, ShapeSet
from perfdsl.plan_rules import DEFAULT_TIMING, PlanError, evaluate_formula

MAX_RATES = 1000
"""A sweep is one load test per rate; more rates than this is a typo in the step."""
MEMORY_LIMIT_BYTES = 64 * 2**30
"""More than a large GPU (or a typical host) holds for one shape's buffers."""
ITEM_BYTES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2}
REFERENCE_BYTES = 16
"""Per element, the float64 reference's input and output."""


def estimated_bytes(elements: int, dtype: str, rotate: int) -> int:
    """A static estimate of one shape's memory: every arm's rotated inputs and outputs, plus the host
    copies of the inputs and the float64 reference. An estimate, not an accounting: each kernel's
    own inputs and outputs are known only when its module is imported, which `check` never does.
    The run estimates again from the reference's own arrays (`perfdsl.runtime.memory`)."""
    item = ITEM_BYTES.get(dtype, 1)
    # Baseline and change are timed together, each on its own copies of every buffer set.
    return elements * (item * (2 * len(ARMS) + 1) * rotate + REFERENCE_BYTES)


def check_runnable(ctx: Context) -> None:
    _signs(ctx)
    _counts(ctx)
    _load_sweep(ctx)
    workload = ctx.study.workload
    _sizes(ctx, workload.shapes if workload else None, "a workload shape")
    _sizes(ctx, ctx.study.correctness.adversarial if ctx.study.correctness else None, "an adversarial shape")
    for target in ctx.study.target_expectations:
        _sizes(ctx, target.application, f"target `{target.name.id}`'s application shape")
    for limit in _timed_limits(ctx):
        _sizes(ctx, limit, "a limit's shape")
    _formulas(ctx)


def _timed_limits(ctx: Context) -> list[ShapeSet]:
    """The shape sets of the `limit regression`s: `perfdsl run` times them beside the workload."""
    return [limit.shapes for limit in ctx.study.limits if limit.kind.id == "regression" and limit.shapes]


def _signs(ctx: Context) -> None:
    """Numbers that only mean something when positive: a minus sign there is a slip.

    The grammar reads `-0.2` so that a negative weight can be answered in words;
    these are the other places a negative number could now be written.
    """
    study = ctx.study
    workload, end, value = study.workload, study.end_to_end, study.value
    conditions = [*(workload.correct if workload else ()), workload.objective if workload else None]
    bounds = [(c.bound, f"the bound of `{c.metric}`") for c in conditions if c is not None]
    if end is not None and end.slo is not None:
        bounds.append((end.slo.bound, "the SLO"))
    for target in study.target_expectations:
        if target.objective is not None:
            bounds.append((target.objective.bound, f"target `{target.name.id}`'s objective"))
        if target.slo is not None:
            bounds.append((target.slo.bound, f"target `{target.name.id}`'s SLO"))
    if value is not None:
        bounds += [(value.frequency, "the frequency"), (value.scale, "the scale")]
    for bound, what in bounds:
        if isinstance(bound, Num) and bound.value < 0:
            ctx.report(
                "PD312",
                f"{what} is negative",
                bound.span,
                label="only a positive number has meaning here",
                help=f"drop the minus sign: `{-bound.value:g}`",
            )


MAX_COUNT = 10**9
"""More calls, blocks, requests or seeds than any run carries out: `requests 1e300` and `seeds
1e18` checked clean and planned, for a run that could never end."""


def _counts(ctx: Context) -> None:
    """Counts no other rule bounds below, that the run divides its work by, and none beyond what
    a run can carry out."""
    timing, end, correctness = ctx.study.timing, ctx.study.end_to_end, ctx.study.correctness
    for count, what, example in (
        (timing.blocks if timing else None, "timing blocks", "blocks 10"),
        (end.requests if end else None, "end-to-end requests", "requests 2000"),
    ):
        if count is not None and count.value < 1:
            ctx.report(
                "PD310",
                f"0 {what} leave nothing to measure",
                count.span,
                label="at least 1",
                help=f"write it like `{example}`",
            )
    for count, what, example in (
        (timing.warmup if timing else None, "warm-up calls", "warmup 10"),
        (timing.repeats if timing else None, "timing repeats", "repeats 100"),
        (timing.blocks if timing else None, "timing blocks", "blocks 10"),
        (timing.max_blocks if timing else None, "blocks at most", "max_blocks 400"),
        (end.requests if end else None, "end-to-end requests", "requests 2000"),
        (correctness.seeds if correctness else None, "correctness seeds", "seeds 5"),
    ):
        if count is not None and not count.value <= MAX_COUNT:
            ctx.report(
                "PD310",
                f"{ctx.study.source.text[count.span.start : count.span.end]} {what} are more than any "
                "run carries out",
                count.span,
                label=f"at most {MAX_COUNT:,}",
                help=f"write it like `{example}`",
            )


def _load_sweep(ctx: Context) -> None:
    """Rates from start to stop by step: increasing, positive, and a sweep of a sensible length."""
    end = ctx.study.end_to_end
    sweeps = [end.load] if end is not None and end.load is not None else []
    sweeps += [t.load for t in ctx.study.target_expectations if t.load is not None]
    for load in sweeps:
        _one_sweep(ctx, load)


def _one_sweep(ctx: Context, load: Load) -> None:
    rates = load.rates
    start, stop = rates.start.quantity.base, rates.stop.quantity.base
    step = rates.step.quantity.base if rates.step else None
    if not all(math.isfinite(v) for v in (start, stop, step or 1.0)):
        return  # a number too large to hold is PD007's, where it is written
    problem = help = ""
    if start <= 0:
        problem, help = "the load sweep starts at 0 requests per second", "start the sweep above 0"
    elif stop < start:
        problem = "the load sweep runs backwards"
        help = f"write the lower rate first: `{_num(rates.stop)}..{_num(rates.start)}`"
    elif step is not None and step <= 0:
        problem, help = "the load sweep's step is 0", "step by a positive rate, like `step 50`"
    elif step is not None and (stop - start) / step + 1 > MAX_RATES:
        count = math.floor((stop - start) / step) + 1
        problem = f"the load sweep has {count:,} rates"
        help = f"step by at least {(stop - start) / (MAX_RATES - 1):.3g}, for at most {MAX_RATES} load tests"
    if problem:
        ctx.report("PD310", problem, rates.span, label="no sweep the run can make", help=help)


def _num(num: Num) -> str:
    return f"{num.value:g}"


def _sizes(ctx: Context, shapes: ShapeSet | None, what: str) -> None:
    """Every size at least 1, and every shape's buffers within memory."""
    if shapes is None:
        return
    workload = ctx.study.workload
    dtype = workload.dtype.id if workload and workload.dtype else "float32"
    timing = ctx.study.timing
    rotate = (
        int(timing.rotate.value)
        if timing and timing.rotate and math.isfinite(timing.rotate.value)
        else DEFAULT_TIMING["rotate"]
    )
    symbols = [s.id for s in shapes.symbols]
    byte_formulas: list[Expr] | None = None  # walked for the first shape the product would not fit
    for shape in shapes.shapes:
        if any(size < 1 for size in shape.sizes):
            ctx.report(
                "PD311",
                f"{what} has a size of 0",
                shape.span,
                label="nothing to compute",
                help="every size is at least 1",
            )
            continue
        needed = estimated_bytes(math.prod(shape.sizes), dtype, rotate)
        if needed > MEMORY_LIMIT_BYTES:
            # The byte models can only lower the estimate: asked only where it does not fit.
            if byte_formulas is None:
                byte_formulas = [f for m, f in _arithmetic_formulas(ctx, symbols) if m.quantity.id == "bytes"]
            modelled = _modelled_bytes(byte_formulas, symbols, shape.sizes)
            if modelled is not None:
                elements = min(math.prod(shape.sizes), math.ceil(modelled / (2 * ITEM_BYTES.get(dtype, 1))))
                needed = estimated_bytes(elements, dtype, rotate)
        if needed > MEMORY_LIMIT_BYTES:
            ctx.report(
                "PD311",
                f"{what} needs about {_gib(needed)} GiB",
                shape.span,
                label=f"more than the {MEMORY_LIMIT_BYTES // 2**30} GiB a run may use",
                help=f"use a smaller shape, or fewer rotated buffer sets than `rotate {rotate}`",
            )


def _modelled_bytes(formulas: list[Expr], symbols: list[str], sizes: tuple[int, ...]) -> float | None:
    """The most bytes one call of any operation moves at this shape, by the study's byte
    `formulas` (arithmetic over `symbols`); None where none has a value there.

    `estimated_bytes` takes a buffer to hold the product of the shape's sizes, which is
    each buffer of an elementwise kernel and none of a gather's: `(N, T)` with N lookups
    into a table of T held 29 million GiB against the 0.6 GB the study models. A
    call's modelled bytes are its inputs read once and its outputs written once, so
    half of them, in elements, stands for one buffer where the product overstates it.
    """
    shape = dict(zip(symbols, sizes, strict=False))
    found = []
    for formula in formulas:
        try:
            value = evaluate_formula(formula, shape)
        except PlanError:
            continue
        if math.isfinite(value) and value > 0:
            found.append(value)
    return max(found, default=None)


def _arithmetic_formulas(ctx: Context, symbols: list[str]) -> Iterator[tuple[Model, Expr]]:
    """Every operation's modelled formula that is arithmetic over `symbols` alone, with its model.
    Unknown symbols (PD307) and what is not arithmetic (PD005) are reported elsewhere."""
    for operation in ctx.study.operations:
        for model in operation.models:
            for formula in (model.baseline, model.change):
                if _arithmetic(formula) and all(name.id in symbols for name in names_in(formula)):
                    yield model, formula


def _gib(size: int) -> str:
    """Whole GiB with thousands separators, or 3 significant digits once that is a wall of digits.

    Decimal, not float: a size written as `1e308` makes a product no float holds.
    Imported here, on the error's path only: `check` starts without it.
    """
    from decimal import Decimal

    gib = Decimal(size // 2**30)
    return f"{gib:,.0f}" if gib < 10**15 else f"{gib:.3g}"


MAX_ELEMENTS = 2**63
"""More elements than any array index reaches: a shape past it is PD311's alone, whatever its
formulas come to."""


def _formulas(ctx: Context) -> None:
    """Every modelled formula has a value at every shape the run times (no division by zero): the
    workload's and the `limit regression`s'."""
    workload = ctx.study.workload
    if workload is None or workload.shapes is None:
        return
    symbols = [s.id for s in workload.shapes.symbols]
    timed = [(workload.shapes, "a workload shape", "every workload shape")]
    timed += [
        (shapes, "a limit's shape", "every shape a `limit regression` names") for shapes in _timed_limits(ctx)
    ]
    # By the formula's text: the same text has the same values, and a study of 3,000 operations
    # states a handful of formulas (evaluated for each, they were a sixth of its check).
    known: dict[tuple[str, int], tuple[tuple[int, ...], str] | None] = {}
    text = ctx.study.source.text
    for model, formula in _arithmetic_formulas(ctx, symbols):
        for shapes, where, every in timed:
            if {s.id for s in shapes.symbols} != set(symbols):
                continue  # a limit over other symbols is PD304's
            key = (text[formula.span.start : formula.span.end], id(shapes))
            if key not in known:
                known[key] = _first_problem(formula, shapes)
            found = known[key]
            if found is not None:
                sizes, problem = found
                shape = ", ".join(str(size) for size in sizes)
                ctx.report(
                    "PD310",
                    f"the `{model.quantity.id}` formula {problem} at the shape ({shape})",
                    formula.span,
                    label=f"no count at {where}",
                    help=f"write a formula that counts zero or more at {every}",
                )
                break


def _first_problem(formula: Expr, shapes: ShapeSet) -> tuple[tuple[int, ...], str] | None:
    """The first shape of `shapes` at which `formula` has no count, and why; None where it has one at
    every shape. A count that overflows a float or falls below zero stopped the run as surely as a
    division by zero: `1e300*M*N*M` and `-4*M` both checked clean."""
    names = [s.id for s in shapes.symbols]
    for shape in shapes.shapes:
        if math.prod(shape.sizes) > MAX_ELEMENTS:
            continue  # a shape no array could hold is PD311's
        try:
            value = evaluate_formula(formula, dict(zip(names, shape.sizes, strict=True)))
        except PlanError:
            return tuple(shape.sizes), "divides by zero"
        if not math.isfinite(value):
            return tuple(shape.sizes), "has no finite value"
        if value < 0:
            return tuple(shape.sizes), "is negative"
    return None


def _arithmetic(expr: Expr) -> bool:
    if isinstance(expr, BinOp):
        return _arithmetic(expr.left) and _arithmetic(expr.right)
    return isinstance(expr, (Num, Name))
