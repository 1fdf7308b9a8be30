"""Plan to bundle: `perfdsl run`'s orchestration, in the order the evidence is needed.

1. resolve every Python reference (a bad one is reported at its study line);
2. register the predictions (their hash) and the environment;
3. archive the compiled code of every kernel (static evidence, any machine);
4. correctness of baseline and change on every shape, adversarial shape and
   seed (verify before timing: a variant that fails is not timed);
5. kernel timing per shape, baseline, change and the read, write and copy
   roofs interleaved (the module that holds the study's copy roof may define
   `read`/`read_reference` and `write`/`write_reference` beside it; where it
   does not, only the copy roof is timed);
6. the application: model-level correctness, request time, the operation's
   share of time, and the load search.

Everything is written through one BundleWriter, so a failed or interrupted run
leaves no bundle behind. Layout: docs/bundle.md.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.plan import PLAN, OperationPlan, Plan, ShapePlan
from perfdsl.bundle.registration import REGISTRATION, RegistrationRecord
from perfdsl.bundle.results import CorrectnessCase, CorrectnessRecord, OperationRecord, Results, ShapeRecord
from perfdsl.bundle.static import StaticCode, VariantCode
from perfdsl.kernel import Application, Reference, Variant
from perfdsl.runtime.correctness import CorrectnessResult, check_variant
from perfdsl.runtime.counters.attach import attach_counters
from perfdsl.runtime.memory import BuffersTooLarge, available_bytes, buffer_cost, check_fits
from perfdsl.runtime.progress import RunProgress, calibrate_plan, step_key
from perfdsl.runtime.resolve import ResolveError, resolve
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import TimingRecord, TimingSettings, block_order, prepare_arms, sample
from perfdsl.runtime.warmup import CAP_CALLS, CAP_MS, QUICK_CAP

ROOF_ARM = "copy"
ROOF_ARMS = ("read", "write", ROOF_ARM)
"""The roofs' arm names; read and write are timed where the roof's module defines them."""
ARMS = ("baseline", "change")


class RunError(Exception):
    """The run could not start: a reference that does not resolve, with its study line."""


@attrs.frozen
class Resolved:
    """The objects one operation's references name."""

    reference: Reference
    variants: dict[str, Variant]


def _resolve(reference: str, expected: type, plan: Plan, line: int) -> Any:
    try:
        return resolve(reference, expected, Path(plan.study_path).parent)
    except ResolveError as error:
        raise RunError(f"{plan.study_path}:{line}: {error}") from None


def resolve_operation(plan: Plan, operation: OperationPlan) -> Resolved:
    """The reference and both variants of an operation, or RunError naming the study line."""
    reference = _resolve(operation.reference, Reference, plan, operation.lines["reference"])
    variants = {arm: _resolve(getattr(operation, arm), Variant, plan, operation.lines[arm]) for arm in ARMS}
    return Resolved(reference, variants)


def resolve_roof(plan: Plan) -> dict[str, tuple[Reference, Variant]]:
    """The roofs' problems and kernels by arm: the copy roof the study names, and the read and
    write roofs its module defines beside it (`read`/`read_reference`, `write`/`write_reference`)."""
    if plan.roof is None or ":" not in plan.roof:
        return {}
    module = plan.roof.split(":")[0]
    line = plan.roof_line
    roofs = {
        ROOF_ARM: (
            _resolve(f"{module}:reference", Reference, plan, line),
            _resolve(plan.roof, Variant, plan, line),
        )
    }
    for arm in ("read", "write"):
        try:
            roofs[arm] = (
                resolve(f"{module}:{arm}_reference", Reference, Path(plan.study_path).parent),
                resolve(f"{module}:{arm}", Variant, Path(plan.study_path).parent),
            )
        except ResolveError:
            continue  # an older roof module: the copy roof alone, and the evaluation says so
    return roofs


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def execute(plan: Plan, target: Target, artifacts: Path, progress: RunProgress) -> Path:
    """Run the plan on `target` and return the bundle's path."""
    from perfdsl.runtime.environment import capture_environment

    resolved = {op.name: resolve_operation(plan, op) for op in plan.operations}
    roof = resolve_roof(plan)
    application = (
        _resolve(plan.application.entry, Application, plan, plan.application.line)
        if plan.application
        else None
    )
    try:
        said = check_fits(buffer_cost(plan, target.rotation_bytes()), available_bytes(), plan.study_path)
    except BuffersTooLarge as error:
        raise RunError(str(error)) from None
    progress("calibrating: a few calls of every arm at every shape, to estimate the run's length")
    progress.announce(calibrate_plan(plan, target, resolved, roof, application))
    started = _now()
    progress(said)
    with BundleWriter(artifacts, plan.study) as bundle:
        progress(f"bundle {bundle.run_id} for `{plan.study}` on {target.name}")
        bundle.write_text("study.perf", plan.study_text)
        bundle.write_json(PLAN, plan.to_json())
        bundle.write_json(
            REGISTRATION, RegistrationRecord(plan.predict_hash, plan.study_hash, started).to_json()
        )
        bundle.write_json("environment.json", capture_environment(Path(plan.study_path)))
        operations = [
            _operation(plan, op, resolved[op.name], roof, target, bundle, progress) for op in plan.operations
        ]
        static = _static_code(plan, resolved, roof, target, bundle, progress)
        app_record = None
        if application is not None and plan.application is not None:
            from perfdsl.runtime.end_to_end import run_application

            operation = plan.operations[0]
            app_record = run_application(
                plan,
                application,
                resolved[operation.name],
                target,
                bundle,
                progress,
                correctness_passed=all(op.correctness.passed for op in operations),
            )
        results = Results(
            schema=versions.RESULTS,
            study=plan.study,
            run_id=bundle.run_id,
            target=target.name,
            timings_valid=target.timings_valid,
            timer_resolution_ns=target.spec.resolution_ns,
            quick=plan.quick,
            dtype=plan.dtype,
            started=started,
            finished=_now(),
            roof=plan.roof if roof else None,
            roof_missing=None if roof else "the study names no roof kernel",
            operations=tuple(operations),
            static=static,
            application=app_record,
            application_missing=None if app_record else "the study names no application entry",
        )
        bundle.write_json("results.json", results.to_json())
        progress("writing manifest")
    return bundle.path


def _static_code(
    plan: Plan,
    resolved: dict[str, Resolved],
    roof: dict[str, tuple[Reference, Variant]],
    target: Target,
    bundle: BundleWriter,
    progress: RunProgress,
) -> StaticCode:
    """Compile every kernel of every variant to PTX/SASS (CUDA) and IR/assembly (CPU)."""
    from perfdsl.runtime.static_code.archive import write_compiled_code
    from perfdsl.runtime.static_code.cpu import inspect_cpu_function
    from perfdsl.runtime.static_code.cuda import inspect_cuda_kernel

    progress("compiling kernels for static evidence (PTX, SASS, assembly)")
    variants = [v for r in resolved.values() for v in r.variants.values()]
    variants.extend(variant for _, variant in roof.values())
    # A kernel that several variants share is compiled once: each compilation of a
    # CUDA kernel gets a new mangled symbol, so two would look like two kernels.
    cuda_kernels = dict.fromkeys(k for v in variants for k in v.cuda_kernels)
    cpu_functions = dict.fromkeys(f for v in variants for f in v.cpu_kernels)
    records = []
    if "cuda" in target.spec.archives:
        for kernel, signature in cuda_kernels:
            records.append(inspect_cuda_kernel(kernel, signature.replace("{dtype}", plan.dtype)))
    for function, signature in cpu_functions:
        records.append(inspect_cpu_function(function, signature.replace("{dtype}", plan.dtype)))
    summary = write_compiled_code(bundle.tmp / "code", records)
    return attrs.evolve(
        summary,
        variants={
            v.name: VariantCode(
                cuda=tuple(sorted({getattr(k, "__name__", str(k)) for k, _ in v.cuda_kernels})),
                cpu=tuple(sorted({getattr(f, "__name__", str(f)) for f, _ in v.cpu_kernels})),
            )
            for v in variants
        },
        cuda_missing=None
        if "cuda" in target.spec.archives
        else "the simulator cannot compile PTX: run --target cpu or cuda for it",
    )


def _operation(
    plan: Plan,
    operation: OperationPlan,
    resolved: Resolved,
    roof: dict[str, tuple[Reference, Variant]],
    target: Target,
    bundle: BundleWriter,
    progress: RunProgress,
) -> OperationRecord:
    correctness = {}
    for arm, variant in resolved.variants.items():
        progress(f"correctness of {operation.name} {arm} `{variant.name}`")
        correctness[arm] = check_variant(
            resolved.reference,
            variant,
            target,
            workload=[s.sizes for s in operation.shapes],
            adversarial=list(operation.adversarial),
            seeds=range(plan.correctness.seeds),
            dtype=plan.dtype,
            tolerances=plan.correctness.tolerances,
        )
    passed = all(result.passed for result in correctness.values())
    shapes = []
    for index, shape in enumerate(operation.shapes, 1):
        entry = _shape_entry(shape)
        if passed:
            progress(f"timing {operation.name} {shape.label} ({index}/{len(operation.shapes)})")
            record = _time_shape(plan, operation, shape, resolved, roof, target, progress)
            path = f"samples/{operation.name}/{shape.label}.csv"
            header, rows = record.rows()
            bundle.write_csv(path, header, rows)
            entry = attrs.evolve(entry, samples=path, timing=_timing_json(record))
        else:
            progress.finish_step(step_key(operation.name, shape.label))
            entry = attrs.evolve(entry, samples_missing="not timed: a variant failed its correctness check")
        shapes.append(entry)
    # Counted mechanism evidence (Nsight Compute), at the largest shape, on cuda only.
    shapes = attach_counters(
        plan, operation, resolved.variants, target.name, shapes, passed, bundle, progress
    )
    return OperationRecord(
        name=operation.name,
        baseline=operation.baseline,
        change=operation.change,
        reference=operation.reference,
        variants={arm: v.name for arm, v in resolved.variants.items()},
        deterministic={arm: v.deterministic for arm, v in resolved.variants.items()},
        shapes=tuple(shapes),
        correctness=_correctness_record(correctness, plan),
    )


def _shape_entry(shape: ShapePlan) -> ShapeRecord:
    return ShapeRecord(
        label=shape.label,
        sizes=dict(shape.sizes),
        weight=shape.weight,
        models={m.quantity: {"baseline": m.baseline, "change": m.change} for m in shape.models},
    )


def _time_shape(
    plan: Plan,
    operation: OperationPlan,
    shape: ShapePlan,
    resolved: Resolved,
    roof: dict[str, tuple[Reference, Variant]],
    target: Target,
    progress: RunProgress,
) -> TimingRecord:
    """Baseline, change and the copy roof, interleaved in one sampler call."""
    arms = prepare_arms(
        target,
        resolved.reference,
        [resolved.variants[a] for a in ARMS],
        shape.sizes,
        plan.dtype,
        plan.timing.rotate,
    )
    arms = [attrs.evolve(arm, name=role) for arm, role in zip(arms, ARMS, strict=True)]
    for name in ROOF_ARMS:
        if name in roof:
            problem, kernel = roof[name]
            (roof_arm,) = prepare_arms(target, problem, [kernel], shape.sizes, plan.dtype, plan.timing.rotate)
            arms.append(attrs.evolve(roof_arm, name=name))
    cap = QUICK_CAP if plan.quick else {}
    settings = TimingSettings(
        warmup_calls=plan.timing.warmup,
        warmup_ms=50.0 if plan.quick else 200.0,
        warmup_cap_calls=cap.get("cap_calls", CAP_CALLS),
        warmup_cap_ms=cap.get("cap_ms", CAP_MS),
        repeats=plan.timing.repeats,
        blocks=plan.timing.blocks,
    )
    key = step_key(operation.name, shape.label)
    shown = progress.blocks(key, block_order([a.name for a in arms], settings.blocks))
    readings = _block_hook(target)
    record = sample(target, arms, settings, on_block=lambda: {**readings(), **shown()})
    progress.finish_step(key)
    return record


def _block_hook(target: Target) -> Callable[[], dict[str, Any]]:
    """At each block's start and end: what else ran on the machine, and on cuda the GPU's
    clocks and throttle reasons (read, never set)."""
    from perfdsl.runtime.contention import read_load

    if target.name != "cuda":
        return read_load
    from perfdsl.runtime.environment import read_clocks

    return lambda: {**attrs.asdict(read_clocks()), **read_load()}


def _timing_json(record: TimingRecord) -> dict[str, Any]:
    data = attrs.asdict(record, filter=lambda a, _: a.name not in ("samples", "overhead"))
    data["full"] = record.full
    data["set_bytes"] = {r.arm: r.set_bytes for r in record.rotation}
    data["exceeds_cache"] = {r.arm: r.exceeds_cache for r in record.rotation}
    data["regime"] = {r.arm: r.regime for r in record.rotation}
    data["buffer_bytes"] = {r.arm: r.buffer_bytes for r in record.rotation}
    data["read_share"] = {r.arm: r.read_share for r in record.rotation}
    data["read_share_source"] = {r.arm: r.read_share_source for r in record.rotation}
    return data


def _correctness_record(results: dict[str, CorrectnessResult], plan: Plan) -> CorrectnessRecord:
    cases = []
    for arm, result in results.items():
        for case in result.cases:
            worst = _worst(case)
            cases.append(
                CorrectnessCase(
                    arm=arm,
                    variant=case.variant,
                    shape=dict(case.shape),
                    adversarial=case.kind == "adversarial",
                    seed=case.seed,
                    passed=case.passed,
                    rel_l2=worst["rel_l2"],
                    max_abs=worst["max_abs"],
                    unwritten=sum(o.unwritten for o in case.outputs),
                    nonfinite=sum(o.nonfinite for o in case.outputs),
                    deterministic=case.deterministic,
                    message=case.message,
                )
            )
    return CorrectnessRecord(
        passed=all(r.passed for r in results.values()),
        tolerances=dict(plan.correctness.tolerances),
        seeds=plan.correctness.seeds,
        cases=tuple(cases),
    )


def _worst(case: Any) -> dict[str, float | None]:
    worst: dict[str, float | None] = {"rel_l2": None, "max_abs": None}
    for output in case.outputs:
        for metric in worst:
            value = getattr(output, metric)
            if value is not None and (worst[metric] is None or value > worst[metric]):
                worst[metric] = value
    return worst
