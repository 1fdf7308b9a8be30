"""Every kernel a bundled variant lists compiles statically, as the harness archives it.

CUDA kernels compile to Hopper PTX with no GPU (numba-cuda[cu13] ships NVVM);
CPU kernels compile for their listed signature.
"""

from __future__ import annotations

import pytest
from kernels_cases import CASES
from numba import cuda

pytestmark = pytest.mark.slow

VARIANTS = {(v.name, id(v)): v for case in CASES.values() for v in case.variants}
CUDA_KERNELS = [
    pytest.param(kernel, sig, id=f"{variant.name}-{kernel.py_func.__name__}")
    for variant in VARIANTS.values()
    for kernel, sig in variant.cuda_kernels
]
CPU_KERNELS = [
    pytest.param(function, sig, id=f"{variant.name}-{function.py_func.__name__}")
    for variant in VARIANTS.values()
    for function, sig in variant.cpu_kernels
]


@pytest.mark.parametrize(("kernel", "signature"), CUDA_KERNELS)
def test_cuda_kernel_compiles_to_hopper_ptx(kernel, signature):
    ptx, _ = cuda.compile_ptx(kernel.py_func, signature.format(dtype="float32"), cc=(9, 0))
    assert ".target sm_90" in ptx
    entries = [line for line in ptx.splitlines() if ".entry" in line]
    assert len(entries) == 1
    assert kernel.py_func.__name__ in entries[0]


@pytest.mark.parametrize(("function", "signature"), CPU_KERNELS)
def test_cpu_kernel_compiles_for_its_signature(function, signature):
    function.compile(signature.format(dtype="float32"))
    assert any(function.inspect_llvm().values())


def test_every_variant_lists_its_kernels():
    for variant in VARIANTS.values():
        assert variant.cuda_kernels
        assert variant.cpu_kernels
