"""Names and words: fixed vocabularies, duplicates, shape symbols."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.diagnostics import suggest
from perfdsl.nodes import Application, BinOp, Expr, Name, Operation, ShapeSet
from perfdsl.source import Span


def one_of(options: Sequence[str]) -> str:
    """`a`, `b`, `c`: a list of words as a message shows them."""
    return ", ".join(f"`{option}`" for option in options)


def symbols_text(shapes: ShapeSet) -> str:
    """`(M, N)` for several symbols, `N` for one."""
    names = ", ".join(symbol.id for symbol in shapes.symbols)
    return f"({names})" if len(shapes.symbols) > 1 else names


def names_in(expr: Expr) -> Iterable[Name]:
    """The names a formula uses, left to right."""
    if isinstance(expr, Name):
        yield expr
    elif isinstance(expr, BinOp):
        yield from names_in(expr.left)
        yield from names_in(expr.right)


def choice(ctx: Context, name: Name, options: Sequence[str], what: str) -> bool:
    """Report a word outside its fixed set; True when the word is known."""
    if name.id in options:
        return True
    ctx.report(
        "PD306",
        f"unknown {what} `{name.id}`",
        name.span,
        label=f"no such {what}",
        help=suggest(name.id, options) or f"a {what} is one of {one_of(options)}",
    )
    return False


def subject(ctx: Context, name: Name, help: str) -> Operation | Application | None:
    """The operation or application `name` refers to; an undefined one is reported (PD301).

    Predictions and the evidence a rejected hypothesis cites both name their
    subject this way, so both resolve it here and say "did you mean" alike.
    """
    study = ctx.study
    # A name defined twice is reported once (PD303); read it as the operation.
    found = study.operation(name.id) or study.application(name.id)
    if found is None:
        names = [o.name.id for o in study.operations] + [a.name.id for a in study.applications]
        ctx.report(
            "PD301",
            f"no operation or application named `{name.id}`",
            name.span,
            label="not defined",
            help=suggest(name.id, names) or help,
        )
    return found


def quantity_of(
    ctx: Context,
    owner: Operation | Application,
    quantity: Name,
    options: Sequence[str],
    *,
    code: str,
    label: str,
    verb: str,
) -> bool:
    """Report a quantity its operation or application does not have; True when it has it."""
    if quantity.id in options:
        return True
    kind = "an operation" if isinstance(owner, Operation) else "an application"
    ctx.report(
        code,
        f"`{owner.name.id}` is {kind}: it has no quantity `{quantity.id}`",
        quantity.span,
        label=label,
        help=suggest(quantity.id, options) or f"{verb} one of {one_of(options)}",
    )
    return False


def distinct(ctx: Context, names: Sequence[Name], what: str) -> None:
    """Report a word listed twice in one setting (`targets cuda, cuda`)."""
    for index, name in enumerate(names):
        if any(earlier.id == name.id for earlier in names[:index]):
            ctx.report(
                "PD303",
                f"{what} `{name.id}` is listed twice",
                name.span,
                label="listed again",
                help=f"list `{name.id}` once",
            )


def statistic(ctx: Context, word: Name) -> None:
    """A latency statistic: a percentile like `p99`, or `mean`, `median`, `max`."""
    if words.is_statistic(word.id):
        return
    ctx.report(
        "PD306",
        f"unknown statistic `{word.id}`",
        word.span,
        label="not a latency statistic",
        help=suggest(word.id, words.STATISTIC_EXAMPLES)
        or "a latency is bounded at a percentile from `p1` to `p99`, or `mean`, `median`, `max` "
        "(the slowest request)",
    )


def shape_symbols(ctx: Context, shapes: ShapeSet | None, what: str) -> None:
    """Shapes outside the workload (limits, adversarial) use the workload's symbols."""
    workload = ctx.study.workload
    if shapes is None or workload is None or workload.shapes is None:
        return
    expected = workload.shapes
    if [s.id for s in shapes.symbols] == [s.id for s in expected.symbols]:
        return
    ctx.report(
        "PD304",
        f"{what} are over {symbols_text(shapes)} but the workload's shapes are over {symbols_text(expected)}",
        _symbols_span(shapes),
        label="not the workload's symbols",
        help=f"write these shapes over `{symbols_text(expected)}`",
    )


def _symbols_span(shapes: ShapeSet) -> Span:
    return shapes.symbols[0].span.to(shapes.symbols[-1].span)
