"""The read, write and copy roofs `perfdsl run` measures, next to NumPy's own, in one run.

Each roof kernel of `kernels/copy.py` (Numba, parallel over all cores) is timed
interleaved with its NumPy equivalent on the same shape, in one sampler call
(so drift on a shared machine falls on every arm alike):

    read   numba `read`   vs np.sum(x)         bytes 4*n
    write  numba `write`  vs y.fill(1)         bytes 4*n
    copy   numba `copy`   vs np.copyto(y, x)   bytes 8*n

Bytes are counted as a byte model counts them (what is asked to be read and
written); on a CPU, write-allocate makes a store move a line in as well, inside
the write and copy times. NumPy's calls are single-threaded, so on a machine
with many cores the Numba roof should be well above NumPy's; on a 2-core machine
the ratio says how much of a core the parallel loop's overhead costs.
The machine's load during the run is printed with it: other work lowers both.
Usage: `.venv/bin/python benchmarks/roofs_vs_numpy.py [--elements N] [--repeats R] [--blocks B]`.
"""

from __future__ import annotations

import os

# As `perfdsl run` does before NumPy loads (perfdsl/commands/run.py says why).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_cpu_roofs import medians as medians_s

from kernels import copy as roofs
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.kernel import Variant
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import prepare_arms, sample


def _np_sum(x: np.ndarray, s: np.ndarray) -> None:
    s[0] = np.sum(x)


def _np_fill(y: np.ndarray) -> None:
    y.fill(1)


def _np_copyto(x: np.ndarray, y: np.ndarray) -> None:
    np.copyto(y, x)


NUMPY = {
    "read": Variant(name="np.sum", cpu=_np_sum),
    "write": Variant(name="fill", cpu=_np_fill),
    "copy": Variant(name="np.copyto", cpu=_np_copyto),
}
BYTES_PER_ELEMENT = {"read": 4, "write": 4, "copy": 8}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=64 * 2**20, help="float32 elements (default 64 Mi)")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per block (default 10)")
    parser.add_argument("--blocks", type=int, default=10, help="blocks per arm (default 10)")
    args = parser.parse_args(argv)
    target = make_target("cpu")
    shape = {"n": args.elements}
    arms = []
    for name, (problem, kernel) in roofs.ROOFS.items():
        numba_arm, numpy_arm = prepare_arms(target, problem, [kernel, NUMPY[name]], shape, np.float32, 2)
        arms += [numba_arm, numpy_arm]
    load_before = os.getloadavg()[0]
    record = sample(target, arms, TimingSettings(repeats=args.repeats, blocks=args.blocks))
    if record.timing.failures:
        raise SystemExit(f"a call failed: {record.timing.failures[0]}")
    seconds = medians_s(record)
    warm = {w.arm: w for w in record.timing.warmup}
    print(
        f"Roofs at {args.elements} float32 elements ({args.elements * 4 / 2**20:.0f} MiB per array), "
        f"{os.cpu_count()} CPUs, {args.blocks} blocks x {args.repeats} calls per arm, interleaved; "
        f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print(f"{'roof':6} {'numba GB/s':>11} {'numpy GB/s':>11} {'numba/numpy':>12}   warm-up calls (settled)")
    for name, (_, kernel) in roofs.ROOFS.items():
        moved = BYTES_PER_ELEMENT[name] * args.elements
        ours = moved / seconds[kernel.name] / 1e9
        theirs = moved / seconds[NUMPY[name].name] / 1e9
        w_ours, w_theirs = warm[kernel.name], warm[NUMPY[name].name]
        print(
            f"{name:6} {ours:11.2f} {theirs:11.2f} {ours / theirs:12.3f}   "
            f"{w_ours.calls} ({w_ours.settled}) / {w_theirs.calls} ({w_theirs.settled})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
