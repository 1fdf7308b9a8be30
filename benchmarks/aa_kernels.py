"""Kernels for benchmarks/aa_false_positives.py: a copy, and a copy doing 5% more work.

`aa_false_positives.py` loads this file twice under two module names, so the
A/A arms are two separately compiled copies of the same kernel, as a study with
baseline and change pointing at one kernel through two modules would have.
Serial loops: on a small shared machine a parallel loop's thread scheduling,
not the kernel, would dominate the spread.
"""

from __future__ import annotations

import numba

from perfdsl.kernel import Variant

EXTRA = 0.05
"""The planted slowdown: the `more` variant copies an extra 5% of the elements."""

_SIG = "void({dtype}[::1], {dtype}[::1])"


@numba.njit
def copy_serial(x, y):
    """y = x."""
    for i in range(x.size):
        y[i] = x[i]


@numba.njit
def copy_more_serial(x, y):
    """y = x, then the first 5% of the elements copied again: 5% more work, same result."""
    for i in range(x.size):
        y[i] = x[i]
    for i in range(int(x.size * EXTRA)):
        y[i] = x[i]


copy = Variant(name="copy", cpu=copy_serial, cpu_kernels=((copy_serial, _SIG),))
copy_more = Variant(name="copy_more", cpu=copy_more_serial, cpu_kernels=((copy_more_serial, _SIG),))
