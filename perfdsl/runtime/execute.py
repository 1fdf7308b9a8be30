"""Plan to bundle: `perfdsl run`'s orchestration, in the order the evidence is needed.

1. resolve every Python reference (a bad one is reported at its study line);
2. register the predictions (their hash) and the environment;
3. compile every kernel for the static evidence (any machine), on a thread of
   its own beside step 4, which needs no quiet machine; step 5 waits for it,
   and the code is archived in the bundle once the kernels are timed;
4. correctness of baseline and change on every shape, adversarial shape and
   seed (verify before timing: a variant that fails is not timed);
5. kernel timing per shape, baseline, change and the read, write and copy
   roofs interleaved (the module that holds the study's copy roof may define
   `read`/`read_reference` and `write`/`write_reference` beside it; where it
   does not, only the copy roof is timed);
6. the application: model-level correctness, request time, the operation's
   share of time, and the load search.

Steps 4 and 5 run in one worker process per operation and step 6 in a worker
of its own (perfdsl/runtime/isolation.py): code that crashes, hangs or
exhausts memory ends its worker, is recorded as its arm's failure with the
cause, and the rest of the study still runs. Before step 1's bundle is
opened, the same workers make the calibration calls that estimate the run's
length (perfdsl/runtime/estimate.py), and keep their compiled code for it.

Everything is written through one BundleWriter, so a failed or interrupted run
leaves no bundle behind. Layout: docs/bundle.md.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle import versions
from perfdsl.bundle.arms import ARMS, ROOF_ARMS
from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.plan import PLAN, OperationPlan, Plan, ShapePlan
from perfdsl.bundle.registration import REGISTRATION, RegistrationRecord
from perfdsl.bundle.results import (
    WORKER_PHASE,
    CorrectnessCase,
    CorrectnessRecord,
    OperationRecord,
    Results,
    ShapeRecord,
    WorkerFailure,
)
from perfdsl.bundle.sampling import SamplerFailure
from perfdsl.bundle.static import CpuFunctionSummary, StaticCode, VariantCode
from perfdsl.kernel import Application, KernelCode, Reference, Variant
from perfdsl.ranges import format_ranges
from perfdsl.runtime.correctness import Case, CorrectnessResult
from perfdsl.runtime.counters.attach import attach_counters
from perfdsl.runtime.errors import describe_error
from perfdsl.runtime.estimate import Calibration, RunEstimate, estimate_calibrated, step_key
from perfdsl.runtime.isolation import MEMORY_LIMIT, Limits, Session, WorkerDied
from perfdsl.runtime.machine_state import (
    Pinning,
    choose_pinning,
    read_cpu_state,
    siblings_of,
    thread_affinity,
    usable_cores,
)
from perfdsl.runtime.memory import BuffersTooLarge, available_bytes, check_fits, operation_cost, peak
from perfdsl.runtime.progress import RunProgress
from perfdsl.runtime.resolve import (
    Resolved,
    RunError,
    resolve_operation,
    resolve_reference,
    resolve_roof,
    roof_reference,
)
from perfdsl.runtime.targets import Target
from perfdsl.runtime.worker import Job


def _say_where_the_roof_draws_from(plan: Plan, progress: RunProgress) -> None:
    """Name the copy roof's inputs on the console, and warn when they are an operation's own."""
    drawn = roof_reference(plan)
    shared = [op.name for op in plan.operations if op.reference == drawn]
    if not shared:
        progress(f"copy roof {plan.roof}: inputs from {drawn}")
        return
    name = plan.roof.split(":", 1)[1] if plan.roof else "copy"
    progress(
        f"note: copy roof {plan.roof} takes its inputs from {drawn}, operation `{shared[0]}`'s "
        f"reference; unless its copy kernel takes those arrays, define `{name}_reference` beside it "
        "(a Reference of the roof's own problem)"
    )


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _refuse_variants_without_code_for(target: Target, plan: Plan, resolved: dict[str, Resolved]) -> None:
    """RunError, before anything runs, for an arm whose variant has no code for the target.

    Such a study checks (which code a variant holds is known only by importing it): a CUDA-only
    variant in a study that lists `cpu` among its targets ran, and its report called the
    correct code's missing implementation a failed correctness check.
    """
    for op in plan.operations:
        for arm in ARMS:
            variant = resolved[op.name].variants[arm]
            if not target.implements(variant):
                raise RunError(
                    f"{plan.study_path}:{op.lines[arm]}: the {arm} of `{op.name}`, variant `{variant.name}`, "
                    f"has no `{target.name}` implementation; give it one, or run with another `--target`"
                )


def execute(
    plan: Plan,
    target: Target,
    artifacts: Path,
    progress: RunProgress,
    limits: Limits | None = None,
    pin: bool = True,
) -> Path:
    """Run the plan on `target` and return the bundle's path; `pin` false leaves every worker
    where the OS puts it (`runtime.machine_state.choose_pinning` otherwise)."""
    limits = limits or Limits()
    resolved = {op.name: resolve_operation(plan, op) for op in plan.operations}
    _refuse_variants_without_code_for(target, plan, resolved)
    roof = resolve_roof(plan)
    if roof:
        _say_where_the_roof_draws_from(plan, progress)
    application = (
        resolve_reference(plan.application.entry, Application, plan, plan.application.line)
        if plan.application
        else None
    )
    try:
        # Each worker's RLIMIT_AS takes its operation's estimate from here: drawn once, in the parent.
        costs = {
            op.name: operation_cost(plan, op, resolved[op.name].reference, roof, target.rotation_bytes())
            for op in plan.operations
        }
        said = check_fits(peak(costs.values()), available_bytes(), plan.study_path)
    except BuffersTooLarge as error:
        raise RunError(str(error)) from None
    progress(said)
    cpu = read_cpu_state()
    pinning = (
        choose_pinning(usable_cores(), siblings_of(cpu), cpu["isolated"] or ())
        if pin
        else Pinning((), (), "perfdsl run --no-pin")
    )
    progress(_pinned(pinning))
    sessions: dict[str | None, Session] = {
        op.name: Session(
            Job(plan, target.name, op.name, 2 * limits.call_s, pinning, costs[op.name]), limits, progress
        )
        for op in plan.operations
    }
    if application is not None:
        # The application's worker serves the first operation's arms (`worker._Server`).
        first = next(iter(costs.values()), None)
        sessions[None] = Session(
            Job(plan, target.name, None, 2 * limits.call_s, pinning, first), limits, progress
        )
    try:
        progress("calibrating: a few calls of every arm at every shape, to estimate the run's length")
        estimate, raised = _calibrate(plan, sessions, progress)
        progress.announce(estimate)
        machine = _machine(cpu, pinning, sessions)
        return _measure(plan, target, artifacts, progress, resolved, roof, sessions, machine, raised)
    finally:
        for session in sessions.values():
            session.close()


def _pinned(pinning: Pinning) -> str:
    """The console's line on where the measured code and the load generator run."""
    if pinning.missing:
        return f"not pinned: {pinning.missing}"
    return (
        f"measuring workers pinned to CPU {format_ranges(pinning.measuring)}, "
        f"the load generator to CPU {format_ranges(pinning.generator)}"
    )


def _machine(cpu: dict[str, Any], pinning: Pinning, sessions: dict[str | None, Session]) -> dict[str, Any]:
    """environment.json's CPU state and affinity: what was planned and what each worker reported."""
    workers = {name or "application": s.affinity for name, s in sessions.items() if s.affinity is not None}
    return {"cpu_state": cpu, "affinity": {"run": thread_affinity(), **pinning.to_json(), "workers": workers}}


def _calibrate(
    plan: Plan, sessions: dict[str | None, Session], progress: RunProgress
) -> tuple[RunEstimate, dict[str, dict[str, str]]]:
    """Every worker's calibration calls, combined into the run's estimate, and every call that
    raised (by step key, then arm), each said on the console as it is found.

    A worker that dies here only leaves its steps out of the estimate: its
    session starts a fresh worker for the correctness check, which records the
    death against the arm and case that cause it.
    """
    calibrations: list[Calibration] = []
    for name, session in sessions.items():
        try:
            calibrations.append(session.call("calibrate", ()))
        except WorkerDied as died:
            # Said now: a hang waited out its time limit here with nothing on the console, and the
            # estimate that followed left the operation out without a word.
            progress(
                f"warning: {died.failure('calibration').message} (`{name or 'application'}`): left out "
                "of the estimate; the correctness check records it against its arm and case"
            )
    raised = {key: arms for c in calibrations for key, arms in c.raised.items()}
    for key, arms in raised.items():
        for arm, why in arms.items():
            progress(f"warning: the {arm} raised in a calibration call ({key}): {why}")
    return estimate_calibrated(plan, calibrations), raised


def _measure(
    plan: Plan,
    target: Target,
    artifacts: Path,
    progress: RunProgress,
    resolved: dict[str, Resolved],
    roof: dict[str, tuple[Reference, Variant]],
    sessions: dict[str | None, Session],
    machine: dict[str, Any],
    raised: dict[str, dict[str, str]],
) -> Path:
    """Everything the bundle holds, the measured code of it in the sessions' workers; `raised`
    holds the calibration calls that raised (`_calibrate`)."""
    from perfdsl.runtime.environment import capture_environment, module_sources

    started = _now()
    with BundleWriter(artifacts, plan.study) as bundle:
        progress(f"bundle {bundle.run_id} for `{plan.study}` on {target.name}")
        bundle.write_text("study.perf", plan.study_text)
        bundle.write_json(PLAN, plan.to_json())
        bundle.write_json(
            REGISTRATION, RegistrationRecord(plan.predict_hash, plan.study_hash, started).to_json()
        )
        sources = module_sources(plan.references)
        bundle.write_json(
            "environment.json", capture_environment(Path(plan.study_path), sources=sources, **machine)
        )
        found: Compiled = {}
        compiling = _compile_static(plan, resolved, roof, target, progress)
        operations = [
            _operation(
                plan,
                op,
                resolved[op.name],
                roof,
                target,
                bundle,
                progress,
                sessions[op.name],
                found,
                compiling,
                raised,
            )
            for op in plan.operations
        ]
        static = _static_code(compiling.result(), bundle, progress, found)
        app_record, app_missing = None, "the study names no application entry"
        if None in sessions:
            passed = all(op.correctness.passed for op in operations)
            app_record, app_missing = _application(sessions[None], bundle, passed, progress)
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
            application_missing=None if app_record else app_missing,
        )
        bundle.write_json("results.json", results.to_json())
        progress("writing manifest")
    return bundle.path


def _application(
    session: Session, bundle: BundleWriter, passed: bool, progress: RunProgress
) -> tuple[Any, str | None]:
    """The application's evidence from its own worker, or why there is none.

    Its request samples are written as a kernel shape's are, from the bundle's
    records the worker returns, and so are the load probes' per-request records.
    The load test is asked for apart: code that ends the worker under load costs
    the load test, never the request time and share measured before it.
    """
    try:
        return _ask_application(session, bundle, passed, progress)
    finally:
        session.close()


def _ask_application(
    session: Session, bundle: BundleWriter, passed: bool, progress: RunProgress
) -> tuple[Any, str | None]:
    try:
        record, sampled = session.call("application", (passed,))
    except WorkerDied as died:
        missing = died.failure("application").message
        progress(f"warning: {missing}: the run has no end-to-end evidence")
        return None, missing
    if sampled is not None:
        bundle.write_csv(record.samples, *sampled.rows())
    if record.load_missing is not None:
        return record, None
    if record.operation_never_called is not None:
        # Both arms served the same code: probes would compare a request with itself.
        missing = f"not run: {record.operation_never_called}"
        progress(f"load: {missing}")
        return attrs.evolve(record, load_missing=missing), None
    try:
        outcome = session.call("load", ())
    except WorkerDied as died:
        missing = died.failure("load test").message
        progress(f"warning: {missing}: the run has no load test")
        return attrs.evolve(record, load_missing=missing), None
    for probe in outcome.probes:
        bundle.write_csv(probe.path, *probe.rows())
    return attrs.evolve(
        record, load=outcome.load, load_missing=outcome.missing, preparations=outcome.preparations
    ), None


@attrs.frozen
class _Compiled:
    """What the static stage compiled: the code of every kernel, and which variant holds which."""

    records: tuple[Any, ...]
    variants: tuple[Variant, ...]
    foreign: dict[str, tuple[str, ...]]
    """The kernels each foreign variant's code hook handed over, by variant."""
    cuda_archived: bool
    """Whether the target archives CUDA code (not the simulator)."""


class _Compiling:
    """The static stage's compilation on a thread of its own, begun before the first correctness
    check: it needs no quiet machine, and was 13 s of a 2-core run, spent after the timing. Every
    timing waits for it (`result`), so no compilation shares the machine with a timed call.
    A daemon thread, not `concurrent.futures`: an interrupted run must not wait at exit for a
    compilation whose code it will never archive."""

    def __init__(self, work: Callable[[], _Compiled]) -> None:
        self._value: _Compiled | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name="perfdsl-static", daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], _Compiled]) -> None:
        try:
            self._value = work()
        except BaseException as error:  # handed to the run's own thread by `result`
            self._error = error

    def result(self) -> _Compiled:
        """The compiled code, once the compilation has ended; its exception, where it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def _compile_static(
    plan: Plan,
    resolved: dict[str, Resolved],
    roof: dict[str, tuple[Reference, Variant]],
    target: Target,
    progress: RunProgress,
) -> _Compiling:
    """Compile every kernel of every variant to PTX/SASS (CUDA) and IR/assembly (CPU), beside the
    correctness checks (`_Compiling`)."""
    from perfdsl.runtime.static_code.cpu import inspect_cpu_function
    from perfdsl.runtime.static_code.cuda import inspect_cuda_kernel

    variants = [v for r in resolved.values() for v in r.variants.values()]
    variants.extend(variant for _, variant in roof.values())
    # A kernel that several variants share is compiled once: each compilation of a
    # CUDA kernel gets a new mangled symbol, so two would look like two kernels.
    cuda_kernels = dict.fromkeys(k for v in variants for k in v.cuda_kernels)
    cpu_functions = dict.fromkeys(f for v in variants for f in v.cpu_kernels)
    archived = "cuda" in target.spec.archives
    cuda = archived and (cuda_kernels or any(v.cuda_code for v in variants))
    kinds = [*(["PTX", "SASS"] if cuda else []), *(["assembly"] if cpu_functions else [])]
    progress(
        f"compiling kernels for static evidence ({', '.join(kinds) or 'none to compile'}), "
        "beside the correctness checks"
    )

    def work() -> _Compiled:
        records = []
        foreign: dict[str, tuple[str, ...]] = {}
        if archived:
            for kernel, signature in cuda_kernels:
                records.append(inspect_cuda_kernel(kernel, signature.replace("{dtype}", plan.dtype)))
            for variant in dict.fromkeys(variants):
                if variant.cuda_code is None:
                    continue
                found = _foreign_code(variant.name, variant.cuda_code, plan.dtype)
                foreign[variant.name] = tuple(record.name for record in found)
                records.extend(found)
        for function, signature in cpu_functions:
            records.append(inspect_cpu_function(function, signature.replace("{dtype}", plan.dtype)))
        return _Compiled(tuple(records), tuple(variants), foreign, archived)

    return _Compiling(work)


def _static_code(
    compiled_code: _Compiled, bundle: BundleWriter, progress: RunProgress, compiled: Compiled
) -> StaticCode:
    """The compiled code written into the bundle; each CPU function's summary says whether that
    code is what the measured calls compiled (`compiled`)."""
    from perfdsl.runtime.static_code.archive import write_compiled_code

    summary = write_compiled_code(bundle.tmp / "code", compiled_code.records)
    for kernel in summary.cuda.values():
        if kernel.ptx is None and kernel.ptx_missing and "TypingError" in kernel.ptx_missing:
            # The simulator runs Python, so its correctness passes a kernel nvcc's front end refuses.
            progress(
                f"warning: the CUDA kernel `{kernel.name}` does not compile for a GPU "
                f"({kernel.ptx_missing.splitlines()[0]}); a correctness check under the simulator "
                "does not show it runs on one"
            )
    cpu = {
        name: _as_measured(function, compiled.get(name), progress) for name, function in summary.cpu.items()
    }
    foreign = compiled_code.foreign
    return attrs.evolve(
        summary,
        cpu=cpu,
        variants={
            v.name: VariantCode(
                cuda=tuple(sorted({_kernel_name(k) for k, _ in v.cuda_kernels} | {*foreign.get(v.name, ())})),
                cpu=tuple(sorted({getattr(f, "__name__", str(f)) for f, _ in v.cpu_kernels})),
            )
            for v in compiled_code.variants
        },
        cuda_missing=None
        if compiled_code.cuda_archived
        else "the simulator cannot compile PTX: run --target cpu or cuda for it",
    )


def _as_measured(
    function: CpuFunctionSummary, measured: tuple[tuple[str, ...], bool] | None, progress: RunProgress
) -> CpuFunctionSummary:
    """The summary with what the measured calls compiled; said on the console when it is not the
    archived code, whose counts then describe code that did not run."""
    if measured is None:
        return function
    signatures, ran = measured
    if not ran:
        what = ", ".join(signatures) or "nothing: the measured calls never reached it"
        progress(
            f"warning: the archived code of `{function.name}` is compiled for {function.signature}, but "
            f"the measured calls compiled {what}; its static counts describe code that did not run "
            "(declare the signature the arrays have, e.g. with `{dtype}`)"
        )
    return attrs.evolve(function, measured=signatures, as_measured=ran)


def _kernel_name(kernel: Any) -> str:
    return getattr(kernel, "__name__", str(kernel))


def _foreign_code(
    name: str, cuda_code: Callable[[str, tuple[int, int]], Sequence[KernelCode]], dtype: str
) -> list[Any]:
    """The code a foreign variant hands over (`Variant.cuda_code`), read statically; a hook that
    fails (its compiler is not installed here, say) leaves one record saying why, not a crash."""
    from perfdsl.runtime.static_code.cuda import DEFAULT_CC
    from perfdsl.runtime.static_code.foreign import inspect_kernel_code, missing_code

    try:
        codes = tuple(cuda_code(dtype, DEFAULT_CC))
    except Exception as error:
        return [missing_code(name, f"`{name}.cuda_code` raised {describe_error(error)}")]
    return [inspect_kernel_code(code, cc=DEFAULT_CC) for code in codes]


def _operation(
    plan: Plan,
    operation: OperationPlan,
    resolved: Resolved,
    roof: dict[str, tuple[Reference, Variant]],
    target: Target,
    bundle: BundleWriter,
    progress: RunProgress,
    session: Session,
    compiled: Compiled,
    compiling: _Compiling,
    raised: dict[str, dict[str, str]],
) -> OperationRecord:
    """Correctness, then timing, of one operation, all of it in the operation's worker; on a cpu
    target, what its CPU functions compiled for there goes into `compiled` (`_ask_compiled`).
    The timing waits for the static stage's compilation (`compiling`) to end."""
    failures: list[WorkerFailure] = []
    try:
        correctness = _check_arms(plan, operation, resolved, target, session, failures, progress, raised)
        compiling.result()
        passed = all(result.passed for result in correctness.values())
        roofs = tuple(arm for arm in ROOF_ARMS if arm in roof)
        asked = compiled if target.name == "cpu" else None
        shapes = _time_shapes(plan, operation, roofs, session, failures, bundle, progress, passed, asked)
    finally:
        session.close()
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
        failures=tuple(failures),
    )


def _check_arms(
    plan: Plan,
    operation: OperationPlan,
    resolved: Resolved,
    target: Target,
    session: Session,
    failures: list[WorkerFailure],
    progress: RunProgress,
    raised: dict[str, dict[str, str]],
) -> dict[str, CorrectnessResult]:
    """Every correctness case of every arm, one request each, so a death is put on its case,
    after a failing case for each calibration call of the arm that raised (`raised`): measured
    code that raised on valid inputs failed, whatever its checked calls did later.

    The arms of a case are checked one after the other, so the worker draws the
    case's inputs and computes its float64 answer once (`correctness.LastAnswer`).
    After a death the arm's remaining cases are recorded as not run: the code that
    ended one worker would end the next; the other arms go on in a fresh one. A
    first death at the worker's memory limit spares the arm's smaller shapes, which a
    fresh worker checks: a kernel out of memory at the largest workload shape had
    every adversarial shape (1 x 1, 3 x 31) recorded as not run. A second death of
    the arm (a leak that exhausts memory at any shape) ends its checks there.
    """
    variants = resolved.variants
    progress(f"correctness of {operation.name}: " + ", ".join(f"{a} `{v.name}`" for a, v in variants.items()))
    cases: dict[str, list[Case]] = {arm: [] for arm in variants}
    for shape in operation.shapes:
        for arm, why in raised.get(step_key(operation.name, shape.label), {}).items():
            key = tuple((k, int(shape.sizes[k])) for k in sorted(shape.sizes))
            message = f"raised in a calibration call, before its checked cases: {why}"
            cases[arm].append(Case(variants[arm].name, key, "workload", None, False, (), None, message))
    died: dict[str, str] = {}
    """The cause of each arm's first death."""
    spared: dict[str, int] = {}
    """After an arm's first death at the memory limit: the elements of that case, below which its
    cases are still checked."""
    for kind, sizes, seed in _cases(plan, operation):
        key = tuple((k, int(sizes[k])) for k in sorted(sizes))
        elements = math.prod(int(v) for v in sizes.values())
        for arm, variant in variants.items():
            if arm in died and elements >= spared.get(arm, 0):
                message = f"not run: an earlier case of `{variant.name}` ended its worker ({died[arm]})"
                cases[arm].append(Case(variant.name, key, kind, seed, False, (), None, message))
                continue
            try:
                cases[arm].append(session.call("case", (arm, kind, dict(sizes), seed), (arm,)))
            except WorkerDied as error:
                if arm not in died and error.cause == MEMORY_LIMIT:
                    spared[arm] = elements
                else:
                    spared.pop(arm, None)
                died.setdefault(arm, error.cause)
                failure = error.failure("correctness")
                failures.append(failure)
                cases[arm].append(Case(variant.name, key, kind, seed, False, (), None, failure.message))
    return {
        arm: CorrectnessResult(
            reference=resolved.reference.name,
            variant=variant.name,
            target=target.name,
            dtype=np.dtype(plan.dtype).name,
            tolerances=tuple(sorted(plan.correctness.tolerances.items())),
            cases=tuple(cases[arm]),
        )
        for arm, variant in variants.items()
    }


def _cases(plan: Plan, operation: OperationPlan) -> list[tuple[str, dict[str, int], int]]:
    """(kind, shape, seed) in the order `check_variant` runs them: workload, then adversarial."""
    shapes = [("workload", dict(s.sizes)) for s in operation.shapes]
    shapes += [("adversarial", dict(a)) for a in operation.adversarial]
    return [(kind, sizes, seed) for kind, sizes in shapes for seed in range(plan.correctness.seeds)]


def _time_shapes(
    plan: Plan,
    operation: OperationPlan,
    roofs: tuple[str, ...],
    session: Session,
    failures: list[WorkerFailure],
    bundle: BundleWriter,
    progress: RunProgress,
    passed: bool,
    compiled: Compiled | None = None,
) -> list[ShapeRecord]:
    """Each shape's interleaved blocks; an arm whose code ends the worker is left out from then on.
    After each shape its worker says what the CPU functions compiled for, into `compiled`."""
    # In the worker's order (measured arms, then roofs): a death's marker index names its arm here.
    live = [*ARMS, *roofs]
    dropped: list[SamplerFailure] = []
    shapes = []
    for index, shape in enumerate(operation.shapes):
        entry = _shape_entry(shape)
        key = step_key(operation.name, shape.label)
        if not passed:
            progress.finish_step(key)
            missing = "not timed: a variant failed its correctness check"
            shapes.append(attrs.evolve(entry, samples_missing=missing))
            continue
        progress(f"timing {operation.name} {shape.label} ({index + 1}/{len(operation.shapes)})")
        record, missing = None, None
        while record is None and live:
            try:
                record = session.call("time", (index, tuple(live)), tuple(live))
            except WorkerDied as died:
                failure = died.failure(f"timing {shape.label}")
                failures.append(failure)
                if died.arm is None:
                    missing = f"not timed: {failure.message}"
                    break
                live.remove(died.arm)
                dropped.append(SamplerFailure(died.arm, WORKER_PHASE, None, None, failure.message))
                progress(f"{failure.message}; {_arm_name(died.arm)} is not timed at the shapes left")
        # Sampled, or given up: either way the step no longer counts towards the time left.
        progress.finish_step(key, None if record is None else record.timing.stop)
        if record is None:
            missing = missing or "not timed: every arm ended its worker"
            shapes.append(attrs.evolve(entry, samples_missing=missing))
            continue
        if compiled is not None:
            _ask_compiled(session, compiled)
        for raised in record.timing.failures:
            progress(f"{_arm_name(raised.arm)} failed at {shape.label} ({raised.phase}): {raised.message}")
        timing = attrs.evolve(record.timing, failures=(*dropped, *record.timing.failures))
        path = f"samples/{operation.name}/{shape.label}.csv"
        bundle.write_csv(path, *record.rows())
        shapes.append(attrs.evolve(entry, samples=path, timing=timing))
    return shapes


Compiled = dict[str, tuple[tuple[str, ...], bool]]
"""CPU function name -> the argument types the measuring workers compiled it for, and whether its
declared signature (the archived code's) was one of them (`static_code.signatures`)."""


def _ask_compiled(session: Session, compiled: Compiled) -> None:
    """Add what the worker that just timed a shape compiled each CPU function for."""
    try:
        answer: Compiled = session.call("compiled", ())
    except WorkerDied:
        return
    for name, (signatures, ran) in answer.items():
        seen, ran_before = compiled.get(name, ((), False))
        compiled[name] = (tuple(dict.fromkeys((*seen, *signatures))), ran_before or ran)


def _arm_name(arm: str) -> str:
    """An arm as the console names it: the roofs are not the study's own kernels."""
    return f"the {arm} roof" if arm in ROOF_ARMS else arm


def _shape_entry(shape: ShapePlan) -> ShapeRecord:
    return ShapeRecord(
        label=shape.label,
        sizes=dict(shape.sizes),
        weight=shape.weight,
        models={m.quantity: {"baseline": m.baseline, "change": m.change} for m in shape.models},
        limit=shape.limit,
    )


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
