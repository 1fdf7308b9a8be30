"""CUDA variants of the `scale_shift` operation, for the simulator tests.

Imported only in a child process with NUMBA_ENABLE_CUDASIM=1 set, because the
simulator must be chosen before numba.cuda is first imported.
"""

from __future__ import annotations

from numba import cuda

from perfdsl.kernel import Variant

BLOCK = 32


@cuda.jit
def scale_shift_kernel(x, w, out):
    i = cuda.grid(1)
    n = x.shape[1]
    if i < out.size:
        out[i // n, i % n] = x[i // n, i % n] * w[i % n] + 1.0


@cuda.jit
def scale_shift_off_by_one_kernel(x, w, out):
    i = cuda.grid(1)
    n = x.shape[1]
    if i < out.size - 1:
        out[i // n, i % n] = x[i // n, i % n] * w[i % n] + 1.0


def _launch(kernel, stream, x, w, out):
    blocks = (out.size + BLOCK - 1) // BLOCK
    kernel[blocks, BLOCK, stream](x, w, out)


def good_cuda(stream, x, w, out):
    _launch(scale_shift_kernel, stream, x, w, out)


def off_by_one_cuda(stream, x, w, out):
    _launch(scale_shift_off_by_one_kernel, stream, x, w, out)


good = Variant("good_cuda", cuda=good_cuda, cuda_kernels=((scale_shift_kernel, ""),))
off_by_one = Variant(
    "off_by_one_cuda", cuda=off_by_one_cuda, cuda_kernels=((scale_shift_off_by_one_kernel, ""),)
)
