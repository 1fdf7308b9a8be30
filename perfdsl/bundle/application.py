"""The application's part of results.json: model-level check, requests, share of time, load.

`timing` is the request timing's `ApplicationTiming` (its block log, the calls
that raised, the sequential rule's stop); the samples are its CSV.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.load import LoadRecord
from perfdsl.bundle.plain import EMPTY, Plain, field
from perfdsl.bundle.sampling import ApplicationTiming, Block
from perfdsl.bundle.stopping import StopRecord


@attrs.frozen
class OutputRecord(Plain):
    """How far one output is from its float64 reference: a kernel's in the correctness check
    (`perfdsl.runtime.correctness.measure`), the application's here; metrics None when undefined."""

    ABSENT = EMPTY

    name: str
    rel_l2: float | None
    max_abs: float | None
    unwritten: int
    """Elements still holding the poison value: never written by the variant."""
    nonfinite: int
    """NaN or Inf elements the variant wrote."""
    problem: str
    """Why the output fails whatever the tolerance, in one line; empty when it does not."""


@attrs.frozen
class ModelLevelArm(Plain):
    """One arm's application output against the float64 run, judged against the baseline's."""

    ABSENT = EMPTY

    application: str
    variant: str
    target: str
    shape: tuple[tuple[str, int], ...]
    seed: int
    passed: bool
    output: OutputRecord | None
    message: str


@attrs.frozen
class ModelLevelRecord(Plain):
    """The application's output with each arm: the change may not make it worse."""

    ABSENT = EMPTY

    rule: str
    passed: bool
    excess: dict[str, float | None]
    """Per metric, the change's error minus the baseline's (None where undefined)."""
    arms: dict[str, ModelLevelArm]


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


def _legacy_rounds(share: Mapping[str, Any]) -> tuple[int, ...]:
    return legacy_rounds(len(share.get("total_ns") or ()))


@attrs.frozen
class ArmShare(Plain):
    """One arm's per-request totals, the time spent inside the operation (ns) and each request's round.

    The share pass alternates the arms in rounds; requests within a round are
    serially correlated (lag-1 autocorrelation 0.1-0.3), rounds nearly
    independent, so the statistics resample rounds, and need to know them.
    """

    ABSENT = EMPTY

    total_ns: tuple[int, ...]
    op_ns: tuple[int, ...]
    rounds: tuple[int, ...] = field(default=(), absent=_legacy_rounds)
    """The share round each request ran in (0-based), in request order (rebuilt for a results.json
    from before version 7, which did not write it)."""


@attrs.frozen
class ApplicationRecord(Plain):
    """Everything the run measured of the study's application."""

    ABSENT = EMPTY

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
    """The load test (`bundle.load`)."""
    load_missing: str | None = None
    preparations: dict[str, int] = field(factory=dict, absent=EMPTY, when=lambda app: bool(app.preparations))
    """How many times each arm's request was prepared over the request timing, the share pass
    and the load test (results/12): afresh before each block, round and probe while preparing
    took at most a quarter of the time (`runtime.preparation`). Empty: one preparation per arm,
    as before results/12, or nothing was timed."""

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The request timing's block log, with each block's machine load."""
        return self.timing.blocks if self.timing else ()

    @property
    def stop(self) -> StopRecord | None:
        """When and why the sequential rule stopped the request blocks (results/8; None: fixed design)."""
        return self.timing.stop if self.timing else None

    @property
    def operation_never_called(self) -> str | None:
        """Why the request times compare nothing, where the share pass timed requests in both arms
        and not one of them called the operation: the application bypassed `ctx.op`, so both
        arms ran the same code (a new user's report showed f = 0 % and "not contradicted")."""
        records = [self.share.get(arm) for arm in ARMS] if self.share else []
        if not records or any(r is None or not r.total_ns or any(r.op_ns) for r in records):
            return None
        uses = ", ".join(f"`{name}`" for name in self.uses)
        requests = sum(len(r.total_ns) for r in records if r is not None)
        return (
            f"`{self.name}` never called {uses} through `ctx.op` in the {requests} requests the share pass "
            "timed, so both arms ran the same code and their request times compare nothing; call the "
            "operation through `ctx.op`, which is how a run swaps baseline for change"
        )
