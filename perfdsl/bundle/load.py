"""The load test's part of results.json: the probes of the goodput search.

Each probe's per-request records are a CSV of their own (`records`, under
PROBE_COLUMNS, read back by `read_probe_csv`); this is the index the
evaluation recomputes the offered-load curve from. The records are written and
read by their fields (`bundle.plain`); what a key that older results lack reads
as is said field by field, as those versions wrote fewer of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.plain import EMPTY, Plain, field
from perfdsl.bundle.sampling import LoadReading, read_typed_csv
from perfdsl.bundle.stopping import ProbeRule

OLDER_BUNDLE = "not recorded: the bundle predates results version 3"
PROBE_COLUMNS = ("scheduled_ns", "issued_ns", "started_ns", "completed_ns", "ok")
"""A probe CSV's header: one row per request, its times in nanoseconds, `ok` as 0 or 1."""


@attrs.frozen
class ProbeRequests:
    """One probe's per-request records, row by row as its CSV holds them.

    The load search runs in the application's worker; it hands these back with the
    results.json entry that names their file, and the parent writes them as it
    writes a shape's samples (`rows` is the same writer's input as `Sampled.rows`).
    """

    path: str
    """The CSV's path inside the bundle: the `records` of its `LoadProbeRecord`."""
    requests: tuple[tuple[int, int, int, int, int], ...]
    """One tuple per request, in PROBE_COLUMNS' order."""

    def rows(self) -> tuple[tuple[str, ...], tuple[tuple[int, int, int, int, int], ...]]:
        """The CSV's header and rows."""
        return PROBE_COLUMNS, self.requests


def read_probe_csv(path: Path) -> dict[str, np.ndarray]:
    """A probe CSV's columns by name, as int64 arrays."""
    columns = read_typed_csv(path, dict.fromkeys(PROBE_COLUMNS, int))
    return {n: np.array(columns[n], dtype=np.int64) for n in PROBE_COLUMNS}


def _lag_missing(probe: Mapping[str, Any]) -> str | None:
    """Why a probe has no generator lag, where its file does not say: a probe written before
    results/3 has neither key, and no lag because that version did not judge it."""
    return None if probe.get("generator") else OLDER_BUNDLE


@attrs.frozen
class GeneratorLagRecord(Plain):
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


@attrs.frozen
class LoadProbeRecord(Plain):
    """One offered rate for one arm, and where its raw records are."""

    arm: str
    index: int = field(absent=EMPTY)
    rate: float
    phase: str = field(absent=EMPTY)
    """`start`, `step down`, `double`, `bisect`, `confirm` (the search; `confirm` is a
    goodput's second pass, `step down` also a rate tried below one whose repeat failed)
    or `sweep` (the declared rates)."""
    records: str
    """The CSV of its requests, relative to the bundle."""
    warmup: int = field(absent=EMPTY)
    truncated: bool = field(absent=EMPTY)
    first_error: str | None = field(absent=EMPTY)
    generator: GeneratorLagRecord | None = None
    generator_missing: str | None = field(default=None, absent=_lag_missing)
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
    request served, one or two more than these when requests were in service as it stopped."""


@attrs.frozen
class GoodputSearchRecord(Plain):
    """How one arm's goodput search ended, as the run judged it (`stats.load.find_goodput`).

    `perfdsl evaluate` recomputes the goodput from the probes; this keeps what the
    run concluded and, for a goodput it could not confirm, why.
    """

    arm: str
    goodput: float
    """Requests per second: the confirmed goodput, or the best unconfirmed candidate."""
    failing: float | None = field(absent=EMPTY)
    """The lowest rate above the goodput that failed in the search, if any."""
    confirmed: bool
    reason: str = field(absent=EMPTY)
    """Why the goodput is unconfirmed (the probe budget ran out, and where); empty if confirmed."""


@attrs.frozen
class LoadRecord(Plain):
    """How the load was offered and every probe the search ran."""

    ABSENT = EMPTY

    arrivals: str
    seed: int
    """The first repeat's schedule seed; each probe records its own (results/7 on)."""
    slo_seconds: float | None
    percentile: float = field(absent=0.99)
    """The latency percentile the SLO bounds; a results.json without it meant the 99th."""
    probes: tuple[LoadProbeRecord, ...]
    stopped: tuple[str, ...] = ()
    """Why an arm's search stopped early (its time budget ran out), one line each."""
    rule: str = ""
    """The confirmation rule the searches followed; empty in bundles before results version 6."""
    searches: tuple[GoodputSearchRecord, ...] = ()
    """Each arm's search outcome, in the order the searches ended; empty before results version 6."""
    probe_rule: ProbeRule | None = None
    """The sequential rule every probe was decided by; None: the fixed probe (and before results/10)."""
