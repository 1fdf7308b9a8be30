"""The CUDA path under Numba's simulator, in a child process (the simulator must be
chosen before numba.cuda is first imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent

SCRIPT = r"""
import json
import numpy as np
import runtime_cuda_fixtures as cfx
import runtime_fixtures as fx
from perfdsl.runtime.correctness import check_variant, compare_application
from perfdsl.runtime.targets import TargetError, gpu_available, make_target
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.runtime.timing import prepare_arms, sample

target = make_target("cudasim")
workload, adversarial = [{"M": 2, "N": 64}], [{"M": 3, "N": 31}, {"M": 1, "N": 1}]
tol = {"rel_l2": 1e-6, "max_abs": 1e-5}
out = {"name": target.name, "gpu_available": gpu_available()}
try:
    make_target("cuda")
except TargetError as error:
    out["cuda_refused"] = str(error)
for variant in (cfx.good, cfx.off_by_one):
    result = check_variant(fx.reference, variant, target, workload, adversarial, [0, 1],
                           np.float32, tol)
    out[variant.name] = [[dict(c.shape), c.seed, c.kind, c.passed, c.message, c.deterministic]
                         for c in result.cases]
app = compare_application(fx.application, fx.reference, cfx.good, target, {"M": 2, "N": 16}, 0,
                          np.float32, {"rel_l2": 1e-5})
out["app"] = [app.passed, app.target, app.message]
arms = prepare_arms(target, fx.reference, [cfx.good, cfx.off_by_one], {"M": 1, "N": 32},
                    np.float32, requested_sets=2)
record = sample(target, arms, TimingSettings(warmup_calls=1, warmup_ms=0, repeats=2, blocks=2))
out["timing"] = {
    "valid": record.timing.timings_valid,
    "samples": len(record.samples),
    "any_sample_valid": any(s.valid for s in record.samples + record.overhead),
    "order": list(record.timing.order),
    "sets": [r.sets for r in record.timing.rotation],
    "failures": len(record.timing.failures),
}
print(json.dumps(out))
"""


def test_cuda_kernels_under_simulator():
    env = {
        **os.environ,
        "NUMBA_ENABLE_CUDASIM": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)]),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["name"] == "cudasim" and out["gpu_available"] is False
    assert "use the `cudasim` target" in out["cuda_refused"]

    good = out["good_cuda"]
    assert len(good) == 6 and all(case[3] for case in good)
    assert all(case[5] is True for case in good)  # second call bit-identical
    # 93 elements: three blocks of 32, the last one partial; the broken kernel misses one.
    broken = out["off_by_one_cuda"]
    assert len(broken) == 6 and not any(case[3] for case in broken)
    assert [{"M": 3, "N": 31}, 1, "adversarial", False, "1 element(s) of `out` never written", True] in broken

    assert out["app"] == [True, "cudasim", ""]
    timing = out["timing"]
    assert timing["valid"] is False and timing["any_sample_valid"] is False
    assert timing["samples"] == 2 * 2 * 2 and timing["failures"] == 0
    assert timing["order"] == ["good_cuda", "off_by_one_cuda", "off_by_one_cuda", "good_cuda"]
    assert timing["sets"] == [2, 2]  # the simulator rotates only as asked
