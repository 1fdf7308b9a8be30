"""The settle rule: warm-up ends when two consecutive windows agree, or at the cap (PQ008)."""

from __future__ import annotations

import itertools

import attrs
import pytest

from perfdsl.bundle.sampling import Warmup
from perfdsl.evaluate.quality import check_warmup
from perfdsl.runtime.warmup import WarmupPolicy, settled_at, warm_up


@attrs.frozen
class _Timed:
    duration_ns: int
    valid: bool = True


def test_a_decaying_curve_settles_where_its_windows_first_agree():
    # 3x slower at first (JIT, page faults), decaying to a flat 100.
    curve = [300, 250, 200, 160, 130, 110, 101, 100, 100, 100, 100, 100, 100, 100, 100]
    n = settled_at(curve, window=3, threshold=0.05)
    assert n == 11  # windows [5:8) = 110,101,100 (median 101) and [8:11) = 100: within 5 %
    assert settled_at(curve[:10], window=3, threshold=0.05) is None


def test_a_curve_that_keeps_drifting_never_settles():
    drifting = [100 * 1.2**i for i in range(40)]  # 20 % slower every call: no two windows agree
    assert settled_at(drifting, window=5, threshold=0.05) is None
    alternating = [100, 300] * 20  # bimodal, windows of 5 alternate medians 100 and 300
    assert settled_at(alternating, window=5, threshold=0.05) is None


def test_the_threshold_is_relative_and_inclusive():
    assert settled_at([105, 105, 100, 100], window=2, threshold=0.05) == 4
    assert settled_at([106, 106, 100, 100], window=2, threshold=0.05) is None


def _policy(**kwargs: float) -> WarmupPolicy:
    return WarmupPolicy(**{"min_calls": 3, "min_ms": 0.0, "window": 3, "threshold": 0.05, **kwargs})


def test_warm_up_stops_once_every_arm_has_settled():
    fast = iter([500, 400, 300] + [100] * 1000)
    calls = {"A": 0}

    def timed(name: str) -> _Timed:
        calls[name] += 1
        return _Timed(next(fast))

    (record,) = warm_up(["A"], timed, _policy(cap_calls=200), lambda *a: None)
    # Windows (300, 100, 100) and (100, 100, 100) have the same median: settled at call 8.
    assert record.settled and record.calls == calls["A"] == 8
    assert record.durations_ns[:3] == (500, 400, 300)  # the curve is kept


def test_warm_up_that_never_settles_stops_at_the_cap_and_is_a_finding():
    counters = {"A": itertools.count(), "B": itertools.count()}

    def timed(name: str) -> _Timed:
        # A slows by 20 % a call (a thermal ramp); B alternates windows of 100 and 300 (bimodal).
        i = next(counters[name])
        return _Timed(int(100 * 1.2**i) if name == "A" else (100 if (i // 3) % 2 else 300))

    records = warm_up(["A", "B"], timed, _policy(cap_calls=40), lambda *a: None)
    assert [(r.arm, r.calls, r.settled) for r in records] == [("A", 40, False), ("B", 40, False)]
    # Through the bundle's reader, as the evaluation sees the warm-ups the run wrote.
    findings = check_warmup(list(records), "op 8x8")
    assert [(f.code, f.subject) for f in findings] == [("PQ008", "op 8x8 A"), ("PQ008", "op 8x8 B")]


def test_a_settled_or_old_record_is_not_a_finding():
    settled = Warmup.from_json({"arm": "A", "calls": 9, "settled": True})
    old = Warmup.from_json({"arm": "A", "calls": 9, "elapsed_ns": 5})  # before the rule
    assert old.settled is None
    assert check_warmup([settled, old], "s") == ()


def test_a_window_of_zero_calls_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        settled_at([1, 2, 3], window=0, threshold=0.05)
