"""Study to plan: every setting the run needs, resolved to plain values.

`plan(study, target, quick)` decides what will run: the shapes (scaled down
under `--quick`, and always to tiny ones on the `cudasim` target), the timing
and correctness settings (the study's, or the quick ones), the modelled
mechanism quantities evaluated per shape, the load sweep's rates and the
bundle's location. The run stage reads only the plan,
so a plan is also the record of what was asked for (its records, and
plan.json, are in `perfdsl.bundle.plan`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from perfdsl.bundle.plan import (
    ApplicationPlan,
    CorrectnessPlan,
    LimitShapePlan,
    LoadPlan,
    ModelValue,
    OperationPlan,
    Plan,
    ShapePlan,
    TimingPlan,
)
from perfdsl.bundle.stopping import FIXED, SEQUENTIAL
from perfdsl.expectations import STATED_AS, Expectations, expectations
from perfdsl.nodes import Num, ShapeSet, Study
from perfdsl.plan_rules import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PERCENTILE,
    DEFAULT_REQUESTS,
    DEFAULT_SEQUENTIAL,
    DEFAULT_THRESHOLD,
    DEFAULT_TIMING,
    MIN_THRESHOLD,
    PlanError,
    evaluate_formula,
    slo_percentile,
)
from perfdsl.probe_size import probe_cap

# `--quick`: CI and the README's first command. Small enough for a 2-core machine,
# large enough that every code path (rotation, blocks, interleaving) runs.
QUICK_ELEMENTS = 1 << 18
QUICK_APPLICATION_ELEMENTS = 1 << 14
"""The quick application must serve hundreds of requests in seconds: the load test's
pass criterion needs 459 completions at each probed rate."""
QUICK_TIMING = {"warmup": 3, "repeats": 5, "blocks": 5, "rotate": 2}
"""Five blocks an arm: the fewest pairs with an interval (`stats.paired.MIN_PAIRS`). With four,
no fixed-design quick run ever reached a verdict, and the code that draws one never ran."""
QUICK_SEQUENTIAL = {"min_blocks": 5, "max_blocks": 8}
"""A quick sequential run looks from the first pair count with a bounded interval (5 at 95 %)."""
QUICK_SEEDS = 2
# `--target cudasim`: correctness only, always at tiny shapes (SPEC.md section 5). The
# simulator runs one OS thread per CUDA thread: a few hundred threads a second for a
# kernel with block-wide barriers, so a quick shape would take minutes per call. Its
# timings are never evidence: one block of two repeats only shows that the path runs.
CUDASIM_ELEMENTS = 1 << 8
CUDASIM_APPLICATION_ELEMENTS = 1 << 6
CUDASIM_TIMING = {"warmup": 1, "repeats": 2, "blocks": 1, "rotate": 1}
CUDASIM_SEEDS = 1
QUICK_REQUESTS = 60


def shape_dicts(shape_set: ShapeSet | None) -> list[dict[str, int]]:
    """A shape set's shapes as size dictionaries ({"M": 64, "N": 4096}), in declared order."""
    if shape_set is None:
        return []
    symbols = [s.id for s in shape_set.symbols]
    return [dict(zip(symbols, shape.sizes, strict=True)) for shape in shape_set.shapes]


def quick_shape(
    sizes: dict[str, int], budget: int = QUICK_ELEMENTS, side: int | None = None
) -> dict[str, int]:
    """Shrink a shape to about `budget` elements, and no size above `side`, halving the largest first.

    Halving keeps the shape's character (a power of two stays one, an odd size
    stays odd, so a size that is not a multiple of the block size stays one) so
    the quick run exercises the same code paths.
    """
    shrunk = dict(sizes)
    while shrunk:
        largest = max(shrunk, key=lambda k: shrunk[k])
        over = math.prod(shrunk.values()) > budget or (side is not None and shrunk[largest] > side)
        if not over or shrunk[largest] <= 1:
            break
        shrunk[largest] = max(1, shrunk[largest] // 2 | shrunk[largest] % 2)
    return shrunk


def simulator_shape(sizes: dict[str, int], budget: int) -> dict[str, int]:
    """`quick_shape` with every size at most the budget's d-th root (d sizes).

    The simulator's cost grows with a kernel's thread blocks, and they grow with
    every size: a (4096, 1) RMSNorm has 4096 elements but 4096 blocks. So on the
    simulator every size must be small, not only their product.
    """
    return quick_shape(sizes, budget, side=max(1, round(budget ** (1 / max(1, len(sizes))))))


def _merge_duplicates(
    shapes: list[dict[str, int]], weights: list[float]
) -> tuple[list[dict[str, int]], list[float]]:
    """Shapes that shrank to the same sizes become one that carries their summed weight.

    Two would time the same thing twice and write the same sample file.
    """
    merged: dict[tuple[tuple[str, int], ...], float] = {}
    for sizes, weight in zip(shapes, weights, strict=False):
        key = tuple(sizes.items())
        merged[key] = merged.get(key, 0.0) + weight
    return [dict(key) for key in merged], list(merged.values())


def _selected(
    shapes: list[dict[str, int]],
    weights: list[float],
    only: Sequence[Mapping[str, int]],
    limit_shapes: Sequence[dict[str, int]] = (),
) -> tuple[list[dict[str, int]], list[float]]:
    """The declared shapes named in `only`, in declared order, with their weights (PlanError otherwise).

    A `limit regression`'s shapes are declared too, but carry no production
    weight: they may be chosen only on their own, equally weighted, so that a
    run of them (a matrix cell) measures where the study says the change stops
    without their weight entering the workload's combination.
    """
    wanted = [dict(w) for w in only]
    for shape in wanted:
        if shape not in shapes and shape not in limit_shapes:
            listed = ", ".join(shape_argument(s) for s in shapes)
            limits = ", ".join(shape_argument(s) for s in limit_shapes if s not in shapes)
            also = f" (or its limits': {limits})" if limits else ""
            raise PlanError(
                f"shape {shape_argument(shape)} is not among the workload's shapes: {listed}{also}"
            )
    if not wanted:
        raise PlanError("no shape selected: name at least one of the workload's shapes")
    if any(s in limit_shapes and s not in shapes for s in wanted):
        if any(s in shapes for s in wanted):
            raise PlanError("a limit's shapes run on their own: select them without the workload's shapes")
        chosen = [s for s in limit_shapes if s in wanted]
        return chosen, [1.0 / len(chosen)] * len(chosen)
    keep = [i for i, s in enumerate(shapes) if s in wanted]
    return [shapes[i] for i in keep], [weights[i] if i < len(weights) else 0.0 for i in keep]


def limit_shapes(study: Study) -> list[dict[str, int]]:
    """Every shape a `limit regression` declares, in study order, each once."""
    found: list[dict[str, int]] = []
    for limit in study.limits:
        if limit.kind.id == "regression":
            found += [s for s in shape_dicts(limit.shapes) if s not in found]
    return found


def shape_argument(sizes: Mapping[str, int]) -> str:
    """A shape as `perfdsl run --shape` takes it: `M=64,N=4096`."""
    return ",".join(f"{name}={size}" for name, size in sizes.items())


def predict_section_hash(study: Study) -> str:
    """SHA-256 of every `predict` section's text, every target's, and the stopping rule: registered
    before results exist.

    The sections are joined in the order written, so a study with one section
    hashes as it did before targets had sections of their own. A study that
    declares `stop` registers its rule with them (`stopping_rule_text`): a rule
    changed after the run would let the data choose when to stop. Without
    `stop`, the fixed design, the hash is what it was before rules existed.
    """
    text = "\n".join(study.source.snippet(span) for span in study.predict_spans)
    rule = stopping_rule_text(study)
    if rule:
        text += "\n" + rule
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stopping_rule_text(study: Study) -> str:
    """The timing settings that decide when a comparison stops, as written, or "" without `stop`."""
    timing = study.timing
    if timing is None or timing.stop is None:
        return ""
    settings = [
        f"{name} {study.source.snippet(value.span)}"
        for name in ("stop", "min_blocks", "max_blocks", "looks", "blocks", "confidence", "threshold")
        if (value := getattr(timing, name)) is not None
    ]
    return "; ".join(settings)


def time_bounds(expected: Expectations, subject: str) -> tuple[float, ...]:
    """The numeric bounds of the run target's `<subject>.time ratio` predictions, in order.

    Under the sequential rule a comparison these predictions rest on keeps measuring while
    its interval straddles one of them (`StoppingRule.edges`): a verdict decided against
    the band after 6 pairs, interval [0.34, 0.74], had left `time ratio <= 0.7`
    inconclusive. An `amdahl` bound is measured in the run, so it is not known here.
    """
    return tuple(
        sorted(
            {
                p.bound.quantity.base
                for p in expected.predictions
                if p.subject.id == subject
                and p.quantity.id == "time"
                and p.statistic.id == "ratio"
                and isinstance(p.bound, Num)
                and math.isfinite(p.bound.quantity.base)
                and p.bound.quantity.base > 0
            }
        )
    )


def _line(study: Study, offset: int) -> int:
    return study.source.position(offset).line


def runs_on(study: Study, target: str) -> bool:
    """Whether the study's `targets` include `target` (all of them where it declares none); the
    simulator runs a cuda study's kernels, so `cudasim` counts as `cuda`."""
    declared = {t.id for t in study.workload.targets} if study.workload else set()
    return not declared or target in declared or STATED_AS.get(target) in declared


def refuse_undeclared_target(study: Study, target: str) -> None:
    """Raise PlanError when the study's `targets` do not include `target`.

    A study's kernels are written for the targets it declares: a cuda-only
    study run on the cpu would start and then fail importing a GPU-only
    module. The simulator runs a cuda study's kernels, so `cudasim` counts as
    `cuda` here.
    """
    if runs_on(study, target):
        return
    declared = study.workload.targets if study.workload else ()
    ids = {t.id for t in declared}
    names = ", ".join(t.id for t in declared)
    simulated = " (or cudasim)" if "cuda" in ids else ""
    raise PlanError(
        f"{study.source.path}:{_line(study, declared[0].span.start)}: the study runs on `{names}` "
        f"(its `targets`), not `{target}`: run with `--target {declared[0].id}`{simulated}, "
        f"or add `{STATED_AS.get(target, target)}` to `targets` if its kernels run there"
    )


def plan(study: Study, target: str, quick: bool, only: Sequence[Mapping[str, int]] | None = None) -> Plan:
    """The run plan for a study that checks; raises PlanError for a missing link.

    `only` keeps a subset of the workload's declared shapes (a matrix cell's
    shapes axis), with their own weights, before any quick shrinking; a shape
    the workload does not declare is refused, so a cell never measures a shape
    the study's weights say nothing about.
    """
    workload = study.workload
    if workload is None or workload.shapes is None or not study.operations:
        raise PlanError("the study has no workload shapes or no operation: run `perfdsl check`")
    shapes = shape_dicts(workload.shapes)
    weights = [w.value for w in workload.weights] or [1.0 / len(shapes)] * len(shapes)
    if only is not None:
        shapes, weights = _selected(shapes, weights, only, limit_shapes(study))
    adversarial = shape_dicts(study.correctness.adversarial if study.correctness else None)
    simulated = target == "cudasim"
    quick = quick or simulated
    resize: Callable[[dict[str, int]], dict[str, int]] | None = None
    if quick:
        shrink = simulator_shape if simulated else quick_shape
        budget = CUDASIM_ELEMENTS if simulated else QUICK_ELEMENTS
        shapes, weights = _merge_duplicates([shrink(s, budget) for s in shapes], weights)
        shrunk = (shrink(s, budget // 4) for s in adversarial)
        adversarial = list({tuple(a.items()): a for a in shrunk}.values())

        def resize(sizes: dict[str, int]) -> dict[str, int]:
            return shrink(sizes, budget)

    limits = limit_plans(study, shapes, resize, selected=only is not None, simulated=simulated)
    extra = [limit.sizes for limit in limits if limit.sizes is not None and limit.sizes not in shapes]
    extra = [sizes for i, sizes in enumerate(extra) if sizes not in extra[:i]]

    expected = expectations(study, target)
    timing = _timing(study, quick, simulated)
    sequential = timing.stop == SEQUENTIAL
    operations = []
    for operation in study.operations:
        if not (operation.baseline and operation.change and operation.reference):
            raise PlanError(f"operation `{operation.name.id}` lacks its baseline, change or reference")
        timed = [(sizes, weight, False) for sizes, weight in zip(shapes, weights, strict=False)]
        shape_plans = tuple(
            ShapePlan(
                sizes,
                weight,
                tuple(
                    ModelValue(
                        model.quantity.id,
                        evaluate_formula(model.baseline, sizes),
                        evaluate_formula(model.change, sizes),
                    )
                    for model in operation.models
                ),
                limit,
            )
            for sizes, weight, limit in [*timed, *((sizes, 0.0, True) for sizes in extra)]
        )
        operations.append(
            OperationPlan(
                name=operation.name.id,
                baseline=str(operation.baseline),
                change=str(operation.change),
                reference=str(operation.reference),
                lines={
                    "baseline": _line(study, operation.baseline.span.start),
                    "change": _line(study, operation.change.span.start),
                    "reference": _line(study, operation.reference.span.start),
                },
                shapes=shape_plans,
                adversarial=tuple(adversarial),
                stop_edges=time_bounds(expected, operation.name.id) if sequential else (),
            )
        )

    heaviest = shapes[max(range(len(shapes)), key=lambda i: weights[i] if i < len(weights) else 0)]
    if expected.application is not None and expected.application.shapes:
        heaviest = shape_dicts(expected.application)[0]
    application = None
    if study.applications and study.applications[0].entry is not None:
        app = study.applications[0]
        application = ApplicationPlan(
            app.name.id,
            str(app.entry),
            _line(study, app.entry.span.start),
            tuple(u.id for u in app.uses),
            (
                simulator_shape(heaviest, CUDASIM_APPLICATION_ELEMENTS)
                if simulated
                else quick_shape(heaviest, QUICK_APPLICATION_ELEMENTS)
                if quick
                else heaviest
            ),
            time_bounds(expected, app.name.id) if sequential else (),
        )

    study_path = Path(study.source.path)
    roof = study.mechanism.roof if study.mechanism else None
    artifacts = study.artifacts.value if study.artifacts else "artifacts/"
    return Plan(
        study=study.name.id,
        study_path=str(study_path),
        study_text=study.source.text,
        study_hash=hashlib.sha256(study.source.text.encode("utf-8")).hexdigest(),
        predict_hash=predict_section_hash(study),
        target=target,
        quick=quick,
        dtype=workload.dtype.id if workload.dtype else "float32",
        operations=tuple(operations),
        timing=_planned_looks(study, attrs.evolve(timing, family=_family(operations, application))),
        correctness=_correctness(study, quick, simulated),
        roof=str(roof) if roof else None,
        roof_line=_line(study, roof.span.start) if roof else 0,
        measures=tuple(name.id for name in study.mechanism.measure) if study.mechanism else (),
        application=application,
        load=_load(study, expected, quick),
        artifacts=str((study_path.parent / artifacts).resolve()),
        limits=limits,
    )


def limit_plans(
    study: Study,
    measured: Sequence[dict[str, int]],
    resize: Callable[[dict[str, int]], dict[str, int]] | None,
    selected: bool,
    simulated: bool = False,
) -> tuple[LimitShapePlan, ...]:
    """Each shape the `limit regression`s declare, each once: the sizes the run times it at, or why not.

    A full run times every one. `--quick` (`resize` shrinks as it shrinks the workload)
    times only the smallest shape of each limit, shrunk, so that a smoke run still
    passes through the limit's code path without paying for all of them. A run of
    selected shapes (`--shape`, a matrix cell) times only what was selected: a limit
    shape then counts as measured only when it is among `measured`. The simulator
    times none: its timings are never evidence, and each shape costs it minutes. A
    shape whose symbols are not the workload's has no sizes to run (`perfdsl check`
    says so).
    """
    workload = study.workload
    symbols = [s.id for s in workload.shapes.symbols] if workload and workload.shapes else []
    found: dict[tuple[tuple[str, int], ...], LimitShapePlan] = {}
    for limit in study.limits:
        declared = shape_dicts(limit.shapes) if limit.kind.id == "regression" else []
        smallest = min(declared, key=lambda s: math.prod(s.values()), default=None)
        for sizes in declared:
            if set(sizes) == set(symbols):
                sizes = {name: sizes[name] for name in symbols}
            key = tuple(sorted(sizes.items()))
            if key in found and found[key].sizes is not None:
                continue
            run = resize(sizes) if resize is not None else dict(sizes)
            missing = None
            if set(sizes) != set(symbols):
                missing = f"its symbols are not the workload's ({', '.join(symbols)})"
            elif simulated:
                missing = "the simulator's timings are not evidence, so it times no limit shape"
            elif selected and run not in measured:
                missing = "the run measured only the shapes it was asked for (`--shape`)"
            elif resize is not None and sizes != smallest:
                missing = "`--quick` measures only the smallest shape of each limit"
            found[key] = LimitShapePlan(sizes, None if missing else run, missing)
    return tuple(found.values())


def _family(operations: Sequence[OperationPlan], application: ApplicationPlan | None) -> int:
    """The comparisons `evaluate.family` adjusts together: each workload shape, each operation's
    combination over its shapes, and the application's request time. Limit shapes are judged
    in a family of their own (`evaluate.family.adjust_limits`)."""
    return sum(sum(1 for s in op.shapes if not s.limit) + 1 for op in operations) + (application is not None)


def _timing(study: Study, quick: bool, simulated: bool = False) -> TimingPlan:
    timing = study.timing
    declared = {
        key: int(getattr(timing, key).value) if timing and getattr(timing, key) else default
        for key, default in DEFAULT_TIMING.items()
    }
    window = {
        key: int(getattr(timing, key).value) if timing and getattr(timing, key) else default
        for key, default in DEFAULT_SEQUENTIAL.items()
    }
    if quick:
        limits = CUDASIM_TIMING if simulated else QUICK_TIMING
        declared = {key: min(declared[key], limits[key]) for key in declared}
        window = {key: min(window[key], QUICK_SEQUENTIAL[key]) for key in window}
    confidence = DEFAULT_CONFIDENCE
    if timing and timing.confidence:
        confidence = round(timing.confidence.quantity.base, 12)
    threshold = timing.threshold.quantity.base if timing and timing.threshold else DEFAULT_THRESHOLD
    # The simulator's one block is never evidence: it only shows the path runs.
    sequential = bool(timing and timing.stop and timing.stop.id == SEQUENTIAL) and not simulated
    if not sequential:
        window = {"min_blocks": declared["blocks"], "max_blocks": declared["blocks"]}
    return TimingPlan(
        confidence=confidence,
        threshold=max(threshold, MIN_THRESHOLD),
        stop=SEQUENTIAL if sequential else FIXED,
        **declared,
        **window,
        winsorized=sequential,
    )


def _planned_looks(study: Study, timing: TimingPlan) -> TimingPlan:
    """The timing plan with the group-sequential design's looks and boundaries, under `looks K`.

    Computed here, once the family (and so each comparison's confidence) is known,
    and written into the plan: the boundaries are registered before the run, and the
    run and the evaluation read them rather than compute them again.
    """
    declared = study.timing.looks if study.timing else None
    if declared is None or timing.stop != SEQUENTIAL:
        return timing
    from perfdsl.stats.sequential import planned

    looks = planned.schedule(int(declared.value), timing.min_blocks, timing.max_blocks)
    return attrs.evolve(
        timing,
        looks=looks,
        boundaries=planned.z_boundaries(looks, timing.comparison_confidence),
        winsorized=False,
    )


def _correctness(study: Study, quick: bool, simulated: bool = False) -> CorrectnessPlan:
    evidence = study.correctness
    seeds = int(evidence.seeds.value) if evidence and evidence.seeds else QUICK_SEEDS
    tolerances = {}
    for condition in study.workload.correct if study.workload else ():
        if isinstance(condition.bound, Num):
            tolerances[condition.metric] = condition.bound.quantity.base
    return CorrectnessPlan(
        seeds=min(seeds, CUDASIM_SEEDS if simulated else QUICK_SEEDS) if quick else seeds,
        tolerances=tolerances,
        poison=evidence.poison.id if evidence and evidence.poison else "nan",
    )


def _load(study: Study, expected: Expectations, quick: bool) -> LoadPlan | None:
    """The load sweep and SLO the run's target is held to (`target <name> { load ...; slo ... }`)."""
    evidence, load, slo = study.end_to_end, expected.load, expected.slo
    if evidence is None or load is None:
        return None
    rates = load.rates
    start, stop = rates.start.quantity.base, rates.stop.quantity.base
    step = rates.step.quantity.base if rates.step else (stop - start) or 1.0
    if start <= 0 or stop < start or step <= 0:
        raise PlanError(f"the load sweep {start:g}..{stop:g} step {step:g} has no rates: run `perfdsl check`")
    # The declared sweep, quick or not: a quick run skips it (`runtime.load_search`) and says so.
    sweep = [start + i * step for i in range(int((stop - start) / step + 1e-9) + 1)]
    slo_seconds, percentile = None, DEFAULT_PERCENTILE
    if slo is not None and isinstance(slo.bound, Num):
        slo_seconds = slo.bound.quantity.base
        percentile = slo_percentile(slo)
    requests = int(evidence.requests.value) if evidence.requests else DEFAULT_REQUESTS
    return LoadPlan(
        arrivals=load.arrivals.id,
        rates=tuple(sweep),
        requests=min(requests, QUICK_REQUESTS) if quick else requests,
        slo_seconds=slo_seconds,
        slo_percentile=percentile,
        probe=evidence.probe.id if evidence.probe else SEQUENTIAL,
    )


def _timing_said(timing: TimingPlan) -> str:
    """The timing settings as the study would write them. A sequential plan's blocks are its
    window (`min_blocks`, `max_blocks`), a fixed one's its count: each plan is said by its own
    rule (under the simulator, whose one block is a fixed count, a sequential study was said to
    declare `blocks 10`, which it never wrote)."""
    blocks = ("min_blocks", "max_blocks") if timing.stop == SEQUENTIAL else ("blocks",)
    return " ".join(f"{k} {getattr(timing, k)}" for k in ("warmup", "repeats", *blocks, "rotate"))


def quick_replacements(full: Plan, quick: Plan) -> tuple[str, ...]:
    """What a quick plan runs instead of the full one, one line per setting it replaced.

    `--quick` shrinks shapes, timing, seeds, the load sweep and the application
    shape; a run that says nothing of it reads as the study's own settings. So the
    two plans are compared, and each difference is named with both values.
    """
    said: list[str] = []

    def differs(what: str, before: str, after: str) -> None:
        if before != after:
            said.append(f"{what} {before} -> {after}")

    for big, small in zip(full.operations, quick.operations, strict=True):
        differs(
            f"`{big.name}` shapes",
            ", ".join(s.label for s in big.shapes),
            ", ".join(s.label for s in small.shapes),
        )
        differs(f"`{big.name}` adversarial shapes", _labels(big.adversarial), _labels(small.adversarial))
    differs("timing", _timing_said(full.timing), _timing_said(quick.timing))
    differs("correctness seeds", str(full.correctness.seeds), str(quick.correctness.seeds))
    if quick.target == "cudasim" and full.load is not None and full.load.slo_seconds is not None:
        said.append("load test -> none: the simulator's timings are not evidence")
    elif quick.quick and full.load is not None and quick.load is not None:
        said += _quick_load(full.load, quick.load)
    if full.application is not None and quick.application is not None:
        differs(
            f"application `{full.application.name}` shape",
            _labels((full.application.shape,)),
            _labels((quick.application.shape,)),
        )
    return tuple(said)


def _quick_load(full: LoadPlan, quick: LoadPlan) -> list[str]:
    """What a quick run's load test does instead: no sweep at all (the goodput search starts at
    half the single-request capacity, `runtime.load_search`), and probes capped at the quick
    count, raised to the fewest requests a probe can pass on (`probe_size.probe_cap`).
    Without an SLO there is no load test to shrink."""
    if quick.slo_seconds is None:
        return []
    start = "the goodput search starts at half the single-request capacity"
    said = [f"load sweep {_rates(full.rates)} -> none: {start}"]
    caps = [probe_cap(plan.requests, plan.probe, plan.slo_percentile) for plan in (full, quick)]
    if caps[0] != caps[1]:
        stated = (
            f" (a quick run's {quick.requests} requests, raised to the fewest a probe with no miss "
            "can pass on: it passes only if its requests are independent, PD510)"
            if caps[1] > quick.requests
            else ""
        )
        said.append(f"load probe cap {caps[0]} -> {caps[1]} requests{stated}")
    return said


def _labels(shapes: tuple[dict[str, int], ...]) -> str:
    return ", ".join("x".join(str(v) for v in sizes.values()) for sizes in shapes) or "none"


def _rates(rates: tuple[float, ...]) -> str:
    """`50, 250, 400 rps`; a long sweep by its ends and count: `50, 100, ..., 800 rps (16 rates)`."""
    if len(rates) <= 4:
        return ", ".join(f"{r:g}" for r in rates) + " rps"
    return f"{rates[0]:g}, {rates[1]:g}, ..., {rates[-1]:g} rps ({len(rates)} rates)"
