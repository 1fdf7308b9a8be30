"""The planted studies' own stopping rules reach the verdicts their planted effects call for.

studies/planted_slower.perf's change sweeps ceil(M / 50) rows more than the
baseline's M (`kernels.planted.REPEATED_SHARE`), studies/planted_null.perf's is
the baseline's own loop. Here the sampler runs each study's planned rule (its
threshold, its family's share of the error rate, its window) and block size on
calls whose durations are the rows each arm sweeps at the study's shapes, times
seeded log-normal noise of a quiet machine: no clock, so the truth is known and
nothing depends on the machine's speed. A full run of the studies measures the
real kernels (`perfdsl run studies/planted_slower.perf`).
"""

from __future__ import annotations

import math

import pytest
from bundled_studies import ROOT
from test_sequential_run import PlantedTarget, planted_arm

from kernels.planted import REPEATED_SHARE
from perfdsl.bundle.stopping import DECIDED
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime.timing import TimingSettings, sample
from perfdsl.source import Source

pytestmark = pytest.mark.slow  # simulates each study's sequential rule to its stop

CALL_NOISE = 0.05
"""Log-normal spread of one call: block medians of 20 calls then vary by about 1.5 %."""


@pytest.mark.parametrize(
    ("study", "repeated", "verdict"),
    [("planted_slower", True, "slower"), ("planted_null", False, "no meaningful change")],
)
def test_the_planted_effect_is_decided_before_the_cap(study: str, repeated: bool, verdict: str) -> None:
    parsed = parse(Source.read(ROOT / "studies" / f"{study}.perf"))
    assert parsed.study is not None
    timing = plan(parsed.study, "cpu", quick=False).timing
    rule = timing.stopping
    assert rule is not None and rule.threshold == 0.01
    settings = TimingSettings(
        warmup_calls=2,
        warmup_ms=0.0,
        warmup_cap_calls=4,
        warmup_cap_ms=1.0,
        repeats=timing.repeats,
        blocks=rule.max_pairs,
        stopping=rule,
    )
    (operation,) = plan(parsed.study, "cpu", quick=False).operations
    for index, shape in enumerate(operation.shapes):
        rows = shape.sizes["M"]
        swept = rows + (math.ceil(rows / REPEATED_SHARE) if repeated else 0)
        arms = [
            planted_arm("baseline", 2 * index + 1, 1.0, CALL_NOISE),
            planted_arm("change", 2 * index + 2, swept / rows, CALL_NOISE),
        ]
        stop = sample(PlantedTarget(), arms, settings).timing.stop
        assert stop is not None and (stop.reason, stop.verdict) == (DECIDED, verdict), (shape.label, stop)
        assert stop.pairs < rule.max_pairs
