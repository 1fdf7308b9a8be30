"""The investigation record: each rejected alternative, why, and the numbers of the evidence it cites.

A rejected hypothesis may cite quantities (`evidence normalize.bandwidth`). Each
is read here from evaluation.json, from the fields the evidence sections print,
so the record quotes this run instead of restating the study. A quantity the
evaluation lacks is said to be missing, with the evaluation's own reason where
it records one: an argument is never presented as a measurement. An imported
study's report lists its rejected alternatives with `rejected_items` too, its
numbers read from the imported evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from perfdsl import vocabulary as words
from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import Combined, Comparison, OperationResult
from perfdsl.nodes import QuantityRef, Study
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

Reader = Callable[[ReportContext, OperationResult], str]

# Quantities read from timings: on a run whose timings are not evidence (the
# simulator) they have no number to quote, whatever the evaluation holds.
_TIMED = ("time", words.BANDWIDTH, "throughput", "goodput")

# Static counts quoted per compiled kernel: what decides occupancy and traffic
# on CUDA (registers, shared memory, global accesses); instructions on the CPU.
_STATIC_SHOWN = {
    "cuda": (
        ("registers", "registers {}"),
        ("shared_bytes", "shared memory {} B"),
        ("global_loads", "global loads {}"),
        ("global_stores", "global stores {}"),
    ),
    "cpu": (("instructions", "instructions {}"),),
}
_SIMD_WIDTHS = ("zmm", "ymm", "xmm")
"""A CPU function's instructions by the widest vector register they name: "only the change is
vectorised" is a hypothesis a total count cannot test (a new user's rejection of it quoted 179
against 187 instructions and nothing else)."""


def render_investigation(ctx: ReportContext, out: Blocks) -> None:
    """Each rejected alternative explanation, why, and the evidence it cites from this run."""
    out.add(rejected_items(ctx.study, lambda ref: _numbers(ctx, ref.subject.id, ref.quantity.id)))


def rejected_items(study: Study, numbers: Callable[[QuantityRef], str]) -> str:
    """Each rejected alternative, why, and each quantity it cites with what `numbers` reads for it."""
    if not study.rejected:
        return "The study records no rejected alternatives."
    items = []
    for rejected in study.rejected:
        claim = fmt.text(rejected.text.value) if rejected.text else fmt.MISSING
        because = fmt.text(rejected.because.value) if rejected.because else "no reason given"
        cited = (
            "; ".join(f"{fmt.code(ref.target)}: {numbers(ref)}" for ref in rejected.evidence)
            if rejected.evidence
            else "no evidence named; argued from the evidence above"
        )
        items.append(f"**Rejected:** {claim}. **Because:** {because}. **Evidence:** {cited}.")
    return fmt.bullets(items)


def _numbers(ctx: ReportContext, name: str, quantity: str) -> str:
    if quantity in _TIMED and not ctx.timings_valid:
        return missing(ctx.evaluation.timings_note)
    if ctx.study.operation(name) is None and ctx.study.application(name) is not None:
        return _application(ctx, name, quantity)
    op = next((o for o in ctx.operations if o.name == name), None)
    if op is None:
        return missing(f"the run measured no operation `{name}`")
    reader = _OPERATION_READERS.get(quantity)
    return reader(ctx, op) if reader else _mechanism(op, quantity)


def missing(reason: object) -> str:
    """The words for a quantity the evaluation does not hold, with its reason if recorded."""
    return f"missing from this run ({fmt.message(reason) if reason else 'no reason recorded'})"


def _spread(values: Sequence[float], show: Callable[[float], str]) -> str:
    """`0.4018` when every shape agrees to the digits shown, else `0.3990 to 0.4018`."""
    low, high = show(min(values)), show(max(values))
    return low if low == high else f"{low} to {high}"


def _reasons(reasons: Iterable[str | None]) -> str:
    """The distinct reasons the shapes record, once each: shapes usually share one."""
    return "; ".join(sorted({r for r in reasons if r}))


def _shapes(n: int) -> str:
    return f"{n} shape{'' if n == 1 else 's'}"


def _time(ctx: ReportContext, op: OperationResult) -> str:
    c = op.combined
    if c is None:
        return missing(op.combined_missing)
    return _compared(ctx, "weighted kernel time", c)


def _compared(ctx: ReportContext, what: str, c: Comparison | Combined) -> str:
    """A time ratio with its interval and verdict, as the timing sections state them."""
    return (
        f"{what} ratio (change / baseline) {fmt.ratio(c.ratio)}, {fmt.percent(ctx.interval_level, 4)} "
        f"interval {fmt.interval(c.ci_low, c.ci_high)}: **{fmt.text(c.verdict)}**"
    )


def _bandwidth(ctx: ReportContext, op: OperationResult) -> str:
    shapes = op.shapes
    fractions: dict[str, list[float]] = {}
    for shape in shapes:
        for b in shape.mechanism.bandwidth:
            # A figure above the measured roof is a wrong byte model, not a bandwidth to cite.
            if b.roof_fraction is not None and not b.invalid:
                fractions.setdefault(b.arm, []).append(float(b.roof_fraction))
    if not fractions:
        reasons = _reasons(s.mechanism.roof_missing for s in shapes)
        return missing(reasons or "no shape has modelled bytes and a copy roof")
    arms = ", ".join(
        f"{arm} {_spread(fractions[arm], fmt.percent)} ({_shapes(len(fractions[arm]))})"
        for arm in ARMS
        if arm in fractions
    )
    return f"achieved bandwidth (modelled bytes over median time) as a share of the copy roof: {arms}"


def _static(ctx: ReportContext, op: OperationResult) -> str:
    kernels = []
    for arm in ARMS:
        for k in op.static.get(arm, ()):
            counts = k.counts
            shown = [
                label.format(fmt.count(counts[key]))
                for key, label in _STATIC_SHOWN.get(k.kind, ())
                if key in counts
            ]
            widths = [f"{r} {fmt.count(counts[f'simd_{r}'])}" for r in _SIMD_WIDTHS if f"simd_{r}" in counts]
            if widths:
                shown.append(f"of which by the widest vector register they name: {', '.join(widths)}")
            counted = ", ".join(shown) or fmt.MISSING
            kernels.append(
                f"{arm} {fmt.code(k.kernel)} {f'not counted: {k.missing}' if k.missing else counted}"
            )
    if not kernels:
        return missing("no static counts were recorded")
    # The shared-memory note is the cubin's: a study of CPU functions alone has none to explain.
    cuda = any(k.kind == "cuda" for arm in ARMS for k in op.static.get(arm, ()))
    note = (
        "; shared memory per block as the cubin allocates it, including the 1 KiB sm_90 reserves in a "
        "kernel that uses any"
        if cuda
        else ""
    )
    return f"static counts (compiled, not run{note}): " + "; ".join(kernels)


def _mechanism(op: OperationResult, quantity: str) -> str:
    """A mechanism quantity's ratio over shapes: counted where counters ran, else modelled."""
    mechanisms = [s.mechanism for s in op.shapes]
    found = [q for m in mechanisms for q in m.quantities if q.name == quantity]
    counted = [q for q in found if q.label == "counted"]
    basis, chosen = ("counted", counted) if counted else ("modelled", found)
    ratios = [float(q.ratio) for q in chosen if q.ratio is not None]
    not_counted = _reasons(m.counters_missing for m in mechanisms)
    if not ratios:
        return missing(not_counted or f"`{quantity}` was neither counted nor modelled")
    said = f"{basis} ratio (change / baseline) {_spread(ratios, fmt.ratio)} ({_shapes(len(ratios))})"
    if basis == "counted":
        return said
    return (
        said
        + ", from the study's formulas, not counted"
        + (f" ({fmt.message(not_counted)})" if not_counted else "")
    )


_OPERATION_READERS: dict[str, Reader] = {"time": _time, words.BANDWIDTH: _bandwidth, words.STATIC: _static}


def _application(ctx: ReportContext, name: str, quantity: str) -> str:
    end = ctx.end_to_end
    if end is None:
        return missing(ctx.evaluation.end_to_end_missing)
    if end.application != name:
        return missing(f"the run measured application `{end.application}`")
    if quantity == "time":
        c = end.comparison
        if c is None:
            return missing(end.comparison_missing)
        return _compared(ctx, "request-time", c)
    load = ctx.load
    if load is None:
        return missing(ctx.evaluation.load_missing)
    capacity = load.capacity
    if capacity is None:
        return missing(load.capacity_missing)
    goodputs = ", ".join(f"{fmt.text(g.arm)} {fmt.rate(g.goodput)}" for g in load.arms)
    return f"goodput ratio (change / baseline) at the SLO {fmt.capacity_ratio(load)} ({goodputs})"
