"""Foreign kernels' compiled code: archived from what the implementation hands over, counted by name.

The cubin reader and the PTX-only path are checked against Numba's own kernels
(no Triton needed); the Triton tests compile for sm_90 without a GPU and skip
where Triton is not installed (it is the optional `triton` extra).
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from kernels.rmsnorm import _SIG_FUSED, rmsnorm_fused_kernel
from kernels.transpose import _SIG as _SIG_TRANSPOSE
from kernels.transpose import transpose_padded_kernel
from perfdsl.kernel import KernelCode, Variant
from perfdsl.runtime.counters.attribution import attribute
from perfdsl.runtime.counters.names import foreign_kernel_names, kernel_regex
from perfdsl.runtime.counters.ncu_csv import parse_raw_csv
from perfdsl.runtime.static_code.archive import write_compiled_code
from perfdsl.runtime.static_code.cubin import function_attributes
from perfdsl.runtime.static_code.cuda import inspect_cuda_kernel
from perfdsl.runtime.static_code.foreign import inspect_kernel_code, missing_code

FIXTURES = Path(__file__).parent / "fixtures"
NUMBA_KERNELS = (
    (rmsnorm_fused_kernel, _SIG_FUSED),
    (transpose_padded_kernel, _SIG_TRANSPOSE.replace("{dtype}", "float32")),
)


@pytest.fixture(scope="module")
def numba_records() -> list:
    records = [inspect_cuda_kernel(kernel, signature) for kernel, signature in NUMBA_KERNELS]
    if any(record.cubin is None for record in records):
        pytest.skip(f"no cubin here: {records[0].cubin_missing}")
    return records


@pytest.mark.slow
def test_cubin_attributes_agree_with_the_linker_log(numba_records: list) -> None:
    for record in numba_records:
        found = function_attributes(record.cubin, record.symbol)
        assert found == {"registers": record.registers, "local_bytes": record.local_bytes}
        assert found["registers"] > 0
    assert function_attributes(numba_records[0].cubin, "no_such_kernel") == {}
    assert function_attributes(b"not an elf", "x") == {}


@pytest.mark.slow
def test_handed_over_ptx_is_assembled_and_read_like_numba_code(numba_records: list) -> None:
    record = numba_records[1]
    code = KernelCode(name=record.symbol, ptx=record.ptx, signature="from numba", compiler="numba-cuda 0")
    foreign = inspect_kernel_code(code)
    assert foreign.cubin is not None and foreign.sass is not None, foreign.sass_missing
    assert foreign.arch == "sm_90"
    assert foreign.sass_counts == record.sass_counts
    assert foreign.ptx_counts == record.ptx_counts
    assert foreign.registers == record.registers
    assert foreign.shared_bytes == record.shared_bytes > 0
    assert ("numba-cuda", "0") in foreign.tools


@pytest.mark.slow
def test_handed_over_cubin_is_the_one_disassembled(numba_records: list) -> None:
    record = numba_records[0]
    code = KernelCode(name=record.symbol, cubin=record.cubin)
    foreign = inspect_kernel_code(code)
    assert foreign.cubin == record.cubin
    assert foreign.sass == record.sass
    assert foreign.ptx is None and foreign.ptx_missing == "the implementation handed over no PTX"
    assert foreign.registers == record.registers


def test_nothing_handed_over_says_why_and_archives() -> None:
    empty = inspect_kernel_code(KernelCode(name="empty_kernel"))
    assert empty.cubin is None and "neither PTX nor a cubin" in (empty.cubin_missing or "")
    failed = missing_code("triton_fused", "`triton_fused.cuda_code` raised ModuleNotFoundError")
    assert failed.name == "triton_fused.cuda_code"
    assert "ModuleNotFoundError" in (failed.ptx_missing or "")


# --- counting by the names the hook declares ------------------------------------------------


def _code(*names: str):
    return lambda dtype, cc: tuple(KernelCode(name=name) for name in names)


def _broken(dtype: str, cc: tuple[int, int]) -> tuple[KernelCode, ...]:
    raise ModuleNotFoundError("No module named 'triton'")


def test_foreign_names_come_from_the_hook_and_a_failing_hook_gives_none() -> None:
    call = lambda stream, **arrays: lambda: None  # noqa: E731
    both = _code("rmsnorm_triton_kernel", "rmsnorm_triton_aligned_kernel")
    variants = [
        Variant(name="a", cuda_bind=call, cuda_code=both),
        Variant(name="b", cuda_bind=call, cuda_code=_broken),
        Variant(name="numba", cuda=lambda stream, **arrays: None),
    ]
    assert foreign_kernel_names(variants, "float32", (9, 0)) == (
        "rmsnorm_triton_aligned_kernel",
        "rmsnorm_triton_kernel",
    )


def test_kernel_filter_matches_foreign_names_whole() -> None:
    pattern = re.compile(kernel_regex(["rmsnorm_square_kernel"], ["rmsnorm_triton_kernel"]))
    assert pattern.search("rmsnorm_triton_kernel")
    assert not pattern.search("rmsnorm_triton_kernel_0d1d2d")
    assert not pattern.search("my_rmsnorm_triton_kernel")
    assert pattern.search("_ZN7kernels7rmsnorm21rmsnorm_square_kernelB2v1B94cw51cE")
    assert pattern.search("_ZN8__main__23perfdsl_counters_markerB2v1E")


def test_planted_csv_attributes_a_triton_kernel_to_its_arm_by_the_markers() -> None:
    metrics = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")
    table = parse_raw_csv((FIXTURES / "ncu_raw_rmsnorm_triton.csv").read_text(encoding="utf-8"), metrics)
    arms = (("baseline", "unfused"), ("change", "triton_fused"))
    baseline, change = attribute(table, arms, ("bytes", "launches"), metrics, "ncu", 130)
    assert [k.name for k in baseline.kernels] == [
        "rmsnorm_reduce_kernel",
        "rmsnorm_scale_kernel",
        "rmsnorm_square_kernel",
    ]
    assert [k.name for k in change.kernels] == ["rmsnorm_triton_aligned_kernel"]
    assert change.launches == 1
    assert change.quantities["bytes"] == 134254592 + 134217760


# --- Triton, compiled for Hopper without a GPU -----------------------------------------------


@pytest.fixture(scope="module")
def triton_codes() -> tuple[KernelCode, ...]:
    pytest.importorskip("triton")
    from kernels.triton_rmsnorm import fused

    assert fused.cuda_code is not None
    return tuple(fused.cuda_code("float32", (9, 0)))


def test_triton_compiles_for_sm_90_without_a_device(triton_codes: tuple[KernelCode, ...]) -> None:
    names = [code.name for code in triton_codes]
    assert names == ["rmsnorm_triton_kernel", "rmsnorm_triton_aligned_kernel"]
    for code in triton_codes:
        assert code.ptx is not None and re.search(r"^\.target sm_90a?\b", code.ptx, re.MULTILINE)
        assert re.search(rf"\.entry {code.name}\(", code.ptx)
        assert code.cubin is not None and code.cubin[:4] == b"\x7fELF"
        assert code.compiler.startswith("triton ")
        assert "BLOCK=1024" in code.signature


def test_triton_code_is_archived_and_read_through_the_static_path(
    triton_codes: tuple[KernelCode, ...], tmp_path: Path
) -> None:
    records = [inspect_kernel_code(code) for code in triton_codes]
    summary = write_compiled_code(tmp_path, records)
    for code in triton_codes:
        assert (tmp_path / f"{code.name}.ptx").read_text(encoding="utf-8") == code.ptx
        assert (tmp_path / f"{code.name}.cubin").read_bytes() == code.cubin
        assert summary.cuda[code.name].arch == "sm_90a"
        assert summary.cuda[code.name].registers
    generic, aligned = records
    if aligned.sass is None:
        pytest.skip(f"no SASS here: {aligned.sass_missing}")
    assert (tmp_path / "rmsnorm_triton_aligned_kernel.sass").exists()
    # The mechanism the specialisation exists for: 128-bit loads only where rows are aligned.
    widths = {op.width_bits for op in aligned.sass_counts.global_loads}
    assert widths == {128}
    assert {op.width_bits for op in generic.sass_counts.global_loads} == {32}


def test_triton_ptx_alone_links_for_its_own_target(triton_codes: tuple[KernelCode, ...]) -> None:
    record = inspect_kernel_code(attrs.evolve(triton_codes[1], cubin=None))
    assert record.arch == "sm_90a"
    assert record.cubin is not None, record.cubin_missing
