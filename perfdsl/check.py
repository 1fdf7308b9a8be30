"""The checker: `check(Study) -> list[Diagnostic]`, one `check_<link>` per link.

The links of the chain of evidence (SPEC.md section 4) are checked in the order
the report presents them. Each link is a method found by name, as Jinja's
NodeVisitor finds `visit_<Node>`: a new link needs one method and one entry in
`LINKS`, nowhere else. Every finding is a value; nothing here raises for a
mistake in a study, and nothing here imports the Python the study refers to.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from perfdsl import codes
from perfdsl import vocabulary as words
from perfdsl.diagnostics import Diagnostic
from perfdsl.nodes import (
    Application,
    BinOp,
    Condition,
    Expr,
    Model,
    Name,
    Num,
    Operation,
    Prediction,
    ShapeSet,
    Study,
)
from perfdsl.quantity import DIMENSIONLESS
from perfdsl.source import Span

# The links, in the order the report presents them.
LINKS = (
    "decision",
    "workload",
    "baseline",
    "operation",
    "mechanism",
    "prediction",
    "correctness",
    "mechanism_evidence",
    "timing",
    "end_to_end",
    "value",
    "limitations",
    "investigation",
    "artifacts",
)

FRACTION = "fraction"
# Ratios and tolerances are plain numbers; a percentage is a plain number too.
PLAIN = (DIMENSIONLESS, FRACTION)
# Modelled quantities that carry a unit when the formula writes one.
MODEL_DIMENSIONS = {"bytes": ("bytes", DIMENSIONLESS)}
# Dimensions as a message names them.
DIMENSION_WORDS = {
    DIMENSIONLESS: "a plain number",
    FRACTION: "a percentage",
    "time": "a time",
    "bytes": "a size in bytes",
    "bandwidth": "a bandwidth",
    "rate": "a rate",
    "frequency": "a frequency (`per token`, `per request`, ...)",
    "scale": "a scale (`gpu_hours per day`, ...)",
}
# The application quantities Amdahl's bound limits (goodput can move past it:
# a faster operation lets more requests meet the SLO).
AMDAHL_QUANTITIES = ("time", "throughput")
# Float comparisons of user numbers (weights summing to 1, Amdahl's bound).
EPSILON = 1e-6


def check(study: Study) -> list[Diagnostic]:
    """Every diagnostic about `study`'s chain of evidence, sorted by position."""
    checker = _Checker(study)
    for link in LINKS:
        getattr(checker, f"check_{link}")()
    return sorted(checker.diagnostics, key=Diagnostic.sort_key)


def suggest(word: str, options: Iterable[str]) -> str:
    """`did you mean `a` or `b`?` for up to four close matches, or an empty string."""
    matches = difflib.get_close_matches(word, list(options), n=4, cutoff=0.6)
    return "did you mean " + " or ".join(f"`{m}`" for m in matches) + "?" if matches else ""


def _one_of(options: Sequence[str]) -> str:
    return ", ".join(f"`{option}`" for option in options)


def _symbols_text(shapes: ShapeSet) -> str:
    names = ", ".join(symbol.id for symbol in shapes.symbols)
    return f"({names})" if len(shapes.symbols) > 1 else names


def _symbols_span(shapes: ShapeSet) -> Span:
    return shapes.symbols[0].span.to(shapes.symbols[-1].span)


def _names_in(expr: Expr) -> Iterable[Name]:
    if isinstance(expr, Name):
        yield expr
    elif isinstance(expr, BinOp):
        yield from _names_in(expr.left)
        yield from _names_in(expr.right)


def _number(expr: Expr | None) -> float | None:
    """The plain value of a unitless number or percentage, else None."""
    if isinstance(expr, Num) and expr.quantity.dimension in PLAIN:
        return expr.quantity.base
    return None


class _Checker:
    """Holds the study and the diagnostics found so far; one method per link."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.diagnostics: list[Diagnostic] = []

    # ------------------------------------------------------------ reporting

    def report(self, code: str, message: str, span: Span, label: str = "", help: str = "") -> None:
        """Record a finding; its severity is the registry's, never chosen here."""
        severity = codes.CODES[code].severity
        self.diagnostics.append(
            Diagnostic(code, severity, message, self.study.source, span, label, help)
        )

    def missing(self, code: str, message: str, help: str) -> None:
        """A missing link points at the study's name: the study as a whole lacks it."""
        self.report(code, message, self.study.name.span, label="link missing", help=help)

    def header(self, span: Span) -> Span:
        """The span of a section's header (`evidence correctness`), not its whole body."""
        text = self.study.source.text
        stops = [i for i in (text.find("{", span.start, span.end), text.find("\n", span.start, span.end))
                 if i >= 0]
        end = min(stops, default=span.end)
        return Span(span.start, span.start + len(text[span.start : end].rstrip()))

    def choice(self, name: Name, options: Sequence[str], what: str) -> bool:
        """Report a word outside its fixed set; True when the word is known."""
        if name.id in options:
            return True
        self.report(
            "PD306", f"unknown {what} `{name.id}`", name.span, label=f"no such {what}",
            help=suggest(name.id, options) or f"a {what} is one of {_one_of(options)}",
        )
        return False

    def distinct(self, names: Sequence[Name], what: str) -> None:
        """Report a word listed twice in one setting (`targets cuda, cuda`)."""
        for index, name in enumerate(names):
            if any(earlier.id == name.id for earlier in names[:index]):
                self.report("PD303", f"{what} `{name.id}` is listed twice", name.span,
                            label="listed again", help=f"list `{name.id}` once")

    def statistic(self, word: Name) -> None:
        """A latency statistic: a percentile like `p99`, or `mean`, `median`, `max`."""
        if words.is_statistic(word.id):
            return
        self.report("PD306", f"unknown statistic `{word.id}`", word.span,
                    label="not a latency statistic",
                    help=suggest(word.id, words.STATISTIC_EXAMPLES)
                    or "a latency is bounded at a percentile like `p99`, or `mean`, `median`, `max`")

    def dimension(self, num: Num, expected: Sequence[str], what: str, example: str) -> bool:
        """Report a number whose unit is of the wrong dimension; True when it fits."""
        if num.quantity.dimension in expected:
            return True
        wanted = " or ".join(DIMENSION_WORDS[d] for d in expected)
        self.report(
            "PD302", f"{what} must be {wanted}, not {DIMENSION_WORDS[num.quantity.dimension]}",
            num.span, label=f"`{num.quantity}`", help=f"write it like `{example}`",
        )
        return False

    def fraction(self, num: Num | None, what: str, example: str) -> None:
        """A share, confidence or threshold: a percentage between 0 and 100%."""
        if num is None or not self.dimension(num, (FRACTION,), what, example):
            return
        if not 0 < num.quantity.base <= 1:
            self.report("PD409", f"{what} of {num.quantity} is outside 0 to 100%", num.span,
                        label="not a fraction of the whole", help=f"write it like `{example}`")

    def shape_symbols(self, shapes: ShapeSet | None, what: str) -> None:
        """Shapes outside the workload (limits, adversarial) use the workload's symbols."""
        workload = self.study.workload
        if shapes is None or workload is None or workload.shapes is None:
            return
        expected = workload.shapes
        if [s.id for s in shapes.symbols] == [s.id for s in expected.symbols]:
            return
        self.report(
            "PD304",
            f"{what} are over {_symbols_text(shapes)} but the workload's shapes are over "
            f"{_symbols_text(expected)}",
            _symbols_span(shapes), label="not the workload's symbols",
            help=f"write these shapes over `{_symbols_text(expected)}`",
        )

    # ------------------------------------------------------------ decision

    def check_decision(self) -> None:
        decision = self.study.decision
        if decision is None:
            self.missing("PD101", f"study `{self.study.name.id}` declares no decision",
                         help="add `decision adopt` (or `reject`, `investigate`)")
            return
        self.choice(decision, words.DECISIONS, "decision")

    # ------------------------------------------------------------ workload

    def check_workload(self) -> None:
        workload = self.study.workload
        if workload is None:
            self.missing("PD102", f"study `{self.study.name.id}` declares no workload",
                         help="add `workload { ... }` with summary, shapes, weights, dtype, "
                         "targets, objective and correct")
            return
        header = self.header(workload.span)
        parts = (
            (workload.summary, "summary", 'summary "Decoder step, hidden size 4096"'),
            (workload.shapes, "shapes", "shapes (M, N) in [(64, 4096), (256, 8192)]"),
            (workload.dtype, "dtype", "dtype float32"),
            (workload.targets, "targets", "targets cuda, cpu"),
        )
        for value, part, example in parts:
            if not value:
                self.report("PD207", f"the workload has no `{part}`", header,
                            label=f"`{part}` missing", help=f"add `{example}`")
        if workload.dtype is not None:
            self.choice(workload.dtype, words.DTYPES, "dtype")
        for target in workload.targets:
            self.choice(target, words.TARGETS, "target")
        self.distinct(workload.targets, "target")
        self.check_weights()
        if workload.shapes is not None and len(workload.shapes.shapes) == 1:
            self.report("PD501", "the workload has a single shape", workload.shapes.shapes[0].span,
                        label="the only shape",
                        help="add the other shapes production traffic takes, with their weights")
        self.check_tolerances(header)

    def check_weights(self) -> None:
        """Weights are a distribution over the shapes: one each, none negative, sum 1."""
        workload = self.study.workload
        assert workload is not None
        shapes = workload.shapes.shapes if workload.shapes is not None else ()
        if workload.weights_span is None:
            if len(shapes) > 1:
                self.report("PD207", "the workload has no `weights`", self.header(workload.span),
                            label="`weights` missing",
                            help="add `weights [0.7, 0.3]`, one share of traffic per shape")
            return
        weights = workload.weights
        for weight in weights:
            self.dimension(weight, PLAIN, "a weight", "0.25")
        if shapes and len(weights) != len(shapes):
            self.report("PD405", f"{len(weights)} weights for {len(shapes)} shapes",
                        workload.weights_span, label="one weight per shape",
                        help=f"give exactly {len(shapes)} weights, in the order of the shapes")
        negative = [w for w in weights if w.quantity.base < 0]
        for weight in negative:
            self.report("PD405", f"the weight {weight.quantity} is negative", weight.span,
                        label="a share of traffic cannot be negative",
                        help="use 0 for a shape that receives no traffic")
        total = sum(w.quantity.base for w in weights)
        if weights and not negative and abs(total - 1) > EPSILON:
            self.report("PD405", f"the weights sum to {total:g}, not 1", workload.weights_span,
                        label="weights are shares of traffic",
                        help="divide each weight by their sum")

    def check_tolerances(self, header: Span) -> None:
        """Correctness constraints: a known metric, a plain bound, reduced-precision rules."""
        workload = self.study.workload
        assert workload is not None
        if not workload.correct:
            self.report("PD202", "the workload states no correctness tolerance", header,
                        label="no `correct` condition",
                        help="add `correct rel_l2 <= 1e-5 vs float64`")
        for condition in workload.correct:
            metric = Name(condition.metric, condition.subject[0].span.to(condition.subject[-1].span))
            self.choice(metric, words.ERROR_METRICS, "error metric")
            if isinstance(condition.bound, Num):
                self.dimension(condition.bound, PLAIN, "a tolerance", "1e-5")
            if condition.versus is not None:
                self.choice(condition.versus, words.DTYPES, "dtype")
        self.check_reduced_precision()

    def check_reduced_precision(self) -> None:
        """float16 and bfloat16 need a tolerance they can meet, against float64."""
        workload = self.study.workload
        assert workload is not None
        dtype = workload.dtype
        if dtype is None or dtype.id not in words.REDUCED_PRECISION_ROUNDOFF:
            return
        roundoff = words.REDUCED_PRECISION_ROUNDOFF[dtype.id]
        if not any(c.versus is not None and c.versus.id == "float64" for c in workload.correct):
            self.report("PD404", f"`{dtype.id}` results are not compared with `float64`", dtype.span,
                        label="reduced precision",
                        help="add `correct rel_l2 <= 1e-2 vs float64`")
        for condition in workload.correct:
            bound = _number(condition.bound)
            if condition.metric in words.RELATIVE_ERROR_METRICS and bound is not None \
                    and bound < roundoff:
                self.report(
                    "PD404",
                    f"a `{condition.metric}` tolerance of {bound:g} is tighter than `{dtype.id}` "
                    "can round to",
                    condition.bound.span, label=f"`{dtype.id}` rounds at {roundoff:.2g}",
                    help=f"state the tolerance `{dtype.id}` meets, e.g. "
                    f"`correct {condition.metric} <= 1e-2 vs float64`",
                )

    # ------------------------------------------------------------ baseline operating point

    def check_baseline(self) -> None:
        workload = self.study.workload
        if workload is None:
            return
        objective = workload.objective
        if objective is None:
            self.report("PD103", "the workload states no objective", self.header(workload.span),
                        label="no baseline operating point",
                        help="add `objective p99 latency <= 25 ms at 400 rps`")
            return
        *statistics, metric = objective.subject
        if not self.choice(metric, tuple(words.OBJECTIVE_METRICS), "objective metric"):
            return
        for statistic in statistics:
            self.statistic(statistic)
        dimension = words.OBJECTIVE_METRICS[metric.id]
        example = "25 ms" if dimension == "time" else "400 rps"
        if isinstance(objective.bound, Num):
            self.dimension(objective.bound, (dimension,), f"a {metric.id} objective", example)
        if isinstance(objective.at, Num):
            self.dimension(objective.at, ("rate",), "the load of an objective", "at 400 rps")
        if metric.id == "latency" and objective.at is None:
            self.report("PD103", "the latency objective states no load", objective.bound.span,
                        label="latency at which request rate?",
                        help="add the operating point, e.g. `at 400 rps`")

    # ------------------------------------------------------------ limiting operation

    def check_operation(self) -> None:
        if not self.study.operations:
            self.missing("PD104", f"study `{self.study.name.id}` names no limiting operation",
                         help="add `operation <name> { baseline pkg.mod:old; change pkg.mod:new; "
                         "reference pkg.mod:reference }`")
        for operation in self.study.operations:
            self.check_implementations(operation)
            for model in operation.models:
                self.check_model(model)

    def check_implementations(self, operation: Operation) -> None:
        name = operation.name
        for part, ref in (("baseline", operation.baseline), ("change", operation.change)):
            if ref is None:
                self.report("PD208", f"operation `{name.id}` has no {part}", name.span,
                            label=f"`{part}` missing",
                            help=f"add `{part} package.module:function`")
        if operation.reference is None:
            self.report("PD201", f"operation `{name.id}` has no reference implementation", name.span,
                        label="nothing to check correctness against",
                        help="add `reference package.module:reference`, computed in float64")

    def check_model(self, model: Model) -> None:
        """A modelled quantity: a known measure, formulas over shape symbols, one dimension."""
        if not self.choice(model.quantity, words.MEASURES, "modelled quantity"):
            return
        workload = self.study.workload
        symbols = (
            [s.id for s in workload.shapes.symbols]
            if workload is not None and workload.shapes is not None else None
        )
        dimensions = []
        for formula in (model.baseline, model.change):
            if symbols is not None:
                for name in _names_in(formula):
                    if name.id not in symbols:
                        self.report(
                            "PD307", f"`{name.id}` is not a shape symbol", name.span,
                            label="not among the workload's symbols",
                            help=suggest(name.id, symbols)
                            or f"formulas use the shape symbols {_one_of(symbols)}",
                        )
            dimensions.append(self.formula_dimension(formula))
        allowed = MODEL_DIMENSIONS.get(model.quantity.id, (DIMENSIONLESS,))
        for formula, dimension in zip((model.baseline, model.change), dimensions, strict=True):
            if dimension is not None and dimension not in allowed:
                self.report(
                    "PD302", f"a `{model.quantity.id}` formula gives {dimension}", formula.span,
                    label=f"expected {' or '.join(allowed)}",
                    help=f"`{model.quantity.id}` counts per call: drop the unit",
                )

    def formula_dimension(self, expr: Expr) -> str | None:
        """The dimension of a formula; None once a mismatch inside it has been reported."""
        if isinstance(expr, Name):
            return DIMENSIONLESS
        if isinstance(expr, Num):
            return expr.quantity.dimension
        if not isinstance(expr, BinOp):
            self.report("PD005", "a formula is arithmetic over numbers and shape symbols", expr.span,
                        label="not a number or a symbol", help="write a formula like `4*M*N`")
            return None
        left, right = self.formula_dimension(expr.left), self.formula_dimension(expr.right)
        if left is None or right is None:
            return None
        result = _combine(expr.op, left, right)
        if result is None:
            verb = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}[expr.op]
            self.report("PD302", f"cannot {verb} {left} and {right}", expr.span,
                        label="units of different dimensions",
                        help="write both sides in the same unit, or drop the units")
        return result

    # ------------------------------------------------------------ mechanism

    def check_mechanism(self) -> None:
        change = self.study.change
        if change is None:
            self.missing("PD105", f"study `{self.study.name.id}` states no mechanism",
                         help='add `change { mechanism bytes_removed; summary "..." }`')
            return
        if change.mechanism is None:
            self.report("PD105", "the change states no mechanism", self.header(change.span),
                        label="`mechanism` missing",
                        help=f"add `mechanism <category>`, one of {_one_of(words.MECHANISMS)}")
        else:
            self.choice(change.mechanism, words.MECHANISMS, "mechanism")
        if change.summary is None:
            self.report("PD218", "the change has no summary", self.header(change.span),
                        label="`summary` missing",
                        help='add `summary "..."`: which work the change removes, and how')

    # ------------------------------------------------------------ prediction

    def check_prediction(self) -> None:
        study = self.study
        if not study.predictions:
            span = self.header(study.predict_span) if study.predict_span else study.name.span
            self.report("PD106", f"study `{study.name.id}` makes no prediction", span,
                        label="link missing",
                        help="add `predict { <operation>.time ratio <= 0.6 }` and one on the "
                        "mechanism quantity")
            return
        for prediction in study.predictions:
            self.check_one_prediction(prediction)
        self.check_prediction_coverage()

    def check_one_prediction(self, prediction: Prediction) -> None:
        study = self.study
        subject = prediction.subject.id
        operation = study.operation(subject)
        # A name defined twice is reported once (PD303); read it as the operation.
        application = None if operation else study.application(subject)
        self.choice(prediction.statistic, words.PREDICTION_STATISTICS, "prediction statistic")
        if operation is None and application is None:
            names = [o.name.id for o in study.operations] + [a.name.id for a in study.applications]
            self.report(
                "PD301", f"no operation or application named `{subject}`", prediction.subject.span,
                label="not defined", help=suggest(subject, names)
                or "predictions are on an operation or an application the study defines",
            )
            return
        quantities = words.OPERATION_QUANTITIES if operation else words.APPLICATION_QUANTITIES
        kind = "an operation" if operation else "an application"
        quantity = prediction.quantity
        if quantity.id not in quantities:
            self.report(
                "PD308", f"`{subject}` is {kind}: it has no quantity `{quantity.id}`", quantity.span,
                label="cannot be predicted", help=suggest(quantity.id, quantities)
                or f"predict one of {_one_of(quantities)}",
            )
            return
        if not self.check_prediction_bound(prediction, application):
            return
        if operation is not None and quantity.id in words.MEASURES:
            self.check_observed(prediction, operation)
        if application is not None and quantity.id in AMDAHL_QUANTITIES:
            self.check_amdahl(prediction, application)

    def check_prediction_bound(self, prediction: Prediction, application: Application | None) -> bool:
        """A ratio is bounded by a plain number, or by `amdahl` on an application's time."""
        bound = prediction.bound
        if isinstance(bound, Name):
            if bound.id != words.AMDAHL:
                self.report("PD306", f"unknown bound `{bound.id}`", bound.span, label="not a bound",
                            help=suggest(bound.id, [words.AMDAHL])
                            or "a ratio is bounded by a number or by `amdahl`")
                return False
            if application is None or prediction.quantity.id not in AMDAHL_QUANTITIES:
                self.report("PD406", "`amdahl` bounds an application's time or throughput only",
                            bound.span,
                            label="no Amdahl bound here",
                            help="bound the ratio by a number, like `ratio <= 0.6`")
                return False
            return True
        if _number(bound) is None:
            described = f"`{bound.quantity}`" if isinstance(bound, Num) else "this"
            self.report("PD406", f"a ratio is a plain number, not {described}", bound.span,
                        label="wrong dimension for a ratio",
                        help="write the ratio of change to baseline, like `ratio <= 0.6`")
            return False
        return True

    def check_observed(self, prediction: Prediction, operation: Operation) -> None:
        """A mechanism quantity is predicted only if it is measured or modelled."""
        quantity = prediction.quantity.id
        evidence = self.study.mechanism
        measured = evidence is not None and any(m.id == quantity for m in evidence.measure)
        modelled = any(m.quantity.id == quantity for m in operation.models)
        if not (measured or modelled):
            self.report(
                "PD407", f"`{prediction.target}` is neither measured nor modelled",
                prediction.quantity.span, label="nothing will observe this",
                help=f"add `{quantity}` to `evidence mechanism {{ measure ... }}`",
            )

    def check_amdahl(self, prediction: Prediction, application: Application) -> None:
        """An application improves by at most Amdahl's bound on the operation's share."""
        if application.share is None:
            self.report(
                "PD219", f"application `{application.name.id}` declares no share",
                application.name.span, label=f"`{prediction.target}` cannot be checked against Amdahl",
                help="add `share 10%`: the operations' share of its critical time, before measuring",
            )
            return
        share = application.share.quantity.base
        bound = _number(prediction.bound)
        if application.share.quantity.dimension != FRACTION or not 0 < share <= 1 or bound is None:
            return
        ratio = min((self.predicted_time_ratio(name.id) for name in application.uses), default=0.0)
        best_time = (1 - share) + share * ratio
        if prediction.quantity.id == "time" and prediction.comparator in ("<=", "<"):
            best, beaten = best_time, bound < best_time - EPSILON
        elif prediction.quantity.id == "throughput" and prediction.comparator in (">=", ">"):
            best, beaten = 1 / best_time, bound > 1 / best_time + EPSILON
        else:
            return
        if beaten:
            self.report(
                "PD402", f"`{prediction.target} ratio {prediction.comparator} {bound:g}` beats "
                f"Amdahl's bound of {best:.4g}", prediction.bound.span,
                label=f"share {application.share.quantity} with operation time ratio {ratio:g}",
                help=f"predict `{prediction.target} ratio {prediction.comparator} amdahl`",
            )

    def predicted_time_ratio(self, operation: str) -> float:
        """The operation's predicted time ratio; 0 (infinitely fast) when none is stated."""
        for prediction in self.study.predictions:
            if prediction.subject.id == operation and prediction.quantity.id == "time":
                bound = _number(prediction.bound)
                if bound is not None and prediction.comparator in ("<=", "<"):
                    return max(bound, 0.0)
        return 0.0

    def check_prediction_coverage(self) -> None:
        """Warn when time, or the mechanism's own quantity, goes unpredicted."""
        study = self.study
        if not study.operations:
            return
        span = self.header(study.predict_span) if study.predict_span else study.name.span
        on_operations = [p for p in study.predictions if study.operation(p.subject.id)]
        if not any(p.quantity.id == "time" for p in on_operations):
            self.report("PD505", "no prediction on the operation's time", span,
                        label="time unpredicted",
                        help="add `<operation>.time ratio <= <bound>`")
        mechanism = study.change.mechanism if study.change else None
        measure = words.MECHANISM_MEASURES.get(mechanism.id) if mechanism else None
        if measure and not any(p.quantity.id == measure for p in on_operations):
            self.report("PD506", f"no prediction on `{measure}`, the quantity `{mechanism.id}` "
                        "changes", span, label="mechanism quantity unpredicted",
                        help=f"add `<operation>.{measure} ratio <= <bound>`")

    # ------------------------------------------------------------ correctness evidence

    def check_correctness(self) -> None:
        evidence = self.study.correctness
        if evidence is None:
            self.missing("PD107", f"study `{self.study.name.id}` collects no correctness evidence",
                         help="add `evidence correctness { seeds 5; adversarial ...; poison nan }`")
            return
        header = self.header(evidence.span)
        seeds = evidence.seeds
        if seeds is None or seeds.value < 2:
            self.report("PD204", "correctness evidence uses fewer than two seeds",
                        seeds.span if seeds else header, label="one input can pass by luck",
                        help="add `seeds 5`")
        elif seeds.value < 5:
            self.report("PD504", f"correctness evidence uses only {seeds.value:g} seeds", seeds.span,
                        label="few random inputs", help="use `seeds 5` or more")
        if evidence.adversarial is None:
            self.report("PD203", "correctness evidence has no adversarial shapes", header,
                        label="shapes that are not multiples of the block size are where kernels break",
                        help=f"add `adversarial {self.adversarial_example()}`")
        self.shape_symbols(evidence.adversarial, "adversarial shapes")
        if evidence.poison is None:
            self.report("PD217", "correctness evidence does not poison outputs", header,
                        label="unwritten outputs would go unnoticed", help="add `poison nan`")
        else:
            self.choice(evidence.poison, words.POISONS, "poison")

    def adversarial_example(self) -> str:
        workload = self.study.workload
        if workload is None or workload.shapes is None:
            return "(M, N) in [(1, 1), (3, 4097)]"
        symbols = workload.shapes.symbols
        odd = (1, 3, 4097, 31)
        first = ", ".join("1" for _ in symbols)
        second = ", ".join(str(odd[(i + 1) % len(odd)]) for i in range(len(symbols)))
        if len(symbols) == 1:
            return f"{symbols[0].id} in [{first}, {second}]"
        return f"{_symbols_text(workload.shapes)} in [({first}), ({second})]"

    # ------------------------------------------------------------ mechanism evidence

    def check_mechanism_evidence(self) -> None:
        evidence = self.study.mechanism
        if evidence is None:
            self.missing("PD108", f"study `{self.study.name.id}` collects no mechanism evidence",
                         help="add `evidence mechanism { measure bytes; roof kernels.copy:copy }`")
            return
        for measure in evidence.measure:
            self.choice(measure, words.MEASURES, "measured quantity")
        self.distinct(evidence.measure, "quantity")
        if isinstance(evidence.roof, Name) and self.study.operation(evidence.roof.id) is None:
            names = [o.name.id for o in self.study.operations]
            self.report("PD301", f"no operation named `{evidence.roof.id}`", evidence.roof.span,
                        label="the roof is an operation or a Python reference",
                        help=suggest(evidence.roof.id, names) or "write `roof kernels.copy:copy`")
        self.check_observable()

    def check_observable(self) -> None:
        """The measured quantities include the one the mechanism changes."""
        evidence, change = self.study.mechanism, self.study.change
        assert evidence is not None
        if change is None or change.mechanism is None:
            return
        needed = words.MECHANISM_MEASURES.get(change.mechanism.id)
        measured = [m.id for m in evidence.measure]
        if needed is None or needed in measured:
            return
        span = (evidence.measure[0].span.to(evidence.measure[-1].span) if evidence.measure
                else self.header(evidence.span))
        self.report(
            "PD401", f"mechanism evidence cannot observe `{change.mechanism.id}`", span,
            label=f"measures only {_one_of(measured)}" if measured else "measures nothing",
            help=f"add `{needed}` to `measure`",
        )

    # ------------------------------------------------------------ kernel timing

    def check_timing(self) -> None:
        timing = self.study.timing
        if timing is None:
            self.missing("PD109", f"study `{self.study.name.id}` collects no kernel timing",
                         help="add `evidence timing { warmup 10; repeats 100; rotate 4; "
                         "confidence 95% }`")
            return
        header = self.header(timing.span)
        counts = (
            (timing.warmup, 1, "PD205", "kernel timing has no warm-up",
             "the first calls include compilation and cold caches", "add `warmup 10`"),
            (timing.repeats, 2, "PD206", "kernel timing has no repeats",
             "one sample cannot separate an effect from noise", "add `repeats 100`"),
            (timing.rotate, 2, "PD215", "kernel timing does not rotate inputs",
             "one input buffer is timed from the cache", "add `rotate 4`"),
        )
        for count, least, code, message, label, help in counts:
            if count is None or count.value < least:
                self.report(code, message, count.span if count else header, label=label, help=help)
        for count, what in ((timing.repeats, "repeats"), (timing.blocks, "blocks")):
            if count is not None and 2 <= count.value < 10:
                self.report("PD503", f"only {count.value:g} timing {what}", count.span,
                            label="a wide confidence interval", help=f"use `{what} 10` or more")
        if timing.confidence is None:
            self.report("PD216", "kernel timing states no confidence level", header,
                        label="an interval needs its level", help="add `confidence 95%`")
        self.fraction(timing.confidence, "a confidence level", "confidence 95%")
        self.fraction(timing.threshold, "a threshold", "threshold 2%")

    # ------------------------------------------------------------ end-to-end evidence

    def check_end_to_end(self) -> None:
        study = self.study
        if not study.applications or study.end_to_end is None:
            absent = [part for part, present in (("an application", study.applications),
                                                 ("end-to-end evidence", study.end_to_end))
                      if not present]
            self.missing("PD110", f"study `{study.name.id}` has no {' and no '.join(absent)}",
                         help="add `application <name> { entry pkg.mod:main; uses <operation> }` "
                         "and `evidence end_to_end { ... }`")
        for application in study.applications:
            self.check_application(application)
        if study.end_to_end is not None:
            self.check_load_test()

    def check_application(self, application: Application) -> None:
        name = application.name
        if application.entry is None:
            self.report("PD213", f"application `{name.id}` has no entry point", name.span,
                        label="`entry` missing", help="add `entry package.module:function`")
        if not application.uses:
            self.report("PD210", f"application `{name.id}` does not say which operation it uses",
                        name.span, label="`uses` missing", help="add `uses <operation>`")
        operations = [o.name.id for o in self.study.operations]
        for used in application.uses:
            if used.id not in operations:
                self.report("PD301", f"no operation named `{used.id}`", used.span,
                            label="not defined", help=suggest(used.id, operations)
                            or "`uses` names operations the study defines")
        self.fraction(application.share, "a share", "share 10%")
        operation = self.study.operation(name.id)
        if operation is not None:
            later, earlier = sorted((operation.name, name), key=lambda n: n.span.start, reverse=True)
            self.report("PD303", f"`{name.id}` names both an operation and an application",
                        later.span, label="second definition",
                        help=f"rename one of them: `{name.id}` is already defined on line "
                        f"{self.study.source.position(earlier.span.start).line}")

    def check_load_test(self) -> None:
        """Load and SLO: present where latency is the objective, and agreeing with it."""
        evidence = self.study.end_to_end
        assert evidence is not None
        header = self.header(evidence.span)
        if evidence.load is not None:
            self.choice(evidence.load.arrivals, words.ARRIVALS, "arrival process")
            rates = evidence.load.rates
            self.dimension(rates.start, ("rate",), "an offered load", "load poisson 50..800 step 50 rps")
        if evidence.slo is not None:
            self.check_slo(evidence.slo)
        objective = self.study.workload.objective if self.study.workload else None
        if objective is None or objective.subject[-1].id != "latency":
            return
        for part, present, example in (("load", evidence.load, "load poisson 50..800 step 50 rps"),
                                       ("SLO", evidence.slo, "slo p99 <= 25 ms")):
            if present is None:
                self.report("PD209", f"end-to-end evidence has no {part} while latency is the "
                            "objective", header, label=f"{part} missing", help=f"add `{example}`")
        bounds = (objective.bound, evidence.slo.bound) if evidence.slo else ()
        if bounds and all(isinstance(b, Num) and b.quantity.dimension == "time" for b in bounds):
            self.check_slo_agrees(objective, evidence.slo)

    def check_slo(self, slo: Condition) -> None:
        *statistics, last = slo.subject
        if last.id != "latency":
            statistics.append(last)
        for statistic in statistics:
            self.statistic(statistic)
        if isinstance(slo.bound, Num):
            self.dimension(slo.bound, ("time",), "an SLO", "slo p99 <= 25 ms")

    def check_slo_agrees(self, objective: Condition, slo: Condition) -> None:
        """The load test's SLO is the objective's latency bound, not a second one."""
        assert isinstance(objective.bound, Num) and isinstance(slo.bound, Num)
        wanted, bound = objective.bound.quantity, slo.bound.quantity
        if _statistic(objective) != _statistic(slo):
            span = slo.subject[0].span.to(slo.subject[-1].span)
        elif objective.comparator != slo.comparator or \
                abs(wanted.base - bound.base) > EPSILON * abs(wanted.base):
            span = slo.bound.span
        else:
            return
        self.report(
            "PD408", "the SLO disagrees with the workload's objective", span,
            label=f"the objective is `{objective.metric} {objective.comparator} {wanted}`",
            help=f"write `slo {_statistic(objective)} {objective.comparator} {wanted}`",
        )

    # ------------------------------------------------------------ value

    def check_value(self) -> None:
        study = self.study
        value = study.value
        if value is None:
            self.missing("PD111", f"study `{study.name.id}` states no value",
                         help="add `value { frequency 80 per token; scale 12000 gpu_hours per day; "
                         "from <application> }`")
            return
        header = self.header(value.span)
        parts = (("frequency", value.frequency, "frequency 80 per token"),
                 ("scale", value.scale, "scale 12000 gpu_hours per day"))
        for part, num, example in parts:
            if num is None:
                self.report("PD211", f"the value has no {part}", header, label=f"`{part}` missing",
                            help=f"add `{example}`")
            else:
                self.dimension(num, (part,), f"a {part}", example)
        self.check_basis()

    def check_basis(self) -> None:
        """The value rests on an application's measured effect, not the kernel's."""
        study = self.study
        value = study.value
        assert value is not None
        basis = value.basis
        if basis is None:
            if len(study.applications) != 1:
                self.report(
                    "PD403", "the value has no end-to-end basis", self.header(value.span),
                    label="no application to measure the effect on",
                    help="add `from <application>`: the value comes from its measured effect",
                )
            return
        if study.operation(basis.id) is not None:
            apps = [a.name.id for a in study.applications]
            self.report(
                "PD403", f"the value is computed from operation `{basis.id}`", basis.span,
                label="a kernel speedup ignores the rest of the application",
                help=f"write `from {apps[0]}`" if apps else "compute it from an application",
            )
        elif study.application(basis.id) is None:
            names = [a.name.id for a in study.applications]
            self.report("PD301", f"no application named `{basis.id}`", basis.span,
                        label="not defined", help=suggest(basis.id, names)
                        or "`from` names an application the study defines")

    # ------------------------------------------------------------ limitations

    def check_limitations(self) -> None:
        study = self.study
        if not study.limits:
            self.missing("PD112", f"study `{study.name.id}` states no limitations",
                         help='add `limit regression "..." { shapes ... }`, `limit unsupported '
                         '"..."` and the others that apply')
        if study.fallback is None:
            self.missing("PD214", f"study `{study.name.id}` gives no fallback",
                         help='add `fallback "..."`: how to restore the previous path')
        for limit in study.limits:
            if limit.kind.id:
                self.choice(limit.kind, words.LIMIT_KINDS, "kind of limit")
            self.shape_symbols(limit.shapes, "the limit's shapes")
        regressions = [limit for limit in study.limits if limit.kind.id == "regression"]
        if study.limits and not any(limit.shapes for limit in regressions):
            first = (regressions or list(study.limits))[0]
            self.report("PD502", "no regressing shape is listed", self.header(first.span),
                        label="where is the change slower?",
                        help='add `limit regression "..." { shapes ... }`')

    # ------------------------------------------------------------ investigation record

    def check_investigation(self) -> None:
        study = self.study
        if not study.rejected:
            self.missing("PD113", f"study `{study.name.id}` records no rejected hypothesis",
                         help='add `rejected "<alternative explanation>" { because "<evidence>" }`')
        for rejected in study.rejected:
            if rejected.because is None:
                self.report("PD212", "the rejected hypothesis does not say why",
                            self.header(rejected.span), label="`because` missing",
                            help='add `because "<the evidence that rules it out>"`')

    # ------------------------------------------------------------ artifacts

    def check_artifacts(self) -> None:
        if self.study.artifacts is None:
            self.missing("PD114", f"study `{self.study.name.id}` names no artifact location",
                         help='add `artifacts "artifacts/"`')


def _combine(op: str, left: str, right: str) -> str | None:
    """The dimension of `left op right`, or None when it has no meaning."""
    if op in "+-":
        return left if left == right else None
    if op == "*":
        if DIMENSIONLESS in (left, right):
            return right if left == DIMENSIONLESS else left
        return None
    if right == DIMENSIONLESS:
        return left
    return DIMENSIONLESS if left == right else None


def _statistic(condition: Condition) -> str:
    """`p99` for both `p99 latency <= 25 ms` and `p99 <= 25 ms`."""
    return " ".join(word.id for word in condition.subject if word.id != "latency") or "mean"
