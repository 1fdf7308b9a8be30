"""The application with baseline and with change: request time, f, s and Amdahl.

* Request time: block medians of samples/application.csv, compared pair by
  pair as the sampler interleaved them (ratio change / baseline, below 1 faster).
* The whole request split in two (`stats.decomposition`), from the share
  pass's instrumented requests in both arms, resampled by round: f, the
  operation's share of the baseline's request time; r = 1 / s, the
  operation's time ratio at the application's own operating point; rho, the
  ratio of the rest of the request; and D, the share pass's own request
  ratio. Only when that pass lacks the change arm is r borrowed from the
  kernel timing (the shape equal to the application's, else the total-time
  combination over shapes), the rest is unmeasured, and the borrowing is a
  finding (`s_fallback`).
* Amdahl as a consistency test (`stats.amdahl.reconcile`), all in time ratios,
  with its premise (the rest unchanged) tested: consistent, cross-effect,
  shortfall, accounting broken, opposite sign, beyond the bound (rest
  unmeasured) or not established. The last three but one are
  contradictions: every claim built on the end-to-end effect (value,
  capacity attribution, the decision's support) falls.
* The study's declared share against the measured f.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfdsl.bundle.application import ApplicationRecord, ArmShare
from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.end_to_end import Amdahl, Decomposition, EndToEnd, Share
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.kernels import Comparison, OperationResult
from perfdsl.bundle.stopping import StopRecord
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.evaluate.inputs import ArmSamples, BundleInputs, read_samples
from perfdsl.evaluate.kernels import arm_findings, invalid_reason, why_not_evidence, with_causes
from perfdsl.evaluate.quality import check_contention
from perfdsl.evaluate.sequential import agrees, judged, recompute
from perfdsl.stats.amdahl import check_declared_share, reconcile
from perfdsl.stats.decomposition import DecompositionError, decompose, share_of_time
from perfdsl.stats.power import pairs_needed
from perfdsl.stats.sequential.power import cap_needed


def evaluate_end_to_end(
    inputs: BundleInputs, operations: tuple[OperationResult, ...], level: float, theta: float
) -> EndToEnd | None:
    """The end-to-end evidence, or None when the run had no application."""
    app = inputs.results.application
    if app is None:
        return None
    samples = read_samples(inputs, app.samples) if app.samples else {}
    missing = why_not_evidence(
        inputs.results.timings_valid,
        inputs.results.target,
        app.samples_missing or "no request times were recorded",
        samples,
    )
    if missing is not None and app.timing is not None:
        # "no `baseline` samples" left out the RuntimeError that stopped the baseline's requests.
        missing = with_causes(missing, app.timing.failures)
    findings = tuple(arm_findings(samples, ARMS, app.name, inputs.results.timer_resolution_ns))
    if missing is None:
        # As a kernel shape's: an error-severity finding (requests shorter than the clock
        # resolves) leaves no comparison for the decision, Amdahl or the value to lean on.
        invalid = invalid_reason(findings, None, app.name)
        missing = f"the request samples are invalid: {invalid}" if invalid else app.operation_never_called
    comparison = None
    if missing is None:
        comparison, _ = compare_blocks(
            samples["baseline"].block_medians_ns,
            samples["baseline"].block_indices,
            samples["change"].block_medians_ns,
            samples["change"].block_indices,
            level=level,
            min_effect=theta,
        )
    planned = inputs.plan.application
    rule = inputs.plan.timing.stopping_for(planned.stop_edges if planned else ())
    stop = recompute(samples, rule) if rule is not None else None
    if comparison is not None and stop is not None:
        comparison = judged(comparison, stop)
    shares, share_missing = _shares(app)
    operation = next((op for op in operations if op.name in app.uses), operations[0] if operations else None)
    amdahl, amdahl_missing = _amdahl(
        inputs.results.timings_valid,
        operation,
        app,
        _declared_share(inputs, app),
        comparison,
        missing,
        share_missing,
        level,
        theta,
        stop,
    )
    return EndToEnd(
        application=app.name,
        operation=operation.name if operation else None,
        shape=dict(app.shape),
        comparison=comparison,
        comparison_missing=missing,
        baseline_median_ns=comparison.baseline_dispersion.median if comparison else None,
        shares=shares,
        share_missing=share_missing,
        amdahl=amdahl,
        amdahl_missing=amdahl_missing,
        findings=findings + check_contention(app.blocks, app.name),
        requests_per_block=_requests_per_block(samples) if comparison else None,
        stop=stop,
        stop_agrees=agrees(stop, app.stop) if stop is not None or app.stop is not None else None,
    )


def _requests_per_block(samples: Mapping[str, ArmSamples]) -> int:
    base = samples["baseline"]
    return max(1, base.durations_ns.size // max(1, len(base.block_indices)))


def ci_containing(comparison: Comparison) -> tuple[float, float]:
    """The ratio's interval, widened to hold the point estimate.

    A percentile bootstrap interval of a median from few blocks can, rarely,
    exclude the sample ratio itself; widening is the conservative repair. A
    comparison from too few pairs has no interval: callers check
    `interval_missing` first, and asking here anyway is a bug.
    """
    if comparison.interval is None:
        raise ValueError(f"no interval: {comparison.interval_missing}")
    return comparison.interval


def _shares(app: ApplicationRecord) -> tuple[tuple[Share, ...], str | None]:
    if not app.share:
        return (), app.share_missing or "the share of time was not measured"
    if app.operation_never_called:
        return (), app.operation_never_called
    out = []
    for arm in ARMS:
        record = app.share.get(arm) or ArmShare((), ())
        op, total = sum(record.op_ns), sum(record.total_ns)
        if total > 0:
            out.append(Share(arm, min(1.0, op / total), len(record.total_ns), op, total))
    if not any(s.arm == "baseline" for s in out):
        return tuple(out), "the baseline's share of time has no requests"
    return tuple(out), None


def measured_effect(comparison: Comparison) -> Estimate:
    """The end-to-end time ratio with an interval that holds its point estimate."""
    low, high = ci_containing(comparison)
    return Estimate(comparison.ratio, low, high, comparison.level)


def _declared_share(inputs: BundleInputs, app: ApplicationRecord) -> float | None:
    """The share the study declares for the application, where the run measured f at the shape
    it was declared for. A quick run that shrank the application's shape measures another split:
    a new user's declared 70 % was "contradicted" by 52.8 % at 16384 of its 262144 elements."""
    declared = inputs.study.application(app.name)
    share = declared.share if declared is not None else None
    if share is None or (inputs.results.quick and dict(app.shape) != _full_shape(inputs)):
        return None
    return share.quantity.base


def _full_shape(inputs: BundleInputs) -> dict[str, int] | None:
    """The application's shape in a full run of the study on the run's target (None: no such plan)."""
    from perfdsl.plan import PlanError, plan

    try:
        full = plan(inputs.study, inputs.results.target, quick=False).application
    except PlanError:
        return None
    return dict(full.shape) if full is not None else None


def _borrowed_ratio(operation: OperationResult, shape: Mapping[str, int]) -> tuple[Estimate, str] | None:
    """r from the kernel timing, when it was not measured inside the application: the application's
    own shape if it was timed and is valid, else the total-time combination over the valid shapes."""
    match = operation.shape(shape)
    if match is not None and match.usable is not None and match.usable.interval is not None:
        c = match.usable
        return Estimate(c.ratio, *c.interval, c.level), (f"kernel shape {match.label}")
    if operation.combined is not None:
        k = operation.combined
        return Estimate(k.ratio, min(k.ci_low, k.ratio), max(k.ci_high, k.ratio), k.level), (
            "kernel total-time combination over shapes"
        )
    return None


def _decomposition(app: ApplicationRecord, level: float) -> tuple[Decomposition | None, str | None]:
    """The share pass split into the operation and the rest, or why it cannot be."""
    base, change = (app.share.get(arm) if app.share else None for arm in ARMS)
    if base is None or change is None or len(change.total_ns) < 2:
        return None, f"the share pass did not time `{app.name}`'s requests in both arms"
    try:
        return decompose(base, change, level), None
    except DecompositionError as why:
        return None, str(why)


def _fallback_ratio(operation: OperationResult, app: ApplicationRecord) -> tuple[Estimate, str, str] | None:
    """r borrowed from the kernel timing, where it came from, and the finding that says so."""
    borrowed = _borrowed_ratio(operation, app.shape)
    if borrowed is None:
        return None
    r, source = borrowed
    why = (
        f"s is not at the application's operating point: the share pass did not time `{operation.name}` "
        f"inside `{app.name}` in both arms, so it is borrowed from the {source}"
    )
    return r, source, why


def _amdahl(
    timings_valid: bool,
    operation: OperationResult | None,
    app: ApplicationRecord,
    declared_share: float | None,
    comparison: Comparison | None,
    comparison_missing: str | None,
    share_missing: str | None,
    level: float,
    theta: float,
    stop: StopRecord | None,
) -> tuple[Amdahl | None, str | None]:
    if not timings_valid:
        return None, "the target's timings, the share pass's included, are not evidence"
    if operation is None:
        return None, "no operation to take s from"
    if share_missing:
        return None, share_missing
    base = app.share.get("baseline")
    if base is None or len(base.total_ns) < 2:
        return None, "the baseline's share of time needs at least two instrumented requests"
    decomposition, decomposition_missing = _decomposition(app, level)
    fallback = None
    if decomposition is not None:
        f, r = decomposition.f, decomposition.op_ratio
        source = "the operation's time inside the application, both arms (share pass)"
    else:
        try:
            f = share_of_time(base, level)
        except DecompositionError as why:
            return None, f"the baseline's share of time: {why}"
        found = _fallback_ratio(operation, app)
        if found is None:
            return None, f"operation `{operation.name}` has no valid timing evidence for s"
        r, source, fallback = found
    reconciliation, missing = None, comparison_missing
    if comparison is not None and comparison.interval_missing:
        missing = f"the end-to-end effect is inconclusive: {comparison.interval_missing}"
    elif comparison is not None:
        reconciliation = reconcile(
            f, r, measured_effect(comparison), theta=theta, decomposition=decomposition
        )
    bound = (1.0 - f.value) + f.value * r.value
    corners = [(1.0 - fi) + fi * ri for fi in (f.low, f.high) for ri in (r.low, r.high)]
    return Amdahl(
        f=f,
        op_ratio=r,
        s=1.0 / r.value,
        s_ci=(1.0 / r.high, 1.0 / r.low),
        s_source=source,
        s_fallback=fallback,
        bound=1.0 / bound,
        bound_time_ratio=bound,
        bound_range=(min(corners), max(corners)),
        reconciliation=reconciliation,
        reconciliation_missing=missing,
        share_check=None if declared_share is None else check_declared_share(declared_share, f),
        theta=theta,
        power=_power(comparison, bound, stop),
        decomposition=decomposition,
        decomposition_missing=decomposition_missing,
    ), None


def _power(comparison: Comparison | None, bound: float, stop: StopRecord | None) -> str | None:
    """Whether the end-to-end comparison could detect the effect Amdahl allows (`stats.power`;
    under the sequential rule, its sequence at the cap: `stats.sequential.power`), said only
    where its verdict is inconclusive: a verdict the interval decided needs no power, and
    "Underpowered end to end" beside a request time decided faster after 18 pairs read as doubt."""
    if comparison is None or comparison.analysis != "paired" or comparison.verdict != "inconclusive":
        return None
    allowed = abs(1.0 / bound - 1.0) if bound < 1.0 else abs(bound - 1.0)
    if allowed <= 0.0 or comparison.mde <= allowed:
        return None
    if stop is not None:
        cap = cap_needed([(stop.rule, stop.sd_log, 1.0)], allowed)
        over = f"at its cap of {stop.rule.max_pairs} block pairs"
        more = f"a cap of about {cap} block pairs would" if cap is not None else "no practical cap would"
    else:
        needed = pairs_needed(comparison.sigma_log, allowed, comparison.level, threshold=comparison.theta)
        over = f"over {comparison.n_pairs} block pairs"
        more = (
            f"about {needed} block pairs would"
            if needed is not None
            else f"no number of pairs would at the {comparison.theta:.3g} threshold"
        )
    return (
        f"the end-to-end design cannot call the effect Amdahl allows ({allowed:.2%}): the smallest "
        f"effect it calls with 80 % power past the {comparison.theta:.3g} threshold is "
        f"{comparison.mde:.2%} {over}; {more}"
    )
