"""The compiled code's part of results.json: what each kernel's code says, without running it.

The run archives every kernel's PTX, cubin and SASS (CUDA) or LLVM IR and
assembly (CPU) under `code/`, and summarises each here: instruction counts
by kind and width, resources, the tools that made them, and why an artefact
is missing. Counts are static: instructions in the code, not executed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class InstructionGroup:
    """The instructions of one kind (global loads, barriers, ...) in one kernel's code."""

    count: int
    by_opcode: dict[str, int]
    by_width_bits: dict[str, int] | None = None
    """Instructions per bits moved per thread; None for kinds that move nothing (barriers)."""
    bits: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"count": self.count, "by_opcode": dict(self.by_opcode)}
        if self.by_width_bits is not None:
            data["by_width_bits"] = dict(self.by_width_bits)
            data["bits"] = self.bits
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InstructionGroup:
        widths = data.get("by_width_bits")
        return cls(
            count=int(data["count"]),
            by_opcode=dict(data.get("by_opcode") or {}),
            by_width_bits=None if widths is None else dict(widths),
            bits=data.get("bits"),
        )


@attrs.frozen
class CodeSummary:
    """Counts of one code listing (PTX or SASS): all instructions, and each kind."""

    instructions: int
    groups: dict[str, InstructionGroup]

    def to_json(self) -> dict[str, Any]:
        return {"instructions": self.instructions, **{k: g.to_json() for k, g in self.groups.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CodeSummary:
        return cls(
            instructions=int(data["instructions"]),
            groups={k: InstructionGroup.from_json(v) for k, v in data.items() if k != "instructions"},
        )


@attrs.frozen
class CudaKernelSummary:
    """One CUDA kernel's compiled code: counts, resources, and why an artefact is missing."""

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
    tools: dict[str, str]
    files: tuple[str, ...] = ()
    """The archived files, relative to `code/`."""

    def resources(self) -> dict[str, int | None]:
        """Registers, spills, shared and local memory, by name."""
        return {
            "registers": self.registers,
            "spill_load_bytes": self.spill_load_bytes,
            "spill_store_bytes": self.spill_store_bytes,
            "shared_bytes": self.shared_bytes,
            "local_bytes": self.local_bytes,
        }

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data.update(
            evidence="static",
            ptx=None if self.ptx is None else self.ptx.to_json(),
            sass=None if self.sass is None else self.sass.to_json(),
            tools=dict(self.tools),
            files=list(self.files),
        )
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CudaKernelSummary:
        ptx, sass = data.get("ptx"), data.get("sass")
        return cls(
            **{
                f.name: data.get(f.name)
                for f in attrs.fields(cls)
                if f.name not in ("ptx", "sass", "tools", "files")
            },
            ptx=None if ptx is None else CodeSummary.from_json(ptx),
            sass=None if sass is None else CodeSummary.from_json(sass),
            tools=dict(data.get("tools") or {}),
            files=tuple(data.get("files") or ()),
        )


@attrs.frozen
class CpuFunctionSummary:
    """One Numba CPU function's compiled code: its machine and vector instructions."""

    name: str
    signature: str
    symbol: str | None
    missing: str | None
    instructions: int | None
    simd_instructions: dict[str, int]
    """Instructions by the widest SIMD register they name (xmm, ymm, zmm)."""
    ir_vector_instructions: int | None
    tools: dict[str, str]
    files: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data.update(
            evidence="static",
            simd_instructions=dict(self.simd_instructions),
            tools=dict(self.tools),
            files=list(self.files),
        )
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CpuFunctionSummary:
        return cls(
            name=str(data["name"]),
            signature=str(data.get("signature", "")),
            symbol=data.get("symbol"),
            missing=data.get("missing"),
            instructions=data.get("instructions"),
            simd_instructions=dict(data.get("simd_instructions") or {}),
            ir_vector_instructions=data.get("ir_vector_instructions"),
            tools=dict(data.get("tools") or {}),
            files=tuple(data.get("files") or ()),
        )


@attrs.frozen
class VariantCode:
    """The kernels and CPU functions one variant launches, by name."""

    cuda: tuple[str, ...]
    cpu: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"cuda": list(self.cuda), "cpu": list(self.cpu)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VariantCode:
        return cls(tuple(data.get("cuda") or ()), tuple(data.get("cpu") or ()))


@attrs.frozen
class StaticCode:
    """Every compiled kernel of the run, and which variant launches which."""

    cuda: dict[str, CudaKernelSummary]
    cpu: dict[str, CpuFunctionSummary]
    variants: dict[str, VariantCode]
    cuda_missing: str | None = None
    """Why no CUDA kernel was compiled (the simulator cannot)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "cuda": {name: k.to_json() for name, k in self.cuda.items()},
            "cpu": {name: f.to_json() for name, f in self.cpu.items()},
            "variants": {name: v.to_json() for name, v in self.variants.items()},
            "cuda_missing": self.cuda_missing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StaticCode:
        return cls(
            cuda={n: CudaKernelSummary.from_json(k) for n, k in (data.get("cuda") or {}).items()},
            cpu={n: CpuFunctionSummary.from_json(f) for n, f in (data.get("cpu") or {}).items()},
            variants={n: VariantCode.from_json(v) for n, v in (data.get("variants") or {}).items()},
            cuda_missing=data.get("cuda_missing"),
        )
