"""Environment capture: complete on a CPU-only machine, read-only and exception-free on any.

NVML is replaced by a fake for the GPU paths, so they are exercised here too;
the fake has no setter at all, so a call that changed a GPU setting would fail.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from perfdsl.bundle.environment import EnvironmentRecord
from perfdsl.bundle.sampling import BlockReading
from perfdsl.runtime import environment
from perfdsl.runtime.environment import (
    capture_environment,
    clock_event_reason_names,
    git_info,
    parse_nvidia_smi,
    read_clocks,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def git_repository(tmp_path: Path) -> Path:
    """A repository of one commit, made here: the tests also run from a tarball, outside any work tree."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repository = tmp_path / "repository"
    repository.mkdir()
    (repository / "kernel.py").write_text("x = 1\n")
    identity = ["-c", "user.name=perfdsl", "-c", "user.email=perfdsl@example.invalid"]
    for command in (["init", "-q"], ["add", "kernel.py"], [*identity, "commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(repository), *command], check=True, capture_output=True)
    return repository


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine with neither NVML nor nvidia-smi, whatever this one has."""
    monkeypatch.setattr(environment, "_nvml", lambda: (None, "NVML unavailable: test"))
    monkeypatch.setattr(environment, "_nvml_handle", lambda index: (None, "NVML unavailable: test"))
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)


def test_capture_without_a_gpu_is_complete_and_json(git_repository, no_gpu):
    env = capture_environment(git_repository, argv=["perfdsl", "run", "study.perf"])
    assert json.loads(json.dumps(env)) == env
    assert env["gpu"] is None
    assert "NVML unavailable" in env["gpu_missing"]
    assert "nvidia-smi" in env["gpu_missing"]
    assert env["command_line"] == ["perfdsl", "run", "study.perf"]
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert env["cpu"]["logical_cores"] >= 1
    assert env["cpu"]["usable_cores"] >= 1
    assert env["cpu"]["memory_bytes"] > 0
    assert env["cpu"]["model"]
    assert env["os"]["system"]
    for package in ("numba", "numba-cuda", "numpy", "llvmlite"):
        assert env["packages"][package], package
    assert env["git"]["commit"]


def test_capture_on_this_machine_never_raises():
    env = capture_environment()
    json.dumps(env)
    assert env["git"] is None
    assert (env["gpu"] is None) == (env["gpu_missing"] is not None)


def test_clock_reading_without_a_gpu_is_all_none(no_gpu):
    reading = read_clocks()
    assert isinstance(reading, BlockReading)
    assert reading.sm_clock_mhz is None and reading.mem_clock_mhz is None
    assert reading.power_w is None and reading.temperature_c is None
    assert reading.clock_event_reasons is None
    assert reading.missing == "NVML unavailable: test"


def test_clock_readings_reuse_one_nvml_handle():
    """Cheap enough for every timing block: NVML is initialised and looked up once."""
    from perfdsl.runtime import environment

    read_clocks()
    before = environment._nvml_handle.cache_info()
    for _ in range(10):
        read_clocks()
    after = environment._nvml_handle.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 10


def test_git_info_for_the_repository_and_outside_one(git_repository, tmp_path):
    info = git_info(git_repository / "kernel.py")
    expected = subprocess.run(
        ["git", "-C", str(git_repository), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert info["commit"] == expected and len(expected) == 40
    assert Path(info["root"]).resolve() == git_repository.resolve()
    assert info["dirty"] is False
    (git_repository / "new_kernel.py").write_text("y = 2\n")
    assert git_info(git_repository)["dirty"] is True
    outside = tmp_path / "outside"
    outside.mkdir()
    assert git_info(outside) is None
    assert git_info(outside / "missing" / "file.py") is None


class _FakeNvmlError(Exception):
    pass


class _FunctionNotFound(_FakeNvmlError):
    pass


def _fake_nvml() -> types.SimpleNamespace:
    """An H200 as NVML describes it, whose driver lacks the new temperature call and power.

    Written by hand from the NVML API reference beside the code it tests, not
    recorded from a driver (see tests/fixtures/README.md).
    """

    def not_supported(*args):
        raise _FakeNvmlError("Not Supported")

    def missing(*args):
        raise _FunctionNotFound("Function Not Found")

    clocks = {1: 1980, 2: 3201}
    return types.SimpleNamespace(
        NVMLError=_FakeNvmlError,
        NVMLError_FunctionNotFound=_FunctionNotFound,
        NVML_CLOCK_SM=1,
        NVML_CLOCK_MEM=2,
        NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: None,
        nvmlSystemGetDriverVersion=lambda: "590.48",
        nvmlSystemGetCudaDriverVersion=lambda: 13010,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda index: f"gpu{index}",
        nvmlDeviceGetName=lambda h: b"NVIDIA H200",
        nvmlDeviceGetUUID=lambda h: "GPU-1234",
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(total=150_000_000_000),
        nvmlDeviceGetClockInfo=lambda h, kind: clocks[kind],
        nvmlDeviceGetMaxClockInfo=lambda h, kind: clocks[kind] + 10,
        nvmlDeviceGetPowerUsage=not_supported,
        nvmlDeviceGetEnforcedPowerLimit=lambda h: 700_000,
        nvmlDeviceGetPerformanceState=lambda h: 0,
        nvmlDeviceGetCurrentClocksEventReasons=missing,
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x5,
        nvmlDeviceGetTemperatureV=missing,
        nvmlDeviceGetTemperature=lambda h, sensor: 41,
        nvmlDeviceGetMigMode=lambda h: [0, 0],
        nvmlDeviceGetPersistenceMode=lambda h: 1,
    )


@pytest.fixture
def fake_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml())
    environment._nvml.cache_clear()
    environment._nvml_handle.cache_clear()
    yield
    environment._nvml.cache_clear()
    environment._nvml_handle.cache_clear()


def test_gpu_capture_through_nvml(fake_nvml):
    env = capture_environment()
    json.dumps(env)
    gpu = env["gpu"]
    assert env["gpu_missing"] is None
    assert gpu["source"] == "nvml"
    assert gpu["driver_version"] == "590.48"
    assert gpu["cuda_driver_version"] == "13.1"
    (device,) = gpu["devices"]
    assert device["name"] == "NVIDIA H200"
    assert device["sm_clock_mhz"] == 1980 and device["max_sm_clock_mhz"] == 1990
    assert device["mem_clock_mhz"] == 3201 and device["max_mem_clock_mhz"] == 3211
    assert device["power_limit_w"] == 700.0
    assert device["power_w"] is None
    assert device["unavailable"] == {"power_w": "Not Supported"}
    assert device["performance_state"] == "P0"
    assert device["clock_event_reasons"] == 0x5
    assert device["clock_event_reason_names"] == ["gpu_idle", "sw_power_cap"]
    assert device["temperature_c"] == 41
    assert device["mig_mode"] == "disabled"
    assert device["persistence_mode"] == "enabled"


def test_clock_reading_through_nvml(fake_nvml):
    reading = read_clocks(0)
    assert reading.sm_clock_mhz == 1980 and reading.mem_clock_mhz == 3201
    assert reading.clock_event_reasons == 0x5 and reading.temperature_c == 41
    assert reading.power_w is None
    assert reading.missing == "power_w: Not Supported"


def test_parse_nvidia_smi():
    line = (
        "0, NVIDIA H200, GPU-1234, 590.48, 143771, 1980, 3201, 1980, 3201, 118.52, 700.00, "
        "P0, 0x0000000000000004, 38, [N/A], Disabled\n"
    )
    (device,) = parse_nvidia_smi(line)
    assert device["index"] == 0 and device["name"] == "NVIDIA H200"
    assert device["memory_total_bytes"] == 143771 * 1024 * 1024
    assert device["sm_clock_mhz"] == 1980 and device["power_w"] == 118.52
    assert device["clock_event_reasons"] == 4
    assert device["clock_event_reason_names"] == ["sw_power_cap"]
    assert device["mig_mode"] is None
    assert device["persistence_mode"] == "disabled"


def test_clock_event_reason_names_keeps_unknown_bits():
    assert clock_event_reason_names(0) == ()
    assert clock_event_reason_names(0x41) == ("gpu_idle", "hw_thermal_slowdown")
    assert clock_event_reason_names(0x1000) == ("0x1000",)


def test_the_record_reads_what_the_report_shows_from_a_capture(git_repository, no_gpu):
    captured = capture_environment(git_repository, argv=["perfdsl", "run", "s.perf"])
    record = EnvironmentRecord.from_json(captured)
    assert record.command_line == ("perfdsl", "run", "s.perf")
    assert record.python == f"{platform.python_implementation()} {platform.python_version()}"
    assert record.system.startswith(platform.system()) and record.cpu_model
    assert record.usable_cores is not None and record.usable_cores >= 1
    assert record.gpu is None and record.gpu_missing and "NVML unavailable" in record.gpu_missing
    assert dict(record.packages)["numpy"] == np.__version__
    assert [name for name, _ in record.packages] == sorted(name for name, _ in record.packages)
    assert record.commit and record.dirty is False


def test_the_gpu_is_described_by_its_devices_and_driver(fake_nvml):
    record = EnvironmentRecord.from_json(capture_environment())
    assert record.gpu is not None and record.gpu_missing is None
    assert record.gpu.description == "NVIDIA H200, driver 590.48, CUDA 13.1"


def test_an_edited_kernel_module_is_a_difference_between_two_runs(tmp_path, monkeypatch):
    # Outside a repository `compare` said "no difference in the recorded machine, software and
    # settings" between runs whose kernel module had been edited.
    from perfdsl.bundle.environment import differences
    from perfdsl.runtime.environment import module_sources

    module = tmp_path / "edited_kernels.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "edited_kernels", raising=False)
    recorded = []
    for body in ("SCALE = 2\n", "SCALE = 3\n"):
        module.write_text(body)
        monkeypatch.setitem(sys.modules, "edited_kernels", types.ModuleType("edited_kernels"))
        sys.modules["edited_kernels"].__file__ = str(module)
        sources = module_sources(["edited_kernels:fused", "edited_kernels:reference", "not_imported:x"])
        assert list(sources) == ["edited_kernels"] and sources["edited_kernels"]["path"] == str(module)
        recorded.append(EnvironmentRecord.from_json({"sources": sources}))
    (said,) = differences(*recorded)
    assert said.startswith("source of edited_kernels (SHA-256): ") and " -> " in said
    assert differences(recorded[0], recorded[0]) == []
