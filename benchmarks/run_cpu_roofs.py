"""CPU roofs at full size, measured the way `perfdsl run` measures them.

Prints four figures, each from arms interleaved in one sampler call (so that
drift on this shared, noisy machine falls on every arm alike):

1. the Numba copy kernel's bandwidth (bytes read + written / median time)
   against NumPy's `np.copyto` on the same buffers;
2. the fused RMSNorm's bandwidth at 8192 x 8192 float32 as a fraction of the
   copy roof measured beside it (goal: at least 0.70), from the study's
   modelled bytes 4*(2*M*N + N);
3. the unfused / fused time ratio (the bytes model says 2.5);
4. how far two identical measurements in this process differ: the same
   sampler call run twice, as the ratio of each arm's medians.

The statistic is the median of block medians, the unit perfdsl's evaluation
uses. Usage: `.venv/bin/python benchmarks/run_cpu_roofs.py [--repeats R] [--blocks B]`.
"""

from __future__ import annotations

import os

# As `perfdsl run` does before NumPy loads (perfdsl/commands/run.py says why):
# NumPy's BLAS pool and OpenMP's spinning waiters must not fight Numba's threads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels import copy as copy_kernels
from kernels import rmsnorm
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.kernel import Reference, Variant
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import Sampled, prepare_arms, sample

SHAPE = {"M": 8192, "N": 8192}
ROOF_GOAL = 0.70


def numpy_copy(x: np.ndarray, y: np.ndarray) -> None:
    """NumPy's own copy: the reference roof the Numba kernel is held to."""
    np.copyto(y, x)


NUMPY_COPY = Variant(name="np.copyto", cpu=numpy_copy)


def medians(record: Sampled) -> dict[str, float]:
    """Each arm's median of block medians, in seconds."""
    by_block: dict[tuple[str, int], list[int]] = {}
    for s in record.samples:
        if s.valid:
            by_block.setdefault((s.arm, s.block), []).append(s.duration_ns)
    per_arm: dict[str, list[float]] = {}
    for (arm, _), durations in by_block.items():
        per_arm.setdefault(arm, []).append(float(np.median(durations)))
    return {arm: float(np.median(values)) / 1e9 for arm, values in per_arm.items()}


def measure(
    groups: Sequence[tuple[Reference, Sequence[Variant]]], settings: TimingSettings
) -> dict[str, float]:
    """Interleaved blocks of every variant, each group on its reference's inputs; medians by name.

    As in `perfdsl run`, the copy roof is one more arm in the same sampler call,
    on the copy reference's inputs at the same shape.
    """
    target = make_target("cpu")
    arms = [
        arm
        for reference, variants in groups
        for arm in prepare_arms(target, reference, variants, SHAPE, np.float32, requested_sets=2)
    ]
    record = sample(target, arms, settings)
    if record.timing.failures:
        raise SystemExit(f"a call failed: {record.timing.failures[0]}")
    return medians(record)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per block (default 20)")
    parser.add_argument("--blocks", type=int, default=10, help="blocks per arm (default 10)")
    args = parser.parse_args(argv)
    settings = TimingSettings(warmup_calls=5, warmup_ms=500.0, repeats=args.repeats, blocks=args.blocks)
    m, n = SHAPE["M"], SHAPE["N"]
    copy_bytes = 8 * m * n
    fused_bytes = 4 * (2 * m * n + n)
    print(
        f"CPU roofs at {m} x {n} float32, {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.2f}), "
        f"{args.blocks} blocks x {args.repeats} repeats per arm, interleaved"
    )

    began = time.monotonic()
    copies = measure([(copy_kernels.reference, [copy_kernels.copy, NUMPY_COPY])], settings)
    numba_bw, numpy_bw = (copy_bytes / copies[name] / 1e9 for name in ("copy", "np.copyto"))
    print(
        f"1. copy roof       numba copy {numba_bw:6.2f} GB/s   np.copyto {numpy_bw:6.2f} GB/s   "
        f"numba/numpy {numba_bw / numpy_bw:.3f}"
    )

    groups = [
        (rmsnorm.reference, [rmsnorm.unfused, rmsnorm.fused]),
        (copy_kernels.reference, [copy_kernels.copy]),
    ]
    runs = [measure(groups, settings) for _ in range(2)]
    for index, run in enumerate(runs, 1):
        roof = copy_bytes / run["copy"]
        fused_bw = fused_bytes / run["fused"]
        verdict = "meets" if fused_bw / roof >= ROOF_GOAL else "misses"
        print(
            f"2. run {index}: fused  {run['fused'] * 1e3:7.2f} ms  {fused_bw / 1e9:6.2f} GB/s = "
            f"{fused_bw / roof:.3f} of the copy roof ({roof / 1e9:.2f} GB/s; {verdict} {ROOF_GOAL})"
        )
        print(
            f"3. run {index}: unfused {run['unfused'] * 1e3:7.2f} ms   unfused/fused "
            f"{run['unfused'] / run['fused']:.3f} (bytes model 2.5)"
        )
    ratios = "   ".join(f"{arm} {runs[1][arm] / runs[0][arm]:.3f}" for arm in ("unfused", "fused", "copy"))
    print(f"4. run 2 / run 1 medians: {ratios}")
    print(f"({time.monotonic() - began:.0f} s; load average {os.getloadavg()[0]:.2f} at the end)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
