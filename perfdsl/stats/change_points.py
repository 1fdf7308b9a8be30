"""Where a series of ratios over commits stepped: binary segmentation with a simulated threshold.

Each run gives one log ratio y_i and its standard error s_i (from its own
within-run interval). Runs also differ by more than their within-run error
(code layout, a rebooted machine), so every run's variance is s_i^2 + tau^2,
with tau, the spread between runs, estimated from the series itself: from
successive differences d_i = y_{i+1} - y_i, each of which has variance
s_i^2 + s_{i+1}^2 + 2 tau^2. Each pair's excess, max(0, (d_i^2 / m - s_i^2 -
s_{i+1}^2) / 2) with m the median of chi-square(1), estimates tau^2, and tau^2
is their median: a step spoils one difference, not the median. With few runs
that median is uncertain, and a tau drawn too small would make ordinary
spread look like a step, so the null is simulated at two values, the median
and the upper quartile of the excesses, and the larger p-value is kept
(maximising over plausible values of a nuisance parameter, after Berger and
Boos 1994).

The scan is the likelihood ratio for one mean shift in Gaussian data with
known variances: at split k, T_k = (mean_left - mean_right)^2 /
(1 / W_left + 1 / W_right), weighted means with weights 1 / variance. Its
maximum over k is not chi-square(1) (the split is chosen by the data), so its
null distribution is simulated: whole series with no step, drawn with the
same standard errors and tau, put through the same procedure (tau estimated
again, the same scan), and the observed maximum gets the Monte Carlo p-value
(1 + #{simulated >= observed}) / (1 + simulations). A step is reported when
p <= alpha. In a series with no step, any report needs the first scan to
reject, so the chance of reporting one or more steps is alpha: the stated
family-wise false-alarm rate over the whole series. After a step is found,
each side is searched again (binary segmentation, Vostrikova 1981) at the same
rate, with tau estimated again from that segment alone (the spread between
runs need not be the same all along a history) and its threshold simulated
for that segment.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

_CHI2_1_MEDIAN = 0.45493642311957283
"""The median of chi-square with one degree of freedom (of a squared standard normal)."""

_FEWEST = 3
"""The fewest runs a segment needs to be searched: with two, their one difference is all that
estimates the spread between runs, and it absorbs any step between them."""
_TIES = 1.0 - 1e-9
"""Simulated maxima this close below the observed one count as reaching it: a statistic that takes
one value exactly (a spread estimate absorbing a difference) must not win its ties by rounding."""


@attrs.frozen
class Step:
    """A change of level between two neighbouring runs of a series."""

    index: int
    """The first run (0-based, in series order) of the new level."""
    before: float
    """The weighted mean log ratio of the segment that ends at index - 1."""
    after: float
    """The weighted mean log ratio of the segment that starts at index."""
    p_value: float
    """Monte Carlo p-value of the scan that found it, within its segment."""

    @property
    def relative(self) -> float:
        """The step as a relative change of the ratio (0.05 is 5 % higher after)."""
        return float(np.expm1(self.after - self.before))


@attrs.frozen
class ChangePoints:
    """The steps of one series, oldest first, and what the search assumed."""

    steps: tuple[Step, ...]
    false_alarm: float
    """The family-wise false-alarm rate of a series with no step."""
    tau: float
    """The spread between runs (log scale) estimated from the whole series."""
    simulations: int
    runs: int


def find_steps(
    log_ratios: Sequence[float],
    standard_errors: Sequence[float],
    *,
    false_alarm: float = 0.05,
    simulations: int = 2000,
    seed: int = 0,
) -> ChangePoints:
    """The steps in a series of log ratios with their standard errors (seeded, so reproducible)."""
    y = np.asarray(log_ratios, dtype=float)
    s = np.asarray(standard_errors, dtype=float)
    if y.ndim != 1 or y.shape != s.shape:
        raise ValueError("need one standard error per log ratio")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError("log ratios must be finite and standard errors finite and positive")
    if not 0.0 < false_alarm < 1.0 or simulations < 1:
        raise ValueError("false_alarm must be in (0, 1) and simulations at least 1")
    n = y.size
    if n < _FEWEST:
        return ChangePoints((), false_alarm, 0.0, simulations, n)
    rng = np.random.default_rng(seed)
    tau = float(np.sqrt(np.median(_excess(y[None, :], s)[0])))
    steps: list[Step] = []
    segments = [(0, n)]
    while segments:
        a, b = segments.pop()
        if b - a < _FEWEST:
            continue
        excess = _excess(y[None, a:b], s[a:b])[0]
        tau2 = float(np.median(excess))
        plausible = (tau2, max(tau2, float(np.quantile(excess, 0.75))))
        v = s[a:b] ** 2 + tau2
        stats = _scan(y[None, a:b], v[None, :])[0]
        k = int(np.argmax(stats))
        p = max(
            float(np.count_nonzero(_null_maxima(rng, s[a:b], t2, simulations) >= stats[k] * _TIES) + 1)
            / (1 + simulations)
            for t2 in plausible
        )
        if p > false_alarm:
            continue
        split = a + k + 1
        steps.append(Step(split, _mean(y[a:split], v[: k + 1]), _mean(y[split:b], v[k + 1 :]), p))
        segments += [(a, split), (split, b)]
    steps.sort(key=lambda step: step.index)
    return ChangePoints(tuple(steps), false_alarm, tau, simulations, n)


def _excess(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Each successive pair's variance beyond its runs' own errors, per row of y (series in rows)."""
    d2 = np.diff(y, axis=1) ** 2
    own = s[:-1] ** 2 + s[1:] ** 2
    return np.maximum(0.0, (d2 / _CHI2_1_MEDIAN - own) / 2.0)


def _scan(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """T_k for every split k of every row: the left part is columns 0..k, the right the rest."""
    w = 1.0 / v
    wl = np.cumsum(w, axis=1)[:, :-1]
    sl = np.cumsum(w * y, axis=1)[:, :-1]
    wt = w.sum(axis=1, keepdims=True)
    st = (w * y).sum(axis=1, keepdims=True)
    wr, sr = wt - wl, st - sl
    return (sl / wl - sr / wr) ** 2 / (1.0 / wl + 1.0 / wr)


def _null_maxima(rng: np.random.Generator, s: np.ndarray, tau2: float, simulations: int) -> np.ndarray:
    """The scan's maximum over segments drawn with no step, tau estimated again from each."""
    y = rng.standard_normal((simulations, s.size)) * np.sqrt(s**2 + tau2)
    tau2_sim = np.median(_excess(y, s), axis=1)
    return _scan(y, s[None, :] ** 2 + tau2_sim[:, None]).max(axis=1)


def _mean(y: np.ndarray, v: np.ndarray) -> float:
    w = 1.0 / v
    return float((w * y).sum() / w.sum())
