"""The kernel-level evidence: correctness, mechanism counters and timing."""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.names import choice, distinct, one_of, shape_symbols, symbols_text
from perfdsl.check.units import FRACTION, fraction
from perfdsl.diagnostics import suggest
from perfdsl.nodes import Name, Num, Operation, Study
from perfdsl.plan_rules import MIN_THRESHOLD
from perfdsl.source import Span


def check_correctness(ctx: Context) -> None:
    evidence = ctx.study.correctness
    if evidence is None:
        ctx.missing(
            "PD107",
            f"study `{ctx.study.name.id}` collects no correctness evidence",
            help="add `evidence correctness { seeds 5; adversarial ...; poison nan }`",
        )
        return
    header = ctx.header(evidence.span)
    if ctx.study.imported:
        _not_run(ctx, header)
        return
    seeds = evidence.seeds
    if seeds is None or seeds.value < 2:
        ctx.report(
            "PD204",
            "correctness evidence uses fewer than two seeds",
            seeds.span if seeds else header,
            label="one input can pass by luck",
            help="add `seeds 5`",
        )
    elif seeds.value < 5:
        ctx.report(
            "PD504",
            f"correctness evidence uses only {seeds.value:g} seeds",
            seeds.span,
            label="few random inputs",
            help="use `seeds 5` or more",
        )
    if evidence.adversarial is None:
        ctx.report(
            "PD203",
            "correctness evidence has no adversarial shapes",
            header,
            label="shapes that are not multiples of the block size are where kernels break",
            help=f"add `adversarial {_adversarial_example(ctx)}`",
        )
    shape_symbols(ctx, evidence.adversarial, "adversarial shapes")
    if evidence.poison is None:
        ctx.report(
            "PD217",
            "correctness evidence does not poison outputs",
            header,
            label="unwritten outputs would go unnoticed",
            help="add `poison nan`",
        )
    else:
        choice(ctx, evidence.poison, words.POISONS, "poison")


def _not_run(ctx: Context, header: Span) -> None:
    """A wholly imported study runs no code: its correctness is stated, never silently skipped."""
    evidence = ctx.study.correctness
    assert evidence is not None
    if evidence.not_run is None:
        ctx.report(
            "PD220",
            "the operations are imported, and correctness is neither checked nor stated",
            header,
            label="result files record times, never outputs",
            help='add `not_run "<where the outputs were checked>"`',
        )


def _adversarial_example(ctx: Context) -> str:
    """Odd shapes over the workload's own symbols, for the help line."""
    workload = ctx.study.workload
    if workload is None or workload.shapes is None:
        return "(M, N) in [(1, 1), (3, 4097)]"
    symbols = workload.shapes.symbols
    odd = (1, 3, 4097, 31)
    first = ", ".join("1" for _ in symbols)
    second = ", ".join(str(odd[(i + 1) % len(odd)]) for i in range(len(symbols)))
    if len(symbols) == 1:
        return f"{symbols[0].id} in [{first}, {second}]"
    return f"{symbols_text(workload.shapes)} in [({first}), ({second})]"


def check_mechanism_evidence(ctx: Context) -> None:
    evidence = ctx.study.mechanism
    if evidence is None:
        ctx.missing(
            "PD108",
            f"study `{ctx.study.name.id}` collects no mechanism evidence",
            help="add `evidence mechanism { measure bytes; roof kernels.copy:copy }`",
        )
        return
    for measure in evidence.measure:
        choice(ctx, measure, words.MEASURES, "measured quantity")
    distinct(ctx, evidence.measure, "quantity")
    if isinstance(evidence.roof, Name) and ctx.study.operation(evidence.roof.id) is None:
        names = [o.name.id for o in ctx.study.operations]
        ctx.report(
            "PD301",
            f"no operation named `{evidence.roof.id}`",
            evidence.roof.span,
            label="the roof is an operation or a Python reference",
            help=suggest(evidence.roof.id, names) or "write `roof kernels.copy:copy`",
        )
    _observable(ctx)


def _observable(ctx: Context) -> None:
    """The measured quantities include the one the mechanism changes."""
    evidence, change = ctx.study.mechanism, ctx.study.change
    assert evidence is not None
    if change is None or change.mechanism is None:
        return
    needed = words.MECHANISM_MEASURES.get(change.mechanism.id)
    measured = [m.id for m in evidence.measure]
    if needed is None or needed in measured:
        return
    span = (
        evidence.measure[0].span.to(evidence.measure[-1].span)
        if evidence.measure
        else ctx.header(evidence.span)
    )
    ctx.report(
        "PD401",
        f"mechanism evidence cannot observe `{change.mechanism.id}`",
        span,
        label=f"measures only {one_of(measured)}" if measured else "measures nothing",
        help=f"add `{needed}` to `measure`",
    )


def observed(study: Study, operation: Operation, quantity: str) -> bool:
    """Whether the run will measure `quantity`, or the operation models it.

    What a prediction on a mechanism quantity, or a rejected hypothesis citing
    one, needs before any number can stand behind it.
    """
    evidence = study.mechanism
    measured = evidence is not None and any(m.id == quantity for m in evidence.measure)
    return measured or any(m.quantity.id == quantity for m in operation.models)


def check_timing(ctx: Context) -> None:
    timing = ctx.study.timing
    if timing is None:
        ctx.missing(
            "PD109",
            f"study `{ctx.study.name.id}` collects no kernel timing",
            help="add `evidence timing { warmup 10; repeats 100; rotate 4; confidence 95% }`",
        )
        return
    header = ctx.header(timing.span)
    # Warm-up, repeats and rotation are the imported harness's settings, not the study's.
    counts = (
        ()
        if ctx.study.imported
        else (
            (
                timing.warmup,
                1,
                "PD205",
                "kernel timing has no warm-up",
                "the first calls include compilation and cold caches",
                "add `warmup 10`",
            ),
            (
                timing.repeats,
                2,
                "PD206",
                "kernel timing has no repeats",
                "one sample cannot separate an effect from noise",
                "add `repeats 100`",
            ),
            (
                timing.rotate,
                2,
                "PD215",
                "kernel timing does not rotate inputs",
                "one input buffer is timed from the cache",
                "add `rotate 4`",
            ),
        )
    )
    for count, least, code, message, label, help in counts:
        if count is None or count.value < least:
            ctx.report(code, message, count.span if count else header, label=label, help=help)
    for count, what in ((timing.repeats, "repeats"), (timing.blocks, "blocks")):
        if count is not None and 2 <= count.value < 10:
            ctx.report(
                "PD503",
                f"only {count.value:g} timing {what}",
                count.span,
                label="a wide confidence interval",
                help=f"use `{what} 10` or more",
            )
    if timing.confidence is None:
        ctx.report(
            "PD216",
            "kernel timing states no confidence level",
            header,
            label="an interval needs its level",
            help="add `confidence 95%`",
        )
    fraction(ctx, timing.confidence, "a confidence level", "confidence 95%", whole=False)
    fraction(ctx, timing.threshold, "a threshold", "threshold 2%")
    _threshold_floor(ctx, timing.threshold)


def _threshold_floor(ctx: Context, threshold: Num | None) -> None:
    """A threshold below the floor the evaluation raises it to: the report's "at least 1 %" was
    the only place a new user's `threshold 0.5%` was seen to become 1 %."""
    if threshold is None or threshold.quantity.dimension != FRACTION:
        return
    value = threshold.quantity.base
    if 0 < value < MIN_THRESHOLD:
        ctx.report(
            "PD512",
            f"a threshold of {threshold.quantity} is below the {MIN_THRESHOLD:.0%} floor: "
            f"verdicts use {MIN_THRESHOLD:.0%}",
            threshold.span,
            label=f"raised to {MIN_THRESHOLD:.0%}",
            help=f"write `threshold {MIN_THRESHOLD:.0%}` or more, the band the verdicts are judged against",
        )
