"""Target adapters: where a Variant runs and how one call of it is timed.

Three targets share one interface so the sampler and the correctness check
treat baseline and change, CPU and GPU, alike:

* `cpu`: host numpy arrays, the monotonic clock (`time.perf_counter_ns`); a CPU
  call runs to completion, so there is nothing to synchronise;
* `cuda`: numba.cuda device arrays allocated once, one stream, a CUDA event
  pair around each call; before every timed call the L2 cache is flushed by a
  memset of an L2-sized buffer, enqueued *before* the start event so the flush
  is outside the measured interval (nvbench's "cold" measurement);
* `cudasim`: the CUDA code under Numba's simulator. Events do not time there,
  so each call is timed with the host clock and every sample is marked
  invalid: simulator timings are recorded, never evidence.

numba is imported inside functions only, so importing this module is cheap and
`perfdsl check` never pays for it. The GPU's settings (clocks, power, modes) are
never touched: they are recorded by the caller, not changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from perfdsl import targets
from perfdsl.kernel import Variant

FALLBACK_LLC_BYTES = 32 * 1024 * 1024
"""Used when the CPU's last-level cache size cannot be read."""

_POISON_PAYLOAD = 0xAD
"""Low mantissa bits of the poison NaN, so a left-over poison value can be told
apart from a NaN the kernel computed (hardware NaNs carry no payload)."""


class TargetError(Exception):
    """A target that cannot be used here (no GPU, simulator not enabled, variant lacks it)."""


class NoGpu(TargetError):
    """No usable CUDA GPU here; `perfdsl run` names the other targets the study allows."""


@attrs.frozen
class Timed:
    """One timed call: its duration and whether that duration is evidence."""

    duration_ns: int
    valid: bool


def last_level_cache_bytes(sysfs: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The size of CPU 0's highest-level cache, from sysfs, else FALLBACK_LLC_BYTES."""
    best_level, best_size = 0, 0
    for index in sorted(sysfs.glob("index*")):
        try:
            level = int((index / "level").read_text().strip())
            size = _parse_size((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if level > best_level or (level == best_level and size > best_size):
            best_level, best_size = level, size
    return best_size or FALLBACK_LLC_BYTES


def _parse_size(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def simulator_enabled() -> bool:
    """Whether this process runs numba.cuda under the simulator (decided at first import)."""
    from numba import config

    return bool(getattr(config, "ENABLE_CUDASIM", 0))


def gpu_available() -> bool:
    """Whether a real CUDA GPU is usable from this process; never raises."""
    try:
        if simulator_enabled():
            return False
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def poison_value(dtype: Any) -> Any:
    """NaN carrying a recognisable payload for floats, the dtype's maximum for integers."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        uint = np.dtype(f"u{dtype.itemsize}")
        bits = np.array(np.nan, dtype=dtype).view(uint) | uint.type(_POISON_PAYLOAD)
        return bits.view(dtype)[()]
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    raise TargetError(f"cannot poison outputs of dtype `{dtype}`")


def is_poison(array: np.ndarray) -> np.ndarray:
    """Elementwise: does this element still hold the poison value (bit for bit)?"""
    poison = np.array(poison_value(array.dtype), dtype=array.dtype)
    if array.dtype.kind == "f":
        uint = np.dtype(f"u{array.dtype.itemsize}")
        return np.ascontiguousarray(array).view(uint) == poison.view(uint)
    return array == poison


class Target:
    """The CPU target; the CUDA targets override what differs."""

    spec = targets.CPU
    """What the target can do (clock resolution, archived code, whether it times evidence)."""
    name = spec.name
    timings_valid = spec.timings_are_evidence
    """Whether durations from this target are evidence."""
    flushes_cache = False
    """Whether `time` flushes the cache before every call (every sample is cold)."""

    def cache_bytes(self) -> int:
        """The cache the measurement must defeat: the CPU's last-level cache."""
        return last_level_cache_bytes()

    def rotation_bytes(self) -> int:
        """How many bytes the rotated buffer sets must exceed together: four times the
        last-level cache, as STREAM asks, since the private L2s add to it and replacement is
        not LRU.

        Twice was not enough. On a 2-core EPYC (32 MiB L3), batch norm at 2048 x 1024 over
        4 sets of 16 MiB per arm (twice the L3): a block that followed the other arm's block
        ran 1.5-16 % slower than one that followed its own arm's, in each of 8 A/A runs
        (the cache kept part of the arm's own sets between its blocks), which left the ABBA
        pairs' log-ratios alternating in sign with a spread of 0.10-0.18; 3 runs of
        `planted_null` showed the same at that shape (8-12 %). Over 8 sets (four times) the
        penalty was -0.8 to +1.5 % in 8 runs, and the pair spread 0.08-0.13; over 16 sets,
        the same. `benchmarks/rotation_carryover.py` measures it."""
        return 4 * self.cache_bytes()

    def to_device(self, host: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """Copies of `host` the variant may read (fresh, contiguous, owned by the target)."""
        return {k: np.array(v, order="C", copy=True) for k, v in host.items()}

    def alloc(self, shapes: Mapping[str, tuple[int, ...]], dtype: Any) -> dict[str, Any]:
        """Uninitialised output arrays; poison them before any call whose output is read."""
        return {k: np.empty(shape, dtype=dtype) for k, shape in shapes.items()}

    def poison(self, arrays: Mapping[str, Any]) -> None:
        """Fill every array with the poison value, so unwritten elements are detectable."""
        for array in arrays.values():
            array.fill(poison_value(array.dtype))

    def to_host(self, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Host copies of `arrays`, after synchronising."""
        self.synchronize()
        return {k: np.array(v, copy=True) for k, v in arrays.items()}

    def synchronize(self) -> None:
        """Wait for all queued work; a CPU call has already finished."""

    def implements(self, variant: Variant) -> bool:
        """Whether `variant` has code for this target (asked before the run, in the parent)."""
        return variant.cpu is not None

    def op(self, variant: Variant) -> Callable[..., None]:
        """The variant's callable for this target, with the target's own arguments bound."""
        if variant.cpu is None:
            raise TargetError(f"variant `{variant.name}` has no `cpu` implementation")
        return variant.cpu

    def bind(self, variant: Variant, arrays: Mapping[str, Any]) -> Callable[[], None]:
        """A no-argument call of `variant` on `arrays` (inputs and outputs by name)."""
        op, kwargs = self.op(variant), dict(arrays)
        return lambda: op(**kwargs)

    def run(self, call: Callable[[], None]) -> None:
        """Run `call` once, to completion."""
        call()
        self.synchronize()

    def time(self, call: Callable[[], None]) -> Timed:
        """Time one call of `call` the way samples are timed on this target."""
        start = time.perf_counter_ns()
        call()
        return Timed(time.perf_counter_ns() - start, True)

    def empty_call(self) -> Callable[[], None]:
        """A call that does no work, to measure what timing one call costs."""
        return _empty


def _empty() -> None:
    """Deliberately nothing: timed to measure the timing overhead."""


class CudaTarget(Target):
    """A real GPU through numba.cuda, timed with CUDA events on one stream."""

    spec = targets.CUDA
    name = spec.name
    timings_valid = spec.timings_are_evidence
    flushes_cache = True
    simulated = False
    """Whether device arrays are host memory under Numba's simulator."""

    def __init__(self) -> None:
        if simulator_enabled():
            raise TargetError("NUMBA_ENABLE_CUDASIM is set: use the `cudasim` target")
        from numba import cuda

        if not cuda.is_available():
            raise NoGpu("no usable CUDA GPU: use `--target cpu` or `--target cudasim`")
        self._cuda = cuda
        self.stream = cuda.stream()
        self._start = cuda.event(timing=True)
        self._end = cuda.event(timing=True)
        self._empty_kernel = _compile_empty_kernel(cuda)
        self._l2 = self._l2_bytes()
        self._flush = cuda.device_array(max(self._l2, 1), dtype=np.uint8, stream=self.stream)
        self.run(self.empty_call())

    def _l2_bytes(self) -> int:
        # numba-cuda's Device.__getattr__ reads CU_DEVICE_ATTRIBUTE_<name> lazily.
        return int(self._cuda.get_current_device().L2_CACHE_SIZE)

    def cache_bytes(self) -> int:
        """The GPU's L2 size in bytes."""
        return self._l2

    def rotation_bytes(self) -> int:
        """Twice L2, as the rotation's margin on top of the flush."""
        return 2 * self._l2

    def to_device(self, host: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """Device copies of `host`, enqueued on the target's stream."""
        out = {k: self._cuda.to_device(np.ascontiguousarray(v), stream=self.stream) for k, v in host.items()}
        self.synchronize()
        return out

    def alloc(self, shapes: Mapping[str, tuple[int, ...]], dtype: Any) -> dict[str, Any]:
        """Device output arrays, allocated once and reused for every call."""
        return {
            k: self._cuda.device_array(shape, dtype=dtype, stream=self.stream) for k, shape in shapes.items()
        }

    def poison(self, arrays: Mapping[str, Any]) -> None:
        """Copy a poison-filled host array over each device array."""
        hosts = [np.full(a.shape, poison_value(a.dtype), dtype=a.dtype) for a in arrays.values()]
        for array, host in zip(arrays.values(), hosts, strict=True):
            array.copy_to_device(host, stream=self.stream)
        self.synchronize()  # the host buffers must outlive the asynchronous copies

    def to_host(self, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Host copies of device arrays, after the stream drains."""
        out = {k: v.copy_to_host(stream=self.stream) for k, v in arrays.items()}
        self.synchronize()
        return out

    def synchronize(self) -> None:
        """Wait for everything queued on the stream."""
        self.stream.synchronize()

    def implements(self, variant: Variant) -> bool:
        return variant.cuda is not None or variant.cuda_bind is not None

    def op(self, variant: Variant) -> Callable[..., None]:
        """`variant.cuda` with the stream bound: the AppContext calling convention.

        A foreign variant is bound afresh on every call here: an application passes
        new arrays each time, so there is no buffer set to bind once.
        """
        if variant.cuda_bind is not None:
            return lambda **arrays: self.bind(variant, arrays)()
        if variant.cuda is None:
            raise TargetError(f"variant `{variant.name}` has no `cuda` or `cuda_bind` implementation")
        cuda_call, stream = variant.cuda, self.stream
        return lambda **arrays: cuda_call(stream, **arrays)

    def bind(self, variant: Variant, arrays: Mapping[str, Any]) -> Callable[[], None]:
        """A no-argument call of `variant` on `arrays`; a foreign variant's `cuda_bind` runs here,
        once, outside any timed call."""
        if variant.cuda_bind is None:
            return super().bind(variant, arrays)
        from perfdsl.runtime.foreign import bind_foreign, stream_of

        return bind_foreign(variant, stream_of(self.stream), arrays, simulated=self.simulated)

    def flush_l2(self) -> None:
        """Overwrite L2 with a memset of an L2-sized buffer, enqueued on the stream."""
        from numba.cuda.cudadrv.driver import device_memset

        device_memset(self._flush, 0, self._flush.nbytes, stream=self.stream)

    def time(self, call: Callable[[], None]) -> Timed:
        """Flush L2, then time `call` between two events on the stream (cold).

        One event pair per call: for a kernel shorter than its launch, this
        measures the launch gap; the empty-kernel overhead samples let the
        evaluator flag such results as launch-bound.
        """
        self.flush_l2()
        self._start.record(self.stream)
        call()
        self._end.record(self.stream)
        self._end.synchronize()
        ms = self._start.elapsed_time(self._end)
        return Timed(round(ms * 1e6), ms >= 0)

    def empty_call(self) -> Callable[[], None]:
        """One launch of an empty kernel: the launch and event cost with no work."""
        kernel = self._empty_kernel[1, 1, self.stream]
        return lambda: kernel()


class CudaSimTarget(CudaTarget):
    """CUDA kernels under Numba's simulator: correct results, meaningless times."""

    spec = targets.CUDASIM
    name = spec.name
    timings_valid = spec.timings_are_evidence
    flushes_cache = False
    simulated = True

    def __init__(self) -> None:
        if not simulator_enabled():
            raise TargetError(
                "the simulator must be enabled before numba.cuda is imported: "
                "set NUMBA_ENABLE_CUDASIM=1 in the environment"
            )
        from numba import cuda

        self._cuda = cuda
        self.stream = cuda.stream()
        self._empty_kernel = _compile_empty_kernel(cuda)
        self._l2 = 0

    def rotation_bytes(self) -> int:
        """Nothing is cached or timed on the simulator: rotate only as the study asks."""
        return 0

    def time(self, call: Callable[[], None]) -> Timed:
        """The host time of the simulated call, always marked invalid."""
        start = time.perf_counter_ns()
        call()
        self.synchronize()
        return Timed(time.perf_counter_ns() - start, False)


def _compile_empty_kernel(cuda: Any) -> Any:
    @cuda.jit
    def perfdsl_empty_kernel() -> None:
        return

    return perfdsl_empty_kernel


def make_target(name: str) -> Target:
    """The adapter for "cpu", "cuda", "cudasim" or "auto" (cuda when a GPU is usable, else cpu)."""
    if name == targets.AUTO:
        name = targets.CUDA.name if gpu_available() else targets.CPU.name
    factories: dict[str, Callable[[], Target]] = {
        cls.spec.name: cls for cls in (Target, CudaTarget, CudaSimTarget)
    }
    if name not in factories:
        raise TargetError(f"unknown target `{name}`: expected {', '.join(targets.CHOICES)}")
    return factories[name]()
