"""Planted effects: changes to batch normalisation's fused loop whose true effect is known.

A verdict can be checked against the truth only where the truth is known. Both
changes here are kernels/batchnorm.py's one-sweep loop (`fused`, one thread:
fold the statistics into a scale and a shift, then read each element of x once
and write y once) and compute the same y, so they pass the same correctness check:

    heavier    the sweep, then the same sweep again over the first ceil(M / 50)
               rows (they are written with the values they already hold): 1.02 x
               the rows swept, the bytes moved and the arithmetic, a planted
               effect of +2 %
    identical  the fused loop itself under another name: the same machine code
               and the same work, a planted null (an A/A comparison; a second
               compilation of the source could differ in code alignment, which
               is an effect of its own)

Modelled bytes per call, as kernels/batchnorm.py counts the fused sweep:

    fused, identical   bytes 4*(2*M*N + 4*N)
    heavier            bytes 4*(2*(M + ceil(M / 50))*N + 8*N), 1.02 x at M >= 2048
"""

from __future__ import annotations

import numba

from kernels.batchnorm import batchnorm_fused_cpu
from perfdsl.kernel import Variant

REPEATED_SHARE = 50
"""One row in this many is swept twice by `heavier`: 2 % more work."""

_SIG = "void({dtype}[:, ::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[:, ::1])"


@numba.njit(fastmath=True, nogil=True)
def heavier_cpu(x, mean, var, gamma, beta, y):
    """The fused sweep, then the same sweep over the first ceil(M / 50) rows: the same y, 1.02 x the work."""
    batchnorm_fused_cpu(x, mean, var, gamma, beta, y)
    again = -(-x.shape[0] // REPEATED_SHARE)
    batchnorm_fused_cpu(x[:again], mean, var, gamma, beta, y[:again])


heavier = Variant(name="heavier", cpu=heavier_cpu, cpu_kernels=((heavier_cpu, _SIG),))
identical = Variant(name="identical", cpu=batchnorm_fused_cpu, cpu_kernels=((batchnorm_fused_cpu, _SIG),))
