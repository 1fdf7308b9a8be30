"""The Triton RMSNorm kernels' source run by Triton's interpreter on the CPU, in a child process.

Run by `test_foreign_cpu.py` with TRITON_INTERPRET=1 (read when Triton is first
imported). The interpreter executes the kernel's Python on PyTorch CPU tensors:
it checks what the kernel computes, not the compiled code. Prints one line per
case: `kernel M N rel_l2 unwritten`.
"""

from __future__ import annotations

import numpy as np
import torch

from kernels.rmsnorm import EPS, reference
from kernels.triton_rmsnorm import BLOCK, rmsnorm_triton_aligned_kernel, rmsnorm_triton_kernel

CASES = (
    (rmsnorm_triton_kernel, 3, 31),
    (rmsnorm_triton_kernel, 2, 1500),
    (rmsnorm_triton_kernel, 1, 1),
    (rmsnorm_triton_aligned_kernel, 2, 2048),
    (rmsnorm_triton_aligned_kernel, 4, 16),
)


def main() -> None:
    for kernel, m, n in CASES:
        host = reference.inputs({"M": m, "N": n}, np.random.default_rng(m * 7919 + n), np.float32)
        y = torch.full((m, n), float("nan"))
        kernel[(m,)](torch.from_numpy(host["x"]), torch.from_numpy(host["w"]), y, n, float(EPS), BLOCK=BLOCK)
        expected = reference.compute(**{k: v.astype(np.float64) for k, v in host.items()})["y"]
        got = y.numpy().astype(np.float64)
        unwritten = int(np.isnan(got).sum())
        error = float(np.linalg.norm(np.nan_to_num(got) - expected) / np.linalg.norm(expected))
        print(kernel.fn.__name__, m, n, f"{error:.3e}", unwritten, flush=True)


if __name__ == "__main__":
    main()
