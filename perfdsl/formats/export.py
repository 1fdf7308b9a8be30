"""An evaluation as JSON lines: one record a line, for a dashboard or a database to ingest.

perfdsl runs no server (a result store is the dashboard's job); it writes what
one needs, in the shape ReFrame's `httpjson` handler and Grafana's JSON sources
take: flat, self-describing records, one a line, so a file of many runs is
their lines concatenated and a reader can skip a kind it does not know. Each
line carries the export's `schema` (`perfdsl.export/2`, changed only with a new
number), its `kind`, and the `study` and `run_id` it belongs to:

* `run`: one first line: target, quick, whether timings are evidence, level,
  threshold, the evaluation's own schema;
* `verdict`: every time ratio with a verdict: each kernel shape, each
  operation's weighted total, each `limit` shape, the end-to-end request time,
  and an imported study's timings (`scope` says which); `valid` false with
  `invalid` saying why marks one no conclusion may rest on (an imported timing
  that is not evidence-grade keeps the interval's call in `verdict`);
* `correctness`: each operation's correctness check, with every failing case;
* `goodput`: each arm's goodput at the SLO, and `capacity`: the change in
  capacity as an interval;
* `prediction`: every `predict` line and its verdict;
* `finding`: every measurement-quality finding (PQ codes);
* `decision`: the declared decision, what contradicts it and what it lacks.

Numbers are written exactly as evaluation.json holds them (12 significant
digits, a non-finite number as null), so a line's ratio is the file's ratio:
docs/export.md shows one line of each kind, `export.schema.json` beside this
module is their JSON Schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from perfdsl.bundle.evaluation.correctness import FailingCase
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation, ImportedTiming
from perfdsl.bundle.evaluation.kernels import Combined, Comparison, Finding, ShapeResult
from perfdsl.bundle.evaluation.verdicts import PredictionResult
from perfdsl.bundle.plain import DIGITS, to_plain

SCHEMA = "perfdsl.export/2"
"""History: /2 added the `limit` scope of `verdict` (each `limit` shape's own ratio, judged
apart from the workload's) and the `correctness` kind; /1 left both out."""
KINDS = ("run", "verdict", "correctness", "goodput", "capacity", "prediction", "finding", "decision")


def render_jsonl(evaluation: Evaluation | ImportedEvaluation) -> str:
    """Every record of the evaluation, one JSON object a line, sorted keys, ending in a newline."""
    return "".join(json.dumps(r, sort_keys=True, allow_nan=False) + "\n" for r in records(evaluation))


def records(evaluation: Evaluation | ImportedEvaluation) -> list[dict[str, Any]]:
    """The export's records in order: the run, verdicts, load, predictions, findings, decision."""
    found = _imported(evaluation) if isinstance(evaluation, ImportedEvaluation) else _measured(evaluation)
    head = {"schema": SCHEMA, "study": evaluation.study, "run_id": evaluation.run_id}
    return [to_plain({**head, "kind": kind, **fields}, DIGITS) for kind, fields in found]


def _measured(e: Evaluation) -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "run",
        {
            "evaluation": e.schema,
            "target": e.target,
            "quick": e.quick,
            "timings_valid": e.timings_valid,
            "timings_note": e.timings_note,
            "level": e.level,
            "threshold": e.threshold,
        },
    )
    for op in e.operations:
        yield from (_shape_verdict("shape", op.name, shape) for shape in op.shapes)
        yield (
            "verdict",
            {
                "scope": "combined",
                "operation": op.name,
                "application": None,
                "shape": None,
                "sizes": None,
                **_comparison(op.combined, op.combined_missing, None),
            },
        )
        yield from (_shape_verdict("limit", op.name, shape) for shape in op.limits)
        correctness = op.correctness
        yield (
            "correctness",
            {
                "operation": op.name,
                "passed": correctness.passed,
                "failing": [_failing_case(case) for case in correctness.failing],
                "tolerances": dict(correctness.tolerances),
            },
        )
    end = e.end_to_end
    if end is not None:
        yield (
            "verdict",
            {
                "scope": "end_to_end",
                "operation": end.operation,
                "application": end.application,
                "shape": None,
                "sizes": end.shape,
                **_comparison(end.comparison, end.comparison_missing, None),
            },
        )
    if e.load is not None:
        for arm in e.load.arms:
            yield (
                "goodput",
                {
                    "arm": arm.arm,
                    "goodput_rps": arm.goodput,
                    "failing_rps": arm.failing,
                    "confirmed": arm.confirmed,
                    "lower_bound": arm.lower_bound,
                    "limited_by": list(arm.limited_by),
                    "slo_seconds": e.load.slo_seconds,
                    "percentile": e.load.percentile,
                },
            )
        capacity = e.load.capacity_range
        yield (
            "capacity",
            {
                "low": capacity.low if capacity else None,
                "high": capacity.high if capacity else None,
                "confirmed": capacity.confirmed if capacity else None,
                "bound": e.load.capacity_bound,
                "message": capacity.message if capacity else None,
                "missing": None if capacity else e.load.capacity_missing,
            },
        )
    yield from _predictions(e.predictions)
    yield from _findings(e.quality)
    yield (
        "decision",
        {
            "declared": e.decision.declared,
            "consistent": e.decision.consistent,
            "contradictions": list(e.decision.findings),
            "unsupported": list(e.decision.unsupported),
        },
    )


def _imported(e: ImportedEvaluation) -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "run",
        {
            "evaluation": e.schema,
            "target": None,
            "quick": False,
            "timings_valid": True,
            "timings_note": None,
            "level": e.level,
            "threshold": e.threshold,
        },
    )
    for timing in e.timings:
        sizes = e.sizes.get(timing.operation)
        yield "verdict", _imported_timing(timing, "imported", timing.operation, None, sizes)
    for app in e.applications:
        yield "verdict", _imported_timing(app.timing, "imported_end_to_end", None, app.application, None)
    yield from _predictions(e.predictions)
    yield (
        "decision",
        {
            "declared": e.decision,
            "consistent": not e.findings,
            "contradictions": list(e.findings),
            "unsupported": [],
        },
    )


def _shape_verdict(scope: str, operation: str, shape: ShapeResult) -> tuple[str, dict[str, Any]]:
    """One shape's verdict line: a workload shape (`shape`) or a `limit` shape."""
    return (
        "verdict",
        {
            "scope": scope,
            "operation": operation,
            "application": None,
            "shape": shape.label,
            "sizes": shape.sizes,
            **_comparison(shape.comparison, shape.missing, shape.invalid),
        },
    )


def _failing_case(case: FailingCase) -> str:
    """One failing case in words, enough to rerun it."""
    shape = "x".join(str(v) for v in case.shape.values())
    seed = "adversarial" if case.adversarial else f"seed {case.seed}"
    return f"{case.arm} `{case.variant}` at {shape} ({seed}): {case.message}"


def _comparison(c: Comparison | Combined | None, missing: str | None, invalid: str | None) -> dict[str, Any]:
    """A comparison's ratio, interval and verdict; without one, why not (verdict null)."""
    if c is None:
        return {
            "ratio": None,
            "ci_low": None,
            "ci_high": None,
            "level": None,
            "verdict": None,
            "p_value": None,
            "family": None,
            "valid": False,
            "invalid": invalid,
            "missing": missing,
        }
    return {
        "ratio": c.ratio,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "level": c.level,
        "verdict": c.verdict,
        "p_value": c.p_value,
        "family": c.family,
        "valid": invalid is None,
        "invalid": invalid,
        "missing": getattr(c, "interval_missing", None),
    }


def _imported_timing(
    t: ImportedTiming,
    scope: str,
    operation: str | None,
    application: str | None,
    sizes: dict[str, int] | None,
) -> dict[str, Any]:
    return {
        "scope": scope,
        "operation": operation,
        "application": application,
        "shape": None,
        "sizes": sizes,
        "ratio": t.ratio,
        "ci_low": t.low,
        "ci_high": t.high,
        "level": None,
        "verdict": t.indicated,
        "p_value": None,
        "family": None,
        "valid": t.evidence_grade,
        "invalid": None if t.evidence_grade else t.verdict,
        "missing": None if t.ratio is not None else "no ratio from the imported files",
    }


def _predictions(predictions: tuple[PredictionResult, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    for p in predictions:
        yield (
            "prediction",
            {
                "line": p.line,
                "text": p.text,
                "target": p.target,
                "comparator": p.comparator,
                "bound": p.bound,
                "bound_source": p.bound_source,
                "value": p.value,
                "ci_low": p.ci[0] if p.ci else None,
                "ci_high": p.ci[1] if p.ci else None,
                "basis": p.basis,
                "verdict": p.verdict,
                "message": p.message,
            },
        )


def _findings(findings: tuple[Finding, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    for f in findings:
        yield "finding", {"code": f.code, "severity": f.severity, "message": f.message, "subject": f.subject}
