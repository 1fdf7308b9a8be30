"""A Numba CPU function's compiled code for one signature: its LLVM IR and the assembly measured."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import attrs

from perfdsl.runtime.static_code.toolchain import first_line, package_version


@attrs.frozen
class StaticCpuFunction:
    """A Numba CPU function's compiled code for one signature: the binary that was measured."""

    name: str
    signature: str
    symbol: str | None
    llvm_ir: str | None
    asm: str | None
    missing: str | None
    instructions: int | None
    """Machine instructions in the function itself and its parallel loop bodies (not its
    Python wrapper, nor the parallel launcher's gufunc wrapper)."""
    simd_instructions: tuple[tuple[str, int], ...]
    """Instructions naming an xmm, ymm or zmm register, by the widest they name:
    ymm or zmm means the loop was vectorised with AVX2 or AVX-512 (xmm also covers
    scalar floating point)."""
    ir_vector_instructions: int | None
    """LLVM IR instructions of the function with a `<N x T>` vector type."""
    tools: tuple[tuple[str, str], ...]


_ASM_INSTRUCTION = re.compile(r"^\t([a-z][a-z0-9]*)\b")
_IR_VECTOR = re.compile(r"<\d+ x ")


_LOOP_BODY = re.compile(r"^(_ZN[^\s:\"(]*__numba_parfor_gufunc[^\s:\"(]*)", re.M)
"""A parallel loop body: `prange` (`parallel=True`) compiles each loop into a function of its own,
`__numba_parfor_gufunc_<id>`, that the function only launches. `__gufunc__.` and `cpython.`
prefixed names are the wrappers around it, not the loop."""

_GUFUNC_WRAPPER = re.compile(r"^__gufunc__\.(_ZN[^\s:\"(]*__numba_parfor_gufunc[^\s:\"(]*)", re.M)
"""The gufunc wrapper that calls a loop body: where LLVM inlined the body into it, the wrapper's
listing is the only place the loop's instructions are."""


def _function_body(text: str, start: re.Pattern[str], end: re.Pattern[str]) -> list[str]:
    """The lines of one function in a module listing; none if it is not there."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if start.search(line)), None)
    if first is None:
        return []
    last = next((i for i in range(first + 1, len(lines)) if end.search(lines[i])), len(lines))
    return lines[first:last]


def _counted_symbols(symbol: str, asm: str) -> list[str]:
    """The function's symbol and those of its parallel loop bodies, in the order listed.

    Counting the function alone counts a `parallel=True` function's launcher: the fused
    RMSNorm read "ymm 0, zmm 0" while its loop held 41 ymm/zmm instructions. A body that
    LLVM inlined into its gufunc wrapper has no listing of its own: the wrapper is counted
    for it (a CSR row loop read 139 instructions for both arms, the launcher's, while
    the loops held 111 and 181).
    """
    bodies = [name for name in dict.fromkeys(_LOOP_BODY.findall(asm)) if name != symbol]
    inlined = [
        f"__gufunc__.{name}" for name in dict.fromkeys(_GUFUNC_WRAPPER.findall(asm)) if name not in bodies
    ]
    return [symbol, *bodies, *inlined]


def _bodies(text: str, symbols: list[str], start: str, end: re.Pattern[str]) -> list[str]:
    """The lines of every named function in a listing; the whole listing if none is found."""
    lines: list[str] = []
    for symbol in symbols:
        lines += _function_body(text, re.compile(start.format(re.escape(symbol))), end)
    return lines or text.splitlines()


_ASM_END = re.compile(r"^\.Lfunc_end\d+:")


def counted_asm(symbol: str, asm: str, counted: list[str] | None = None) -> list[str]:
    """The assembly lines the counts cover: the function's and its parallel loop bodies'
    (`counted`, where the caller has them already)."""
    return _bodies(asm, counted or _counted_symbols(symbol, asm), r"^{}:", _ASM_END)


def inspect_cpu_function(dispatcher: Any, signature: str, *, name: str | None = None) -> StaticCpuFunction:
    """Compile a Numba CPU function for `signature` and keep its LLVM IR and assembly.

    `dispatcher` is a `numba.njit` function. Numba's module also holds the
    CPython wrapper; the counts cover only the function itself.
    """
    from numba.core import config, sigutils

    name = name or getattr(dispatcher, "py_func", dispatcher).__name__
    tools = {"numba": package_version("numba"), "llvmlite": package_version("llvmlite")}
    try:
        dispatcher.compile(signature)
        args, _ = sigutils.normalize_signature(signature)
        llvm_ir = dispatcher.inspect_llvm(args)
        asm = dispatcher.inspect_asm(args)
        symbol = dispatcher.overloads[args].fndesc.mangled_name
    except Exception as error:  # the function does not type for this signature
        return StaticCpuFunction(
            name=name,
            signature=signature,
            symbol=None,
            llvm_ir=None,
            asm=None,
            missing=f"numba compile failed: {first_line(error)}",
            instructions=None,
            simd_instructions=(),
            ir_vector_instructions=None,
            tools=tuple((k, v) for k, v in tools.items() if v),
        )
    import llvmlite.binding as llvm

    tools["llvm"] = ".".join(map(str, llvm.llvm_version_info))
    tools["target-cpu"] = config.CPU_NAME or llvm.get_host_cpu_name()
    counted = _counted_symbols(symbol, asm)
    body = counted_asm(symbol, asm, counted)
    instructions = [line for line in body if _ASM_INSTRUCTION.match(line)]
    simd: Counter[str] = Counter()
    for line in instructions:
        register = next((r for r in ("zmm", "ymm", "xmm") if f"%{r}" in line), None)
        if register:
            simd[register] += 1
    ir_body = _bodies(llvm_ir, counted, r'^define .*@"?{}"?\(', re.compile(r"^}"))
    return StaticCpuFunction(
        name=name,
        signature=signature,
        symbol=symbol,
        llvm_ir=llvm_ir,
        asm=asm,
        missing=None,
        instructions=len(instructions),
        simd_instructions=tuple((r, simd[r]) for r in ("xmm", "ymm", "zmm")),
        ir_vector_instructions=sum(
            1 for line in ir_body if _IR_VECTOR.search(line) and not line.startswith("define")
        ),
        tools=tuple((k, v) for k, v in tools.items() if v),
    )
