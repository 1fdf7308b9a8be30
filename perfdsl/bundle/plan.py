"""plan.json as records: what `perfdsl run` was asked to do, resolved to plain values.

`perfdsl.plan.plan(study, ...)` builds a `Plan`; the run executes it and writes
`to_json()` into the bundle (the study text is the bundle's study.perf, so it is
left out); the evaluation and the report read it back with `Plan.read`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.stopping import FIXED, RHO, SEQUENTIAL, StoppingRule

PLAN = "plan.json"


@attrs.frozen
class ModelValue:
    """A modelled mechanism quantity for one shape: `bytes` baseline and change."""

    quantity: str
    baseline: float
    change: float

    def to_json(self) -> dict[str, Any]:
        return {"quantity": self.quantity, "baseline": self.baseline, "change": self.change}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelValue:
        return cls(str(data["quantity"]), float(data["baseline"]), float(data["change"]))


@attrs.frozen
class ShapePlan:
    """One shape to time and check, with its traffic weight and modelled quantities."""

    sizes: dict[str, int]
    weight: float
    models: tuple[ModelValue, ...]
    limit: bool = False
    """Timed because a `limit regression` names it, not because the workload does: weight 0, and
    judged apart from the workload's shapes (`evaluate.kernels`)."""

    @property
    def label(self) -> str:
        return "x".join(str(v) for v in self.sizes.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "sizes": dict(self.sizes),
            "weight": self.weight,
            "models": [m.to_json() for m in self.models],
            "limit": self.limit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShapePlan:
        return cls(
            sizes={str(k): int(v) for k, v in data["sizes"].items()},
            weight=float(data["weight"]),
            models=tuple(ModelValue.from_json(m) for m in data.get("models") or ()),
            limit=bool(data.get("limit", False)),
        )


@attrs.frozen
class LimitShapePlan:
    """One shape a `limit regression` declares, and the sizes the run measures it at, or why not.

    `sizes` equals `declared` in a full run and is the shrunk shape under `--quick`; it
    may be a workload shape too, which is then timed once and read in both places.
    """

    declared: dict[str, int]
    sizes: dict[str, int] | None
    missing: str | None
    """Why the run does not measure it (`sizes` is None)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "declared": dict(self.declared),
            "sizes": None if self.sizes is None else dict(self.sizes),
            "missing": self.missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LimitShapePlan:
        sizes = data.get("sizes")
        return cls(
            declared={str(k): int(v) for k, v in data["declared"].items()},
            sizes=None if sizes is None else {str(k): int(v) for k, v in sizes.items()},
            missing=data.get("missing"),
        )


@attrs.frozen
class OperationPlan:
    """The operation's three implementations (by reference) and where to run them."""

    name: str
    baseline: str
    change: str
    reference: str
    lines: dict[str, int]
    """Study line of each reference, so a bad reference is reported where it is written."""
    shapes: tuple[ShapePlan, ...]
    adversarial: tuple[dict[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "baseline": self.baseline,
            "change": self.change,
            "reference": self.reference,
            "lines": dict(self.lines),
            "shapes": [s.to_json() for s in self.shapes],
            "adversarial": [dict(a) for a in self.adversarial],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OperationPlan:
        return cls(
            name=str(data["name"]),
            baseline=str(data["baseline"]),
            change=str(data["change"]),
            reference=str(data["reference"]),
            lines={str(k): int(v) for k, v in (data.get("lines") or {}).items()},
            shapes=tuple(ShapePlan.from_json(s) for s in data.get("shapes") or ()),
            adversarial=tuple(dict(a) for a in data.get("adversarial") or ()),
        )


@attrs.frozen
class TimingPlan:
    warmup: int
    repeats: int
    blocks: int
    """Blocks per arm of the fixed design (kernels and application alike)."""
    rotate: int
    confidence: float
    threshold: float
    stop: str = FIXED
    """FIXED, or SEQUENTIAL: the kernels' and the application's blocks run from `min_blocks` until
    decided or `max_blocks`."""
    min_blocks: int = 0
    max_blocks: int = 0
    family: int = 1
    """The comparisons in the study's family (`evaluate.family`: every kernel shape, each
    operation's combination over shapes, the application's request time)."""

    @property
    def stopping(self) -> StoppingRule | None:
        """The sequential rule the kernel comparisons stop by; None for the fixed design.

        Each comparison stops at 1 - (1 - confidence) / family (Bonferroni): its anytime-valid
        p-value at a decided stop is then at most (1 - confidence) / family, which every step
        of Holm's adjustment over the family keeps. Stopped at `confidence` itself, a stop's
        p-value lands just under 1 - confidence, and Holm then drops the verdict the run
        stopped for: a demo's end-to-end comparison decided faster after 7 pairs (p = 0.013)
        and was inconclusive in a family of 4.
        """
        if self.stop != SEQUENTIAL:
            return None
        confidence = round(1.0 - (1.0 - self.confidence) / max(1, self.family), 12)
        return StoppingRule(confidence, self.threshold, self.min_blocks, self.max_blocks, RHO)

    @property
    def kernel_blocks(self) -> int:
        """The most blocks per arm a kernel shape or the application is given: the fixed count, or
        the sequential cap."""
        return self.max_blocks if self.stop == SEQUENTIAL else self.blocks

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimingPlan:
        """Read a plan's timing; a `perfdsl.plan/2` one (no `stop`) is the fixed design."""
        blocks = int(data["blocks"])
        confidence, threshold = float(data["confidence"]), float(data["threshold"])
        if not (0 < confidence < 1 and 0 <= threshold < math.inf):
            # The checker bounds both: a run never writes these, and every interval would fail on them.
            raise ValueError(f"timing confidence {confidence} or threshold {threshold} is out of range")
        return cls(
            warmup=int(data["warmup"]),
            repeats=int(data["repeats"]),
            blocks=blocks,
            rotate=int(data["rotate"]),
            confidence=confidence,
            threshold=threshold,
            stop=str(data.get("stop", FIXED)),
            min_blocks=int(data.get("min_blocks", blocks)),
            max_blocks=int(data.get("max_blocks", blocks)),
            family=int(data.get("family", 1)),
        )


@attrs.frozen
class CorrectnessPlan:
    seeds: int
    tolerances: dict[str, float]
    """metric (`rel_l2`, `max_abs`) -> the largest error that passes."""
    poison: str

    def to_json(self) -> dict[str, Any]:
        return {"seeds": self.seeds, "tolerances": dict(self.tolerances), "poison": self.poison}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorrectnessPlan:
        return cls(int(data["seeds"]), dict(data.get("tolerances") or {}), str(data["poison"]))


@attrs.frozen
class ApplicationPlan:
    name: str
    entry: str
    line: int
    uses: tuple[str, ...]
    shape: dict[str, int]
    """The operating point: the heaviest-weighted workload shape."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entry": self.entry,
            "line": self.line,
            "uses": list(self.uses),
            "shape": dict(self.shape),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApplicationPlan:
        return cls(
            name=str(data["name"]),
            entry=str(data["entry"]),
            line=int(data["line"]),
            uses=tuple(data.get("uses") or ()),
            shape=dict(data.get("shape") or {}),
        )


@attrs.frozen
class LoadPlan:
    arrivals: str
    rates: tuple[float, ...]
    """Offered rates to sweep, requests per second."""
    requests: int
    slo_seconds: float | None
    slo_percentile: float

    def to_json(self) -> dict[str, Any]:
        return {
            "arrivals": self.arrivals,
            "rates": list(self.rates),
            "requests": self.requests,
            "slo_seconds": self.slo_seconds,
            "slo_percentile": self.slo_percentile,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadPlan:
        slo = data.get("slo_seconds")
        return cls(
            arrivals=str(data["arrivals"]),
            rates=tuple(float(r) for r in data.get("rates") or ()),
            requests=int(data["requests"]),
            slo_seconds=None if slo is None else float(slo),
            slo_percentile=float(data["slo_percentile"]),
        )


@attrs.frozen
class Plan:
    """Everything `perfdsl run` needs, and nothing it must look up in the study again."""

    study: str
    study_path: str
    study_text: str
    """The study as run; not in plan.json (the bundle keeps it as study.perf)."""
    study_hash: str
    predict_hash: str
    target: str
    quick: bool
    dtype: str
    operations: tuple[OperationPlan, ...]
    timing: TimingPlan
    correctness: CorrectnessPlan
    roof: str | None
    roof_line: int
    measures: tuple[str, ...]
    """The mechanism quantities the study's `evidence mechanism` measures."""
    application: ApplicationPlan | None
    load: LoadPlan | None
    artifacts: str
    """Directory the bundles go under, resolved against the study file's directory
    (as paths in a configuration file are), so the cwd never changes where a run lands."""
    limits: tuple[LimitShapePlan, ...] = ()
    """Every shape the study's `limit regression`s declare, each once, in study order."""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": versions.PLAN,
            "study": self.study,
            "study_path": self.study_path,
            "study_hash": self.study_hash,
            "predict_hash": self.predict_hash,
            "target": self.target,
            "quick": self.quick,
            "dtype": self.dtype,
            "operations": [op.to_json() for op in self.operations],
            "timing": self.timing.to_json(),
            "correctness": self.correctness.to_json(),
            "roof": self.roof,
            "roof_line": self.roof_line,
            "measures": list(self.measures),
            "application": None if self.application is None else self.application.to_json(),
            "load": None if self.load is None else self.load.to_json(),
            "artifacts": self.artifacts,
            "limits": [limit.to_json() for limit in self.limits],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], study_text: str, path: Path) -> Plan:
        """The record of a parsed plan.json and the study text it was planned from."""
        versions.check_version(data, path, versions.READABLE_PLAN)
        application, load = data.get("application"), data.get("load")
        return cls(
            study=str(data["study"]),
            study_path=str(data["study_path"]),
            study_text=study_text,
            study_hash=str(data["study_hash"]),
            predict_hash=str(data["predict_hash"]),
            target=str(data["target"]),
            quick=bool(data["quick"]),
            dtype=str(data["dtype"]),
            operations=tuple(OperationPlan.from_json(op) for op in data.get("operations") or ()),
            timing=TimingPlan.from_json(data["timing"]),
            correctness=CorrectnessPlan.from_json(data["correctness"]),
            roof=data.get("roof"),
            roof_line=int(data.get("roof_line") or 0),
            measures=tuple(data.get("measures") or ()),
            application=None if application is None else ApplicationPlan.from_json(application),
            load=None if load is None else LoadPlan.from_json(load),
            artifacts=str(data.get("artifacts", "")),
            limits=tuple(LimitShapePlan.from_json(limit) for limit in data.get("limits") or ()),
        )

    @classmethod
    def read(cls, bundle: Path, study_text: str | None = None) -> Plan:
        """Read and check a bundle's plan.json (OSError, ValueError, KeyError or BundleFormatError);
        `study_text` is the bundle's study.perf where the caller has read it already."""
        path = Path(bundle) / PLAN
        if study_text is None:
            study_text = (Path(bundle) / "study.perf").read_text(encoding="utf-8")
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), study_text, path)
