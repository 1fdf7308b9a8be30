"""The compiled code into the bundle: each record's files, and its summary for results.json."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from perfdsl.bundle.static import (
    CodeSummary,
    CpuFunctionSummary,
    CudaKernelSummary,
    InstructionGroup,
    StaticCode,
)
from perfdsl.runtime.static_code.counts import KINDS, CodeCounts, OpCount, by_width, total
from perfdsl.runtime.static_code.cpu import StaticCpuFunction
from perfdsl.runtime.static_code.cuda import StaticKernel


def _code_summary(counts: CodeCounts) -> CodeSummary:
    groups = {}
    for kind in KINDS:
        ops: tuple[OpCount, ...] = getattr(counts, kind)
        by_opcode = {op.opcode: op.count for op in ops}
        if kind == "barriers":
            groups[kind] = InstructionGroup(total(ops), by_opcode)
            continue
        widths = by_width(ops)
        groups[kind] = InstructionGroup(
            count=total(ops),
            by_opcode=by_opcode,
            by_width_bits={str(bits): n for bits, n in widths.items()},
            bits=sum(bits * n for bits, n in widths.items()),
        )
    return CodeSummary(counts.instructions, groups)


def summarize(
    record: StaticKernel | StaticCpuFunction, files: tuple[str, ...] = ()
) -> CudaKernelSummary | CpuFunctionSummary:
    """The facts of one record for results.json: counts, resources, reasons and tool versions.

    The texts themselves are left out: they go to `files` beside the summary.
    """
    if isinstance(record, StaticCpuFunction):
        return CpuFunctionSummary(
            name=record.name,
            signature=record.signature,
            symbol=record.symbol,
            missing=record.missing,
            instructions=record.instructions,
            simd_instructions=dict(record.simd_instructions),
            ir_vector_instructions=record.ir_vector_instructions,
            tools=dict(record.tools),
            files=files,
        )
    return CudaKernelSummary(
        name=record.name,
        signature=record.signature,
        arch=record.arch,
        symbol=record.symbol,
        ptx_missing=record.ptx_missing,
        cubin_missing=record.cubin_missing,
        sass_missing=record.sass_missing,
        registers=record.registers,
        shared_bytes_declared=record.shared_bytes_declared,
        shared_bytes=record.shared_bytes,
        local_bytes=record.local_bytes,
        spill_store_bytes=record.spill_store_bytes,
        spill_load_bytes=record.spill_load_bytes,
        ptx=_code_summary(record.ptx_counts) if record.ptx_counts else None,
        sass=_code_summary(record.sass_counts) if record.sass_counts else None,
        tools=dict(record.tools),
        files=files,
    )


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _artefacts(
    record: StaticKernel | StaticCpuFunction,
) -> tuple[tuple[str, str | bytes | None], ...]:
    if isinstance(record, StaticCpuFunction):
        return (("ll", record.llvm_ir), ("s", record.asm))
    return (("ptx", record.ptx), ("cubin", record.cubin), ("sass", record.sass))


def write_compiled_code(
    directory: Path | str, records: Iterable[StaticKernel | StaticCpuFunction]
) -> StaticCode:
    """Write each record's code as `<name>.ptx/.cubin/.sass` (CUDA) or `<name>.ll/.s` (CPU).

    Returns every kernel's summary with the `files` it wrote (relative to
    `directory`), for the bundle's results; the caller adds which variant
    launches which. The same kernel listed twice (a baseline and a change
    sharing it) is written once; two different kernels under one name are a
    bug in the caller.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, Any]] = {"cuda": {}, "cpu": {}}
    for record in records:
        if not _SAFE_NAME.fullmatch(record.name):
            raise ValueError(f"kernel name {record.name!r} is not a safe file name")
        section = "cpu" if isinstance(record, StaticCpuFunction) else "cuda"
        artefacts = [(f"{record.name}.{suffix}", content) for suffix, content in _artefacts(record)]
        entry = summarize(record, tuple(file for file, content in artefacts if content is not None))
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
    return StaticCode(cuda=written["cuda"], cpu=written["cpu"], variants={})
