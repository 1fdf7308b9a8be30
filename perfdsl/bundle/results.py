"""results.json as records: the index of every result a run wrote.

The runtime builds a `Results`, each shape's `timing` the sampler's own
`bundle.sampling.TimingRecord`, and writes `to_json()`; the evaluation reads
`Results.read(path)`. The nested records name every key the evaluation
computes from; the counters' detail, recorded for presentation, is kept as the
JSON it is. Layout and examples: docs/bundle.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl import targets
from perfdsl.bundle import versions
from perfdsl.bundle.application import ApplicationRecord
from perfdsl.bundle.sampling import Block, TimingRecord, Warmup
from perfdsl.bundle.static import StaticCode
from perfdsl.bundle.stopping import StopRecord

RESULTS = "results.json"
WORKER_PHASE = "worker"
"""The sampler failure's phase for an arm left out because its code ended the worker."""


@attrs.frozen
class CorrectnessCase:
    """One arm on one shape and seed against the float64 reference: the worst errors."""

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

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorrectnessCase:
        return cls(
            arm=str(data.get("arm", "?")),
            variant=str(data.get("variant", "")),
            shape=dict(data.get("shape") or {}),
            adversarial=bool(data.get("adversarial")),
            seed=data.get("seed"),
            passed=bool(data.get("passed")),
            rel_l2=data.get("rel_l2"),
            max_abs=data.get("max_abs"),
            unwritten=int(data.get("unwritten") or 0),
            nonfinite=int(data.get("nonfinite") or 0),
            deterministic=data.get("deterministic"),
            message=str(data.get("message", "")),
        )


@attrs.frozen
class CorrectnessRecord:
    """An operation's correctness check: every case of both arms."""

    passed: bool
    tolerances: dict[str, float]
    seeds: int | None
    cases: tuple[CorrectnessCase, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "tolerances": dict(self.tolerances),
            "seeds": self.seeds,
            "cases": [c.to_json() for c in self.cases],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorrectnessRecord:
        return cls(
            passed=bool(data.get("passed")),
            tolerances=dict(data.get("tolerances") or {}),
            seeds=data.get("seeds"),
            cases=tuple(CorrectnessCase.from_json(c) for c in data.get("cases") or ()),
        )


@attrs.frozen
class WorkerFailure:
    """Measured code that ended its worker process, or ran out of the memory it was given.

    The run goes on without the arm it was running (perfdsl/runtime/isolation.py);
    this says which arm, in which step, and why, so the report can name it.
    """

    arm: str | None
    """The arm whose code was running, or None when it cannot be told (the application)."""
    phase: str
    """What the worker was doing: "correctness", "timing <shape>" or "application"."""
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

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "phase": self.phase, "cause": self.cause, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WorkerFailure:
        arm = data.get("arm")
        return cls(
            arm=None if arm is None else str(arm),
            phase=str(data.get("phase", "")),
            cause=str(data.get("cause", "")),
            detail=str(data.get("detail", "")),
        )


@attrs.frozen
class ShapeRecord:
    """One timed shape of an operation (the workload's, or a limit's): modelled quantities, samples
    and counters."""

    label: str
    sizes: dict[str, int]
    weight: float
    models: dict[str, dict[str, float]]
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
    def warmups(self) -> list[Warmup]:
        """Per arm, the warm-up's calls, whether it settled and its curve (`durations_ns`, version 4)."""
        return list(self.timing.warmup) if self.timing else []

    @property
    def worker_failures(self) -> list[str]:
        """Why an arm was left out of this shape's sampling: its code ended the worker."""
        failures = self.timing.failures if self.timing else ()
        return [f.message for f in failures if f.phase == WORKER_PHASE]

    @property
    def stop(self) -> StopRecord | None:
        """When and why the sequential rule stopped this shape's blocks (version 8; None: fixed design)."""
        return self.timing.stop if self.timing else None

    @property
    def blocks(self) -> list[Block]:
        """The sampler's block log, in the interleaved order (clocks and load at each block's ends)."""
        return list(self.timing.blocks) if self.timing else []

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "sizes": dict(self.sizes),
            "weight": self.weight,
            "models": self.models,
            "samples": self.samples,
            "samples_missing": self.samples_missing,
            "timing": None if self.timing is None else self.timing.to_json(),
            "counters": self.counters,
            "counters_missing": self.counters_missing,
            "counters_detail": self.counters_detail,
            "counters_log": self.counters_log,
            "limit": self.limit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShapeRecord:
        timing = data.get("timing")
        weight = float(data.get("weight") or 0.0)
        if not (math.isfinite(weight) and weight >= 0):
            # The plan's weights are checked: a run never writes one of these.
            raise ValueError(f"shape `{data['label']}` has weight {weight}, not a finite number >= 0")
        return cls(
            label=str(data["label"]),
            sizes=dict(data.get("sizes") or {}),
            weight=weight,
            models=dict(data.get("models") or {}),
            samples=data.get("samples"),
            samples_missing=data.get("samples_missing"),
            timing=TimingRecord.from_json(timing) if timing else None,
            counters=data.get("counters"),
            counters_missing=data.get("counters_missing"),
            counters_detail=data.get("counters_detail"),
            counters_log=data.get("counters_log"),
            limit=bool(data.get("limit", False)),
        )


@attrs.frozen
class OperationRecord:
    """One operation: its references, every shape, and its correctness check."""

    name: str
    baseline: str
    change: str
    reference: str
    variants: dict[str, str]
    """Arm -> the Variant's name (how the compiled code is indexed)."""
    deterministic: dict[str, bool]
    shapes: tuple[ShapeRecord, ...]
    correctness: CorrectnessRecord
    failures: tuple[WorkerFailure, ...] = ()
    """Every worker the operation's code ended or exhausted; empty before results version 3."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "baseline": self.baseline,
            "change": self.change,
            "reference": self.reference,
            "variants": dict(self.variants),
            "deterministic": dict(self.deterministic),
            "shapes": [s.to_json() for s in self.shapes],
            "correctness": self.correctness.to_json(),
            "failures": [f.to_json() for f in self.failures],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OperationRecord:
        shapes = tuple(ShapeRecord.from_json(s) for s in data.get("shapes") or ())
        workload = [s for s in shapes if not s.limit]  # a limit shape weighs 0 by design
        if workload and not any(s.weight > 0 for s in workload):
            # Every combination over the shapes divides by their weights: a run never writes these.
            raise ValueError(f"operation `{data['name']}`: every shape has weight 0")
        return cls(
            name=str(data["name"]),
            baseline=str(data.get("baseline", "")),
            change=str(data.get("change", "")),
            reference=str(data.get("reference", "")),
            variants=dict(data.get("variants") or {}),
            deterministic=dict(data.get("deterministic") or {}),
            shapes=shapes,
            correctness=CorrectnessRecord.from_json(data.get("correctness") or {}),
            failures=tuple(WorkerFailure.from_json(f) for f in data.get("failures") or ()),
        )


@attrs.frozen
class Results:
    """The whole of results.json."""

    schema: str
    study: str
    run_id: str
    target: str
    timings_valid: bool
    timer_resolution_ns: float
    """The finest duration the run's clock resolves, recorded when it ran."""
    quick: bool
    dtype: str
    started: str | None
    finished: str | None
    roof: str | None
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

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "study": self.study,
            "run_id": self.run_id,
            "target": self.target,
            "timings_valid": self.timings_valid,
            "timer_resolution_ns": self.timer_resolution_ns,
            "quick": self.quick,
            "dtype": self.dtype,
            "started": self.started,
            "finished": self.finished,
            "roof": None if self.roof is None else {"reference": self.roof},
            "roof_missing": self.roof_missing,
            "operations": [op.to_json() for op in self.operations],
            "static": None if self.static is None else self.static.to_json(),
            "application": None if self.application is None else self.application.to_json(),
            "application_missing": self.application_missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: Path) -> Results:
        """The record of a parsed results.json; `path` names the file in a refusal."""
        schema = str(versions.check_version(data, path, versions.READABLE_RESULTS))
        target = str(data.get("target", "?"))
        resolution = data.get("timer_resolution_ns")
        if resolution is None:
            # Version 1 did not record it: the target's clock is the one that timed the run.
            spec = targets.BY_NAME.get(target)
            if spec is None:
                raise versions.BundleFormatError(
                    f"{path}: unknown target `{target}` and no `timer_resolution_ns`: "
                    "its timings cannot be judged"
                )
            resolution = spec.resolution_ns
        roof = data.get("roof")
        application = data.get("application")
        static = data.get("static")
        return cls(
            schema=schema,
            study=str(data.get("study", "")),
            run_id=str(data.get("run_id", "")),
            target=target,
            timings_valid=bool(data.get("timings_valid", False)),
            timer_resolution_ns=float(resolution),
            quick=bool(data.get("quick", False)),
            dtype=str(data.get("dtype", "")),
            started=data.get("started"),
            finished=data.get("finished"),
            roof=None if not roof else str(roof["reference"]),
            roof_missing=data.get("roof_missing"),
            operations=tuple(OperationRecord.from_json(op) for op in data.get("operations") or ()),
            static=None if not static else StaticCode.from_json(static),
            application=None if not application else ApplicationRecord.from_json(application),
            application_missing=data.get("application_missing"),
        )

    @classmethod
    def read(cls, bundle: Path) -> Results:
        """Read and check a bundle's results.json (OSError, ValueError or BundleFormatError)."""
        path = Path(bundle) / RESULTS
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), path)
