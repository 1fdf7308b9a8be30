"""The report's correctness evidence: per shape and seed group, errors against the tolerance.

Each arm's worst error per shape (adversarial shapes marked), a figure of the
change's error per shape against the tolerance, the failing cases when there
are any, and the model-level check: the application's own output against its
float64 run, which is what catches reduced precision or reassociation that
no single kernel comparison shows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import attrs

from perfdsl.bundle.results import CorrectnessCase
from perfdsl.report import figures
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext
from perfdsl.shape_order import declared_order, shape_label


def render_correctness(ctx: ReportContext, out: Blocks) -> None:
    """Per arm and shape, the worst errors over seeds against the tolerance; failing cases."""
    order = declared_order(ctx.study)
    for op in ctx.operations:
        correctness = op.correctness
        tolerances = correctness.tolerances
        stated = (
            ", ".join(f"{fmt.text(k)} ≤ {fmt.sci(v)}" for k, v in sorted(tolerances.items())) or "none stated"
        )
        out.add(
            f"{fmt.code(op.name)} against its float64 reference: tolerance {stated}; "
            f"{fmt.count(correctness.seeds)} seeds of fresh random inputs per shape, output poisoned "
            "before each run."
        )
        failing = correctness.failing
        if not correctness.passed:
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Correctness failed** for {fmt.code(op.name)}: {len(failing)} failing cases. "
                        "A failure is evidence: each case below reruns with its shape and seed."
                    ],
                )
            )
        recorded = ctx.results.operation(op.name)
        cases = list(recorded.correctness.cases) if recorded else []
        out.add(_case_table(op.name, cases, tolerances, order))
        if "rel_l2" not in tolerances:
            # The figure plots relative L2 against its tolerance; another metric is in the table.
            out.add("No error figure: the tolerance is not on relative L2 error; the table has every error.")
            plotted = []
        else:
            plotted = [
                (_shape_label(c.shape, order), c.rel_l2, float(tolerances["rel_l2"]), c.adversarial)
                for c in _worst_per_shape(cases, "change", order)
            ]
        if plotted:
            out.figure(
                f"error-{op.name}",
                functools.partial(figures.error_per_shape, plotted),
                f"Relative L2 error of the change {fmt.code(op.name)} per shape (worst over seeds) "
                "against the tolerance; triangles are adversarial shapes, filled markers fail",
            )
        if failing:
            out.add(
                fmt.table(
                    f"Failing cases of {fmt.code(op.name)}",
                    ["Arm", "Shape", "Seed", "Adversarial", "Rel. L2", "Max abs", "Why"],
                    [
                        [
                            f.arm,
                            fmt.text(_shape_label(f.shape, order)),
                            str(f.seed),
                            "yes" if f.adversarial else "no",
                            fmt.sci(f.rel_l2),
                            fmt.sci(f.max_abs),
                            fmt.message(f.message or ""),
                        ]
                        for f in failing
                    ],
                    numeric=(2, 4, 5),
                )
            )
    out.add(_model_level(ctx))


def _case_table(
    name: str, cases: list[CorrectnessCase], tolerances: Mapping[str, float], order: Sequence[str]
) -> str:
    if not cases:
        return "No correctness cases were recorded."
    groups: dict[tuple[str, str], list[CorrectnessCase]] = {}
    for case in cases:
        groups.setdefault((case.arm, _shape_label(case.shape, order)), []).append(case)
    rows = []
    for (arm, label), group in groups.items():
        adversarial = any(c.adversarial for c in group)
        failed = sum(not c.passed for c in group)
        rows.append(
            [
                fmt.text(arm),
                fmt.text(label) + (" †" if adversarial else ""),
                str(len(group)),
                _shown(_worst(group, "max_abs")),
                _shown(_worst(group, "rel_l2")),
                "pass" if not failed else f"**FAIL ({failed})**",
            ]
        )
    tolerance = ", ".join(f"{k} ≤ {fmt.sci(v)}" for k, v in sorted(tolerances.items()))
    return fmt.table(
        f"Worst error over seeds per arm and shape of {fmt.code(name)} (tolerance {fmt.text(tolerance)}; "
        "† adversarial shape)",
        ["Arm", "Shape", "Seeds", "Max abs error", "Rel. L2 error", "Result"],
        rows,
        numeric=(2, 3, 4),
    )


def _worst(group: Sequence[CorrectnessCase], metric: str) -> float | None:
    """The worst error over a shape's seeds; a failing seed without a finite error (NaN or Inf in
    its output, or none written) is infinitely wrong, never skipped for a passing seed's number."""
    values = []
    for case in group:
        error = getattr(case, metric)
        if isinstance(error, int | float) and math.isfinite(error):
            values.append(float(error))
        elif not case.passed:
            values.append(math.inf)
    return max(values) if values else None


def _shown(error: float | None) -> str:
    return "non-finite" if error is not None and math.isinf(error) else fmt.sci(error)


def _worst_per_shape(cases: list[CorrectnessCase], arm: str, order: Sequence[str]) -> list[CorrectnessCase]:
    """The worst case (by relative L2) of each shape for one arm, in first-seen order.

    A case without a relative L2 error (the kernel raised) counts as infinitely wrong.
    """
    worst: dict[str, CorrectnessCase] = {}
    for case in cases:
        if case.arm != arm:
            continue
        label = _shape_label(case.shape, order)
        error = float(case.rel_l2) if isinstance(case.rel_l2, int | float) else float("inf")
        kept = worst.get(label)
        if kept is None or error > (kept.rel_l2 if kept.rel_l2 is not None else float("inf")):
            worst[label] = attrs.evolve(case, rel_l2=error)
    return list(worst.values())


def _model_level(ctx: ReportContext) -> str:
    model = ctx.evaluation.model_level
    if model.missing:
        return f"Model-level check of the application's output: not run ({fmt.message(model.missing)})."
    arms = model.arms
    if not arms:
        return "Model-level check of the application's output: no per-arm result was recorded."
    rows = [
        [
            fmt.text(arm),
            fmt.sci(r.rel_l2),
            fmt.sci(r.max_abs),
            "pass" if r.passed else f"**FAIL** {fmt.message(r.message or '')}",
        ]
        for arm, r in sorted(arms.items())
    ]
    table = fmt.table(
        "The application's output against its float64 run (model-level check)",
        ["Arm", "Rel. L2 error", "Max abs error", "Result"],
        rows,
        numeric=(1, 2),
    )
    if model.failure is not None:
        return fmt.callout("WARNING", [f"**{fmt.sentence(model.failure)}.**"]) + "\n\n" + table
    return table


def _shape_label(sizes: Mapping[str, int], order: Sequence[str]) -> str:
    """`4096x64`, in the study's order of its symbols; `?` for a case recorded without a shape."""
    return shape_label(sizes, order) or "?"
