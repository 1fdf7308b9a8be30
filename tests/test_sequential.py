"""Calibration of the sequential rule by seeded simulation, under continuous monitoring.

Every sequence is looked at after every pair, as a run does. The confidence
sequence must cover the true mean at all looks at once in at least 95 % of
sequences, and an A/A comparison must be called faster or slower in at most
5 % of 1,000; the fixed-n |z| > 1.96 interval looked at the same way must fail
both (so these tests can fail). Vectorised over sequences: well under a second.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfdsl.bundle.stopping import CAP, DECIDED, OPEN, RHO, StoppingRule, StopRecord
from perfdsl.stats.sequential.boundary import half_width, moments, pairs_to_fit
from perfdsl.stats.sequential.rule import judge, look, replay

SEQUENCES = 1000
LOOKS = 400
THRESHOLD = 0.02
TAU = math.log1p(THRESHOLD)


def _rule(threshold: float = THRESHOLD, min_pairs: int = 6, max_pairs: int = LOOKS) -> StoppingRule:
    return StoppingRule(0.95, threshold, min_pairs, max_pairs, RHO)


def _running(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance after each pair, along the last axis."""
    t = np.arange(1, d.shape[-1] + 1, dtype=float)
    mean = np.cumsum(d, axis=-1) / t
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.maximum(np.cumsum(d * d, axis=-1) - t * mean * mean, 0.0) / (t - 1.0)
    return mean, variance


def _sequential(variance: np.ndarray, t: np.ndarray) -> np.ndarray:
    return half_width(variance, t, 0.95)


def _naive(variance: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The fixed-n interval, z * s / sqrt(t): valid once, not when looked at after every pair."""
    return 1.96 * np.sqrt(variance / t)


def _pairs(seed: int, noise: float, effect: float = 0.0, tails: str = "normal") -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (SEQUENCES, LOOKS)
    draws = rng.standard_normal(shape) if tails == "normal" else rng.standard_t(5, shape) / math.sqrt(5 / 3)
    return math.log1p(effect) + noise * draws


def _miss_rate(d: np.ndarray, truth: float, width, first: int = 6) -> float:
    """The share of sequences whose interval excludes the truth at some look from `first` on."""
    mean, variance = _running(d)
    t = np.arange(1, d.shape[-1] + 1, dtype=float)
    with np.errstate(invalid="ignore"):
        missed = np.abs(mean - truth) > width(variance, t)
    return float(missed[:, first - 1 :].any(axis=1).mean())


def _verdicts(d: np.ndarray, rule: StoppingRule, width) -> list[str]:
    """Each sequence's verdict at its stop: the first decided look from min_pairs on, else the cap's."""
    mean, variance = _running(d)
    t = np.arange(1, d.shape[-1] + 1, dtype=float)
    with np.errstate(invalid="ignore"):
        w = width(variance, t)
    low, high = np.exp(mean - w), np.exp(mean + w)
    found = []
    for row_low, row_high in zip(low, high, strict=True):
        verdict = "inconclusive"
        for k in range(rule.min_pairs - 1, rule.max_pairs):
            verdict = judge(float(row_low[k]), float(row_high[k]), rule)
            if verdict != "inconclusive":
                break
        found.append(verdict)
    return found


def _false_calls(verdicts: list[str]) -> float:
    return sum(v in ("faster", "slower") for v in verdicts) / len(verdicts)


@pytest.mark.parametrize(
    ("noise", "tails"),
    [(TAU / 4, "normal"), (TAU, "normal"), (2 * TAU, "normal"), (4 * TAU, "normal"), (2 * TAU, "t5")],
)
def test_the_sequence_covers_the_truth_at_every_look(noise: float, tails: str) -> None:
    d = _pairs(11, noise, effect=0.03, tails=tails)
    assert _miss_rate(d, math.log1p(0.03), _sequential, first=2) <= 0.05


def test_the_fixed_interval_looked_at_after_every_pair_does_not() -> None:
    d = _pairs(11, 2 * TAU, effect=0.03)
    assert _miss_rate(d, math.log1p(0.03), _naive) > 0.2


@pytest.mark.parametrize("threshold", [0.0, THRESHOLD])
def test_an_a_a_comparison_is_rarely_called_changed(threshold: float) -> None:
    """theta 0 is the strictest: any interval that excludes 1 is a call."""
    verdicts = _verdicts(_pairs(12, 2 * TAU), _rule(threshold), _sequential)
    assert _false_calls(verdicts) <= 0.05


def test_the_naive_rule_fails_the_same_a_a_test() -> None:
    verdicts = _verdicts(_pairs(12, 2 * TAU), _rule(0.0), _naive)
    assert _false_calls(verdicts) > 0.2


def test_real_effects_are_called_and_a_null_is_called_no_change() -> None:
    rule = _rule()
    slower = _verdicts(_pairs(13, TAU, effect=0.05)[:200], rule, _sequential)
    faster = _verdicts(_pairs(14, TAU, effect=-0.05)[:200], rule, _sequential)
    null = _verdicts(_pairs(15, TAU)[:200], rule, _sequential)
    assert slower.count("slower") / 200 >= 0.99
    assert faster.count("faster") / 200 >= 0.99
    assert null.count("no meaningful change") / 200 >= 0.95


def test_replay_stops_where_the_vectorised_looks_do() -> None:
    """The run's exact per-look arithmetic and the simulation's agree on every stop."""
    rule = _rule(max_pairs=60)
    d = _pairs(16, 2 * TAU, effect=0.02)[:40, :60]
    expected = _verdicts(d, rule, _sequential)
    assert [stop.verdict for stop in (replay(row, rule) for row in d)] == expected


def test_the_stop_is_the_first_decided_look_and_holds_its_interval() -> None:
    rule = _rule(max_pairs=30)
    d = _pairs(17, TAU / 2, effect=0.08)[0, :30]
    stop = replay(d, rule)
    assert stop is not None and stop.reason == DECIDED and stop.verdict == "slower"
    assert all(look(d[:t], rule).verdict == "inconclusive" for t in range(rule.min_pairs, stop.pairs))
    at = look(d[: stop.pairs], rule)
    assert (stop.low, stop.high, stop.ratio) == (at.low, at.high, at.ratio)
    assert stop.low > 1 + THRESHOLD


def test_no_stop_before_the_first_look_and_inconclusive_at_the_cap() -> None:
    rule = _rule(min_pairs=8, max_pairs=12)
    # An effect on the band's edge cannot be decided: it runs to the cap.
    d = math.log1p(THRESHOLD) + 0.02 * np.random.default_rng(18).standard_normal(12)
    stop = replay(d, rule)
    assert stop is not None and (stop.reason, stop.pairs, stop.verdict) == (CAP, 12, "inconclusive")
    huge = np.full(8, math.log(2.0)) + 1e-3 * np.arange(8)
    assert replay(huge, rule).pairs == 8
    assert replay(huge[:5], rule).reason == OPEN


def test_the_record_round_trips_through_json() -> None:
    stop = replay(_pairs(19, TAU)[0, :3], _rule())
    assert stop is not None and stop.reason == OPEN and stop.high == math.inf
    assert StopRecord.from_json(stop.to_json()).to_json() == stop.to_json()


def test_moments_are_exact_whatever_the_order() -> None:
    d = _pairs(20, TAU)[0, :50]
    assert moments(d) == moments(d[::-1])
    mean, variance = moments(d)
    assert mean == pytest.approx(float(np.mean(d)), rel=1e-12)
    assert variance == pytest.approx(float(np.var(d, ddof=1)), rel=1e-12)


def test_half_width_is_the_research_notes_boundary_for_many_pairs() -> None:
    """For large t the exact boundary is the research notes' plug-in one (formula B2-2)."""
    t, rho, alpha = 100_000.0, RHO, 0.05
    plug_in = math.sqrt(2 * (t * rho**2 + 1) / (t * t * rho**2) * math.log(math.sqrt(t * rho**2 + 1) / alpha))
    assert float(half_width(1.0, t, 0.95)) == pytest.approx(plug_in, rel=1e-3)
    assert float(half_width(1.0, 4, 0.95)) == math.inf


def test_pairs_to_fit_a_band_as_wide_as_the_noise() -> None:
    assert pairs_to_fit(1.0, 1.0, 0.95) == 14
    assert float(half_width(1.0, 14, 0.95)) <= 1.0 < float(half_width(1.0, 13, 0.95))


def test_the_p_value_is_below_alpha_exactly_when_the_interval_excludes_1() -> None:
    """The anytime-valid p-value inverts the same martingale as the interval."""
    rule = _rule()
    agree, looks = 0, 0
    for row in _pairs(22, TAU, effect=0.01)[:20, :60]:
        for t in range(5, 61, 5):
            at = look(row[:t], rule)
            looks += 1
            agree += (at.p_value <= 0.05) == (at.low > 1.0 or at.high < 1.0)
    assert agree == looks
    assert look(np.zeros(8), rule).p_value == 1.0
