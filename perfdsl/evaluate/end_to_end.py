"""The application with baseline and with change: request time, f, s and Amdahl.

* Request time: block medians of samples/application.csv, the same `compare`
  as the kernels (ratio change / baseline, below 1 is faster).
* f, the operation's share of critical time, per arm: sum(op_ns) / sum(total_ns)
  over the instrumented requests (a ratio of sums, so long requests weigh by
  their length). Amdahl uses the *baseline's* f: the share before the change.
* s, the kernel speedup (1 / time ratio) at the application's operating point:
  the operation's comparison at the shape equal to the application's shape when
  that shape was timed, else the workload-weighted combination over shapes
  (the best available stand-in: the operating point is the heaviest shape,
  scaled down under --quick). `s_source` names which was used.
* The reconciliation of the measured end-to-end speedup with Amdahl's bound.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from perfdsl.bundle.application import ApplicationRecord, ArmShare
from perfdsl.evaluate.amdahl import Reconciliation, amdahl_bound, reconcile
from perfdsl.evaluate.compare import Comparison, compare
from perfdsl.evaluate.inputs import BundleInputs, read_samples
from perfdsl.evaluate.kernels import ARMS, OperationResult, arm_findings, why_not_evidence
from perfdsl.evaluate.quality import Finding


@attrs.frozen
class Share:
    """f for one arm, from the instrumented requests."""

    arm: str
    f: float
    requests: int
    op_ns: int
    total_ns: int


@attrs.frozen
class Amdahl:
    """Amdahl's bound from measured f and s, and how the end-to-end result sits against it."""

    f: float
    s: float
    s_ci: tuple[float, float]
    s_source: str
    """"shape <label>" (the application's shape was timed) or "weighted combination"."""
    bound: float
    bound_time_ratio: float
    """1 / bound: the smallest end-to-end time ratio the operation can explain."""
    reconciliation: Reconciliation | None
    reconciliation_missing: str | None


@attrs.frozen
class EndToEnd:
    """The application's end-to-end evidence."""

    application: str
    operation: str | None
    shape: dict[str, int]
    comparison: Comparison | None
    comparison_missing: str | None
    baseline_median_ns: float | None
    shares: tuple[Share, ...]
    share_missing: str | None
    amdahl: Amdahl | None
    amdahl_missing: str | None
    findings: tuple[Finding, ...]


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
    comparison = None
    if missing is None:
        comparison = compare(
            samples["baseline"].block_medians_ns,
            samples["change"].block_medians_ns,
            level=level,
            min_effect=theta,
        )
    shares, share_missing = _shares(app)
    operation = next((op for op in operations if op.name in app.uses), operations[0] if operations else None)
    amdahl, amdahl_missing = _amdahl(operation, app, shares, comparison, missing, share_missing)
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
        findings=tuple(arm_findings(samples, ARMS, app.name, inputs.results.timer_resolution_ns)),
    )


def ci_containing(comparison: Comparison) -> tuple[float, float]:
    """The ratio's interval, widened to hold the point estimate.

    A percentile bootstrap interval of a median from few blocks can, rarely,
    exclude the sample ratio itself; widening is the conservative repair.
    """
    return min(comparison.ci_low, comparison.ratio), max(comparison.ci_high, comparison.ratio)


def _shares(app: ApplicationRecord) -> tuple[tuple[Share, ...], str | None]:
    if not app.share:
        return (), app.share_missing or "the share of time was not measured"
    out = []
    for arm in ARMS:
        record = app.share.get(arm) or ArmShare((), ())
        op, total = sum(record.op_ns), sum(record.total_ns)
        if total > 0:
            out.append(Share(arm, min(1.0, op / total), len(record.total_ns), op, total))
    if not any(s.arm == "baseline" for s in out):
        return tuple(out), "the baseline's share of time has no requests"
    return tuple(out), None


def _kernel_speedup(
    operation: OperationResult, shape: Mapping[str, int]
) -> tuple[float, tuple[float, float], str] | None:
    """s and its interval, at the application's shape if timed, else over the workload."""
    match = operation.shape(shape)
    if match is not None and match.comparison is not None:
        c = match.comparison
        return 1.0 / c.ratio, (1.0 / c.ci_high, 1.0 / c.ci_low), f"shape {match.label}"
    if operation.combined is not None:
        c2 = operation.combined
        return 1.0 / c2.ratio, (1.0 / c2.ci_high, 1.0 / c2.ci_low), "weighted combination"
    return None


def _amdahl(
    operation: OperationResult | None,
    app: ApplicationRecord,
    shares: tuple[Share, ...],
    comparison: Comparison | None,
    comparison_missing: str | None,
    share_missing: str | None,
) -> tuple[Amdahl | None, str | None]:
    if operation is None:
        return None, "no operation to take s from"
    if share_missing:
        return None, share_missing
    speedup = _kernel_speedup(operation, app.shape)
    if speedup is None:
        return None, f"operation `{operation.name}` has no timing evidence for s"
    s, s_ci, source = speedup
    f = next(x.f for x in shares if x.arm == "baseline")
    bound = amdahl_bound(f, s)
    reconciliation, missing = None, comparison_missing
    if comparison is not None:
        lo, hi = ci_containing(comparison)
        reconciliation = reconcile(f, s, 1.0 / comparison.ratio, (1.0 / hi, 1.0 / lo), s_ci=s_ci)
    return Amdahl(f, s, s_ci, source, bound, 1.0 / bound, reconciliation, missing), None
