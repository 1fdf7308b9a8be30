"""results.json as records: the index of every result a run wrote.

The runtime builds a `Results`, each shape's `timing` the sampler's own
`bundle.sampling.TimingRecord`, and writes `to_json()`; the evaluation reads
`Results.read(path)`; both walk the records' fields (`bundle.plain`), and a key
that an older version did not write reads as empty. The nested records name
every key the evaluation computes from; the counters' detail, recorded for
presentation, is kept as the JSON it is. Layout and examples: docs/bundle.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from perfdsl import targets
from perfdsl.bundle import versions
from perfdsl.bundle.application import ApplicationRecord
from perfdsl.bundle.plain import EMPTY, Plain, field
from perfdsl.bundle.sampling import Block, TimingRecord, Warmup
from perfdsl.bundle.static import StaticCode
from perfdsl.bundle.stopping import StopRecord

RESULTS = "results.json"
WORKER_PHASE = "worker"
"""The sampler failure's phase for an arm left out because its code ended the worker."""


@attrs.frozen
class CorrectnessCase(Plain):
    """One arm on one shape and seed against the float64 reference: the worst errors."""

    ABSENT = EMPTY

    arm: str
    variant: str
    shape: dict[str, int]
    adversarial: bool
    seed: int | None
    passed: bool
    rel_l2: float | None
    max_abs: float | None
    unwritten: int
    nonfinite: int
    deterministic: bool | None
    message: str


@attrs.frozen
class CorrectnessRecord(Plain):
    """An operation's correctness check: every case of both arms."""

    ABSENT = EMPTY

    passed: bool
    tolerances: dict[str, float]
    seeds: int | None
    cases: tuple[CorrectnessCase, ...]


@attrs.frozen
class WorkerFailure(Plain):
    """Measured code that ended its worker process, or ran out of the memory it was given.

    The run goes on without the arm it was running (perfdsl/runtime/isolation.py);
    this says which arm, in which step, and why, so the report can name it.
    """

    ABSENT = EMPTY

    arm: str | None
    """The arm whose code was running, or None when it cannot be told (the application)."""
    phase: str
    """What the worker was doing: "correctness", "timing <shape>", "application" or "load test"."""
    cause: str
    """"signal", "exit", "time limit", "memory limit", "out of memory" (the kernel's killer)
    or "exception" (raised where the harness does not catch it: the application)."""
    detail: str
    """The cause in words: the signal's name, the exit status, the limit that was passed."""

    @property
    def message(self) -> str:
        """One line for a report: who, where and why."""
        who = f"`{self.arm}`" if self.arm else "the measured code"
        return f"{who} ended its worker during {self.phase}: {self.cause} ({self.detail})"


def _weighs(shape: ShapeRecord, _: Any, weight: float) -> None:
    """The plan's weights are checked: a run never writes one of these."""
    if not (math.isfinite(weight) and weight >= 0):
        raise ValueError(f"shape `{shape.label}` has weight {float(weight)}, not a finite number >= 0")


@attrs.frozen
class ShapeRecord(Plain):
    """One timed shape of an operation (the workload's, or a limit's): modelled quantities, samples
    and counters."""

    label: str
    sizes: dict[str, int] = field(absent=EMPTY)
    weight: float = field(absent=EMPTY, validator=_weighs)
    models: dict[str, dict[str, float]] = field(absent=EMPTY)
    """Modelled quantity -> arm -> value, from the plan."""
    samples: str | None = None
    """The sample CSV, relative to the bundle."""
    samples_missing: str | None = None
    timing: TimingRecord | None = None
    """The sampler's record: settings, block order and readings, warm-ups, rotation, failures."""
    counters: dict[str, dict[str, float]] | None = None
    """Counted quantity -> arm -> value (Nsight Compute), in the form of `models`."""
    counters_missing: str | None = None
    counters_detail: Mapping[str, Any] | None = None
    counters_log: str | None = None
    limit: bool = False
    """A `limit regression`'s shape, not the workload's (version 9): `ShapePlan.limit`."""

    @property
    def set_bytes(self) -> dict[str, float]:
        """Bytes each arm's buffer set moves per call (the bandwidth numerator); ValueError if not counts."""
        written = self.timing.set_bytes if self.timing else {}
        counts = {str(arm): float(value) for arm, value in written.items()}
        wrong = [arm for arm, value in counts.items() if not (math.isfinite(value) and value >= 0)]
        if wrong:
            arm = wrong[0]
            raise ValueError(f"shape `{self.label}`: set_bytes of {arm} is {counts[arm]}, not a byte count")
        return counts

    @property
    def unavoidable_bytes(self) -> dict[str, float]:
        """Bytes each arm must move per call whatever it does: its buffer set, less the inputs it
        declares it reads only in part (`Rotation.unavoidable_bytes`); `set_bytes` where the
        rotation does not say (a bundle before results/13 carries no sparse inputs)."""
        known = {r.arm: float(r.unavoidable_bytes) for r in self.timing.rotation} if self.timing else {}
        return {arm: known.get(arm, value) for arm, value in self.set_bytes.items()}

    def failure_of(self, arm: str) -> str | None:
        """Why `arm` stopped at this shape (its call raised, or its code ended the worker), if it did."""
        return self.timing.failure_of(arm) if self.timing else None

    @property
    def regimes(self) -> dict[str, str]:
        """Arm -> "dram", "cache" or "mixed": where its rotated working set ran (version 4)."""
        return dict(self.timing.regime) if self.timing else {}

    @property
    def read_shares(self) -> dict[str, float | None]:
        """Arm -> the share of its bytes that are reads (version 4)."""
        return dict(self.timing.read_share) if self.timing else {}

    @property
    def read_share_sources(self) -> dict[str, str]:
        """Arm -> where its read share comes from, in words (version 4)."""
        return dict(self.timing.read_share_source) if self.timing else {}

    @property
    def buffer_bytes(self) -> dict[str, int]:
        """Arm -> what its rotated buffers cost in memory (version 4)."""
        return dict(self.timing.buffer_bytes) if self.timing else {}

    @property
    def allocations(self) -> dict[str, int]:
        """Arm -> how many arms' buffer allocations its blocks took turns on (results/14; 1: its own)."""
        return {r.arm: r.allocations for r in self.timing.rotation} if self.timing else {}

    @property
    def warmups(self) -> list[Warmup]:
        """Per arm, the warm-up's calls, whether it settled and its curve (`durations_ns`, version 4)."""
        return list(self.timing.warmup) if self.timing else []

    @property
    def stop(self) -> StopRecord | None:
        """When and why the sequential rule stopped this shape's blocks (version 8; None: fixed design)."""
        return self.timing.stop if self.timing else None

    @property
    def blocks(self) -> list[Block]:
        """The sampler's block log, in the interleaved order (clocks and load at each block's ends)."""
        return list(self.timing.blocks) if self.timing else []


def _weighted(op: OperationRecord, _: Any, shapes: tuple[ShapeRecord, ...]) -> None:
    """Every combination over the shapes divides by their weights: a run never writes these."""
    workload = [s for s in shapes if not s.limit]  # a limit shape weighs 0 by design
    if workload and not any(s.weight > 0 for s in workload):
        raise ValueError(f"operation `{op.name}`: every shape has weight 0")


@attrs.frozen
class OperationRecord(Plain):
    """One operation: its references, every shape, and its correctness check."""

    name: str
    baseline: str = field(absent=EMPTY)
    change: str = field(absent=EMPTY)
    reference: str = field(absent=EMPTY)
    variants: dict[str, str] = field(absent=EMPTY)
    """Arm -> the Variant's name (how the compiled code is indexed)."""
    deterministic: dict[str, bool] = field(absent=EMPTY)
    shapes: tuple[ShapeRecord, ...] = field(absent=EMPTY, validator=_weighted)
    correctness: CorrectnessRecord = field(absent=CorrectnessRecord(False, {}, None, ()))
    failures: tuple[WorkerFailure, ...] = ()
    """Every worker the operation's code ended or exhausted; empty before results version 3."""


def _target_resolution(data: Mapping[str, Any]) -> float:
    """Version 1 did not record the clock's resolution: the target's clock is the one that timed the run."""
    target = data.get("target", "?")
    spec = targets.BY_NAME.get(target)
    if spec is None:
        raise ValueError(
            f"unknown target `{target}` and no `timer_resolution_ns`: its timings cannot be judged"
        )
    return spec.resolution_ns


@attrs.frozen
class Results(Plain):
    """The whole of results.json."""

    ABSENT = EMPTY
    VERSIONS = versions.READABLE_RESULTS
    FILE = RESULTS

    schema: str
    study: str
    run_id: str
    target: str = field(absent="?")
    timings_valid: bool
    timer_resolution_ns: float = field(absent=_target_resolution)
    """The finest duration the run's clock resolves, recorded when it ran."""
    quick: bool
    dtype: str
    started: str | None
    finished: str | None
    roof: str | None = field(inside="reference")
    """The copy roof's reference, or None with `roof_missing`."""
    roof_missing: str | None
    operations: tuple[OperationRecord, ...]
    static: StaticCode | None
    """The compiled code's summary: per CUDA kernel and CPU function, and per variant."""
    application: ApplicationRecord | None
    application_missing: str | None

    def operation(self, name: str) -> OperationRecord | None:
        """The operation of that name, if the run has it."""
        return next((op for op in self.operations if op.name == name), None)
