"""The sampler records each arm's cache regime: a reused scratch that fits the cache makes it mixed."""

from __future__ import annotations

import numpy as np
import pytest
import runtime_fixtures as fx

from perfdsl.bundle.sampling import CACHE, MIXED, TimingSettings
from perfdsl.kernel import Variant
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import prepare_arms, sample


class _SmallCache(Target):
    """A CPU target whose cache is 4 KiB, so a 16x16 shape's rotation exceeds it."""

    def cache_bytes(self) -> int:
        return 4096


@pytest.mark.slow
def test_reused_scratch_that_fits_the_cache_is_recorded_as_mixed():
    plain = Variant(name="plain", cpu=fx.good.cpu)
    scratchy = Variant(name="scratchy", cpu=fx.good.cpu, scratch_bytes=lambda shape: 1024)
    target = _SmallCache()
    arms = prepare_arms(target, fx.reference, [plain, scratchy], {"M": 16, "N": 16}, np.float32, 1)
    record = sample(target, arms, TimingSettings(warmup_calls=1, warmup_ms=0.0, repeats=1, blocks=1))
    regimes = {r.arm: r.regime for r in record.timing.rotation}
    assert regimes == {"plain": "dram", "scratchy": MIXED}
    assert [r.scratch_bytes for r in record.timing.rotation] == [0, 1024]
    tiny = prepare_arms(Target(), fx.reference, [plain], {"M": 2, "N": 2}, np.float32, 1)
    record = sample(Target(), tiny, TimingSettings(warmup_calls=1, warmup_ms=0.0, repeats=1, blocks=1))
    assert record.timing.rotation[0].regime == CACHE  # 256 sets of a few bytes fit any cache
