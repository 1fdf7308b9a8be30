"""The load test's part of results.json: the probes of the goodput search.

Each probe's per-request records are a CSV of their own (`records`, under
PROBE_COLUMNS, read back by `read_probe_csv`); this is the index the
evaluation recomputes the offered-load curve from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.sampling import LoadReading, read_typed_csv
from perfdsl.bundle.stopping import ProbeRule

OLDER_BUNDLE = "not recorded: the bundle predates results version 3"
PROBE_COLUMNS = ("scheduled_ns", "issued_ns", "started_ns", "completed_ns", "ok")
"""A probe CSV's header: one row per request, its times in nanoseconds, `ok` as 0 or 1."""


def read_probe_csv(path: Path) -> dict[str, np.ndarray]:
    """A probe CSV's columns by name, as int64 arrays."""
    rows = read_typed_csv(path, dict.fromkeys(PROBE_COLUMNS, int))
    return {n: np.array([r[n] for r in rows], dtype=np.int64) for n in PROBE_COLUMNS}


@attrs.frozen
class GeneratorLagRecord:
    """The load generator's own lateness over one probe, as the run judged it (seconds).

    `perfdsl evaluate` judges it again from the probe's CSV; this is what the run
    saw, so a reader of results.json alone can tell jitter from falling behind.
    """

    p50: float
    p99: float
    backlog_slope: float
    """Issue lag's trend against scheduled time, seconds per second."""
    backlog_growth: float
    """The lag the trend added over the probe."""
    limit: float
    """The lag budget the verdict used (5 % of the SLO)."""
    verdict: str
    """`on time`, `jitter` (p99 over the budget, no growing backlog) or `behind`."""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GeneratorLagRecord:
        return cls(
            p50=float(data["p50"]),
            p99=float(data["p99"]),
            backlog_slope=float(data["backlog_slope"]),
            backlog_growth=float(data["backlog_growth"]),
            limit=float(data["limit"]),
            verdict=str(data["verdict"]),
        )


@attrs.frozen
class LoadProbeRecord:
    """One offered rate for one arm, and where its raw records are."""

    arm: str
    index: int
    rate: float
    phase: str
    """`start`, `step down`, `double`, `bisect`, `confirm` (the search; `confirm` is a
    goodput's second pass, `step down` also a rate tried below one whose repeat failed)
    or `sweep` (the declared rates)."""
    records: str
    """The CSV of its requests, relative to the bundle."""
    warmup: int
    truncated: bool
    first_error: str | None
    generator: GeneratorLagRecord | None = None
    generator_missing: str | None = None
    """Why `generator` is absent: too few requests, or a bundle older than version 3."""
    seed: int | None = None
    """The arrival schedule's seed: one per repeat at a rate, the same for both arms at a
    repeat; None in a bundle older than results/7, whose probes all used the load record's."""
    machine_start: LoadReading | None = None
    """The machine's CPU times when the probe started (results/7 on; Linux only)."""
    machine_end: LoadReading | None = None
    decision: str | None = None
    """What the sequential rule decided, as the run saw it: `pass`, `fail` or `open` (the cap
    or the records ended first); None for a fixed probe and before results/10."""
    decided_at: int | None = None
    """The requests the decision rests on (the look it stopped at); the probe records every
    request it issued, a few more when requests were in flight as it stopped."""

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "decided_at": self.decided_at,
            "seed": self.seed,
            "machine_start": None if self.machine_start is None else attrs.asdict(self.machine_start),
            "machine_end": None if self.machine_end is None else attrs.asdict(self.machine_end),
            "arm": self.arm,
            "index": self.index,
            "rate": self.rate,
            "phase": self.phase,
            "records": self.records,
            "warmup": self.warmup,
            "truncated": self.truncated,
            "first_error": self.first_error,
            "generator": None if self.generator is None else self.generator.to_json(),
            "generator_missing": self.generator_missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadProbeRecord:
        generator = data.get("generator")
        return cls(
            arm=str(data["arm"]),
            index=int(data.get("index", 0)),
            rate=float(data["rate"]),
            phase=str(data.get("phase", "")),
            records=str(data["records"]),
            warmup=int(data.get("warmup", 0)),
            truncated=bool(data.get("truncated", False)),
            first_error=data.get("first_error"),
            generator=None if generator is None else GeneratorLagRecord.from_json(generator),
            generator_missing=data.get("generator_missing", None if generator else OLDER_BUNDLE),
            seed=None if data.get("seed") is None else int(data["seed"]),
            machine_start=LoadReading.from_json(data.get("machine_start") or {}),
            machine_end=LoadReading.from_json(data.get("machine_end") or {}),
            decision=None if data.get("decision") is None else str(data["decision"]),
            decided_at=None if data.get("decided_at") is None else int(data["decided_at"]),
        )


@attrs.frozen
class GoodputSearchRecord:
    """How one arm's goodput search ended, as the run judged it (`stats.load.find_goodput`).

    `perfdsl evaluate` recomputes the goodput from the probes; this keeps what the
    run concluded and, for a goodput it could not confirm, why.
    """

    arm: str
    goodput: float
    """Requests per second: the confirmed goodput, or the best unconfirmed candidate."""
    failing: float | None
    """The lowest rate above the goodput that failed in the search, if any."""
    confirmed: bool
    reason: str
    """Why the goodput is unconfirmed (the probe budget ran out, and where); empty if confirmed."""

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GoodputSearchRecord:
        failing = data.get("failing")
        return cls(
            arm=str(data["arm"]),
            goodput=float(data["goodput"]),
            failing=None if failing is None else float(failing),
            confirmed=bool(data["confirmed"]),
            reason=str(data.get("reason", "")),
        )


@attrs.frozen
class LoadRecord:
    """How the load was offered and every probe the search ran."""

    arrivals: str
    seed: int
    """The first repeat's schedule seed; each probe records its own (results/7 on)."""
    slo_seconds: float | None
    percentile: float
    probes: tuple[LoadProbeRecord, ...]
    stopped: tuple[str, ...] = ()
    """Why an arm's search stopped early (its time budget ran out), one line each."""
    rule: str = ""
    """The confirmation rule the searches followed; empty in bundles before results version 6."""
    searches: tuple[GoodputSearchRecord, ...] = ()
    """Each arm's search outcome, in the order the searches ended; empty before results version 6."""
    probe_rule: ProbeRule | None = None
    """The sequential rule every probe was decided by; None: the fixed probe (and before results/10)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "arrivals": self.arrivals,
            "seed": self.seed,
            "slo_seconds": self.slo_seconds,
            "percentile": self.percentile,
            "probes": [p.to_json() for p in self.probes],
            "stopped": list(self.stopped),
            "rule": self.rule,
            "searches": [search.to_json() for search in self.searches],
            "probe_rule": None if self.probe_rule is None else self.probe_rule.to_json(),
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
            rule=str(data.get("rule", "")),
            searches=tuple(GoodputSearchRecord.from_json(s) for s in data.get("searches") or ()),
            probe_rule=ProbeRule.from_json(data["probe_rule"]) if data.get("probe_rule") else None,
        )
