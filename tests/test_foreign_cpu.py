"""Code beyond Numba on the CPU: a PyTorch callable as a CPU variant, and the Triton kernels'
source under Triton's interpreter. Both skip where the optional library is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels.rmsnorm import EPS, reference
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.kernel import Variant
from perfdsl.runtime.correctness import check_variant
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import prepare_arms, sample

TESTS = Path(__file__).parent
SHAPE = {"M": 6, "N": 257}


def _torch_variants() -> tuple[Variant, Variant]:
    torch = pytest.importorskip("torch")

    def rmsnorm_torch(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> None:
        xt, wt = torch.from_numpy(x), torch.from_numpy(w)
        inv_rms = torch.rsqrt(xt.double().square().mean(dim=1, keepdim=True) + float(EPS))
        torch.mul(xt * wt, inv_rms.float(), out=torch.from_numpy(y))

    def rmsnorm_torch_copy(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> None:
        # Writes a new tensor and drops it: the output array is never written.
        xt, wt = torch.from_numpy(x), torch.from_numpy(w)
        y = (xt * wt / torch.sqrt(xt.square().mean(dim=1, keepdim=True) + float(EPS))).numpy()
        del y

    return Variant(name="torch", cpu=rmsnorm_torch), Variant(name="torch_copy", cpu=rmsnorm_torch_copy)


def test_a_pytorch_callable_is_a_cpu_variant_as_it_is() -> None:
    good, copy = _torch_variants()
    target = make_target("cpu")
    adversarial = [{"M": 1, "N": 1}, {"M": 3, "N": 4097}]
    results = {
        variant.name: check_variant(
            reference, variant, target, [SHAPE], adversarial, [0, 1], "float32", {"rel_l2": 1e-5}
        )
        for variant in (good, copy)
    }
    assert all(case.passed for case in results["torch"].cases), [c.message for c in results["torch"].cases]
    assert not any(case.passed for case in results["torch_copy"].cases)
    assert "never written" in results["torch_copy"].cases[0].message


def test_a_pytorch_cpu_variant_is_timed_like_any_other() -> None:
    good, _ = _torch_variants()
    target = make_target("cpu")
    arms = prepare_arms(target, reference, [good], SHAPE, "float32", requested_sets=2)
    settings = TimingSettings(
        warmup_calls=2, warmup_ms=0.0, warmup_cap_calls=4, warmup_cap_ms=50.0, repeats=3, blocks=2
    )
    record = sample(target, arms, settings)
    assert not record.timing.failures
    samples = [s for s in record.samples if s.arm == "torch"]
    assert len(samples) == 6 and all(s.valid and s.duration_ns > 0 for s in samples)
    # Consecutive calls rotate over the buffer sets, each bound once.
    assert len(arms[0].calls) >= 2
    assert len({s.buffer_set for s in samples}) == min(6, len(arms[0].calls))


def test_triton_kernels_compute_rmsnorm_under_the_interpreter() -> None:
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    env = {
        **os.environ,
        "TRITON_INTERPRET": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
    }
    run = subprocess.run(
        [sys.executable, str(TESTS / "triton_interpreter_check.py")],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [line.split() for line in run.stdout.splitlines()]
    assert len(lines) == 5
    for kernel, m, n, error, unwritten in lines:
        assert unwritten == "0", f"{kernel} {m}x{n} left {unwritten} outputs unwritten"
        assert float(error) <= 1e-6, f"{kernel} {m}x{n}: rel_l2 {error}"
