"""A CUDA kernel's compiled code for one signature, read statically (PTX, cubin, SASS)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.runtime.static_code.counts import CodeCounts, count_ptx, count_sass
from perfdsl.runtime.static_code.toolchain import (
    compile_ptx,
    disassemble,
    elf_section_sizes,
    link,
    package_version,
)

DEFAULT_CC: tuple[int, int] = (9, 0)
"""Hopper (H100/H200): the architecture the bundled studies are measured on."""


@attrs.frozen
class StaticKernel:
    """A CUDA kernel's compiled code for one signature, and what can be read from it.

    Artefacts come in a chain (PTX -> cubin -> SASS); when a link is missing,
    it and everything after it are None and the first `*_missing` says why.
    """

    name: str
    """The file stem in the bundle: the Python function's name unless given."""
    signature: str
    arch: str
    """"sm_90" for cc (9, 0)."""
    symbol: str | None
    """The mangled entry point, as ncu and nvdisasm name it."""
    ptx: str | None
    ptx_missing: str | None
    cubin: bytes | None
    cubin_missing: str | None
    sass: str | None
    sass_missing: str | None
    ptx_counts: CodeCounts | None
    sass_counts: CodeCounts | None
    registers: int | None
    """Registers per thread (nvJitLink's verbose log)."""
    shared_bytes_declared: int | None
    """Static shared memory the kernel declares in PTX (e.g. 32 x 33 x 4 = 4224)."""
    shared_bytes: int | None
    """Static shared memory per block as the cubin allocates it (its `.nv.shared.<kernel>`
    section): on sm_90 this includes 1 KiB the compiler reserves at the start of the
    window whenever the kernel uses shared memory at all."""
    local_bytes: int | None
    """Local memory per thread: the stack frame that local arrays and spills live in."""
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    tools: tuple[tuple[str, str], ...]
    """(tool, version) for each tool that produced an artefact."""


_PTX_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(")
_PTX_SHARED = re.compile(
    r"^\s*(?:\.visible\s+)?\.shared\s+(?:\.align\s+\d+\s+)?\.[bsuf](8|16|32|64)\s+[\w$.]+\[(\d+)\]",
    re.MULTILINE,
)
_PTX_HEADER = re.compile(r"Cuda compilation tools, release [\d.]+, V(\d+\.\d+\.\d+)")
_PTX_VERSION = re.compile(r"^\.version\s+(\S+)", re.MULTILINE)


def shared_declared(ptx: str) -> int:
    """Bytes of the fixed-size `.shared` arrays in PTX; `extern` (dynamic) arrays have no size."""
    return sum(int(bits) // 8 * int(n) for bits, n in _PTX_SHARED.findall(ptx))


_LOG_FUNCTION = re.compile(r"Function properties for '?([^'\s:]+)")
_LOG_PROPERTIES = {
    "local_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_store_bytes": re.compile(r"(\d+) bytes spill stores"),
    "spill_load_bytes": re.compile(r"(\d+) bytes spill loads"),
    "registers": re.compile(r"[Uu]sed (\d+) registers"),
}


def function_properties(log: str, symbol: str) -> dict[str, int]:
    """Registers, stack and spills of one function from nvJitLink's `-verbose` log.

    The log has a ptxas block per function (`Function properties for S` then
    `N bytes stack frame, N bytes spill stores, N bytes spill loads` and `Used N
    registers`); the first value seen for the symbol wins.
    """
    found: dict[str, int] = {}
    current = None
    for line in log.splitlines():
        header = _LOG_FUNCTION.search(line)
        if header:
            current = header.group(1)
            continue
        if current != symbol:
            continue
        for key, pattern in _LOG_PROPERTIES.items():
            match = pattern.search(line)
            if match and key not in found:
                found[key] = int(match.group(1))
    return found


def inspect_cuda_kernel(
    kernel: Any, signature: str, *, cc: tuple[int, int] = DEFAULT_CC, name: str | None = None
) -> StaticKernel:
    """Compile a CUDA kernel for `signature` and read its PTX and SASS, without a GPU.

    `kernel` is a `numba.cuda.jit` dispatcher (its `.py_func` is compiled) or the
    plain Python function; `signature` is a Numba signature string with any
    `{dtype}` already substituted. Nothing is launched and no device is touched.
    """
    import tempfile

    pyfunc = getattr(kernel, "py_func", kernel)
    arch = f"sm_{cc[0]}{cc[1]}"
    tools: dict[str, str | None] = {"numba-cuda": package_version("numba-cuda")}
    ptx, ptx_missing = compile_ptx(pyfunc, signature, cc)
    cubin = sass = symbol = None
    cubin_missing = sass_missing = None
    log = ""
    if ptx is None:
        cubin_missing = sass_missing = f"no PTX: {ptx_missing}"
    else:
        entry = _PTX_ENTRY.search(ptx)
        symbol = entry.group(1) if entry else None
        header = _PTX_HEADER.search(ptx)
        isa = _PTX_VERSION.search(ptx)
        tools["nvvm"] = header.group(1) if header else None
        tools["ptx-isa"] = isa.group(1) if isa else None
        cubin, log, tools["nvjitlink"], cubin_missing = link(ptx, arch)
        if cubin is None:
            sass_missing = f"no cubin: {cubin_missing}"
        else:
            with tempfile.TemporaryDirectory(prefix="perfdsl-sass-") as workdir:
                sass, tools["nvdisasm"], sass_missing = disassemble(cubin, Path(workdir))
    return static_kernel(
        name=name or pyfunc.__name__,
        signature=signature,
        arch=arch,
        symbol=symbol,
        code=(ptx, ptx_missing, cubin, cubin_missing, sass, sass_missing),
        properties=function_properties(log, symbol) if symbol else {},
        tools=tools,
    )


def static_kernel(
    *,
    name: str,
    signature: str,
    arch: str,
    symbol: str | None,
    code: tuple[str | None, str | None, bytes | None, str | None, str | None, str | None],
    properties: Mapping[str, int],
    tools: Mapping[str, str | None],
) -> StaticKernel:
    """One kernel's record from its code (PTX, cubin, SASS, each with why it is missing).

    The counts, the shared-memory sizes and the tool versions are read the same way
    whoever compiled the kernel (Numba here, a foreign compiler in `static_code.foreign`);
    `properties` holds what the compiler or the cubin says of registers, stack and spills.
    """
    ptx, ptx_missing, cubin, cubin_missing, sass, sass_missing = code
    sections = elf_section_sizes(cubin) if cubin else {}
    return StaticKernel(
        name=name,
        signature=signature,
        arch=arch,
        symbol=symbol,
        ptx=ptx,
        ptx_missing=ptx_missing,
        cubin=cubin,
        cubin_missing=cubin_missing,
        sass=sass,
        sass_missing=sass_missing,
        ptx_counts=count_ptx(ptx) if ptx else None,
        sass_counts=count_sass(sass) if sass else None,
        registers=properties.get("registers"),
        shared_bytes_declared=shared_declared(ptx) if ptx else None,
        shared_bytes=sections.get(f".nv.shared.{symbol}", 0) if sections else None,
        local_bytes=properties.get("local_bytes"),
        spill_store_bytes=properties.get("spill_store_bytes"),
        spill_load_bytes=properties.get("spill_load_bytes"),
        tools=tuple((tool, v) for tool, v in tools.items() if v is not None),
    )
