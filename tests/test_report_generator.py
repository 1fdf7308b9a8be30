"""The goodput table says how the load generator kept its schedule, in words its numbers bear out."""

from __future__ import annotations

from types import SimpleNamespace

from perfdsl.report.end_to_end import _generator


def _point(rate: float, verdict: str, p99: float) -> SimpleNamespace:
    lag = SimpleNamespace(verdict=verdict, p99=p99, backlog_growth=0.0)
    return SimpleNamespace(rate=rate, result=SimpleNamespace(generator=lag))


def test_a_generator_that_woke_late_is_not_said_to_have_kept_up() -> None:
    # Beside a 10 ms SLO the table said "kept up (issue-lag p99 up to 93.0 ms)".
    late = _generator([_point(18.8, "on time", 0.0004), _point(37.5, "jitter", 0.093)])
    assert late == "woke late, not behind (issue-lag p99 up to 93 ms)"
    assert _generator([_point(18.8, "on time", 0.0004)]) == "on time (issue-lag p99 up to 400 µs)"
