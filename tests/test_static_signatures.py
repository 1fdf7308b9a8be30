"""The archived CPU code is checked against the code the measured calls compiled.

A new user's kernel module declared `float32[:]` for a function the reference
handed float64 arrays: the run archived float32 code that never ran and read its
counts as evidence. The measuring worker now says what each function compiled
for; a mismatch is said on the console, recorded in results.json, and the
function's static counts are withheld from the evaluation with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from perfdsl.bundle.static import CpuFunctionSummary, StaticCode, VariantCode
from perfdsl.evaluate.mechanism import static_counts
from perfdsl.runtime.execute import _as_measured
from perfdsl.runtime.static_code.signatures import compiled_for, declared_ran


@njit
def scale(src, dst):
    for i in range(src.size):
        dst[i] = 2.0 * src[i]


@pytest.fixture(scope="module")
def ran_float64() -> object:
    """`scale` as a measuring worker leaves it after timing float64 arrays."""
    src = np.linspace(1.0, 2.0, 16)
    scale(src, np.empty_like(src))
    return scale


@pytest.mark.slow  # compiles a Numba function
def test_a_declared_signature_for_another_dtype_did_not_run(ran_float64: object) -> None:
    declared = "void({dtype}[:], {dtype}[:])"
    ((shown, ran),) = compiled_for([(ran_float64, declared)], "float32").values()
    assert ran is False and shown == ("(array(float64, 1d, C), array(float64, 1d, C))",)
    ((_, ran),) = compiled_for([(ran_float64, declared)], "float64").values()
    assert ran is True


@pytest.mark.slow  # compiles a Numba function
def test_layout_any_accepts_what_ran_and_a_wrong_rank_does_not(ran_float64: object) -> None:
    compiled = list(ran_float64.signatures)
    assert declared_ran("void(float64[:], float64[::1])", compiled)
    assert not declared_ran("void(float64[:, :], float64[:])", compiled)
    assert not declared_ran("void(float64[:])", compiled)
    assert not declared_ran("not a signature", compiled)
    assert not declared_ran("void(float64[:], float64[:])", [])


class _Console(list):
    def __call__(self, line: str) -> None:
        self.append(line)


def _summary(**known: object) -> CpuFunctionSummary:
    return CpuFunctionSummary(
        name="scale",
        signature="void(float32[:], float32[:])",
        symbol="_ZN8__main__5scale",
        missing=None,
        instructions=40,
        simd_instructions={"xmm": 4, "ymm": 12, "zmm": 0},
        ir_vector_instructions=9,
        tools={"numba": "0.61"},
        **known,
    )


def test_a_mismatch_is_said_on_the_console_and_recorded() -> None:
    console = _Console()
    ran = ("(array(float64, 1d, C), array(float64, 1d, C))",)
    recorded = _as_measured(_summary(), (ran, False), console)  # type: ignore[arg-type]
    assert (recorded.measured, recorded.as_measured) == (ran, False)
    (line,) = console
    assert "`scale` is compiled for void(float32[:], float32[:])" in line and "did not run" in line
    written = recorded.to_json()
    assert written["as_measured"] is False and written["measured"] == list(ran)
    assert CpuFunctionSummary.from_json(written) == recorded


def test_a_match_is_recorded_quietly_and_unknown_is_not_written() -> None:
    console = _Console()
    matched = _as_measured(_summary(), (("(array(float32, 1d, C), array(float32, 1d, C))",), True), console)  # type: ignore[arg-type]
    assert matched.as_measured is True and console == []
    unknown = _as_measured(_summary(), None, console)  # type: ignore[arg-type]
    assert unknown == _summary() and "as_measured" not in unknown.to_json()


def test_counts_of_code_that_did_not_run_are_withheld_with_the_reason() -> None:
    ran = ("(array(float64, 1d, C), array(float64, 1d, C))",)
    for known, counted in (({"measured": ran, "as_measured": False}, False), ({}, True)):
        static = StaticCode(
            cuda={}, cpu={"scale": _summary(**known)}, variants={"fused": VariantCode((), ("scale",))}
        )
        (counts,) = static_counts(static, "fused")
        if counted:
            assert counts.counts["simd_ymm"] == 12 and counts.missing is None
        else:
            assert counts.counts == {} and "the measured calls compiled (array(float64" in counts.missing
