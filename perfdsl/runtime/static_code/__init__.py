"""The compiled code of every measured kernel, read statically: mechanism evidence without a GPU.

CUDA kernels go Python -> PTX (Numba's NVVM, any machine) -> sm_90 cubin (nvJitLink,
from PyPI) -> SASS (nvdisasm, from PyPI). The system `ptxas` is not used: it can be
older than the NVVM that wrote the PTX and reject its `.version`. Numba CPU
functions give their LLVM IR and the assembly that was actually measured.

Counts are *static*: instructions in the code, not instructions executed; a load
inside a loop counts once. They are labelled "static" in the report, beside
"modelled" and "counted" evidence. A missing tool is never an exception: the
artefact it would have produced is None and a `*_missing` field says why.

Numba, cuda.bindings and the disassembler are imported inside the functions that
use them, so importing these modules costs nothing.

One job per module, in the order the code flows:

    toolchain   Python -> PTX -> cubin -> SASS with the PyPI tools, and their versions
    counts      static instruction counts of SASS and PTX text
    cuda        one CUDA kernel's code and resources (`inspect_cuda_kernel`)
    cpu         one Numba CPU function's IR and assembly (`inspect_cpu_function`)
    archive     the code files into the bundle and their summaries (`write_compiled_code`)

Nothing is imported here; import the module you need.
"""
