"""Static evidence from compiled code: PTX, SASS and resources of tiny kernels, on a CPU-only machine.

The kernels are chosen so that each count has a known answer: one or two global
stores per thread, a 32x32 or a 32x33 shared tile, one barrier.
"""

from __future__ import annotations

import importlib.util
import json
import re

import attrs
import numpy as np
import pytest
from numba import cuda, float32, njit, prange

from perfdsl.runtime.static_code import toolchain
from perfdsl.runtime.static_code.archive import write_compiled_code
from perfdsl.runtime.static_code.counts import by_width, count_ptx, count_sass, total
from perfdsl.runtime.static_code.cpu import counted_asm, inspect_cpu_function
from perfdsl.runtime.static_code.cuda import StaticKernel, inspect_cuda_kernel


@cuda.jit
def scale_add(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i] + y[i]


@cuda.jit
def scale_add_twice(x, y, out, out2):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i] + y[i]
        out2[i] = x[i] - y[i]


@cuda.jit
def transpose_tile32(a, b):
    tile = cuda.shared.array((32, 32), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.blockIdx.x * 32 + tx, cuda.blockIdx.y * 32 + ty
    if y < a.shape[0] and x < a.shape[1]:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * 32 + tx, cuda.blockIdx.x * 32 + ty
    if y < b.shape[0] and x < b.shape[1]:
        b[y, x] = tile[tx, ty]


@cuda.jit
def transpose_tile33(a, b):
    tile = cuda.shared.array((32, 33), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.blockIdx.x * 32 + tx, cuda.blockIdx.y * 32 + ty
    if y < a.shape[0] and x < a.shape[1]:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * 32 + tx, cuda.blockIdx.x * 32 + ty
    if y < b.shape[0] and x < b.shape[1]:
        b[y, x] = tile[tx, ty]


@njit
def cpu_scale_add(x, y, out):
    for i in range(x.size):
        out[i] = 2.0 * x[i] + y[i]


VEC = "void(float32[::1], float32[::1], float32[::1])"
VEC4 = "void(float32[::1], float32[::1], float32[::1], float32[::1])"
MAT = "void(float32[:, ::1], float32[:, ::1])"


def _sass_unavailable() -> str | None:
    """Why SASS cannot be produced on this machine, or None when it can."""
    if importlib.util.find_spec("cuda.bindings.nvjitlink") is None:
        return "nvJitLink not installed (numba-cuda[cu13])"
    if toolchain.find_nvdisasm() is None:
        return "nvdisasm not installed (pip install nvidia-cuda-nvdisasm)"
    return None


needs_sass = pytest.mark.skipif(_sass_unavailable() is not None, reason=str(_sass_unavailable()))


@pytest.fixture(scope="module")
def kernels() -> dict[str, StaticKernel]:
    """Each test kernel compiled once: NVVM takes about a second per kernel."""
    return {
        "one": inspect_cuda_kernel(scale_add, VEC),
        "two": inspect_cuda_kernel(scale_add_twice, VEC4),
        "tile32": inspect_cuda_kernel(transpose_tile32, MAT),
        "tile33": inspect_cuda_kernel(transpose_tile33, MAT),
    }


@pytest.mark.slow
def test_ptx_holds_the_kernel_entry(kernels):
    k = kernels["one"]
    assert k.ptx_missing is None
    assert k.name == "scale_add"
    assert k.arch == "sm_90"
    assert k.symbol is not None and "scale_add" in k.symbol
    assert f".entry {k.symbol}(" in k.ptx
    assert ".target sm_90" in k.ptx
    assert total(k.ptx_counts.global_loads) == 2
    assert total(k.ptx_counts.global_stores) == 1


@pytest.mark.slow
@needs_sass
def test_sass_has_global_loads_and_stores(kernels):
    k = kernels["one"]
    assert k.sass_missing is None and k.cubin_missing is None
    assert "LDG" in k.sass and "STG" in k.sass
    assert total(k.sass_counts.global_loads) == 2
    assert by_width(k.sass_counts.global_loads) == {32: 2}
    assert total(k.sass_counts.global_stores) == 1
    assert dict(k.tools)["nvdisasm"]
    assert k.cubin.startswith(b"\x7fELF")


@pytest.mark.slow
@needs_sass
def test_two_stores_per_thread_count_more_than_one(kernels):
    one, two = kernels["one"].sass_counts, kernels["two"].sass_counts
    assert total(two.global_stores) == 2
    assert total(two.global_stores) > total(one.global_stores)


@pytest.mark.slow
@needs_sass
def test_padded_tile_declares_more_shared_memory(kernels):
    k32, k33 = kernels["tile32"], kernels["tile33"]
    assert k32.shared_bytes_declared == 32 * 32 * 4
    assert k33.shared_bytes_declared == 32 * 33 * 4
    assert k33.shared_bytes > k32.shared_bytes >= k32.shared_bytes_declared
    assert kernels["one"].shared_bytes == 0
    for k in (k32, k33):
        assert total(k.sass_counts.shared_loads) >= 1
        assert total(k.sass_counts.shared_stores) >= 1
        assert total(k.sass_counts.barriers) == 1
        assert any(op.opcode.startswith("BAR.SYNC") for op in k.sass_counts.barriers)


@pytest.mark.slow
@needs_sass
def test_resources_come_from_the_linker(kernels):
    for k in kernels.values():
        assert isinstance(k.registers, int) and k.registers > 0
        assert k.local_bytes == 0
        assert k.spill_store_bytes == 0 and k.spill_load_bytes == 0


@pytest.mark.slow
def test_missing_disassembler_is_a_reason_not_an_error(monkeypatch):
    monkeypatch.setattr(toolchain, "find_nvdisasm", lambda: None)
    k = inspect_cuda_kernel(scale_add, VEC)
    assert k.sass is None and k.sass_counts is None
    assert "nvdisasm" in k.sass_missing
    assert k.ptx is not None and k.ptx_counts is not None


def test_a_kernel_that_does_not_type_is_a_reason_not_an_error():
    k = inspect_cuda_kernel(scale_add, "void(float32[::1])")
    assert k.ptx is None and k.sass is None and k.registers is None
    assert k.ptx_missing.startswith("numba.cuda.compile_ptx failed")
    assert k.sass_missing.startswith("no PTX")


def test_count_sass_reads_widths_predicates_and_skips_padding():
    sass = """
        /*0100*/               @P1 BRA `(.L_x_1) ;
        /*0110*/                   LDG.E.128 R4, desc[UR8][R2.64] ;
        /*0120*/              @!P0 LDG.E R10, desc[UR8][R10.64] ;
        /*0130*/                   LDG.E.64.CONSTANT R6, desc[UR8][R2.64] ;
        /*0140*/                   STS.U16 [R11], R10 ;
        /*0150*/                   LDSM.16.M88.4 R8, [R3] ;
        /*0160*/                   ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R2, [R4.64], R5 ;
        /*0170*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0180*/                   NOP;
    """
    counts = count_sass(sass)
    assert counts.instructions == 8
    assert {op.opcode: op.count for op in counts.global_loads} == {
        "LDG.E": 1,
        "LDG.E.128": 1,
        "LDG.E.64.CONSTANT": 1,
    }
    assert by_width(counts.global_loads) == {32: 1, 64: 1, 128: 1}
    assert by_width(counts.shared_stores) == {16: 1}
    assert total(counts.shared_loads) == 0  # LDSM is a matrix load, not LDS
    assert total(counts.atomics) == 1
    assert counts.barriers[0].width_bits is None


def test_count_ptx_finds_state_spaces_and_skips_parameters():
    ptx = """
\tld.param.u64 \t%rd1, [scale_add_param_0];
\t@%p1 ld.volatile.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd5];
\tld.u32 \t%r1, [%rd2];
\tst.shared::cta.f32 \t[%r2], %f1;
\tred.global.add.f32 \t[%rd3], %f1;
\tbar.sync \t0;
"""
    counts = count_ptx(ptx)
    assert counts.instructions == 6
    assert [(op.opcode, op.width_bits) for op in counts.global_loads] == [
        ("ld.volatile.global.nc.v4.f32", 128)
    ]
    assert total(counts.generic_loads) == 1
    assert total(counts.shared_stores) == 1
    assert total(counts.atomics) == 1 and total(counts.barriers) == 1


def test_cpu_function_gives_llvm_ir_and_assembly():
    f = inspect_cpu_function(cpu_scale_add, VEC)
    assert f.missing is None
    assert f.symbol is not None and "cpu_scale_add" in f.symbol
    assert f"@{f.symbol}(" in f.llvm_ir
    assert f"{f.symbol}:" in f.asm
    assert f.instructions > 0
    assert set(dict(f.simd_instructions)) == {"xmm", "ymm", "zmm"}
    assert f.ir_vector_instructions >= 0
    assert {"numba", "llvmlite", "llvm"} <= set(dict(f.tools))
    x = np.ones(8, np.float32)
    out = np.empty_like(x)
    cpu_scale_add(x, x, out)  # the inspected overload is the one that runs
    assert (out == 3.0).all()


@njit(parallel=True)
def cpu_row_scale(x, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] * np.float32(2.0) + np.float32(1.0)


def test_a_parallel_function_is_counted_with_its_loop_body():
    """`parallel=True` compiles the prange loop into a gufunc of its own, which the function only
    launches: counting the launcher alone found no vector instruction in a vectorised loop."""
    f = inspect_cpu_function(cpu_row_scale, "void(float32[:, ::1], float32[:, ::1])")
    assert f.missing is None
    loop = f.asm.split("__numba_parfor_gufunc", 1)[1]
    assert loop and f.ir_vector_instructions > 0
    launcher = inspect_cpu_function(cpu_scale_add, VEC)  # a plain function: nothing more is counted
    assert "__numba_parfor_gufunc" not in launcher.asm


@njit(parallel=True)
def cpu_csr_row_sums(indptr, indices, data, x, y):
    for i in prange(y.size):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * x[indices[k]]
        y[i] = acc


CSR = "void(int64[::1], int32[::1], float64[::1], float64[::1], float64[::1])"
_FLOAT64_ADD = re.compile(r"^\tv?(addsd|addpd|fmadd\w*[sp]d)\b")


def test_a_loop_body_inlined_into_its_gufunc_wrapper_is_counted():
    """A CSR row loop's body has no listing of its own where LLVM inlined it into the gufunc
    wrapper: only the launcher was counted, and its adds were not."""
    f = inspect_cpu_function(cpu_csr_row_sums, CSR)
    assert f.missing is None
    launcher = f.asm.split(f"{f.symbol}:", 1)[1].split(".Lfunc_end", 1)[0].splitlines()
    assert not any(_FLOAT64_ADD.match(line) for line in launcher)
    assert any(_FLOAT64_ADD.match(line) for line in counted_asm(f.symbol, f.asm))


def test_cpu_function_that_does_not_type_is_a_reason():
    f = inspect_cpu_function(cpu_scale_add, "void(float32[::1])", name="bad")
    assert f.llvm_ir is None and f.asm is None and f.instructions is None
    assert f.missing.startswith("numba compile failed")


@pytest.mark.slow
def test_write_compiled_code_writes_files_and_a_json_summary(kernels, tmp_path):
    cpu = inspect_cpu_function(cpu_scale_add, VEC)
    records = [kernels["one"], kernels["tile33"], kernels["one"], cpu]
    summary = write_compiled_code(tmp_path / "code", records).to_json()
    assert json.loads(json.dumps(summary)) == summary
    assert set(summary["cuda"]) == {"scale_add", "transpose_tile33"}
    assert set(summary["cpu"]) == {"cpu_scale_add"}
    one = summary["cuda"]["scale_add"]
    assert one["evidence"] == "static"
    assert (tmp_path / "code" / "scale_add.ptx").read_text() == kernels["one"].ptx
    assert (tmp_path / "code" / "cpu_scale_add.ll").read_text() == cpu.llvm_ir
    assert (tmp_path / "code" / "cpu_scale_add.s").read_text() == cpu.asm
    for entry in (*summary["cuda"].values(), *summary["cpu"].values()):
        assert all((tmp_path / "code" / file).is_file() for file in entry["files"])


@pytest.mark.slow
@needs_sass
def test_written_compiled_code_includes_sass(kernels, tmp_path):
    summary = write_compiled_code(tmp_path / "code", [kernels["one"], kernels["tile33"]]).to_json()
    one = summary["cuda"]["scale_add"]
    assert one["files"] == ["scale_add.ptx", "scale_add.cubin", "scale_add.sass"]
    assert one["sass"]["global_stores"]["by_opcode"] == {"STG.E": 1}
    assert one["sass"]["global_loads"]["by_width_bits"] == {"32": 2}
    assert summary["cuda"]["transpose_tile33"]["shared_bytes_declared"] == 4224


@pytest.mark.slow
def test_two_different_kernels_under_one_name_are_refused(kernels, tmp_path):
    renamed = attrs.evolve(kernels["two"], name="scale_add")
    with pytest.raises(ValueError, match="scale_add"):
        write_compiled_code(tmp_path, [kernels["one"], renamed])


def test_a_cuda_kernel_that_did_not_compile_says_why_its_counts_are_missing() -> None:
    # The simulator ran a kernel `compile_ptx` refused; the cpu run's static table showed a row of
    # dashes and no reason, the TypingError only in results.json.
    import attrs

    from perfdsl.bundle.static import CudaKernelSummary, StaticCode, VariantCode
    from perfdsl.evaluate.mechanism import static_counts

    refused = "numba.cuda.compile_ptx failed: TypingError: No implementation of function shared.array"
    kernel = CudaKernelSummary(
        "transpose_kernel", "(float32[:, :],)", "sm_90", None, refused, f"no PTX: {refused}",
        f"no PTX: {refused}", None, None, None, None, None, None, None, None, {},
    )  # fmt: skip
    static = StaticCode({kernel.name: kernel}, {}, {"transposed": VariantCode((kernel.name,), ())})
    (counts,) = static_counts(static, "transposed")
    assert counts.counts == {} and counts.missing == f"no PTX: {refused}"
    compiled = attrs.evolve(kernel, ptx_missing=None)
    (fine,) = static_counts(attrs.evolve(static, cuda={kernel.name: compiled}), "transposed")
    assert fine.missing is None
