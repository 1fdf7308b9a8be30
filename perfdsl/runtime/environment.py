"""The machine a run was measured on, recorded rather than assumed.

`capture_environment` goes into every bundle: GPU, driver, clocks, power, clock-event
(throttle) reasons, MIG and persistence mode; CPU (with its frequency, SMT and isolation
state, `runtime.machine_state`), memory, OS; Python and library versions; the
command line; the git commit of the code. `read_clocks` is the cheap snapshot taken
at the start and end of every timing block, so a block run at a lower clock, or
under a power cap, can be told apart from a slower kernel.

Everything here only *reads*. perfdsl never sets clocks, power limits or modes on a
GPU (a lent GPU is not ours to reconfigure), so only NVML `Get` calls are made.
A missing GPU, driver or tool is never an exception: the field is None and a
`*_missing` field, or the `unavailable` map, says why. NVML (nvidia-ml-py) is
preferred; `nvidia-smi` is the fallback, since NVML is the stable interface and
nvidia-smi's output is not guaranteed to stay compatible.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from perfdsl.bundle.sampling import BlockReading

PACKAGES = (
    "numba",
    "numba-cuda",
    "numpy",
    "llvmlite",
    "scipy",
    "cuda-bindings",
    "nvidia-nvjitlink",
    "nvidia-nvvm",
    "nvidia-cuda-nvdisasm",
    "nvidia-ml-py",
)
"""Distributions whose versions can change a measurement or the compiled code."""

ENVIRONMENT_PREFIXES = ("CUDA_", "NUMBA_", "OMP_", "MKL_", "OPENBLAS_")
"""Environment variables that change which device is used or how code is compiled."""

CLOCK_EVENT_REASONS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)
"""NVML's clock-event reason bits (nvmlClocksEventReason*, formerly *ThrottleReason*)."""

_SUBPROCESS_TIMEOUT_S = 10


def clock_event_reason_names(mask: int) -> tuple[str, ...]:
    """The named reasons set in an NVML clock-event bitmask; unknown bits as hex."""
    names = tuple(name for bit, name in CLOCK_EVENT_REASONS if mask & bit)
    known = sum(bit for bit, _ in CLOCK_EVENT_REASONS)
    return names + ((hex(mask & ~known),) if mask & ~known else ())


@functools.cache
def _nvml() -> tuple[Any, str | None]:
    """pynvml, initialised once per process, or None and why not.

    Never shut down: NVML's init is reference counted and cheap to keep, and every
    clock reading reuses it.
    """
    try:
        import pynvml
    except ImportError as error:
        return None, f"nvidia-ml-py not installed ({error})"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return None, f"NVML unavailable: {error}"
    return pynvml, None


@functools.cache
def _nvml_handle(index: int) -> tuple[Any, str | None]:
    nvml, missing = _nvml()
    if nvml is None:
        return None, missing
    try:
        return nvml.nvmlDeviceGetHandleByIndex(index), None
    except nvml.NVMLError as error:
        return None, f"NVML has no GPU {index}: {error}"


def _nvml_fields(nvml: Any, calls: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Call each zero-argument reader; a failure (not supported, no permission) is a reason."""
    values: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    for field, call in calls.items():
        try:
            values[field] = call()
        except nvml.NVMLError as error:
            values[field] = None
            unavailable[field] = str(error)
    return values, unavailable


def _temperature(nvml: Any, handle: Any) -> int:
    """GPU temperature in C: nvmlDeviceGetTemperatureV, or the call it replaces on old drivers."""
    try:
        return nvml.nvmlDeviceGetTemperatureV(handle, nvml.NVML_TEMPERATURE_GPU)
    except nvml.NVMLError_FunctionNotFound:
        return nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)


def _clock_event_reasons(nvml: Any, handle: Any) -> int:
    """The active clock-event bitmask, under its CUDA 13 name or the older throttle name."""
    try:
        return nvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
    except nvml.NVMLError_FunctionNotFound:
        return nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)


def read_clocks(index: int = 0) -> BlockReading:
    """Read SM and memory clocks, power, clock-event reasons and temperature of one GPU.

    `index` is NVML's numbering (all GPUs, whatever CUDA_VISIBLE_DEVICES says).
    A handful of NVML calls on a cached handle: cheap enough for every timing
    block. Without NVML every field is None; nvidia-smi is not tried, since a
    process start per block would cost more than the blocks it describes. The
    reading is the block's record (`bundle.sampling.BlockReading`), its load
    left for `runtime.contention.read_load`.
    """
    now = time.monotonic()
    handle, missing = _nvml_handle(index)
    if handle is None:
        return BlockReading(now, missing=missing)
    nvml, _ = _nvml()
    values, unavailable = _nvml_fields(
        nvml,
        {
            "sm_clock_mhz": lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM),
            "power_w": lambda: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            "clock_event_reasons": lambda: _clock_event_reasons(nvml, handle),
            "temperature_c": lambda: _temperature(nvml, handle),
        },
    )
    reason = "; ".join(f"{k}: {v}" for k, v in unavailable.items()) or None
    return BlockReading(now, **values, missing=reason)


def _decode(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _nvml_gpus() -> tuple[dict[str, Any] | None, str | None]:
    nvml, missing = _nvml()
    if nvml is None:
        return None, missing
    system, unavailable = _nvml_fields(
        nvml,
        {
            "driver_version": lambda: _decode(nvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": lambda: nvml.nvmlSystemGetCudaDriverVersion(),
            "count": lambda: nvml.nvmlDeviceGetCount(),
        },
    )
    if system["cuda_driver_version"] is not None:  # 13000 -> "13.0"
        version = system["cuda_driver_version"]
        system["cuda_driver_version"] = f"{version // 1000}.{version % 1000 // 10}"
    devices = []
    for index in range(system.pop("count") or 0):
        handle, why = _nvml_handle(index)
        if handle is None:
            devices.append({"index": index, "missing": why})
            continue
        device, device_unavailable = _nvml_fields(
            nvml,
            {
                "name": lambda h=handle: _decode(nvml.nvmlDeviceGetName(h)),
                "uuid": lambda h=handle: _decode(nvml.nvmlDeviceGetUUID(h)),
                "memory_total_bytes": lambda h=handle: nvml.nvmlDeviceGetMemoryInfo(h).total,
                "sm_clock_mhz": lambda h=handle: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM),
                "mem_clock_mhz": lambda h=handle: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM),
                "max_sm_clock_mhz": lambda h=handle: nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM),
                "max_mem_clock_mhz": lambda h=handle: nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_MEM),
                "power_w": lambda h=handle: nvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                "power_limit_w": lambda h=handle: nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                "performance_state": lambda h=handle: f"P{nvml.nvmlDeviceGetPerformanceState(h)}",
                "clock_event_reasons": lambda h=handle: _clock_event_reasons(nvml, h),
                "temperature_c": lambda h=handle: _temperature(nvml, h),
                "mig_mode": lambda h=handle: "enabled" if nvml.nvmlDeviceGetMigMode(h)[0] else "disabled",
                "persistence_mode": lambda h=handle: (
                    "enabled" if nvml.nvmlDeviceGetPersistenceMode(h) else "disabled"
                ),
            },
        )
        if device["clock_event_reasons"] is not None:
            device["clock_event_reason_names"] = list(clock_event_reason_names(device["clock_event_reasons"]))
        devices.append({"index": index, **device, "unavailable": device_unavailable})
    return {"source": "nvml", **system, "devices": devices, "unavailable": unavailable}, None


_SMI_FIELDS = (
    ("index", "index"),
    ("name", "name"),
    ("uuid", "uuid"),
    ("driver_version", "driver_version"),
    ("memory_total_bytes", "memory.total"),
    ("sm_clock_mhz", "clocks.sm"),
    ("mem_clock_mhz", "clocks.mem"),
    ("max_sm_clock_mhz", "clocks.max.sm"),
    ("max_mem_clock_mhz", "clocks.max.mem"),
    ("power_w", "power.draw"),
    ("power_limit_w", "enforced.power.limit"),
    ("performance_state", "pstate"),
    ("clock_event_reasons", "clocks_event_reasons.active"),
    ("temperature_c", "temperature.gpu"),
    ("mig_mode", "mig.mode.current"),
    ("persistence_mode", "persistence_mode"),
)


def _smi_value(field: str, text: str) -> Any:
    """One `--format=csv,noheader,nounits` cell as a number where it is one."""
    text = text.strip()
    if not text or text.startswith("[") or text in ("N/A", "Not Supported"):
        return None
    if field == "clock_event_reasons":
        return int(text, 16)
    if field == "memory_total_bytes":
        return int(float(text)) * 1024 * 1024  # nvidia-smi reports MiB
    if field in ("power_w", "power_limit_w"):
        return float(text)
    if field in ("index", "temperature_c") or field.endswith("_mhz"):
        return int(float(text))
    if field in ("mig_mode", "persistence_mode"):
        return text.lower()
    return text


def parse_nvidia_smi(csv_text: str) -> list[dict[str, Any]]:
    """The devices in `nvidia-smi --query-gpu=<_SMI_FIELDS> --format=csv,noheader,nounits`."""
    devices = []
    for line in csv_text.strip().splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        device = {f: _smi_value(f, c) for (f, _), c in zip(_SMI_FIELDS, cells, strict=False)}
        if device.get("clock_event_reasons") is not None:
            device["clock_event_reason_names"] = list(clock_event_reason_names(device["clock_event_reasons"]))
        devices.append(device)
    return devices


def _smi_gpus() -> tuple[dict[str, Any] | None, str | None]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi not on PATH"
    error = ""
    # Drivers before the rename call the reasons field clocks_throttle_reasons.active.
    for reasons in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
        query = ",".join(reasons if f == "clock_event_reasons" else q for f, q in _SMI_FIELDS)
        try:
            result = subprocess.run(
                [smi, f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                timeout=_SUBPROCESS_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"nvidia-smi did not run: {exc}"
        if result.returncode == 0:
            devices = parse_nvidia_smi(result.stdout)
            driver = devices[0].get("driver_version") if devices else None
            for device in devices:
                device.pop("driver_version", None)
            return {
                "source": "nvidia-smi",
                "driver_version": driver,
                "cuda_driver_version": None,
                "devices": devices,
                "unavailable": {"cuda_driver_version": "not in nvidia-smi --query-gpu"},
            }, None
        error = (result.stdout + result.stderr).strip().replace("\n", "; ")
    return None, f"nvidia-smi failed: {error}"


def capture_gpus() -> tuple[dict[str, Any] | None, str | None]:
    """Every GPU NVML (or else nvidia-smi) can see, or None and why neither could."""
    gpus, nvml_missing = _nvml_gpus()
    if gpus is not None:
        return gpus, None
    gpus, smi_missing = _smi_gpus()
    if gpus is not None:
        return gpus, None
    return None, f"{nvml_missing}; {smi_missing}"


def _cpu_model() -> str | None:
    """`model name` from /proc/cpuinfo (Linux); platform.processor() elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _usable_cores() -> int | None:
    """CPUs this process may run on (affinity, cgroups' cpusets), which can be fewer than exist."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None when absent), without importing it."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_info(path: Path | str) -> dict[str, Any] | None:
    """The commit and dirty flag of the git repository holding `path`, or None.

    None when git is absent, `path` is in no repository, or git refuses it (a
    repository owned by another user). Untracked files count as dirty: a new
    kernel file changes what was measured as much as an edited one.
    """
    path = Path(path)
    directory = path if path.is_dir() else path.parent

    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(
                ["git", "-C", str(directory), *args],
                capture_output=True,
                text=True,
                timeout=_SUBPROCESS_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout.strip() if result.returncode == 0 else None

    root = git("rev-parse", "--show-toplevel")
    commit = git("rev-parse", "HEAD") if root else None
    if commit is None:
        return None
    status = git("status", "--porcelain")
    return {"root": root, "commit": commit, "dirty": None if status is None else bool(status)}


def module_sources(references: Iterable[str]) -> dict[str, dict[str, str]]:
    """The file and SHA-256 of each module the references name (`module:attribute`), as this
    process imported it; a module not imported here, or without a file, is left out.

    The git commit says which code ran only inside a repository and only for what is
    committed: between two runs of a study outside one, `compare` said "no difference"
    although its kernel module had been edited.
    """
    found: dict[str, dict[str, str]] = {}
    for name in sorted({reference.partition(":")[0] for reference in references if reference}):
        path = getattr(sys.modules.get(name), "__file__", None)
        if not path:
            continue
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            continue
        found[name] = {"path": str(path), "sha256": digest}
    return found


def capture_environment(
    repository: Path | str | None = None,
    argv: list[str] | None = None,
    cpu_state: dict[str, Any] | None = None,
    affinity: dict[str, Any] | None = None,
    sources: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Everything about the machine and software a bundle's numbers depend on, as JSON data.

    `repository` is any path inside the code being measured (the study or its
    kernels); `argv` defaults to this process's command line. `cpu_state` is
    `machine_state.read_cpu_state`'s record (read here when not given) and
    `affinity` where the run put its workers; `sources` the measured modules' files
    (`module_sources`), written only when given. Never raises for a missing GPU,
    driver, tool, sysfs file or repository.
    """
    from perfdsl import __version__
    from perfdsl.runtime.machine_state import read_cpu_state, thread_affinity

    gpu, gpu_missing = capture_gpus()
    uname = platform.uname()
    captured = {
        "time_utc": datetime.datetime.now(datetime.UTC).isoformat(),
        "perfdsl": __version__,
        "command_line": list(sys.argv if argv is None else argv),
        "cwd": os.getcwd(),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {
            "system": uname.system,
            "release": uname.release,
            "version": uname.version,
            "machine": uname.machine,
        },
        "cpu": {
            "model": _cpu_model(),
            "logical_cores": os.cpu_count(),
            "usable_cores": _usable_cores(),
            "memory_bytes": _memory_bytes(),
            "state": read_cpu_state() if cpu_state is None else cpu_state,
            "affinity": {"run": thread_affinity()} if affinity is None else affinity,
        },
        "packages": package_versions(),
        "environment_variables": {
            k: v for k, v in sorted(os.environ.items()) if k.startswith(ENVIRONMENT_PREFIXES)
        },
        "git": git_info(repository) if repository is not None else None,
        "gpu": gpu,
        "gpu_missing": gpu_missing,
    }
    return captured if sources is None else {**captured, "sources": sources}
