"""Kernels for benchmarks/aa_false_positives.py: a scan, and a scan doing 5% more work.

`aa_false_positives.py` loads this file twice under two module names, so the
A/A arms are two separately compiled copies of the same kernel, as a study with
baseline and change pointing at one kernel through two modules would have.
Serial loops: on a small shared machine a parallel loop's thread scheduling,
not the kernel, would dominate the spread. A dependency chain rather than a
copy: a memory-bound copy's blocks spread by 5-10% on this kind of VM (other
tenants share the memory bus), wider than the effect to detect; a chain's time
is set by the core's latency, and 5% more elements is 5% more time.
"""

from __future__ import annotations

import numba

from perfdsl.kernel import Variant

EXTRA = 0.05
"""The planted slowdown: the `more` variant copies an extra 5% of the elements."""

_SIG = "void({dtype}[::1], {dtype}[::1])"


@numba.njit(nogil=True)
def scan_serial(x, y):
    """y[i] = 0.5 * y[i-1] + x[i]: a dependency chain, so time is set by latency, not memory."""
    acc = x.dtype.type(0.0)
    for i in range(x.size):
        acc = acc * 0.5 + x[i]
        y[i] = acc


@numba.njit(nogil=True)
def scan_more_serial(x, y):
    """The same chain over an extra 5% of the elements: 5% more dependent work."""
    acc = x.dtype.type(0.0)
    for i in range(x.size):
        acc = acc * 0.5 + x[i]
        y[i] = acc
    for i in range(int(x.size * EXTRA)):
        acc = acc * 0.5 + x[i]
        y[i] = acc


scan = Variant(name="scan", cpu=scan_serial, cpu_kernels=((scan_serial, _SIG),))
scan_more = Variant(name="scan_more", cpu=scan_more_serial, cpu_kernels=((scan_more_serial, _SIG),))
