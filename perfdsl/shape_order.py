"""A shape's sizes in the order the study declares its symbols.

Bundle files are written with sorted keys, so a shape read back from one lists
`K` before `M`: a study that declares `(M, K)` was told "at K=64 x M=4096" on
the console and "4096x64" in the timing table, and read its adversarial shapes
as run transposed. Every place that writes a shape's sizes out of a mapping
orders them here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfdsl.nodes import ShapeSet, Study


def declared_order(study: Study | None) -> tuple[str, ...]:
    """The study's shape symbols as first declared: the workload's, then those only a
    correctness, application or limit shape set names."""
    if study is None:
        return ()
    sets: list[ShapeSet | None] = [study.workload.shapes if study.workload else None]
    sets.append(study.correctness.adversarial if study.correctness else None)
    sets += [target.application for target in study.target_expectations]
    sets += [limit.shapes for limit in study.limits]
    order: dict[str, None] = {}
    for shapes in sets:
        for symbol in shapes.symbols if shapes is not None else ():
            order.setdefault(symbol.id)
    return tuple(order)


def ordered(sizes: Mapping[str, int], order: Sequence[str]) -> list[tuple[str, int]]:
    """The sizes, declared symbols first in their order, any other after them as given."""
    rank = {symbol: index for index, symbol in enumerate(order)}
    return sorted(sizes.items(), key=lambda item: rank.get(item[0], len(rank)))


def shape_label(sizes: Mapping[str, int], order: Sequence[str]) -> str:
    """`4096x64`: the sizes alone, as the plan labels a shape."""
    return "x".join(str(size) for _, size in ordered(sizes, order))


def shape_words(sizes: Mapping[str, int], order: Sequence[str], between: str, joiner: str = " = ") -> str:
    """`M = 4096 x K = 64` (`between` " x ", or the report's times sign): each size with its symbol."""
    return between.join(f"{symbol}{joiner}{size}" for symbol, size in ordered(sizes, order))
