"""The application's part of results.json: end-to-end requests, share of time, load.

`model_level` and `timing` are kept as the runtime recorded them (the
float64 comparison per arm and the sampler's block log): the report and the
evaluation quote them, they do not compute from their keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from perfdsl.bundle.load import LoadRecord


@attrs.frozen
class ArmShare:
    """One arm's per-request totals and the time spent inside the operation, in ns."""

    total_ns: tuple[int, ...]
    op_ns: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"total_ns": list(self.total_ns), "op_ns": list(self.op_ns)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmShare:
        return cls(
            total_ns=tuple(int(t) for t in data.get("total_ns") or ()),
            op_ns=tuple(int(t) for t in data.get("op_ns") or ()),
        )


@attrs.frozen
class ApplicationRecord:
    """Everything the run measured of the study's application."""

    name: str
    entry: str
    shape: dict[str, int]
    uses: tuple[str, ...]
    model_level: Mapping[str, Any] | None
    samples: str | None = None
    """The request-time CSV, relative to the bundle."""
    samples_missing: str | None = None
    timing: Mapping[str, Any] | None = None
    share: dict[str, ArmShare] | None = None
    share_missing: str | None = None
    load: LoadRecord | None = None
    load_missing: str | None = None

    @property
    def model_level_passed(self) -> bool:
        """Whether the application's output passed against float64 in every arm."""
        return bool(self.model_level and self.model_level.get("passed"))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entry": self.entry,
            "shape": dict(self.shape),
            "uses": list(self.uses),
            "model_level": self.model_level,
            "samples": self.samples,
            "samples_missing": self.samples_missing,
            "timing": self.timing,
            "share": None if self.share is None else {arm: s.to_json() for arm, s in self.share.items()},
            "share_missing": self.share_missing,
            "load": None if self.load is None else self.load.to_json(),
            "load_missing": self.load_missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApplicationRecord:
        share = data.get("share")
        load = data.get("load")
        return cls(
            name=str(data.get("name", "?")),
            entry=str(data.get("entry", "")),
            shape=dict(data.get("shape") or {}),
            uses=tuple(data.get("uses") or ()),
            model_level=data.get("model_level"),
            samples=data.get("samples"),
            samples_missing=data.get("samples_missing"),
            timing=data.get("timing"),
            share=None if share is None else {arm: ArmShare.from_json(s) for arm, s in share.items()},
            share_missing=data.get("share_missing"),
            load=None if not load else LoadRecord.from_json(load),
            load_missing=data.get("load_missing"),
        )
