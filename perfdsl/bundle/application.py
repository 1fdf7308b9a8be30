"""The application's part of results.json: model-level check, requests, share of time, load.

`timing` is the request timing's `ApplicationTiming` (its block log, the calls
that raised, the sequential rule's stop); the samples are its CSV.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from perfdsl.bundle.load import LoadRecord
from perfdsl.bundle.sampling import ApplicationTiming, Block
from perfdsl.bundle.stopping import StopRecord


@attrs.frozen
class OutputRecord:
    """How far one output is from its float64 reference: a kernel's in the correctness check
    (`perfdsl.runtime.correctness.measure`), the application's here; metrics None when undefined."""

    name: str
    rel_l2: float | None
    max_abs: float | None
    unwritten: int
    """Elements still holding the poison value: never written by the variant."""
    nonfinite: int
    """NaN or Inf elements the variant wrote."""
    problem: str
    """Why the output fails whatever the tolerance, in one line; empty when it does not."""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OutputRecord:
        return cls(
            name=str(data.get("name", "")),
            rel_l2=data.get("rel_l2"),
            max_abs=data.get("max_abs"),
            unwritten=int(data.get("unwritten") or 0),
            nonfinite=int(data.get("nonfinite") or 0),
            problem=str(data.get("problem") or ""),
        )


@attrs.frozen
class ModelLevelArm:
    """One arm's application output against the float64 run, judged against the baseline's."""

    application: str
    variant: str
    target: str
    shape: tuple[tuple[str, int], ...]
    seed: int
    passed: bool
    output: OutputRecord | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "application": self.application,
            "variant": self.variant,
            "target": self.target,
            "shape": [list(pair) for pair in self.shape],
            "seed": self.seed,
            "passed": self.passed,
            "output": None if self.output is None else self.output.to_json(),
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelLevelArm:
        output = data.get("output")
        return cls(
            application=str(data.get("application", "")),
            variant=str(data.get("variant", "")),
            target=str(data.get("target", "")),
            shape=tuple((str(k), int(v)) for k, v in data.get("shape") or ()),
            seed=int(data.get("seed") or 0),
            passed=bool(data.get("passed")),
            output=None if not output else OutputRecord.from_json(output),
            message=str(data.get("message") or ""),
        )


@attrs.frozen
class ModelLevelRecord:
    """The application's output with each arm: the change may not make it worse."""

    rule: str
    passed: bool
    excess: dict[str, float | None]
    """Per metric, the change's error minus the baseline's (None where undefined)."""
    arms: dict[str, ModelLevelArm]

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "passed": self.passed,
            "excess": dict(self.excess),
            "arms": {arm: record.to_json() for arm, record in self.arms.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelLevelRecord:
        return cls(
            rule=str(data.get("rule", "")),
            passed=bool(data.get("passed")),
            excess=dict(data.get("excess") or {}),
            arms={arm: ModelLevelArm.from_json(r) for arm, r in (data.get("arms") or {}).items()},
        )


LEGACY_SHARE_ROUNDS = 10
"""How many rounds the share pass of a results.json before version 7 alternated its arms in."""


def legacy_rounds(count: int) -> tuple[int, ...]:
    """The round of each request in a share pass recorded before rounds were written (results/6).

    That pass ran `min(10, count)` rounds, request k of an arm in round t when
    `count t // rounds <= k < count (t + 1) // rounds`: the rule is rebuilt here
    once, so that an older bundle is resampled by rounds like a new one.
    """
    rounds = min(LEGACY_SHARE_ROUNDS, count)
    return tuple(t for t in range(rounds) for _ in range(count * (t + 1) // rounds - count * t // rounds))


@attrs.frozen
class ArmShare:
    """One arm's per-request totals, the time spent inside the operation (ns) and each request's round.

    The share pass alternates the arms in rounds; requests within a round are
    serially correlated (lag-1 autocorrelation 0.1-0.3), rounds nearly
    independent, so the statistics resample rounds, and need to know them.
    """

    total_ns: tuple[int, ...]
    op_ns: tuple[int, ...]
    rounds: tuple[int, ...] = ()
    """The share round each request ran in (0-based), in request order."""

    def to_json(self) -> dict[str, Any]:
        return {"total_ns": list(self.total_ns), "op_ns": list(self.op_ns), "rounds": list(self.rounds)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmShare:
        total = tuple(int(t) for t in data.get("total_ns") or ())
        rounds = data.get("rounds")
        return cls(
            total_ns=total,
            op_ns=tuple(int(t) for t in data.get("op_ns") or ()),
            rounds=legacy_rounds(len(total)) if rounds is None else tuple(int(r) for r in rounds),
        )


@attrs.frozen
class ApplicationRecord:
    """Everything the run measured of the study's application."""

    name: str
    entry: str
    shape: dict[str, int]
    uses: tuple[str, ...]
    model_level: ModelLevelRecord | None
    samples: str | None = None
    """The request-time CSV, relative to the bundle."""
    samples_missing: str | None = None
    timing: ApplicationTiming | None = None
    """The request timing's block log, failures and stop."""
    share: dict[str, ArmShare] | None = None
    share_missing: str | None = None
    load: LoadRecord | None = None
    load_missing: str | None = None

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The request timing's block log, with each block's machine load."""
        return self.timing.blocks if self.timing else ()

    @property
    def stop(self) -> StopRecord | None:
        """When and why the sequential rule stopped the request blocks (results/8; None: fixed design)."""
        return self.timing.stop if self.timing else None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entry": self.entry,
            "shape": dict(self.shape),
            "uses": list(self.uses),
            "model_level": None if self.model_level is None else self.model_level.to_json(),
            "samples": self.samples,
            "samples_missing": self.samples_missing,
            "timing": None if self.timing is None else self.timing.to_json(),
            "share": None if self.share is None else {arm: s.to_json() for arm, s in self.share.items()},
            "share_missing": self.share_missing,
            "load": None if self.load is None else self.load.to_json(),
            "load_missing": self.load_missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApplicationRecord:
        share = data.get("share")
        load = data.get("load")
        model_level = data.get("model_level")
        timing = data.get("timing")
        return cls(
            name=str(data.get("name", "?")),
            entry=str(data.get("entry", "")),
            shape=dict(data.get("shape") or {}),
            uses=tuple(data.get("uses") or ()),
            model_level=None if not model_level else ModelLevelRecord.from_json(model_level),
            samples=data.get("samples"),
            samples_missing=data.get("samples_missing"),
            timing=ApplicationTiming.from_json(timing) if timing else None,
            share=None if share is None else {arm: ArmShare.from_json(s) for arm, s in share.items()},
            share_missing=data.get("share_missing"),
            load=None if not load else LoadRecord.from_json(load),
            load_missing=data.get("load_missing"),
        )
