"""The workload and its baseline operating point: shapes, weights, dtype, tolerances, objective."""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.names import choice, distinct, statistic
from perfdsl.check.units import EPSILON, PLAIN, dimension, number
from perfdsl.nodes import Condition, Name, Num
from perfdsl.source import Span

REFERENCE_DTYPE = "float64"
"""What every reference answers in (`Reference.compute`): the one `vs` a correctness check can keep."""


def check_workload(ctx: Context) -> None:
    workload = ctx.study.workload
    if workload is None:
        ctx.missing(
            "PD102",
            f"study `{ctx.study.name.id}` declares no workload",
            help="add `workload { ... }` with summary, shapes, weights, dtype, "
            "targets, objective and correct",
        )
        return
    header = ctx.header(workload.span)
    parts = (
        (workload.summary, "summary", 'summary "Decoder step, hidden size 4096"'),
        (workload.shapes, "shapes", "shapes (M, N) in [(64, 4096), (256, 8192)]"),
        (workload.dtype, "dtype", "dtype float32"),
        (workload.targets, "targets", "targets cuda, cpu"),
    )
    for value, part, example in parts:
        if not value:
            ctx.report(
                "PD207",
                f"the workload has no `{part}`",
                header,
                label=f"`{part}` missing",
                help=f"add `{example}`",
            )
    if workload.dtype is not None:
        choice(ctx, workload.dtype, words.DTYPES, "dtype")
    for target in workload.targets:
        choice(ctx, target, words.TARGETS, "target")
    distinct(ctx, workload.targets, "target")
    _weights(ctx)
    # An imported study measures the one shape its files hold (PD412): more is not the fix.
    if workload.shapes is not None and len(workload.shapes.shapes) == 1 and not ctx.study.imported:
        ctx.report(
            "PD501",
            "the workload has a single shape",
            workload.shapes.shapes[0].span,
            label="the only shape",
            help="add the other shapes production traffic takes, with their weights",
        )
    _tolerances(ctx, header)


def _weights(ctx: Context) -> None:
    """Weights are a distribution over the shapes: one each, none negative, sum 1."""
    workload = ctx.study.workload
    assert workload is not None
    shapes = workload.shapes.shapes if workload.shapes is not None else ()
    if workload.weights_span is None:
        if len(shapes) > 1:
            ctx.report(
                "PD207",
                "the workload has no `weights`",
                ctx.header(workload.span),
                label="`weights` missing",
                help="add `weights [0.7, 0.3]`, one share of traffic per shape",
            )
        return
    weights = workload.weights
    for weight in weights:
        dimension(ctx, weight, PLAIN, "a weight", "0.25")
    if shapes and len(weights) != len(shapes):
        ctx.report(
            "PD405",
            f"{len(weights)} weights for {len(shapes)} shapes",
            workload.weights_span,
            label="one weight per shape",
            help=f"give exactly {len(shapes)} weights, in the order of the shapes",
        )
    negative = [w for w in weights if w.quantity.base < 0]
    for weight in negative:
        ctx.report(
            "PD405",
            f"the weight {weight.quantity} is negative",
            weight.span,
            label="a share of traffic cannot be negative",
            help="use 0 for a shape that receives no traffic",
        )
    total = sum(w.quantity.base for w in weights)
    if weights and not negative and abs(total - 1) > EPSILON:
        ctx.report(
            "PD405",
            f"the weights sum to {total:g}, not 1",
            workload.weights_span,
            label="weights are shares of traffic",
            help="divide each weight by their sum",
        )


def _tolerances(ctx: Context, header: Span) -> None:
    """Correctness constraints: a known metric, a plain bound, reduced-precision rules."""
    workload = ctx.study.workload
    assert workload is not None
    if not workload.correct:
        ctx.report(
            "PD202",
            "the workload states no correctness tolerance",
            header,
            label="no `correct` condition",
            help="add `correct rel_l2 <= 1e-5 vs float64`",
        )
    for condition in workload.correct:
        metric = Name(condition.metric, condition.subject[0].span.to(condition.subject[-1].span))
        choice(ctx, metric, words.ERROR_METRICS, "error metric")
        if isinstance(condition.bound, Num):
            dimension(ctx, condition.bound, PLAIN, "a tolerance", "1e-5")
        if condition.versus is not None and choice(ctx, condition.versus, words.DTYPES, "dtype"):
            _against_float64(ctx, condition.versus)
    _reduced_precision(ctx)


def _against_float64(ctx: Context, versus: Name) -> None:
    """Every correctness check is against the reference's float64 answer: `vs float32` checked
    clean and the report then said "against its float64 reference" beside it."""
    if versus.id != REFERENCE_DTYPE:
        ctx.report(
            "PD513",
            f"correctness is checked against a `{REFERENCE_DTYPE}` reference, not `{versus.id}`",
            versus.span,
            label=f"the reference answers in `{REFERENCE_DTYPE}`",
            help=f"write `vs {REFERENCE_DTYPE}`",
        )


def _reduced_precision(ctx: Context) -> None:
    """float16 and bfloat16 need a tolerance they can meet, against float64."""
    workload = ctx.study.workload
    assert workload is not None
    dtype = workload.dtype
    if dtype is None or dtype.id not in words.REDUCED_PRECISION_ROUNDOFF:
        return
    roundoff = words.REDUCED_PRECISION_ROUNDOFF[dtype.id]
    if not any(c.versus is not None and c.versus.id == "float64" for c in workload.correct):
        ctx.report(
            "PD404",
            f"`{dtype.id}` results are not compared with `float64`",
            dtype.span,
            label="reduced precision",
            help="add `correct rel_l2 <= 1e-2 vs float64`",
        )
    for condition in workload.correct:
        bound = number(condition.bound)
        if condition.metric in words.RELATIVE_ERROR_METRICS and bound is not None and bound < roundoff:
            ctx.report(
                "PD404",
                f"a `{condition.metric}` tolerance of {bound:g} is tighter than `{dtype.id}` can round to",
                condition.bound.span,
                label=f"`{dtype.id}` rounds at {roundoff:.2g}",
                help=f"state the tolerance `{dtype.id}` meets, e.g. "
                f"`correct {condition.metric} <= 1e-2 vs float64`",
            )


def check_baseline(ctx: Context) -> None:
    """The baseline operating point: the workload's objective, with its load for latency."""
    workload = ctx.study.workload
    if workload is None:
        return
    objective = workload.objective
    if objective is None:
        ctx.report(
            "PD103",
            "the workload states no objective",
            ctx.header(workload.span),
            label="no baseline operating point",
            help="add `objective p99 latency <= 25 ms at 400 rps`",
        )
        return
    check_objective(ctx, objective)


def check_objective(ctx: Context, objective: Condition) -> None:
    """A known metric and statistics, in its metric's unit, and a load for a latency objective."""
    *statistics, metric = objective.subject
    if not choice(ctx, metric, tuple(words.OBJECTIVE_METRICS), "objective metric"):
        return
    for word in statistics:
        statistic(ctx, word)
    wanted = words.OBJECTIVE_METRICS[metric.id]
    example = "25 ms" if wanted == "time" else "400 rps"
    if isinstance(objective.bound, Num):
        dimension(ctx, objective.bound, (wanted,), f"a {metric.id} objective", example)
    if isinstance(objective.at, Num):
        dimension(ctx, objective.at, ("rate",), "the load of an objective", "at 400 rps")
    if metric.id == "latency" and objective.at is None:
        ctx.report(
            "PD103",
            "the latency objective states no load",
            objective.bound.span,
            label="latency at which request rate?",
            help="add the operating point, e.g. `at 400 rps`",
        )
