"""The worker process: where an operation's measured code runs, apart from the harness.

`perfdsl/runtime/isolation.py` starts one worker per operation (and one for the
application) with multiprocessing's `spawn`, so the worker is a fresh
interpreter: it inherits no CUDA context, imports and compiles the measured
code itself, and keeps its warm-up. It then answers requests one at a time:

* `calibrate`: a few calls of every arm at every shape (or a few application
  requests), for the run's length estimate (perfdsl/runtime/calibration.py);
* `case`: one correctness case (one arm, shape and seed);
* `time`: one shape's interleaved blocks of the arms it is given (the sampler
  runs here, so the samples never include the process boundary);
* `application`: the application's end-to-end evidence but its load test, its
  files returned to the parent to write;
* `load`: the application's load test, asked apart so that code that ends the
  worker under load leaves the rest of the application's evidence with the parent.

While it samples, the worker relays its progress to the parent: `blocks` when
a step's blocks start (its key and block order), `block` at each block's start
and end (the key and the event's index), `look` after each look of a sequential
rule that left the comparison open, `finish` when a step is done, and
plain `progress` lines; the parent feeds them to its `RunProgress`.

Before each timed call the arm it belongs to and a call count are written to a
shared array (outside the timed interval), so that when the worker dies the
parent knows whose code killed it and whether it was still making progress.

On the CPU target the worker limits its own address space (RLIMIT_AS) to what
it uses once started, plus the run's estimate of the operation's buffers
(perfdsl/runtime/memory.py, the one the refusal before the run uses), plus a
margin: a kernel that exhausts memory then raises MemoryError here instead of
calling the out-of-memory killer onto the machine. Not on CUDA, whose driver
reserves address space far beyond what it uses, nor on the simulator, which
runs every simulated GPU thread as a Python thread with a stack of its own (a
block of 256 reserves 2 GiB): a limit there would stop the driver or the
simulator, not the kernel. There the out-of-memory killer is still told apart.
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from perfdsl.bundle.arms import ARMS, ROOF_ARMS
from perfdsl.bundle.plan import OperationPlan, Plan
from perfdsl.bundle.sampling import BlockReading
from perfdsl.bundle.stopping import StopRecord
from perfdsl.runtime.estimate import Calibration, step_key
from perfdsl.runtime.machine_state import Pinning, pin_thread, thread_affinity
from perfdsl.runtime.memory import BufferCost
from perfdsl.runtime.resolve import resolve_operation, resolve_reference, resolve_roof
from perfdsl.runtime.settings import kernel_settings
from perfdsl.runtime.targets import Timed
from perfdsl.runtime.timing import (
    Arm,
    Sampled,
    block_order,
    prepare_arms,
    sample,
)
from perfdsl.stats.sequential.rule import Look

if TYPE_CHECKING:
    from perfdsl.bundle.results import ApplicationRecord
    from perfdsl.runtime.end_to_end import LoadInput, LoadOutcome

MARGIN_BYTES = 2 * 1024**3
"""Address space beyond the buffers: compilation, thread stacks and allocator arenas."""
ARENA_BYTES = 256 * 1024**2
"""Per core: a thread's stack and malloc arena reserve address space they rarely use."""
MEMORY_NOTE = "the worker's memory limit"
RAISED_MEMORY = "raised MemoryError: "


@attrs.frozen
class Job:
    """What a worker is for: the plan, its target, and the operation it serves (None: the application)."""

    plan: Plan
    target: str
    operation: str | None
    case_timeout_s: float
    """The correctness check's own wait; longer than the parent's limit, which acts first."""
    pinning: Pinning | None = None
    """The cores the worker runs on, and its load generator's (`runtime.machine_state`)."""
    buffers: BufferCost | None = None
    """The parent's estimate of this worker's operation's buffers (`memory.operation_cost`, the
    one the run's refusal up front took): the worker's RLIMIT_AS follows it, and the inputs it
    is measured on are not drawn a second time here. None: no shape to time."""


class _Relay:
    """The worker's progress: every report goes to the parent's `RunProgress` over the pipe."""

    def __init__(self, send: Callable[[tuple[str, Any]], None]) -> None:
        self._send = send

    def __call__(self, message: str) -> None:
        self._send(("progress", message))

    def blocks(self, key: str, order: Sequence[str]) -> Callable[[], None]:
        """The sampler's `on_block` hook for step `key`: each call is one `block` event to the parent.

        The send happens at a block's start or end, outside its timed calls.
        """
        self._send(("blocks", (key, tuple(order))))
        events = 0

        def hook() -> None:
            nonlocal events
            self._send(("block", (key, events)))
            events += 1

        return hook

    def look(self, key: str, current: Look, needed: int) -> None:
        self._send(("look", (key, current, needed)))

    def finish_step(self, key: str, stop: StopRecord | None = None) -> None:
        self._send(("finish", (key, stop)))


class _Marking:
    """The target, with each timed call's arm and a call count written before its clock starts."""

    def __init__(self, target: Any, marker: Any, arms: Sequence[Arm]) -> None:
        self._target = target
        self._marker = marker
        self._owner = {
            id(call): index
            for index, arm in enumerate(arms)
            for calls in (arm.allocations or (arm.calls,))
            for call in calls
        }

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def time(self, call: Callable[[], None]) -> Timed:
        """Mark, then time: the two stores come before the target's clock starts."""
        self._marker[0] = self._owner.get(id(call), -1)
        self._marker[1] += 1
        return self._target.time(call)


class _Server:
    """The worker's state: its target, the resolved references, and the memory limit it set."""

    def __init__(self, job: Job, marker: Any) -> None:
        from perfdsl.runtime.targets import make_target

        self.job = job
        self.plan = job.plan
        self.marker = marker
        self.target = make_target(job.target)
        # The application's worker serves the first operation's arms, as the application uses them.
        wanted = job.operation or self.plan.operations[0].name
        self.operation: OperationPlan = next(op for op in self.plan.operations if op.name == wanted)
        self.resolved = resolve_operation(self.plan, self.operation)
        self.roof = resolve_roof(self.plan)
        from perfdsl.runtime.correctness import LastAnswer

        # The parent asks for every arm of a case in turn: they share its inputs and answer.
        self.answers = LastAnswer(self.resolved.reference, self.plan.dtype)
        self.limit_bytes: int | None = None
        if self.target.name == "cpu":
            self.limit_bytes = self._limit_memory()
        self._load_input: LoadInput | None = None
        """The application's prepared requests, from `application` to `load`."""

    def _limit_memory(self) -> int:
        """Cap the address space at what is in use now, plus the buffers' estimate, plus margins."""
        limit = memory_limit(_address_space_bytes(), self.job.buffers)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        return limit

    def calibrate(self) -> Calibration:
        """Calibration calls of this worker's arms (or the application's requests), each one marked."""
        from perfdsl.runtime.calibration import calibrate_application, calibrate_operation

        marking: Any = _Marking(self.target, self.marker, ())
        if self.job.operation is None:
            from perfdsl.kernel import Application

            app_plan = self.plan.application
            assert app_plan is not None
            application = resolve_reference(app_plan.entry, Application, self.plan, app_plan.line)
            return calibrate_application(self.plan, application, marking, self.resolved)
        return calibrate_operation(self.plan, self.operation, marking, self.resolved, self.roof)

    def case(self, arm: str, kind: str, sizes: dict[str, int], seed: int) -> Any:
        """One correctness case of one arm; MemoryError when it met the worker's limit."""
        from perfdsl.runtime.correctness import check_variant

        shapes = [sizes]
        result = check_variant(
            self.resolved.reference,
            self.resolved.variants[arm],
            self.target,
            workload=shapes if kind == "workload" else [],
            adversarial=shapes if kind == "adversarial" else [],
            seeds=[seed],
            dtype=self.plan.dtype,
            tolerances=self.plan.correctness.tolerances,
            timeout_s=self.job.case_timeout_s,
            answers=self.answers,
        )
        (found,) = result.cases
        if found.message.startswith(RAISED_MEMORY):
            # The check caught it as any exception; it is the worker's limit, and ends the arm.
            raise MemoryError(found.message.removeprefix(RAISED_MEMORY))
        return found

    def time(self, shape_index: int, arms: Sequence[str], relay: _Relay) -> Sampled:
        """One shape's interleaved blocks of `arms` (of baseline, change and the roofs).

        Each block's start and end reads the GPU clocks (on cuda) and is relayed to the
        parent's live view; the parent ends the step, as it may sample the shape again.
        """
        plan, operation = self.plan, self.operation
        shape = operation.shapes[shape_index]
        prepared: list[Arm] = []
        measured = [arm for arm in ARMS if arm in arms]
        variants = [self.resolved.variants[arm] for arm in measured]
        if variants:
            ready = prepare_arms(
                self.target, self.resolved.reference, variants, shape.sizes, plan.dtype, plan.timing.rotate
            )
            prepared += [attrs.evolve(a, name=role) for a, role in zip(ready, measured, strict=True)]
        for name in ROOF_ARMS:
            if name in arms and name in self.roof:
                problem, kernel = self.roof[name]
                (roof_arm,) = prepare_arms(
                    self.target, problem, [kernel], shape.sizes, plan.dtype, plan.timing.rotate
                )
                prepared.append(attrs.evolve(roof_arm, name=name))
        settings = kernel_settings(plan, operation)
        marking: Any = _Marking(self.target, self.marker, prepared)
        key = step_key(operation.name, shape.label)
        shown = relay.blocks(key, block_order([a.name for a in prepared], settings.blocks))
        readings = _block_hook(self.target)

        def on_block() -> BlockReading:
            shown()
            return readings()

        def on_look(current: Look, needed: int) -> None:
            relay.look(key, current, needed)

        return sample(marking, prepared, settings, on_block=on_block, on_look=on_look)

    def compiled(self) -> dict[str, tuple[tuple[str, ...], bool]]:
        """What each Numba CPU function of this worker's arms (and roofs) was compiled for here,
        and whether its declared signature, the archived code's, is among them
        (`static_code.signatures`): asked after the shapes are timed."""
        from perfdsl.runtime.static_code.signatures import compiled_for

        variants = [*self.resolved.variants.values(), *(kernel for _, kernel in self.roof.values())]
        return compiled_for(dict.fromkeys(k for v in variants for k in v.cpu_kernels), self.plan.dtype)

    def application(
        self, correctness_passed: bool, relay: _Relay
    ) -> tuple[ApplicationRecord, Sampled | None]:
        """The application's end-to-end evidence but its load test, and its request samples (as
        `time` returns a shape's); its prepared requests stay here for `load`."""
        from perfdsl.kernel import Application
        from perfdsl.runtime.end_to_end import run_application

        app_plan = self.plan.application
        assert app_plan is not None
        application = resolve_reference(app_plan.entry, Application, self.plan, app_plan.line)
        record, sampled, self._load_input = run_application(
            self.plan, application, self.resolved, self.target, relay, correctness_passed
        )
        return record, sampled

    def load(self, relay: _Relay) -> LoadOutcome:
        """The load test of the requests `application` prepared: asked apart, so that code that
        ends the worker here leaves the application's other evidence with the parent."""
        from perfdsl.runtime.end_to_end import run_load

        assert self._load_input is not None, "`load` follows an `application` that timed requests"
        return run_load(self.plan, self._load_input, relay, self.job.pinning, on_served=self._served)

    def _served(self) -> None:
        """A load probe's request ended: progress for the harness's time limit, which a probe
        at a low rate outlasts (1,404 requests at 12.5 rps take two minutes)."""
        self.marker[1] += 1


def _stdout_to_stderr() -> None:
    """Send whatever the measured code prints (Python's print or C's printf) to stderr.

    `perfdsl run`'s stdout is the bundle's path, which scripts read; a kernel that printed
    on every call put 147 MB before it.
    """
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())


def serve(connection: Any, job: Job, marker: Any) -> None:
    """The worker's main loop: answer requests until told to stop (None) or the parent goes.

    The worker pins itself to the measuring cores before anything else, so every
    thread it starts later (a parallel kernel's pool) inherits them, and reports
    the affinity it then has with its memory limit.
    """
    _stdout_to_stderr()
    if job.pinning is not None:
        pin_thread(job.pinning.measuring)
    try:
        server = _Server(job, marker)
    except BaseException as error:
        connection.send(("error", _one_line(error)))
        return
    connection.send(("ready", (server.limit_bytes, thread_affinity())))
    relay = _Relay(connection.send)
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        if request is None:
            return
        kind, args = request
        try:
            if kind == "calibrate":
                answer = server.calibrate()
            elif kind == "case":
                answer = server.case(*args)
            elif kind == "time":
                answer = server.time(*args, relay)
            elif kind == "compiled":
                answer = server.compiled()
            elif kind == "load":
                answer = server.load(relay)
            else:
                answer = server.application(*args, relay)
        except MemoryError as error:
            limit = gib(server.limit_bytes) if server.limit_bytes else "no limit set"
            connection.send(("memory", f"{_one_line(error)}; {MEMORY_NOTE}: {limit}"))
            return
        except BaseException as error:
            connection.send(("error", _one_line(error)))
            return
        connection.send(("done", answer))


def _one_line(error: BaseException) -> str:
    from perfdsl.runtime.errors import describe_error

    return describe_error(error)


def memory_limit(in_use: int, buffers: BufferCost | None) -> int:
    """RLIMIT_AS for a worker: the address space `in_use` once started, twice its operation's
    buffers (`memory.operation_cost`, the estimate the run's refusal up front takes too), and
    margins for compilation, thread stacks and allocator arenas."""
    peak = buffers.peak_bytes if buffers is not None else 0
    return in_use + 2 * peak + MARGIN_BYTES + ARENA_BYTES * (os.cpu_count() or 1)


def _address_space_bytes() -> int:
    """This process's virtual memory size now (VmSize), from /proc."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def gib(count: int) -> str:
    """Bytes in GiB, for a message."""
    return f"RLIMIT_AS {count / 1024**3:.2f} GiB"


def _block_hook(target: Any) -> Callable[[], BlockReading]:
    """At each block's start and end: what else ran on the machine (this worker's own CPU time
    apart), and on cuda the GPU's clocks and throttle reasons (read, never set)."""
    from perfdsl.runtime.contention import read_load

    if target.name != "cuda":
        return lambda: BlockReading(load=read_load())
    from perfdsl.runtime.environment import read_clocks

    return lambda: attrs.evolve(read_clocks(), load=read_load())
