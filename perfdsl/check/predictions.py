"""Predictions: on defined subjects and quantities, observable, and within Amdahl's bound."""

from __future__ import annotations

import math

from perfdsl import targets
from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.evidence import observed
from perfdsl.check.names import choice, quantity_of, subject
from perfdsl.check.units import EPSILON, FRACTION, number
from perfdsl.diagnostics import suggest
from perfdsl.nodes import Application, Model, Name, Num, Operation, Prediction, Study, Workload
from perfdsl.plan_rules import PlanError, evaluate_formula

# The application quantities Amdahl's bound limits (goodput can move past it:
# a faster operation lets more requests meet the SLO).
AMDAHL_QUANTITIES = ("time", "throughput")
# Application quantities measured only by the load sweep.
LOAD_QUANTITIES = ("throughput", "goodput")
VACUOUS_RATIO = 10.0
"""An upper bound at or above this lets the change be ten times worse: it predicts nothing."""


def check_prediction(ctx: Context) -> None:
    study = ctx.study
    if not study.predictions:
        span = ctx.header(study.predict_span) if study.predict_span else study.name.span
        ctx.report(
            "PD106",
            f"study `{study.name.id}` makes no prediction",
            span,
            label="link missing",
            help="add `predict { <operation>.time ratio <= 0.6 }` and one on the mechanism quantity",
        )
        return
    # Once per target, not per prediction: every prediction is read to find them,
    # so a study of 10,000 predictions took minutes.
    ratios: dict[str | None, dict[str, float]] = {}
    for prediction in study.predictions:
        target = prediction.on.id if prediction.on is not None else None
        if target not in ratios:
            ratios[target] = _predicted_time_ratios(study, prediction.on)
        _one_prediction(ctx, prediction, ratios[target])
    if not any(number(p.bound) is not None for p in study.predictions):
        ctx.report(
            "PD106",
            f"study `{study.name.id}` predicts no number",
            ctx.header(study.predict_span) if study.predict_span else study.name.span,
            label="`amdahl` alone states no expected effect",
            help="add `<operation>.time ratio <= <bound>`: the effect the change is expected to have",
        )
    _coverage(ctx)


def _one_prediction(ctx: Context, prediction: Prediction, time_ratios: dict[str, float]) -> None:
    choice(ctx, prediction.statistic, words.PREDICTION_STATISTICS, "prediction statistic")
    found = subject(
        ctx, prediction.subject, "predictions are on an operation or an application the study defines"
    )
    if found is None:
        return
    operation = found if isinstance(found, Operation) else None
    application = found if isinstance(found, Application) else None
    quantities = words.OPERATION_QUANTITIES if operation else words.APPLICATION_QUANTITIES
    if not quantity_of(
        ctx, found, prediction.quantity, quantities, code="PD308", label="cannot be predicted", verb="predict"
    ):
        return
    if not _bound(ctx, prediction, application) or not _judgeable(ctx, prediction):
        return
    quantity = prediction.quantity
    if application is not None and quantity.id in LOAD_QUANTITIES:
        _swept(ctx, prediction)
    if operation is not None and quantity.id in words.MEASURES:
        _observed(ctx, prediction, operation)
        _refuted_by_model(ctx, prediction, operation)
    if application is not None and quantity.id in AMDAHL_QUANTITIES:
        _amdahl(ctx, prediction, application, time_ratios)


def _bound(ctx: Context, prediction: Prediction, application: Application | None) -> bool:
    """A ratio is bounded by a plain number, or by `amdahl` on an application's time."""
    bound = prediction.bound
    if isinstance(bound, Name):
        if bound.id != words.AMDAHL:
            ctx.report(
                "PD306",
                f"unknown bound `{bound.id}`",
                bound.span,
                label="not a bound",
                help=suggest(bound.id, [words.AMDAHL]) or "a ratio is bounded by a number or by `amdahl`",
            )
            return False
        if application is None or prediction.quantity.id not in AMDAHL_QUANTITIES:
            ctx.report(
                "PD406",
                "`amdahl` bounds an application's time or throughput only",
                bound.span,
                label="no Amdahl bound here",
                help="bound the ratio by a number, like `ratio <= 0.6`",
            )
            return False
        return True
    if number(bound) is None:
        described = f"`{bound.quantity}`" if isinstance(bound, Num) else "this"
        ctx.report(
            "PD406",
            f"a ratio is a plain number, not {described}",
            bound.span,
            label="wrong dimension for a ratio",
            help="write the ratio of change to baseline, like `ratio <= 0.6`",
        )
        return False
    return True


def _judgeable(ctx: Context, prediction: Prediction) -> bool:
    """A prediction the results can refute: an inequality whose bound some ratio can break.

    `==` is rejected rather than read with a tolerance: a measured ratio
    carries an interval, so it never equals a number, and any tolerance chosen
    here would be a bound the study did not state. A ratio of positive
    quantities is always above 0, so `>= 0` holds whatever is measured and
    `<= 0` never does; `<= 10` or more lets the change be ten times worse.
    """
    bound = number(prediction.bound)
    comparator = prediction.comparator
    if comparator == "==":
        ctx.report(
            "PD411",
            f"`{prediction.target} ratio ==` can never be judged",
            prediction.span,
            label="a measured ratio has an interval, never one value",
            help=f"predict a bound: `ratio <= {_bound_text(prediction)}` if it should be no larger, "
            f"`ratio >= {_bound_text(prediction)}` if no smaller",
        )
        return False
    if bound is None:
        return True
    if comparator in (">=", ">") and bound <= 0:
        problem = "holds whatever is measured: a ratio is always above 0"
    elif comparator in ("<=", "<") and bound <= 0:
        problem = "can never hold: a ratio is always above 0"
    elif comparator in ("<=", "<") and bound >= VACUOUS_RATIO:
        problem = f"holds unless the change is {bound:g} times worse"
    else:
        return True
    ctx.report(
        "PD411",
        f"`{prediction.target} ratio {comparator} {bound:g}` {problem}",
        prediction.bound.span,
        label="predicts nothing the results can refute",
        help="bound the ratio where the change is expected to land, like `ratio <= 0.6`",
    )
    return False


def _bound_text(prediction: Prediction) -> str:
    """The bound as the study wrote it, for a help line that rewrites the prediction."""
    bound = prediction.bound
    if isinstance(bound, Name):
        return bound.id
    value = number(bound)
    return f"{value:g}" if value is not None else "<bound>"


def _swept(ctx: Context, prediction: Prediction) -> None:
    """Throughput and goodput are read from the load sweep; without one they are never measured."""
    end = ctx.study.end_to_end
    if end is None or end.load is None:
        ctx.report(
            "PD407",
            f"`{prediction.target}` is measured only by a load sweep, and the study has none",
            prediction.quantity.span,
            label="nothing will measure this",
            help="add `load poisson 50..800 step 50 rps` to `evidence end_to_end`",
        )


def _observed(ctx: Context, prediction: Prediction, operation: Operation) -> None:
    """A mechanism quantity is predicted only if it is measured or modelled, on a target that
    can measure it: `measure dependency_stalls` counts nothing on cpu, and a `predict cpu`
    on it checked clean and came back "not evidence" from every run."""
    quantity = prediction.quantity.id
    uncounted = _none_counts([prediction.on.id] if prediction.on is not None else _study_targets(ctx))
    model = f"model it in `operation {operation.name.id}` (`{quantity} baseline <formula>, change <formula>`)"
    if not observed(ctx.study, operation, quantity):
        # On targets that count nothing, `measure` only leads to the next error: a new user
        # added it as told and was then told to model it instead.
        ctx.report(
            "PD407",
            f"`{prediction.target}` is neither measured nor modelled",
            prediction.quantity.span,
            label="nothing will observe this",
            help=f"{model}: {_names(uncounted)} counts nothing, so `measure` would not observe it"
            if uncounted
            else f"add `{quantity}` to `evidence mechanism {{ measure ... }}`, or {model}",
        )
        return
    if any(m.quantity.id == quantity for m in operation.models):
        return
    if uncounted:
        counting = ", ".join(t.name for t in targets.TARGETS if t.counts)
        ctx.report(
            "PD407",
            f"`{prediction.target}` is measured only where a run counts it, and {_names(uncounted)} does not",
            prediction.quantity.span,
            label=f"nothing on {_names(uncounted)} will observe this",
            help=f"{model}, or predict it for a target that counts it ({counting})",
        )


def _refuted_by_model(ctx: Context, prediction: Prediction, operation: Operation) -> None:
    """A prediction on a modelled quantity whose own model breaks its bound over the workload:
    `smooth.bytes ratio <= 0.4` checked clean beside formulas that give 0.5 at every shape."""
    model = next((m for m in operation.models if m.quantity.id == prediction.quantity.id), None)
    bound, workload = number(prediction.bound), ctx.study.workload
    if model is None or bound is None or workload is None or workload.shapes is None:
        return
    ratio = _model_ratio(model, workload)
    if ratio is None or _holds(ratio, prediction.comparator, bound):
        return
    counted = [t.name for t in targets.TARGETS if t.counts and t.name in _study_targets(ctx)]
    unless = f" unless {_names(counted)} counts otherwise" if counted else ""
    ctx.report(
        "PD511",
        f"`{prediction.target} ratio {prediction.comparator} {bound:g}`, but the study's own "
        f"`{model.quantity.id}` model gives {ratio:.3g} over the workload's shapes",
        prediction.span,
        label=f"a run can only refute this{unless}",
        help=f"bound it where the model puts it (`{_bound_beside(ratio, prediction.comparator)}`), "
        f"or correct the `{model.quantity.id}` formulas in `operation {operation.name.id}`",
    )


def _model_ratio(model: Model, workload: Workload) -> float | None:
    """The model's change / baseline as the evaluation judges it: weighted totals over the
    workload's shapes (equal weights where none are stated); None where it has no value."""
    shapes = workload.shapes
    if shapes is None or not shapes.shapes:
        return None
    names = [s.id for s in shapes.symbols]
    weights = [number(w) for w in workload.weights]
    if len(weights) != len(shapes.shapes) or any(w is None or w < 0 for w in weights):
        weights = [1.0] * len(shapes.shapes)
    try:
        totals = [
            (weight * evaluate_formula(model.baseline, sizes), weight * evaluate_formula(model.change, sizes))
            for weight, shape in zip(weights, shapes.shapes, strict=True)
            for sizes in [dict(zip(names, shape.sizes, strict=True))]
        ]
    except PlanError:
        return None  # a formula without a value is PD310's, a wrong symbol PD307's
    baseline, change = sum(b for b, _ in totals), sum(c for _, c in totals)
    if not (baseline > 0 and change >= 0 and math.isfinite(baseline) and math.isfinite(change)):
        return None
    return change / baseline


def _holds(ratio: float, comparator: str, bound: float) -> bool:
    """Whether an exact ratio meets the bound, give or take float rounding: the evaluation sums
    the same formulas in its own order, and a bound the model meets exactly is no warning."""
    slack = 1e-9 * max(1.0, abs(bound))
    return {
        "<=": ratio <= bound + slack,
        "<": ratio < bound + slack,
        ">=": ratio >= bound - slack,
        ">": ratio > bound - slack,
    }.get(comparator, True)


def _bound_beside(ratio: float, comparator: str) -> str:
    """The bound in two significant figures that the model's ratio meets, on the prediction's side."""
    upper = comparator in ("<=", "<")
    if ratio <= 0:
        return "ratio <= 0.01" if upper else "ratio >= 0"
    unit = 10.0 ** (math.floor(math.log10(ratio)) - 1)
    steps = ratio / unit
    bound = (math.ceil(steps - 1e-9) if upper else math.floor(steps + 1e-9)) * unit
    return f"ratio {'<=' if upper else '>='} {float(f'{bound:.2g}'):g}"


def _study_targets(ctx: Context) -> list[str]:
    workload = ctx.study.workload
    return [t.id for t in workload.targets] if workload is not None else []


def _none_counts(names: list[str]) -> list[str]:
    """These targets (the known ones) where none of them counts the mechanism's quantities;
    empty where one does, or none is known (an unknown target is reported where it is named)."""
    known = [name for name in names if name in targets.BY_NAME]
    return [] if any(targets.BY_NAME[name].counts for name in known) else known


def _names(names: list[str]) -> str:
    return " or ".join(f"`{name}`" for name in names)


def _amdahl(
    ctx: Context, prediction: Prediction, application: Application, time_ratios: dict[str, float]
) -> None:
    """An application improves by at most Amdahl's bound on the operation's share."""
    if application.share is None:
        ctx.report(
            "PD219",
            f"application `{application.name.id}` declares no share",
            application.name.span,
            label=f"`{prediction.target}` cannot be checked against Amdahl",
            help="add `share 10%`: the operations' share of its critical time, before measuring",
        )
        return
    share = application.share.quantity.base
    bound = number(prediction.bound)
    if application.share.quantity.dimension != FRACTION or not 0 < share <= 1 or bound is None:
        return
    ratio = min((time_ratios.get(name.id, 0.0) for name in application.uses), default=0.0)
    best_time = (1 - share) + share * ratio
    if prediction.quantity.id == "time" and prediction.comparator in ("<=", "<"):
        best, beaten = best_time, bound < best_time - EPSILON
    elif prediction.quantity.id == "throughput" and prediction.comparator in (">=", ">"):
        if best_time <= 0:
            return  # the whole application is an infinitely fast operation: no throughput bound
        best, beaten = 1 / best_time, bound > 1 / best_time + EPSILON
    else:
        return
    if beaten:
        ctx.report(
            "PD402",
            f"`{prediction.target} ratio {prediction.comparator} {bound:g}` beats "
            f"Amdahl's bound of {best:.4g}",
            prediction.bound.span,
            label=f"share {application.share.quantity} with operation time ratio {ratio:g}",
            help=f"predict `{prediction.target} ratio {prediction.comparator} amdahl`",
        )


def _predicted_time_ratios(study: Study, on: Name | None) -> dict[str, float]:
    """Each operation's predicted time ratio (its first upper bound) on the target `on`; an operation
    without one is read as infinitely fast (0) by Amdahl's bound, the most generous reading.

    A target's own prediction comes before the one for every target, which it replaces; another
    target's never counts (a GPU's kernel ratio says nothing of a CPU's application).
    """
    ratios: dict[str, float] = {}
    own = [p for p in study.predictions if on is not None and p.on is not None and p.on.id == on.id]
    for prediction in own + [p for p in study.predictions if p.on is None]:
        bound = number(prediction.bound)
        if prediction.quantity.id == "time" and bound is not None and prediction.comparator in ("<=", "<"):
            ratios.setdefault(prediction.subject.id, max(bound, 0.0))
    return ratios


def _coverage(ctx: Context) -> None:
    """Warn when time, or the mechanism's own quantity, goes unpredicted."""
    study = ctx.study
    if not study.operations:
        return
    span = ctx.header(study.predict_span) if study.predict_span else study.name.span
    on_operations = [p for p in study.predictions if study.operation(p.subject.id)]
    if not any(p.quantity.id == "time" for p in on_operations):
        ctx.report(
            "PD505",
            "no prediction on the operation's time",
            span,
            label="time unpredicted",
            help="add `<operation>.time ratio <= <bound>`",
        )
    mechanism = study.change.mechanism if study.change else None
    measure = words.MECHANISM_MEASURES.get(mechanism.id) if mechanism else None
    if measure and not any(p.quantity.id == measure for p in on_operations):
        uncounted = _none_counts(_study_targets(ctx))
        ctx.report(
            "PD506",
            f"no prediction on `{measure}`, the quantity `{mechanism.id}` changes",
            span,
            label="mechanism quantity unpredicted",
            help=f"add `<operation>.{measure} ratio <= <bound>`"
            + (
                f", and model `{measure}` in the operation: {_names(uncounted)} counts nothing"
                if uncounted
                else ""
            ),
        )
