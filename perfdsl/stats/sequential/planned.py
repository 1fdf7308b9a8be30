"""Planned looks: the group-sequential design, O'Brien-Fleming boundaries and repeated confidence intervals.

The confidence sequence (`boundary`) pays for a look after every pair: at
the pairs a fixed design would spend, its interval is about 1.55x the fixed
interval's width, so a comparison whose truth sits at the band's edge runs to
its cap. A study that can size its cap (a spread from an earlier run, a pilot)
does better to look a few times only, at pair counts planned before the run:
with K looks and the last at the cap N, the O'Brien-Fleming design (O'Brien
and Fleming 1979; Jennison and Turnbull 2000, ch. 2) stops at look k when the
look's statistic leaves a band that narrows as information accrues,
|Z_k| > C / sqrt(t_k / N): constant on the scale of the running sum. At five
equally spaced looks and 95 % with a known spread, C = 2.040 against the
fixed design's 1.960, so the cap needs only about 1.03x a fixed design's
pairs for the same power, and the early looks stop large effects at a
fraction of it.

The verdicts rest on repeated confidence intervals (Jennison and Turnbull,
ch. 9): at look k, mean +- c_k s / sqrt(t_k), c_k the look's boundary. They
cover the truth at every planned look at once with probability 1 - alpha,
whatever stopped the measuring, so the band's verdicts (faster, slower, no
meaningful change) keep the stated error rate.

The spread is estimated from the pairs, as few as six at a first look, and
there the textbook conversion of each look's z boundary to Student's t at the
same tail (Jennison and Turnbull, sec. 11.1) is not enough: over 20,000
simulated A/A sequences it called 5.3-5.4 % changed at looks of 6-40 pairs.
So C is calibrated on the t statistics themselves: it is the 1 - alpha
quantile, over 2^18 seeded simulated normal sequences with the study's own
look schedule, of the band each sequence would just cross
(max_k z(|T_k|) sqrt(t_k / N), z(.) the normal quantile at T_k's own tail).
Each look's boundary is then C / sqrt(t_k / N) on the z scale, carried to t
at the look's degrees of freedom. The seed is fixed, so every plan of one
schedule computes the same C; the planner writes the boundaries into the
plan, and the run and the evaluation read them. The repeated p-value is the
same sample's share of bands at least as wide as the look's own. Each look
carries its boundary to t with scipy's special functions, so the evaluation
replays the run's stop bit for bit under the same scipy; a bundle run under
another may differ in the last bits, and its replay then says it differs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special

SEQUENCES = 1 << 18
"""Simulated sequences per schedule: the calibrated level is within 0.09 % of alpha at 95 % (two
standard errors), and a schedule's simulation takes under a second, once per process."""
SEED = 1979
"""The simulation's seed (the year of O'Brien and Fleming's paper): fixed, so a schedule's C is one number."""


def schedule(looks: int, min_pairs: int, max_pairs: int) -> tuple[int, ...]:
    """The planned pair counts: `looks` equally spaced up to `max_pairs`, none before `min_pairs`.

    Looks that would fall before the first allowed one are moved to it and merged,
    so the schedule may hold fewer than `looks` counts; the last is always the cap.
    """
    points = {max(min_pairs, math.ceil(k * max_pairs / looks)) for k in range(1, looks + 1)}
    return tuple(sorted(p for p in points if p <= max_pairs))


def _t_statistics(looks: tuple[int, ...], drift: float, sequences: int) -> np.ndarray:
    """Each simulated sequence's t statistic of the mean at each look (sequences x looks).

    Normal pairs of unit spread and mean `drift`, built segment by segment: a
    segment of n pairs adds a normal sum and, within it, a chi-square(n - 1)
    sum of squares; the sum of squares about the running mean follows. NaN at
    a look of fewer than two pairs (no spread).
    """
    rng = np.random.default_rng(SEED)
    sizes = np.diff((0, *looks))
    sums = rng.standard_normal((sequences, len(looks))) * np.sqrt(sizes) + drift * sizes
    within = np.stack([rng.chisquare(n - 1, sequences) if n > 1 else np.zeros(sequences) for n in sizes], 1)
    pairs = np.asarray(looks, dtype=float)
    running = np.cumsum(sums, axis=1)
    squares = np.cumsum(within + sums * sums / sizes, axis=1) - running * running / pairs
    with np.errstate(divide="ignore", invalid="ignore"):
        return (running / pairs) / np.sqrt(squares / ((pairs - 1.0) * pairs))


def _band_scale(statistics: np.ndarray, looks: Sequence[int]) -> np.ndarray:
    """|T| at each look carried to the z scale at the same tail, times sqrt(t_k / N): the band it reaches."""
    pairs = np.asarray(looks, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = special.ndtri(special.stdtr(pairs - 1.0, np.abs(statistics)))
    return np.where(pairs >= 2, z, -np.inf) * np.sqrt(pairs / pairs[-1])


_NULL_BANDS: dict[tuple[int, ...], np.ndarray] = {}


def _null_bands(looks: tuple[int, ...]) -> np.ndarray:
    """Under no change, the widest band each simulated sequence reaches over the looks, sorted;
    simulated once per schedule and process (the run looks, the evaluation replays)."""
    if looks not in _NULL_BANDS:
        reached = _band_scale(_t_statistics(looks, 0.0, SEQUENCES), looks)
        _NULL_BANDS[looks] = np.sort(np.nan_to_num(reached, nan=-np.inf).max(axis=1))
    return _NULL_BANDS[looks]


def prepare(looks: Sequence[int]) -> None:
    """Simulate a schedule's no-change bands now, so that its first look does not pause for it."""
    _null_bands(tuple(looks))


def band_constant(looks: tuple[int, ...], alpha: float) -> float:
    """C: crossed by a share alpha of the simulated no-change sequences, by the rest not.

    The m-th widest band, m = floor(alpha (n + 1)): a look whose band exceeds it has
    repeated p-value (1 + #wider) / (n + 1) <= alpha, and one at or below it does not.
    """
    bands = _null_bands(looks)
    widest = math.floor(alpha * (bands.size + 1))
    if widest < 1:
        return math.inf  # finer than the simulation resolves
    return float(bands[max(bands.size - widest, 0)])


def z_boundaries(looks: Sequence[int], confidence: float) -> tuple[float, ...]:
    """Each look's two-sided critical value on its own z scale, C / sqrt(t_k / N)."""
    constant = band_constant(tuple(looks), 1.0 - confidence)
    return tuple(constant / math.sqrt(t / looks[-1]) for t in looks)


def t_critical(z: float, pairs: int) -> float:
    """The look's boundary carried to Student's t with `pairs` - 1 degrees of freedom, same tail."""
    if pairs < 2 or not math.isfinite(z):
        return math.inf
    return float(special.stdtrit(pairs - 1, special.ndtr(z)))


def critical_at(pairs: int, looks: Sequence[int], boundaries: Sequence[float]) -> float:
    """The z boundary that judges `pairs`: the last planned look's at or before it, inf before the first."""
    found = math.inf
    for look, z in zip(looks, boundaries, strict=True):
        if look <= pairs:
            found = z
    return found


def half_width(variance: float, pairs: int, z: float) -> float:
    """The repeated confidence interval's log-scale half-width at a look with z boundary `z`."""
    if pairs < 2 or not variance >= 0:
        return math.inf
    return t_critical(z, pairs) * math.sqrt(variance / pairs)


def width_at(variance: float, pairs: int, looks: Sequence[int], boundaries: Sequence[float]) -> float:
    """`half_width` after `pairs` pairs, judged by the last planned look at or before them."""
    return half_width(variance, pairs, critical_at(pairs, looks, boundaries))


def repeated_p_value(mean: float, variance: float, pairs: int, looks: Sequence[int]) -> float:
    """The repeated p-value of no change at a planned look (Jennison and Turnbull, sec. 9.4): the
    smallest alpha whose repeated interval there excludes 0, (1 + #wider bands) / (n + 1) of the
    simulated no-change sequences. Valid however the run stopped, so Holm's adjustment may take it."""
    if pairs < 2 or not variance > 0:
        return 1.0
    statistic = np.array([[mean / math.sqrt(variance / pairs)]])
    reached = float(_band_scale(statistic, (pairs,))[0, 0]) * math.sqrt(pairs / looks[-1])
    bands = _null_bands(tuple(looks))
    wider = bands.size - int(np.searchsorted(bands, reached, side="left"))
    return (1 + wider) / (bands.size + 1)


def power(looks: tuple[int, ...], confidence: float, drift: float) -> float:
    """The chance that the repeated interval lies wholly above 0 at some look, for pairs whose
    mean is `drift` spreads (on one side: a change beyond the band's edge by that much)."""
    statistics = _t_statistics(looks, drift, SEQUENCES >> 2)
    crossed = (statistics > 0) & (_band_scale(statistics, looks) > band_constant(looks, 1.0 - confidence))
    return float(np.mean(np.any(crossed, axis=1)))


def cap_for_power(drift: float, looks: int, min_pairs: int, confidence: float, target: float = 0.8) -> int:
    """The fewest pairs N whose `looks` planned looks up to N reach `target` power at `drift`
    (the effect beyond the band's edge, in pair spreads): how a study sizes its cap from a pilot."""
    low, high = max(min_pairs, 2), max(min_pairs, 4)
    while power(schedule(looks, min_pairs, high), confidence, drift) < target:
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (
            (low, mid) if power(schedule(looks, min_pairs, mid), confidence, drift) >= target else (mid, high)
        )
    return high
