"""Each section's schema: the settings it takes, what kind of value each is, and how it is read.

A setting is spelt once, here: `perfdsl.lower` reads a section's statements by
its schema and builds the section's node by field name, so adding a setting is
one `Spec` here and one field on its node.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from perfdsl.nodes import (
    Condition,
    CorrectnessEvidence,
    EndToEndEvidence,
    Expr,
    Imported,
    ListExpr,
    Load,
    MechanismEvidence,
    Name,
    Num,
    QuantityRef,
    Ref,
    Text,
    TimingEvidence,
)
from perfdsl.syntax import ConditionStatement, LoadStatement, Setting, Statement

# What each setting takes, in words, for "expected ..." messages.
TEXT, WORD, WORDS, REF, REF_OR_WORD, COUNT, QUANTITY, NUMBERS = (
    "a string",
    "a name",
    "one or more names separated by `,`",
    "a Python reference like `package.module:attr`",
    "a Python reference or a name",
    "a whole number",
    "a number",
    "a list of numbers like `[0.5, 0.5]`",
)
REF_OR_IMPORT = 'a Python reference, or `import "FILE" format FORMAT entry "NAME"`'
IMPORT = '`import "FILE" format FORMAT entry "NAME"`'
SHAPES = "shapes like `(M, N) in [(64, 4096)]`"
CONDITION = "a condition like `p99 latency <= 25 ms at 400 rps`"
LOAD = "`load poisson 50..800 step 50 rps`"
QUANTITY_REFS = "one or more quantities like `normalize.bandwidth`, separated by `,`"

STUDY_SECTIONS = (
    "workload",
    "operation",
    "application",
    "change",
    "predict",
    "target",
    "evidence",
    "value",
    "limit",
    "rejected",
)
EVIDENCE_KINDS = ("correctness", "mechanism", "timing", "end_to_end")


@attrs.frozen
class Spec:
    """One setting: what it takes, in words for messages, and how it is read.

    The one place a setting is spelt: the section's schema names it, and the
    node built from the section receives it under that name (or `field`).
    """

    kind: str
    read: Callable[[Statement], object] | None
    """Reads one statement, or returns None when it has the wrong form; None for shapes."""
    default: object = None
    """The node's value when the setting is absent: `()` for lists."""
    field: str = ""
    """The node's field, where it is not the setting's own name (`from` -> `basis`)."""
    repeatable: bool = False
    """May be given more than once: the node receives every value, as a tuple."""


# ---------------------------------------------------------------- value readers
# Each takes a statement and returns the value, or None when it has the wrong form.


def _single(statement: Statement) -> Expr | None:
    if isinstance(statement, Setting) and len(statement.values) == 1:
        return statement.values[0]
    return None


def _text(statement: Statement) -> Text | None:
    value = _single(statement)
    return value if isinstance(value, Text) else None


def _word(statement: Statement) -> Name | None:
    value = _single(statement)
    return value if isinstance(value, Name) else None


def _several(statement: Statement, kind: type) -> tuple | None:
    """Every value of a comma list, when each one is a `kind`."""
    if not isinstance(statement, Setting) or not statement.values:
        return None
    return tuple(statement.values) if all(isinstance(v, kind) for v in statement.values) else None


def _words(statement: Statement) -> tuple[Name, ...] | None:
    return _several(statement, Name)


def _quantity_refs(statement: Statement) -> tuple[QuantityRef, ...] | None:
    return _several(statement, QuantityRef)


def _ref(statement: Statement) -> Ref | None:
    value = _single(statement)
    return value if isinstance(value, Ref) else None


def _ref_or_import(statement: Statement) -> Ref | Imported | None:
    value = _single(statement)
    return value if isinstance(value, (Ref, Imported)) else None


def _import(statement: Statement) -> Imported | None:
    value = _single(statement)
    return value if isinstance(value, Imported) else None


def _ref_or_word(statement: Statement) -> Ref | Name | None:
    value = _single(statement)
    return value if isinstance(value, (Ref, Name)) else None


def _num(statement: Statement) -> Num | None:
    value = _single(statement)
    return value if isinstance(value, Num) else None


def _count(statement: Statement) -> Num | None:
    value = _num(statement)
    if value is None or value.quantity.unit is not None:
        return None
    return value if value.value.is_integer() and value.value >= 0 else None


def _numbers(statement: Statement) -> tuple[Num, ...] | None:
    value = _single(statement)
    if isinstance(value, ListExpr) and all(isinstance(v, Num) for v in value.items):
        return tuple(value.items)  # type: ignore[arg-type]
    return None


def _condition(statement: Statement) -> Condition | None:
    return statement.condition if isinstance(statement, ConditionStatement) else None


def _load(statement: Statement) -> Load | None:
    return statement.load if isinstance(statement, LoadStatement) else None


STUDY_SETTINGS: dict[str, Spec] = {
    "title": Spec(TEXT, _text),
    "decision": Spec(WORD, _word),
    "fallback": Spec(TEXT, _text),
    "artifacts": Spec(TEXT, _text),
}
SCHEMAS: dict[str, dict[str, Spec]] = {
    "workload": {
        "summary": Spec(TEXT, _text),
        "shapes": Spec(SHAPES, None),
        "weights": Spec(NUMBERS, _numbers, default=()),
        "dtype": Spec(WORD, _word),
        "targets": Spec(WORDS, _words, default=()),
        "objective": Spec(CONDITION, _condition),
        "correct": Spec(CONDITION, _condition, default=(), repeatable=True),
    },
    "operation": {
        "baseline": Spec(REF_OR_IMPORT, _ref_or_import),
        "change": Spec(REF_OR_IMPORT, _ref_or_import),
        "reference": Spec(REF, _ref),
        # Nsight Compute's counts of each implementation, from a profile taken elsewhere.
        "baseline_counters": Spec(IMPORT, _import),
        "change_counters": Spec(IMPORT, _import),
    },
    "application": {
        "entry": Spec(REF, _ref),
        # Request times from another harness's file, in place of an `entry` perfdsl calls.
        "baseline": Spec(IMPORT, _import),
        "change": Spec(IMPORT, _import),
        "uses": Spec(WORDS, _words, default=()),
        "share": Spec(QUANTITY, _num),
    },
    "change": {"mechanism": Spec(WORD, _word), "summary": Spec(TEXT, _text)},
    "predict": {},
    "target": {
        "objective": Spec(CONDITION, _condition),
        "slo": Spec(CONDITION, _condition),
        "load": Spec(LOAD, _load),
        "application": Spec(SHAPES, None),
    },
    "correctness": {
        "seeds": Spec(COUNT, _count),
        "adversarial": Spec(SHAPES, None),
        "poison": Spec(WORD, _word),
        "not_run": Spec(TEXT, _text),
    },
    "mechanism": {"measure": Spec(WORDS, _words, default=()), "roof": Spec(REF_OR_WORD, _ref_or_word)},
    "timing": {
        "warmup": Spec(COUNT, _count),
        "repeats": Spec(COUNT, _count),
        "blocks": Spec(COUNT, _count),
        # `stop sequential`: measure block pairs from `min_blocks` until the verdict is
        # decided or `max_blocks`; `stop fixed` (the default): exactly `blocks`.
        "stop": Spec(WORD, _word),
        "min_blocks": Spec(COUNT, _count),
        "max_blocks": Spec(COUNT, _count),
        # `looks 5`: the sequential rule looks at 5 planned pair counts up to `max_blocks`
        # (O'Brien-Fleming); without it, after every pair (the confidence sequence).
        "looks": Spec(COUNT, _count),
        "rotate": Spec(COUNT, _count),
        "confidence": Spec(QUANTITY, _num),
        "threshold": Spec(QUANTITY, _num),
    },
    "end_to_end": {
        "requests": Spec(COUNT, _count),
        # `probe sequential` (the default): each load probe stops when its SLO question is
        # decided, capped above `requests`; `probe fixed`: exactly `requests`, tested once.
        "probe": Spec(WORD, _word),
        "load": Spec(LOAD, _load),
        "slo": Spec(CONDITION, _condition),
        "not_run": Spec(TEXT, _text),
    },
    "value": {
        "frequency": Spec(QUANTITY, _num),
        "scale": Spec(QUANTITY, _num),
        "from": Spec(WORD, _word, field="basis"),
    },
    "limit": {"shapes": Spec(SHAPES, None)},
    "rejected": {
        "because": Spec(TEXT, _text),
        "evidence": Spec(QUANTITY_REFS, _quantity_refs, default=()),
    },
}
EVIDENCE_NODES = {
    "correctness": CorrectnessEvidence,
    "mechanism": MechanismEvidence,
    "timing": TimingEvidence,
    "end_to_end": EndToEndEvidence,
}
