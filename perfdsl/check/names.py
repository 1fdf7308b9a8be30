"""Names and words: fixed vocabularies, duplicates, shape symbols."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.diagnostics import suggest
from perfdsl.nodes import BinOp, Expr, Name, ShapeSet
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
        "PD306", f"unknown {what} `{name.id}`", name.span, label=f"no such {what}",
        help=suggest(name.id, options) or f"a {what} is one of {one_of(options)}",
    )
    return False


def distinct(ctx: Context, names: Sequence[Name], what: str) -> None:
    """Report a word listed twice in one setting (`targets cuda, cuda`)."""
    for index, name in enumerate(names):
        if any(earlier.id == name.id for earlier in names[:index]):
            ctx.report("PD303", f"{what} `{name.id}` is listed twice", name.span,
                       label="listed again", help=f"list `{name.id}` once")


def statistic(ctx: Context, word: Name) -> None:
    """A latency statistic: a percentile like `p99`, or `mean`, `median`, `max`."""
    if words.is_statistic(word.id):
        return
    ctx.report("PD306", f"unknown statistic `{word.id}`", word.span,
               label="not a latency statistic",
               help=suggest(word.id, words.STATISTIC_EXAMPLES)
               or "a latency is bounded at a percentile like `p99`, or `mean`, `median`, `max`")


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
        f"{what} are over {symbols_text(shapes)} but the workload's shapes are over "
        f"{symbols_text(expected)}",
        _symbols_span(shapes), label="not the workload's symbols",
        help=f"write these shapes over `{symbols_text(expected)}`",
    )


def _symbols_span(shapes: ShapeSet) -> Span:
    return shapes.symbols[0].span.to(shapes.symbols[-1].span)
