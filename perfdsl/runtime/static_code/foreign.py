"""A foreign kernel's compiled code (Triton, CuPy, NVRTC), read like Numba's: PTX, cubin, SASS.

The implementation hands its code over (`Variant.cuda_code` -> `KernelCode`); nothing
is compiled from Python here. The cubin it gives is the binary that runs, so it is
disassembled as it is and its registers and stack frame are read from its own
`.nv.info` (`cubin.function_attributes`); only where it gives PTX alone is the PTX
assembled with nvJitLink, for the target its `.target` line names (Triton writes
`sm_90a`, which a plain `sm_90` link would reject).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from perfdsl.kernel import KernelCode
from perfdsl.runtime.static_code.cubin import function_attributes
from perfdsl.runtime.static_code.cuda import DEFAULT_CC, StaticKernel, function_properties, static_kernel
from perfdsl.runtime.static_code.toolchain import disassemble, link

_PTX_TARGET = re.compile(r"^\.target\s+(sm_\w+)", re.MULTILINE)
_PTX_ISA = re.compile(r"^\.version\s+(\S+)", re.MULTILINE)


def _tools(code: KernelCode) -> dict[str, str | None]:
    """The compiler as a (tool, version) pair: "triton 3.9.0" -> {"triton": "3.9.0"}."""
    if not code.compiler:
        return {}
    tool, _, version = code.compiler.partition(" ")
    return {tool: version or None}


def inspect_kernel_code(code: KernelCode, *, cc: tuple[int, int] = DEFAULT_CC) -> StaticKernel:
    """Read one handed-over kernel: SASS from its cubin (or from its PTX, assembled here) and counts."""
    tools = _tools(code)
    ptx, cubin = code.ptx, code.cubin
    target = _PTX_TARGET.search(ptx) if ptx else None
    arch = target.group(1) if target else f"sm_{cc[0]}{cc[1]}"
    ptx_missing = None if ptx else "the implementation handed over no PTX"
    cubin_missing = sass = sass_missing = None
    log = ""
    if ptx:
        isa = _PTX_ISA.search(ptx)
        tools["ptx-isa"] = isa.group(1) if isa else None
    if cubin is None and ptx:
        cubin, log, tools["nvjitlink"], cubin_missing = link(ptx, arch)
    elif cubin is None:
        cubin_missing = "the implementation handed over neither PTX nor a cubin"
    if cubin is None:
        sass_missing = f"no cubin: {cubin_missing}"
    else:
        with tempfile.TemporaryDirectory(prefix="perfdsl-sass-") as workdir:
            sass, tools["nvdisasm"], sass_missing = disassemble(cubin, Path(workdir))
    # The cubin's own `.nv.info` says registers and stack; the link log, where there is one, spills.
    spills = function_properties(log, code.name) if log else {}
    attributes = function_attributes(cubin, code.name) if cubin else {}
    return static_kernel(
        name=code.name,
        signature=code.signature,
        arch=arch,
        symbol=code.name,
        code=(ptx, ptx_missing, cubin, cubin_missing, sass, sass_missing),
        properties={**spills, **attributes},
        tools=tools,
    )


def missing_code(variant: str, reason: str, *, cc: tuple[int, int] = DEFAULT_CC) -> StaticKernel:
    """The record of a variant whose `cuda_code` could not hand anything over, saying why."""
    return StaticKernel(
        name=f"{variant}.cuda_code",
        signature="",
        arch=f"sm_{cc[0]}{cc[1]}",
        symbol=None,
        ptx=None,
        ptx_missing=reason,
        cubin=None,
        cubin_missing=f"no PTX: {reason}",
        sass=None,
        sass_missing=f"no PTX: {reason}",
        ptx_counts=None,
        sass_counts=None,
        registers=None,
        shared_bytes_declared=None,
        shared_bytes=None,
        local_bytes=None,
        spill_store_bytes=None,
        spill_load_bytes=None,
        tools=(),
    )
