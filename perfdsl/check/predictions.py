"""Predictions: on defined subjects and quantities, observable, and within Amdahl's bound."""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.evidence import observed
from perfdsl.check.names import choice, quantity_of, subject
from perfdsl.check.units import EPSILON, FRACTION, number
from perfdsl.diagnostics import suggest
from perfdsl.nodes import Application, Name, Num, Operation, Prediction

# The application quantities Amdahl's bound limits (goodput can move past it:
# a faster operation lets more requests meet the SLO).
AMDAHL_QUANTITIES = ("time", "throughput")


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
    for prediction in study.predictions:
        _one_prediction(ctx, prediction)
    _coverage(ctx)


def _one_prediction(ctx: Context, prediction: Prediction) -> None:
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
    if not _bound(ctx, prediction, application):
        return
    quantity = prediction.quantity
    if operation is not None and quantity.id in words.MEASURES:
        _observed(ctx, prediction, operation)
    if application is not None and quantity.id in AMDAHL_QUANTITIES:
        _amdahl(ctx, prediction, application)


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


def _observed(ctx: Context, prediction: Prediction, operation: Operation) -> None:
    """A mechanism quantity is predicted only if it is measured or modelled."""
    quantity = prediction.quantity.id
    if not observed(ctx.study, operation, quantity):
        ctx.report(
            "PD407",
            f"`{prediction.target}` is neither measured nor modelled",
            prediction.quantity.span,
            label="nothing will observe this",
            help=f"add `{quantity}` to `evidence mechanism {{ measure ... }}`",
        )


def _amdahl(ctx: Context, prediction: Prediction, application: Application) -> None:
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
    ratio = min((_predicted_time_ratio(ctx, name.id) for name in application.uses), default=0.0)
    best_time = (1 - share) + share * ratio
    if prediction.quantity.id == "time" and prediction.comparator in ("<=", "<"):
        best, beaten = best_time, bound < best_time - EPSILON
    elif prediction.quantity.id == "throughput" and prediction.comparator in (">=", ">"):
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


def _predicted_time_ratio(ctx: Context, operation: str) -> float:
    """The operation's predicted time ratio; 0 (infinitely fast) when none is stated."""
    for prediction in ctx.study.predictions:
        if prediction.subject.id == operation and prediction.quantity.id == "time":
            bound = number(prediction.bound)
            if bound is not None and prediction.comparator in ("<=", "<"):
                return max(bound, 0.0)
    return 0.0


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
        ctx.report(
            "PD506",
            f"no prediction on `{measure}`, the quantity `{mechanism.id}` changes",
            span,
            label="mechanism quantity unpredicted",
            help=f"add `<operation>.{measure} ratio <= <bound>`",
        )
