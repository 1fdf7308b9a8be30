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
use them, so importing this module costs nothing.
"""

from __future__ import annotations

import importlib.metadata
import re
import struct
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

DEFAULT_CC: tuple[int, int] = (9, 0)
"""Hopper (H100/H200): the architecture the bundled studies are measured on."""

_TOOL_TIMEOUT_S = 60


@attrs.frozen
class OpCount:
    """How often one opcode occurs, and how many bits one execution moves per thread."""

    opcode: str
    """With its modifiers, as the listing spells it: `LDG.E.128`, `ld.global.v4.f32`."""
    count: int
    width_bits: int | None
    """Access width for loads, stores and atomics; None for barriers."""


@attrs.frozen
class CodeCounts:
    """The memory, atomic and barrier instructions of one listing (PTX or SASS).

    Each field holds the opcodes of one kind, sorted by opcode. Generic loads and
    stores are those the compiler could not place in a state space; in SASS they
    are `LD`/`ST`, in PTX `ld`/`st` without `.global`/`.shared`/`.local`.
    """

    instructions: int
    """Every instruction in the listing (SASS: without the NOP padding)."""
    global_loads: tuple[OpCount, ...]
    global_stores: tuple[OpCount, ...]
    shared_loads: tuple[OpCount, ...]
    shared_stores: tuple[OpCount, ...]
    local_loads: tuple[OpCount, ...]
    local_stores: tuple[OpCount, ...]
    generic_loads: tuple[OpCount, ...]
    generic_stores: tuple[OpCount, ...]
    atomics: tuple[OpCount, ...]
    barriers: tuple[OpCount, ...]


_KINDS = tuple(f.name for f in attrs.fields(CodeCounts) if f.name != "instructions")


def total(ops: tuple[OpCount, ...]) -> int:
    """The number of instructions of one kind, whatever their width."""
    return sum(op.count for op in ops)


def by_width(ops: tuple[OpCount, ...]) -> dict[int, int]:
    """Instructions of one kind per access width in bits, e.g. {32: 3, 128: 1}."""
    widths: Counter[int] = Counter()
    for op in ops:
        if op.width_bits is not None:
            widths[op.width_bits] += op.count
    return dict(sorted(widths.items()))


def _counts(
    instructions: int, found: dict[str, Counter[str]], width: Callable[[str], int | None]
) -> CodeCounts:
    return CodeCounts(
        instructions,
        *(
            tuple(
                OpCount(op, n, None if kind == "barriers" else width(op))
                for op, n in sorted(found.get(kind, Counter()).items())
            )
            for kind in _KINDS
        ),
    )


# SASS: `/*0370*/   @!P1 STS [R11], R10 ;` -> "STS". The opcode is the first word
# after the address and the optional predicate.
_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_SASS_KIND = {
    "LDG": "global_loads",
    "STG": "global_stores",
    "LDS": "shared_loads",
    "STS": "shared_stores",
    "LDL": "local_loads",
    "STL": "local_stores",
    "LD": "generic_loads",
    "ST": "generic_stores",
    "ATOM": "atomics",
    "ATOMG": "atomics",
    "ATOMS": "atomics",
    "RED": "atomics",
    "REDG": "atomics",
    "BAR": "barriers",
}


def _sass_width(opcode: str) -> int:
    """Width of a SASS memory access: `.128`/`.64`/`.U16`/`.S8` modifiers, else 32 bits."""
    mods = opcode.split(".")[1:]
    for mod, bits in (("128", 128), ("64", 64), ("U16", 16), ("S16", 16), ("U8", 8), ("S8", 8)):
        if mod in mods:
            return bits
    return 32


def count_sass(sass: str) -> CodeCounts:
    """Count memory, atomic and barrier instructions in nvdisasm (or `inspect_sass`) output."""
    found: dict[str, Counter[str]] = {}
    instructions = 0
    for line in sass.splitlines():
        match = _SASS_LINE.match(line)
        if match is None:
            continue
        opcode = match.group(1)
        base = opcode.split(".")[0]
        if base == "NOP":
            continue
        instructions += 1
        kind = _SASS_KIND.get(base)
        if kind is not None:
            found.setdefault(kind, Counter())[opcode] += 1
    return _counts(instructions, found, _sass_width)


# PTX: `\t@%p1 ld.global.nc.v4.f32 \t{...}, [%rd5];` -> "ld.global.nc.v4.f32".
_PTX_LINE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)*)[\s;]")
_PTX_SPACES = ("global", "shared", "local", "param", "const")
_PTX_TYPE = re.compile(r"^[bsuf](8|16|32|64|128)$")


def _ptx_width(opcode: str) -> int | None:
    """Width of a PTX access: the element type's bits times the vector length."""
    parts = opcode.split(".")
    lanes = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    bits = next((int(m.group(1)) for p in reversed(parts) if (m := _PTX_TYPE.match(p))), None)
    return None if bits is None else bits * lanes


def count_ptx(ptx: str) -> CodeCounts:
    """Count memory, atomic and barrier instructions in PTX (not parameter or constant loads)."""
    found: dict[str, Counter[str]] = {}
    instructions = 0
    for line in ptx.splitlines():
        match = _PTX_LINE.match(line)
        if match is None:
            continue
        opcode = match.group(1)
        parts = opcode.split(".")
        instructions += 1
        head = parts[0]
        # The state space may follow qualifiers (`ld.volatile.global`) and carry a
        # scope (`st.shared::cta`); none at all means a generic address.
        space = next((p for p in (q.split("::")[0] for q in parts[1:]) if p in _PTX_SPACES), None)
        if head in ("ld", "ldu", "st"):
            if space in ("param", "const"):
                continue
            direction = "stores" if head == "st" else "loads"
            kind = f"{space or 'generic'}_{direction}"
        elif head in ("atom", "red"):
            kind = "atomics"
        elif head in ("bar", "barrier"):
            kind = "barriers"
        else:
            continue
        found.setdefault(kind, Counter())[opcode] += 1
    return _counts(instructions, found, _ptx_width)


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
    """Machine instructions in the function itself (not its Python wrapper)."""
    simd_instructions: tuple[tuple[str, int], ...]
    """Instructions naming an xmm, ymm or zmm register, by the widest they name:
    ymm or zmm means the loop was vectorised with AVX2 or AVX-512 (xmm also covers
    scalar floating point)."""
    ir_vector_instructions: int | None
    """LLVM IR instructions of the function with a `<N x T>` vector type."""
    tools: tuple[tuple[str, str], ...]


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def _compile_ptx(pyfunc: Any, signature: str, cc: tuple[int, int]) -> tuple[str | None, str | None]:
    from numba import config

    if config.ENABLE_CUDASIM:
        return None, "NUMBA_ENABLE_CUDASIM=1: numba.cuda is the simulator, which compiles no PTX"
    try:
        from numba import cuda

        ptx, _ = cuda.compile_ptx(pyfunc, signature, cc=cc)
    except Exception as error:  # NVVM missing, or the kernel does not type for this signature
        return None, f"numba.cuda.compile_ptx failed: {_first_line(error)}"
    return ptx, None


def _link(ptx: str, arch: str) -> tuple[bytes | None, str, str | None, str | None]:
    """PTX -> cubin with nvJitLink; returns (cubin, info log, nvJitLink version, why no cubin)."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError as error:
        reason = f"nvJitLink not importable (install numba-cuda[cu13]): {_first_line(error)}"
        return None, "", None, reason
    version = ".".join(map(str, nvjitlink.version()))
    data = ptx.encode()
    options = [f"-arch={arch}".encode(), b"-verbose"]  # options must be bytes, not str
    try:
        handle = nvjitlink.create(len(options), options)
    except nvjitlink.nvJitLinkError as error:
        return None, "", version, f"nvJitLink rejected {options}: {error}"
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
    except nvjitlink.nvJitLinkError as error:
        log = bytearray(nvjitlink.get_error_log_size(handle))
        nvjitlink.get_error_log(handle, log)
        detail = log.rstrip(b"\0").decode(errors="replace").strip().replace("\n", "; ")
        nvjitlink.destroy(handle)
        return None, "", version, f"nvJitLink failed ({error}): {detail}"
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    log = bytearray(nvjitlink.get_info_log_size(handle))
    nvjitlink.get_info_log(handle, log)
    nvjitlink.destroy(handle)
    return bytes(cubin), log.rstrip(b"\0").decode(errors="replace"), version, None


def _find_nvdisasm() -> str | None:
    """The disassembler from the nvidia-cuda-nvdisasm wheel first, then a CUDA toolkit."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        import shutil

        return shutil.which("nvdisasm")
    return find_nvidia_binary_utility("nvdisasm")


def _tool_version(executable: str) -> str | None:
    """ "13.5.37" from the `V13.5.37` in `--version` (the CUDA tools' common banner)."""
    try:
        result = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\bV(\d+\.\d+\.\d+)", result.stdout)
    return match.group(1) if match else None


def _disassemble(cubin: bytes, workdir: Path) -> tuple[str | None, str | None, str | None]:
    """cubin -> SASS with nvdisasm; returns (sass, nvdisasm version, reason it is missing)."""
    nvdisasm = _find_nvdisasm()
    if nvdisasm is None:
        return None, None, "nvdisasm not found (pip install nvidia-cuda-nvdisasm)"
    path = workdir / "kernel.cubin"
    path.write_bytes(cubin)
    try:
        result = subprocess.run(
            [nvdisasm, "-c", str(path)], capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, None, f"nvdisasm at {nvdisasm} did not run: {_first_line(error)}"
    if result.returncode != 0:
        detail = result.stderr.strip().replace("\n", "; ")
        return None, None, f"nvdisasm exited with {result.returncode}: {detail}"
    return result.stdout, _tool_version(nvdisasm), None


def _elf_section_sizes(image: bytes) -> dict[str, int]:
    """Section name -> size in bytes, from a 64-bit little-endian ELF image such as a cubin."""
    if image[:4] != b"\x7fELF" or image[4:6] != b"\x02\x01":
        return {}
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]

    def name(offset: int) -> str:
        start = names + offset
        return image[start : image.index(b"\0", start)].decode(errors="replace")

    return {name(h[0]): h[5] for h in headers}


_PTX_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(")
_PTX_SHARED = re.compile(
    r"^\s*(?:\.visible\s+)?\.shared\s+(?:\.align\s+\d+\s+)?\.[bsuf](8|16|32|64)\s+[\w$.]+\[(\d+)\]",
    re.MULTILINE,
)
_PTX_HEADER = re.compile(r"Cuda compilation tools, release [\d.]+, V(\d+\.\d+\.\d+)")
_PTX_VERSION = re.compile(r"^\.version\s+(\S+)", re.MULTILINE)


def _shared_declared(ptx: str) -> int:
    """Bytes of the fixed-size `.shared` arrays in PTX; `extern` (dynamic) arrays have no size."""
    return sum(int(bits) // 8 * int(n) for bits, n in _PTX_SHARED.findall(ptx))


_LOG_FUNCTION = re.compile(r"Function properties for '?([^'\s:]+)")
_LOG_PROPERTIES = {
    "local_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_store_bytes": re.compile(r"(\d+) bytes spill stores"),
    "spill_load_bytes": re.compile(r"(\d+) bytes spill loads"),
    "registers": re.compile(r"[Uu]sed (\d+) registers"),
}


def _function_properties(log: str, symbol: str) -> dict[str, int]:
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
    tools: dict[str, str | None] = {"numba-cuda": _version("numba-cuda")}
    ptx, ptx_missing = _compile_ptx(pyfunc, signature, cc)
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
        cubin, log, tools["nvjitlink"], cubin_missing = _link(ptx, arch)
        if cubin is None:
            sass_missing = f"no cubin: {cubin_missing}"
        else:
            with tempfile.TemporaryDirectory(prefix="perfdsl-sass-") as workdir:
                sass, tools["nvdisasm"], sass_missing = _disassemble(cubin, Path(workdir))
    properties = _function_properties(log, symbol) if symbol else {}
    sections = _elf_section_sizes(cubin) if cubin else {}
    return StaticKernel(
        name=name or pyfunc.__name__,
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
        shared_bytes_declared=_shared_declared(ptx) if ptx else None,
        shared_bytes=sections.get(f".nv.shared.{symbol}", 0) if sections else None,
        local_bytes=properties.get("local_bytes"),
        spill_store_bytes=properties.get("spill_store_bytes"),
        spill_load_bytes=properties.get("spill_load_bytes"),
        tools=tuple((tool, v) for tool, v in tools.items() if v is not None),
    )


_ASM_INSTRUCTION = re.compile(r"^\t([a-z][a-z0-9]*)\b")
_IR_VECTOR = re.compile(r"<\d+ x ")


def _function_body(text: str, start: re.Pattern[str], end: re.Pattern[str]) -> list[str]:
    """The lines of one function in a module listing; the whole listing if it is not found."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if start.search(line)), None)
    if first is None:
        return lines
    last = next((i for i in range(first + 1, len(lines)) if end.search(lines[i])), len(lines))
    return lines[first:last]


def inspect_cpu_function(dispatcher: Any, signature: str, *, name: str | None = None) -> StaticCpuFunction:
    """Compile a Numba CPU function for `signature` and keep its LLVM IR and assembly.

    `dispatcher` is a `numba.njit` function. Numba's module also holds the
    CPython wrapper; the counts cover only the function itself.
    """
    from numba.core import config, sigutils

    name = name or getattr(dispatcher, "py_func", dispatcher).__name__
    tools = {"numba": _version("numba"), "llvmlite": _version("llvmlite")}
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
            missing=f"numba compile failed: {_first_line(error)}",
            instructions=None,
            simd_instructions=(),
            ir_vector_instructions=None,
            tools=tuple((k, v) for k, v in tools.items() if v),
        )
    import llvmlite.binding as llvm

    tools["llvm"] = ".".join(map(str, llvm.llvm_version_info))
    tools["target-cpu"] = config.CPU_NAME or llvm.get_host_cpu_name()
    escaped = re.escape(symbol)
    body = _function_body(asm, re.compile(rf"^{escaped}:"), re.compile(r"^\.Lfunc_end\d+:"))
    instructions = [line for line in body if _ASM_INSTRUCTION.match(line)]
    simd: Counter[str] = Counter()
    for line in instructions:
        register = next((r for r in ("zmm", "ymm", "xmm") if f"%{r}" in line), None)
        if register:
            simd[register] += 1
    ir_body = _function_body(llvm_ir, re.compile(rf"^define .*@\"?{escaped}\"?\("), re.compile(r"^}"))
    return StaticCpuFunction(
        name=name,
        signature=signature,
        symbol=symbol,
        llvm_ir=llvm_ir,
        asm=asm,
        missing=None,
        instructions=len(instructions),
        simd_instructions=tuple((r, simd[r]) for r in ("xmm", "ymm", "zmm")),
        ir_vector_instructions=sum(1 for line in ir_body[1:] if _IR_VECTOR.search(line)),
        tools=tuple((k, v) for k, v in tools.items() if v),
    )


def _counts_summary(counts: CodeCounts) -> dict[str, Any]:
    summary: dict[str, Any] = {"instructions": counts.instructions}
    for kind in _KINDS:
        ops: tuple[OpCount, ...] = getattr(counts, kind)
        entry: dict[str, Any] = {
            "count": total(ops),
            "by_opcode": {op.opcode: op.count for op in ops},
        }
        if kind != "barriers":
            widths = by_width(ops)
            entry["by_width_bits"] = {str(bits): n for bits, n in widths.items()}
            entry["bits"] = sum(bits * n for bits, n in widths.items())
        summary[kind] = entry
    return summary


def summarize(record: StaticKernel | StaticCpuFunction) -> dict[str, Any]:
    """The JSON-serialisable facts of one record: counts, resources, reasons and tool versions.

    The texts themselves are left out: they go to files beside the summary.
    """
    if isinstance(record, StaticCpuFunction):
        return {
            "evidence": "static",
            "name": record.name,
            "signature": record.signature,
            "symbol": record.symbol,
            "missing": record.missing,
            "instructions": record.instructions,
            "simd_instructions": dict(record.simd_instructions),
            "ir_vector_instructions": record.ir_vector_instructions,
            "tools": dict(record.tools),
        }
    return {
        "evidence": "static",
        "name": record.name,
        "signature": record.signature,
        "arch": record.arch,
        "symbol": record.symbol,
        "ptx_missing": record.ptx_missing,
        "cubin_missing": record.cubin_missing,
        "sass_missing": record.sass_missing,
        "registers": record.registers,
        "shared_bytes_declared": record.shared_bytes_declared,
        "shared_bytes": record.shared_bytes,
        "local_bytes": record.local_bytes,
        "spill_store_bytes": record.spill_store_bytes,
        "spill_load_bytes": record.spill_load_bytes,
        "ptx": _counts_summary(record.ptx_counts) if record.ptx_counts else None,
        "sass": _counts_summary(record.sass_counts) if record.sass_counts else None,
        "tools": dict(record.tools),
    }


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _artefacts(
    record: StaticKernel | StaticCpuFunction,
) -> tuple[tuple[str, str | bytes | None], ...]:
    if isinstance(record, StaticCpuFunction):
        return (("ll", record.llvm_ir), ("s", record.asm))
    return (("ptx", record.ptx), ("cubin", record.cubin), ("sass", record.sass))


def write_compiled_code(
    directory: Path | str, records: Iterable[StaticKernel | StaticCpuFunction]
) -> dict[str, Any]:
    """Write each record's code as `<name>.ptx/.cubin/.sass` (CUDA) or `<name>.ll/.s` (CPU).

    Returns {"cuda": {name: summary}, "cpu": {name: summary}}, each summary with
    the `files` it wrote (relative to `directory`), for the bundle's results. The
    same kernel listed twice (a baseline and a change sharing it) is written
    once; two different kernels under one name are a bug in the caller.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, Any]] = {"cuda": {}, "cpu": {}}
    for record in records:
        if not _SAFE_NAME.fullmatch(record.name):
            raise ValueError(f"kernel name {record.name!r} is not a safe file name")
        section = "cpu" if isinstance(record, StaticCpuFunction) else "cuda"
        artefacts = [(f"{record.name}.{suffix}", content) for suffix, content in _artefacts(record)]
        entry = summarize(record)
        entry["files"] = [file for file, content in artefacts if content is not None]
        previous = written[section].get(record.name)
        if previous is not None:
            if previous != entry:
                raise ValueError(f"two different {section} kernels are both named {record.name!r}")
            continue
        for file, content in artefacts:
            if isinstance(content, bytes):
                (directory / file).write_bytes(content)
            elif content is not None:
                (directory / file).write_text(content, encoding="utf-8")
        written[section][record.name] = entry
    return written
