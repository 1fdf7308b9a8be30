"""Target adapters without a GPU: poisoning, cache sizes, target selection, the CPU path."""

from __future__ import annotations

import numpy as np
import pytest
import runtime_fixtures as fx

from perfdsl.runtime import targets
from perfdsl.runtime.targets import (
    FALLBACK_LLC_BYTES,
    Target,
    TargetError,
    gpu_available,
    is_poison,
    last_level_cache_bytes,
    make_target,
    poison_value,
)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
def test_poison_detects_unwritten_elements(dtype):
    target = Target()
    (out,) = target.alloc({"y": (5,)}, dtype).values()
    target.poison({"y": out})
    assert is_poison(out).all()
    out[2] = 0
    assert is_poison(out).tolist() == [True, True, False, True, True]


def test_computed_nan_is_not_mistaken_for_poison():
    assert np.isnan(poison_value(np.float32))
    with np.errstate(invalid="ignore"):
        hardware_nan = np.float32(0) / np.float32(0)
    computed = np.array([np.nan, np.inf, -np.nan, hardware_nan], np.float32)
    assert not is_poison(computed).any()


def test_last_level_cache_from_sysfs(tmp_path):
    for i, (level, size) in enumerate([(1, "32K"), (2, "512K"), (3, "32768K")]):
        (tmp_path / f"index{i}").mkdir()
        (tmp_path / f"index{i}" / "level").write_text(f"{level}\n")
        (tmp_path / f"index{i}" / "size").write_text(f"{size}\n")
    assert last_level_cache_bytes(tmp_path) == 32 * 1024 * 1024
    assert last_level_cache_bytes(tmp_path / "missing") == FALLBACK_LLC_BYTES


def test_cpu_target_runs_and_copies():
    target = Target()
    host = fx.reference.inputs({"M": 2, "N": 3}, np.random.default_rng(0), np.float32)
    arrays = {**target.to_device(host), **target.alloc({"out": (2, 3)}, np.float32)}
    assert arrays["x"] is not host["x"] and np.array_equal(arrays["x"], host["x"])
    target.poison({"out": arrays["out"]})
    target.run(target.bind(fx.good, arrays))
    out = target.to_host({"out": arrays["out"]})["out"]
    assert np.allclose(out, host["x"] * host["w"] + 1)
    timed = target.time(target.empty_call())
    assert timed.valid and timed.duration_ns >= 0


def test_variant_without_target_callable_is_refused():
    with pytest.raises(TargetError, match="no `cpu` implementation"):
        Target().op(type(fx.good)("gpu_only"))


def test_auto_picks_cpu_without_gpu(monkeypatch):
    """Whether or not this machine has a GPU: the test stands in for one that has none."""
    monkeypatch.setattr(targets, "gpu_available", lambda: False)
    assert make_target("auto").name == "cpu"


@pytest.mark.skipif(gpu_available(), reason="this machine has a usable CUDA GPU")
def test_cuda_refuses_without_a_gpu():
    with pytest.raises(TargetError, match="no usable CUDA GPU"):
        make_target("cuda")


def test_simulator_and_unknown_targets_are_refused():
    with pytest.raises(TargetError, match="NUMBA_ENABLE_CUDASIM=1"):
        make_target("cudasim")
    with pytest.raises(TargetError, match="unknown target"):
        make_target("tpu")
