"""The compiled code's part of results.json: what each kernel's code says, without running it.

The run archives every kernel's PTX, cubin and SASS (CUDA) or LLVM IR and
assembly (CPU) under `code/`, and summarises each here: instruction counts
by kind and width, resources, the tools that made them, and why an artefact
is missing. Counts are static: instructions in the code, not executed.
"""

from __future__ import annotations

import attrs

from perfdsl.bundle.plain import EMPTY, Plain, field

STATIC = "static"
"""The kind of evidence a summary is, written with each kernel's and function's: counted in the code."""


def _moves(group: InstructionGroup) -> bool:
    """Whether a kind of instruction moves data: only then are its widths written."""
    return group.by_width_bits is not None


@attrs.frozen
class InstructionGroup(Plain):
    """The instructions of one kind (global loads, barriers, ...) in one kernel's code."""

    count: int
    by_opcode: dict[str, int] = field(absent=EMPTY)
    by_width_bits: dict[str, int] | None = field(default=None, when=_moves)
    """Instructions per bits moved per thread; None, and not written, for kinds that move nothing
    (barriers)."""
    bits: int | None = field(default=None, when=_moves)


@attrs.frozen
class CodeSummary(Plain):
    """Counts of one code listing (PTX or SASS): all instructions, and each kind."""

    instructions: int
    groups: dict[str, InstructionGroup] = field(flat=True)
    """Kind -> its instructions, written beside `instructions` as keys of their own."""


@attrs.frozen
class CudaKernelSummary(Plain):
    """One CUDA kernel's compiled code: counts, resources, and why an artefact is missing."""

    DERIVED = ("evidence",)

    name: str
    signature: str
    arch: str
    symbol: str | None
    ptx_missing: str | None
    cubin_missing: str | None
    sass_missing: str | None
    registers: int | None
    shared_bytes_declared: int | None
    shared_bytes: int | None
    local_bytes: int | None
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    ptx: CodeSummary | None
    sass: CodeSummary | None
    tools: dict[str, str] = field(absent=EMPTY)
    files: tuple[str, ...] = ()
    """The archived files, relative to `code/`."""

    @property
    def evidence(self) -> str:
        """What kind of evidence the summary is, for a reader of the file (STATIC)."""
        return STATIC

    def resources(self) -> dict[str, int | None]:
        """Registers, spills, shared and local memory, by name."""
        return {
            "registers": self.registers,
            "spill_load_bytes": self.spill_load_bytes,
            "spill_store_bytes": self.spill_store_bytes,
            "shared_bytes": self.shared_bytes,
            "local_bytes": self.local_bytes,
        }


@attrs.frozen
class CpuFunctionSummary(Plain):
    """One Numba CPU function's compiled code: its machine and vector instructions."""

    DERIVED = ("evidence",)

    name: str
    signature: str = field(absent=EMPTY)
    symbol: str | None = field(absent=EMPTY)
    missing: str | None = field(absent=EMPTY)
    instructions: int | None = field(absent=EMPTY)
    simd_instructions: dict[str, int] = field(absent=EMPTY)
    """Instructions by the widest SIMD register they name (xmm, ymm, zmm)."""
    ir_vector_instructions: int | None = field(absent=EMPTY)
    tools: dict[str, str] = field(absent=EMPTY)
    files: tuple[str, ...] = ()
    measured: tuple[str, ...] = field(default=(), absent=(), when=lambda cpu: cpu.as_measured is not None)
    """The argument types the measuring workers compiled the function for, in Numba's words
    (results/11; written where `as_measured` is known)."""
    as_measured: bool | None = field(default=None, absent=None, when=lambda cpu: cpu.as_measured is not None)
    """Whether `signature`, the archived code's, is one of `measured`: False, the counts describe
    code that did not run; None, not known (a target that does not report it, or before results/11)."""

    @property
    def evidence(self) -> str:
        """What kind of evidence the summary is, for a reader of the file (STATIC)."""
        return STATIC


@attrs.frozen
class VariantCode(Plain):
    """The kernels and CPU functions one variant launches, by name."""

    ABSENT = EMPTY

    cuda: tuple[str, ...]
    cpu: tuple[str, ...]


@attrs.frozen
class StaticCode(Plain):
    """Every compiled kernel of the run, and which variant launches which."""

    ABSENT = EMPTY

    cuda: dict[str, CudaKernelSummary]
    cpu: dict[str, CpuFunctionSummary]
    variants: dict[str, VariantCode]
    cuda_missing: str | None = None
    """Why no CUDA kernel was compiled (the simulator cannot)."""
