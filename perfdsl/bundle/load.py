"""The load test's part of results.json: the probes of the goodput search.

Each probe's per-request records are a CSV of their own (`records`); this is
the index the evaluation recomputes the offered-load curve from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class LoadProbeRecord:
    """One offered rate for one arm, and where its raw records are."""

    arm: str
    index: int
    rate: float
    phase: str
    """`double`, `bisect`, `confirm` (the search) or `sweep` (the declared rates)."""
    records: str
    """The CSV of its requests, relative to the bundle."""
    warmup: int
    truncated: bool
    first_error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "index": self.index,
            "rate": self.rate,
            "phase": self.phase,
            "records": self.records,
            "warmup": self.warmup,
            "truncated": self.truncated,
            "first_error": self.first_error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadProbeRecord:
        return cls(
            arm=str(data["arm"]),
            index=int(data.get("index", 0)),
            rate=float(data["rate"]),
            phase=str(data.get("phase", "")),
            records=str(data["records"]),
            warmup=int(data.get("warmup", 0)),
            truncated=bool(data.get("truncated", False)),
            first_error=data.get("first_error"),
        )


@attrs.frozen
class LoadRecord:
    """How the load was offered and every probe the search ran."""

    arrivals: str
    seed: int
    slo_seconds: float | None
    percentile: float
    probes: tuple[LoadProbeRecord, ...]
    stopped: tuple[str, ...] = ()
    """Why an arm's search stopped early (its time budget ran out), one line each."""

    def to_json(self) -> dict[str, Any]:
        return {
            "arrivals": self.arrivals,
            "seed": self.seed,
            "slo_seconds": self.slo_seconds,
            "percentile": self.percentile,
            "probes": [p.to_json() for p in self.probes],
            "stopped": list(self.stopped),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadRecord:
        slo = data.get("slo_seconds")
        return cls(
            arrivals=str(data.get("arrivals", "")),
            seed=int(data.get("seed", 0)),
            slo_seconds=None if slo is None else float(slo),
            percentile=float(data.get("percentile", 0.99)),
            probes=tuple(LoadProbeRecord.from_json(p) for p in data.get("probes") or ()),
            stopped=tuple(str(s) for s in data.get("stopped") or ()),
        )
