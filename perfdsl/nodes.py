"""The typed syntax tree of a study.

Frozen attrs records, one per construct, each with the span of source it came
from, so that every diagnostic and every report figure can point back at a line.
Nothing here knows about Lark: `perfdsl.syntax` builds these values and every
later stage reads only them.

A link the study leaves out is `None` (or an empty tuple): saying that a link is
missing is the checker's job, not the parser's.
"""

from __future__ import annotations

from functools import cached_property
from typing import Union

import attrs

from perfdsl.quantity import Quantity
from perfdsl.source import Source, Span

# ---------------------------------------------------------------- expressions


@attrs.frozen
class Num:
    """A number, with its unit if it has one: `25 ms`, `0.45`, `95%`."""

    quantity: Quantity
    span: Span

    @property
    def value(self) -> float:
        return self.quantity.value


@attrs.frozen
class Name:
    """An identifier used as a value: a shape symbol, a word like `adopt`."""

    id: str
    span: Span


@attrs.frozen
class BinOp:
    """Arithmetic over shape symbols, as in byte formulas: `4*(5*M*N + M)`."""

    op: str
    left: Expr
    right: Expr
    span: Span


@attrs.frozen
class TupleExpr:
    """`(64, 4096)` or `(M, N)`."""

    items: tuple[Expr, ...]
    span: Span


@attrs.frozen
class ListExpr:
    """`[0.5, 0.3, 0.2]` or `[(64, 4096), (256, 8192)]`."""

    items: tuple[Expr, ...]
    span: Span


@attrs.frozen
class Text:
    """A string literal, unescaped."""

    value: str
    span: Span


@attrs.frozen
class Ref:
    """A Python reference `package.module:attr`; never imported by `check`."""

    module: str
    attr: str
    span: Span

    def __str__(self) -> str:
        return f"{self.module}:{self.attr}"


@attrs.frozen
class Imported:
    """`import "runs.json" format pyperf entry "batchnorm_fused"`: an entry of another harness's file.

    Stands where a Python reference would: the implementation was timed by
    another tool, and its result file is the evidence. `path` is relative to
    the study's directory; `entry` is an exact name or a regular expression.
    """

    path: Text
    format: Name
    entry: Text
    span: Span

    def __str__(self) -> str:
        return f"import {self.path.value} entry {self.entry.value}"


@attrs.frozen
class QuantityRef:
    """`normalize.bandwidth`: a quantity of a named operation or application, cited as evidence."""

    subject: Name
    quantity: Name
    span: Span

    @property
    def target(self) -> str:
        return f"{self.subject.id}.{self.quantity.id}"


@attrs.frozen
class RangeExpr:
    """`50..800 step 50 rps`: inclusive bounds, an optional step and unit."""

    start: Num
    stop: Num
    step: Num | None
    span: Span


Expr = Union[Num, Name, BinOp, TupleExpr, ListExpr, Text, Ref, Imported, QuantityRef, RangeExpr]  # noqa: UP007

# ---------------------------------------------------------------- shared pieces


@attrs.frozen
class Shape:
    """One shape: sizes in the order of the symbols, `(64, 4096)`."""

    sizes: tuple[int, ...]
    span: Span


@attrs.frozen
class ShapeSet:
    """`(M, N) in [(64, 4096), (256, 8192)]`: symbols and the shapes they take."""

    symbols: tuple[Name, ...]
    shapes: tuple[Shape, ...]
    span: Span


@attrs.frozen
class Condition:
    """`p99 latency <= 25 ms at 400 rps`, `rel_l2 <= 1e-5 vs float64`, `p99 <= 25 ms`.

    `subject` holds the words before the comparator (`p99 latency`).
    """

    subject: tuple[Name, ...]
    comparator: str
    bound: Expr
    at: Expr | None
    versus: Name | None
    span: Span

    @property
    def metric(self) -> str:
        return " ".join(word.id for word in self.subject)


# ---------------------------------------------------------------- the links


@attrs.frozen
class Workload:
    """What was measured: the traffic the change must serve."""

    summary: Text | None
    shapes: ShapeSet | None
    weights: tuple[Num, ...]
    weights_span: Span | None
    dtype: Name | None
    targets: tuple[Name, ...]
    objective: Condition | None
    correct: tuple[Condition, ...]
    span: Span


@attrs.frozen
class Model:
    """A modelled mechanism quantity: `bytes baseline 4*M*N, change 2*M*N`."""

    quantity: Name
    baseline: Expr
    change: Expr
    span: Span


@attrs.frozen
class Operation:
    """The named operation that holds critical time, and its implementations."""

    name: Name
    baseline: Ref | Imported | None
    change: Ref | Imported | None
    reference: Ref | None
    models: tuple[Model, ...]
    span: Span
    baseline_counters: Imported | None = None
    """Rows of an Nsight Compute profile (`ncu --csv --page raw`) that count the baseline's launches."""
    change_counters: Imported | None = None
    """The same for the change: counted mechanism evidence labelled "counted, imported"."""

    @property
    def imported(self) -> bool:
        """An implementation is an entry of a result file: perfdsl runs no code for this operation.

        Either side is enough: an operation that imports one side and not the
        other cannot run at all (PD412), and is reported as that, not as a
        run-time study missing its reference.
        """
        return isinstance(self.baseline, Imported) or isinstance(self.change, Imported)


@attrs.frozen
class Application:
    """The end-to-end workload that uses the operation."""

    name: Name
    entry: Ref | None
    uses: tuple[Name, ...]
    share: Num | None
    """The operation's expected share of critical time, before measuring (for Amdahl)."""
    span: Span
    baseline: Imported | None = None
    """Request times of the baseline from another harness's file, in place of `entry`."""
    change: Imported | None = None

    @property
    def imported(self) -> bool:
        """Its times come from files: perfdsl calls nothing, so f cannot be measured inside it."""
        return isinstance(self.baseline, Imported) or isinstance(self.change, Imported)


@attrs.frozen
class Change:
    """The predicted physical mechanism of the change."""

    mechanism: Name | None
    summary: Text | None
    span: Span


@attrs.frozen
class Prediction:
    """`normalize.time ratio <= 0.55`: a quantitative expectation stated before results."""

    subject: Name
    quantity: Name
    statistic: Name
    comparator: str
    bound: Expr
    span: Span
    on: Name | None = None
    """The run target it is stated for (`predict cpu { ... }`); None: every target."""

    @property
    def target(self) -> str:
        return f"{self.subject.id}.{self.quantity.id}"


@attrs.frozen
class CorrectnessEvidence:
    """How correctness is established: seeds, adversarial shapes, output poisoning."""

    seeds: Num | None
    adversarial: ShapeSet | None
    poison: Name | None
    not_run: Text | None
    """Why correctness is not checked by this study (its operations are imported), in words."""
    span: Span


@attrs.frozen
class MechanismEvidence:
    """Which mechanism quantities are measured, and the roof they are read against."""

    measure: tuple[Name, ...]
    roof: Ref | Name | None
    span: Span


@attrs.frozen
class TimingEvidence:
    """How kernel time is sampled."""

    warmup: Num | None
    repeats: Num | None
    blocks: Num | None
    """Blocks per arm of the fixed design."""
    stop: Name | None
    """`fixed` or `sequential`: how many blocks the run measures (absent: fixed)."""
    min_blocks: Num | None
    """The sequential rule's first look, in blocks per arm (block pairs)."""
    max_blocks: Num | None
    """The sequential rule's cap."""
    looks: Num | None
    """The sequential rule's planned looks (the group-sequential design); absent: a look after every pair."""
    rotate: Num | None
    confidence: Num | None
    threshold: Num | None
    span: Span


@attrs.frozen
class Load:
    """`load poisson 50..800 step 50 rps`: the offered-load sweep."""

    arrivals: Name
    rates: RangeExpr
    span: Span


@attrs.frozen
class EndToEndEvidence:
    """How the application is measured, under load where latency is the objective."""

    requests: Num | None
    probe: Name | None
    """`probe sequential` or `probe fixed`: how each load probe's SLO question is decided."""
    load: Load | None
    slo: Condition | None
    not_run: Text | None
    """Why the application is not measured by this study (its operations are imported), in words."""
    span: Span


@attrs.frozen
class Value:
    """What the change is worth: from the end-to-end effect, never the kernel's."""

    frequency: Num | None
    scale: Num | None
    basis: Name | None
    """`from decode_step`: the measured effect the value is computed from."""
    span: Span


@attrs.frozen
class Limit:
    """`limit regression "text" { shapes ... }`: where the change does not apply."""

    kind: Name
    text: Text | None
    shapes: ShapeSet | None
    span: Span


@attrs.frozen
class Rejected:
    """An alternative explanation that was considered and rejected, why, and what showed it."""

    text: Text | None
    because: Text | None
    evidence: tuple[QuantityRef, ...]
    """The measured quantities that back `because`; empty when it is argued, not measured."""
    span: Span


@attrs.frozen
class TargetExpectations:
    """`target cpu { ... }`: what a run on one target is held to, where it differs from every target.

    A CPU is not a slow GPU: an objective met on a GPU can be out of a CPU's
    physical reach, so each setting here replaces the study-wide one for runs on
    `name` only, and whatever is left out falls back to the study-wide setting.
    """

    name: Name
    objective: Condition | None
    slo: Condition | None
    load: Load | None
    application: ShapeSet | None
    """The application's operating point on this target (one shape); None: the workload's heaviest."""
    span: Span


@attrs.frozen
class Study:
    """A whole study: the chain of evidence, link by link."""

    name: Name
    title: Text | None
    decision: Name | None
    workload: Workload | None
    operations: tuple[Operation, ...]
    applications: tuple[Application, ...]
    change: Change | None
    predictions: tuple[Prediction, ...]
    """Every target's predictions, in the order written; `Prediction.on` says whose."""
    predict_spans: tuple[Span, ...]
    """Every `predict` section, in the order written: the registered hash covers them all."""
    target_expectations: tuple[TargetExpectations, ...]
    """The `target <name> { ... }` sections, one per target."""
    correctness: CorrectnessEvidence | None
    mechanism: MechanismEvidence | None
    timing: TimingEvidence | None
    end_to_end: EndToEndEvidence | None
    value: Value | None
    limits: tuple[Limit, ...]
    fallback: Text | None
    rejected: tuple[Rejected, ...]
    artifacts: Text | None
    span: Span
    source: Source = attrs.field(eq=False, repr=False)

    @property
    def predict_span(self) -> Span | None:
        """The first `predict` section: where a finding about the predictions as a whole points."""
        return self.predict_spans[0] if self.predict_spans else None

    @property
    def imported(self) -> bool:
        """Every operation is imported: `perfdsl run` copies files and runs no code."""
        return bool(self.operations) and all(op.imported for op in self.operations)

    def operation(self, name: str) -> Operation | None:
        """The operation called `name`, if the study defines one (the first, if it defines two)."""
        return self._operations_by_name.get(name)

    def application(self, name: str) -> Application | None:
        """The application called `name`, if the study defines one (the first, if it defines two)."""
        return self._applications_by_name.get(name)

    # Every prediction, citation and `uses` looks its subject up by name: an index
    # built once keeps checking a study of many operations linear in its size.
    @cached_property
    def _operations_by_name(self) -> dict[str, Operation]:
        index: dict[str, Operation] = {}
        for operation in self.operations:
            index.setdefault(operation.name.id, operation)
        return index

    @cached_property
    def _applications_by_name(self) -> dict[str, Application]:
        index: dict[str, Application] = {}
        for application in self.applications:
            index.setdefault(application.name.id, application)
        return index
