"""Correctness checks on the CPU target: broken variants are caught and recorded, never raised."""

from __future__ import annotations

import os

import attrs
import numpy as np
import pytest
import runtime_fixtures as fx

from perfdsl.kernel import Reference, Variant
from perfdsl.runtime.correctness import LastAnswer, check_variant, compare_application, measure
from perfdsl.runtime.targets import Target

WORKLOAD = [{"M": 4, "N": 64}]
ADVERSARIAL = [{"M": 1, "N": 1}, {"M": 3, "N": 31}]
SEEDS = [0, 1, 2]
TOL = {"rel_l2": 1e-6, "max_abs": 1e-5}


def check(variant, **kwargs):
    return check_variant(
        fx.reference, variant, Target(), WORKLOAD, ADVERSARIAL, SEEDS, np.float32, TOL, **kwargs
    )


def test_good_variant_passes_every_shape_and_seed():
    result = check(fx.good)
    assert result.passed and result.target == "cpu" and result.dtype == "float32"
    assert len(result.cases) == 3 * 3
    assert [c.kind for c in result.cases] == ["workload"] * 3 + ["adversarial"] * 6
    assert {(c.shape, c.seed) for c in result.cases} == {
        (tuple(sorted(s.items())), seed) for s in WORKLOAD + ADVERSARIAL for seed in SEEDS
    }
    for case in result.cases:
        (out,) = case.outputs
        assert out.unwritten == 0 and out.nonfinite == 0
        assert 0 < out.rel_l2 <= TOL["rel_l2"]  # float32 against float64: small, not zero
        assert case.deterministic is True and case.message == ""


def test_off_by_one_caught_with_shape_and_seed():
    result = check(fx.off_by_one)
    assert not result.passed
    assert len(result.failures) == len(result.cases)
    case = next(c for c in result.failures if c.shape == (("M", 3), ("N", 31)) and c.seed == 2)
    assert case.kind == "adversarial"
    assert case.message == "1 element(s) of `out` never written"
    assert case.outputs[0].unwritten == 1 and case.outputs[0].rel_l2 is None


def test_nan_never_passes():
    result = check(fx.nan_writer)
    assert not result.passed
    for case in result.cases:
        assert case.outputs[0].nonfinite == 1 and case.outputs[0].unwritten == 0
        assert case.message == "1 element(s) of `out` are NaN or Inf"


def test_garbage_fails_tolerance():
    result = check(fx.garbage)
    case = result.cases[0]
    assert not case.passed
    assert "rel_l2" in case.message and "max_abs" in case.message
    assert case.outputs[0].max_abs == pytest.approx(1.0)


def test_determinism_checked_bit_for_bit():
    result = check(fx.noisy)
    assert all(not c.passed and c.deterministic is False for c in result.cases)
    assert all("different bits" in c.message for c in result.cases)
    relaxed = check_variant(
        fx.reference, fx.noisy_declared, Target(), WORKLOAD, [], SEEDS, np.float32, {"rel_l2": 1e-4}
    )
    assert relaxed.passed and all(c.deterministic is None for c in relaxed.cases)


def _in_place_cpu(x, w, out):
    """Right output, from the inputs as given; then x updated in place (x = 2x + 1)."""
    fx.good_cpu(x, w, out)
    x *= 2
    x += 1


@pytest.mark.parametrize("deterministic", [True, False])
def test_an_input_changed_in_place_fails_and_is_named(deterministic: bool) -> None:
    """Declared nondeterministic it passed, its rotated inputs growing towards inf; declared
    deterministic it was called a race ("a second call on the same input gave different bits")."""
    variant = Variant("in_place", cpu=_in_place_cpu, deterministic=deterministic)
    result = check(variant)
    assert not result.passed
    for case in result.cases:
        assert case.message == "input `x` was changed by the call (inputs are read-only)"
        assert case.deterministic is None


RAISED = fx.raising_cpu.__code__
RAISED_AT = f"{os.path.relpath(RAISED.co_filename)}:{RAISED.co_firstlineno + 1} in raising_cpu"
"""Where the raising fixture raises, as the failure names it: the study's own line, not perfdsl's."""


def test_raising_variant_is_a_recorded_failure():
    result = check(fx.raising)
    assert all(c.message == f"raised RuntimeError: kernel exploded (at {RAISED_AT})" for c in result.cases)


def test_hung_variant_times_out_and_stops():
    fx.release_hang.clear()
    try:
        result = check(fx.hanging, timeout_s=0.2)
    finally:
        fx.release_hang.set()
    first, *rest = result.cases
    assert first.message == "did not finish within 0.2 s"
    assert rest and all(c.message.startswith("not run: an earlier call") for c in rest)


def test_fresh_inputs_for_every_seed_and_shape():
    seen = []

    def inputs(shape, rng, dtype):
        drawn = fx.reference.inputs(shape, rng, dtype)
        seen.append(drawn["x"].reshape(-1)[0])
        return drawn

    spy = Reference("spy", inputs, fx.reference.outputs, fx.reference.compute)
    check_variant(spy, fx.good, Target(), [{"M": 2, "N": 2}], [], [0, 1, 2], np.float32, TOL)
    assert len(set(seen)) == 3 and all(v != 0 for v in seen)


def test_the_arms_of_a_case_share_its_inputs_and_answer_one_case_at_a_time():
    """Arms checked case by case draw each case's inputs and compute its answer once; a new case
    replaces the kept one, and each arm still gets the answer for its own case."""
    computed = []

    def compute(x, w):
        computed.append(x.shape)
        return fx.reference.compute(x, w)

    spy = Reference("spy", fx.reference.inputs, fx.reference.outputs, compute)
    answers = LastAnswer(spy, np.float32)
    results = []
    for shape in ({"M": 2, "N": 3}, {"M": 4, "N": 5}):
        for seed in (0, 1):
            for variant in (fx.good, fx.off_by_one):
                results.append(
                    check_variant(
                        spy, variant, Target(), [shape], [], [seed], np.float32, TOL, answers=answers
                    )
                )
    assert computed == [(2, 3), (2, 3), (4, 5), (4, 5)]
    assert [r.passed for r in results] == [True, False] * 4
    assert [r.cases[0].shape for r in results[::2]] == [(("M", 2), ("N", 3))] * 2 + [(("M", 4), ("N", 5))] * 2


def test_broken_reference_is_recorded():
    bad = Reference("bad", fx.reference.inputs, fx.reference.outputs, lambda x, w: {"y": x})
    result = check_variant(bad, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL)
    assert result.cases[0].message == "reference `bad` failed: ValueError: compute() returned no `out`"


def test_a_reference_that_answers_in_float32_is_a_failed_case_not_an_exact_match():
    # A new user's compute() cast to float32: the float32 kernel then matched it at error 0,
    # reported as a check "against its float64 reference".
    narrow = Reference(
        "narrow",
        fx.reference.inputs,
        fx.reference.outputs,
        lambda x, w: {"out": (x * w + 1.0).astype(np.float32)},
    )
    result = check_variant(narrow, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL)
    assert result.cases[0].message == (
        "reference `narrow` failed: ValueError: `out` is float32: compute() is handed float64 inputs "
        "and must answer in float64, or the check compares the kernel with a float32 answer"
    )
    # An integer answer (counts, indices) is no narrower float: it is compared as it is.
    counting = Reference(
        "counting",
        fx.reference.inputs,
        fx.reference.outputs,
        lambda x, w: {"out": np.rint(x * w + 1.0).astype(int)},
    )
    assert "float" not in (
        check_variant(counting, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL).cases[0].message or ""
    )


def _zero_inputs(shape, rng, dtype):
    return {"x": np.zeros((shape["M"], shape["N"]), dtype), "w": np.zeros(shape["N"], dtype)}


def _ignores_its_inputs(x, w, out):
    out[:] = 1.0


def test_inputs_all_zero_are_a_failed_case_not_a_pass() -> None:
    # A new user's inputs() returned zeros and the change ignored its input: every case passed.
    zeros = Reference("zeros", _zero_inputs, fx.reference.outputs, fx.reference.compute)
    lazy = Variant("lazy", cpu=_ignores_its_inputs)
    result = check_variant(zeros, lazy, Target(), WORKLOAD, [], [0], np.float32, TOL)
    assert not result.passed
    assert result.cases[0].message.startswith(
        "reference `zeros` failed: ValueError: inputs() gave `w`, `x` as nothing but zeros"
    )
    # One input of zeros beside a drawn one (a bias, an accumulator) is an input like any other.
    some = Reference(
        "some",
        lambda shape, rng, dtype: {
            **fx.reference.inputs(shape, rng, dtype),
            "w": np.zeros(shape["N"], dtype),
        },
        fx.reference.outputs,
        fx.reference.compute,
    )
    assert check_variant(some, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL).passed


def test_a_reference_whose_outputs_disagree_with_compute_is_named_where_outputs_is_written():
    # A new user's outputs() swapped (M, N): the kernels were handed transposed arrays and the
    # message named neither the function nor its file.
    def transposed(shape):
        return {"out": (shape["N"], shape["M"])}

    swapped = Reference("swapped", fx.reference.inputs, transposed, fx.reference.compute)
    result = check_variant(swapped, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL)
    line = transposed.__code__.co_firstlineno
    compute = fx.reference.compute.__code__
    assert result.cases[0].message == (
        "reference `swapped` failed: ValueError: `out` has shape (4, 64) from compute() "
        f"(at {compute.co_filename}:{compute.co_firstlineno}), outputs() (at {__file__}:{line}) "
        "declares (64, 4): the kernels are handed arrays of the declared shape"
    )


def test_unknown_tolerance_metric_rejected():
    with pytest.raises(ValueError, match="unknown tolerance"):
        check_variant(fx.reference, fx.good, Target(), WORKLOAD, [], [0], np.float32, {"ulp": 1})


def test_measure_handles_integers_and_zero_reference():
    assert measure("y", np.zeros(3, np.int32), np.zeros(3)).rel_l2 == 0.0
    poisoned = np.full(3, np.iinfo(np.int32).max, np.int32)
    assert measure("y", poisoned, np.zeros(3)).unwritten == 3
    off_zero = measure("y", np.array([0.0, 10.0]), np.zeros(2))
    assert off_zero.rel_l2 is None and off_zero.max_abs == 10.0
    assert "reference is all zeros" in off_zero.problem
    wrong = measure("y", np.zeros(3), np.zeros(2))
    assert wrong.problem == "`y` has shape (3,), the reference (2,)"


def test_application_level_comparison():
    shape = {"M": 4, "N": 32}
    ok = compare_application(
        fx.application, fx.reference, fx.good, Target(), shape, 0, np.float32, {"rel_l2": 1e-5}
    )
    assert ok.passed and ok.output.rel_l2 < 1e-5 and ok.application == "row_sum_app"
    bad = compare_application(
        fx.application, fx.reference, fx.garbage, Target(), shape, 0, np.float32, {"rel_l2": 1e-5}
    )
    assert not bad.passed and "`output` rel_l2" in bad.message
    broken = compare_application(
        fx.application, fx.reference, fx.raising, Target(), shape, 0, np.float32, {"rel_l2": 1e-5}
    )
    assert broken.message == f"with `raising`: raised RuntimeError: kernel exploded (at {RAISED_AT})"


def test_the_application_is_given_its_dtype_as_a_numpy_dtype_in_both_runs():
    # The contract says `numpy.dtype`; the model-level runs handed a user's `prepare` the plan's
    # string 'float32' and the type numpy.float64, and `ctx.dtype.type(5.0)` raised.
    seen = []

    def prepare(ctx):
        seen.append(ctx.dtype)
        return fx.application.prepare(ctx)

    recording = attrs.evolve(fx.application, prepare=prepare)
    compare_application(
        recording, fx.reference, fx.good, Target(), {"M": 4, "N": 32}, 0, "float32", {"rel_l2": 1e-5}
    )
    assert seen == [np.dtype("float32"), np.dtype("float64"), np.dtype("float64")]
    assert all(isinstance(dtype, np.dtype) for dtype in seen)


def _unseeded_prepare(ctx):
    # Draws its input from numpy's global generator instead of the one it is handed.
    m, n = ctx.shape["M"], ctx.shape["N"]
    x = np.random.default_rng().standard_normal((m, n)).astype(ctx.dtype)
    w = np.ones(n, ctx.dtype)
    out = np.empty((m, n), dtype=ctx.dtype)

    def request():
        ctx.op(x=x, w=w, out=out)
        return out.sum(axis=1)

    return request


def test_an_application_whose_runs_draw_other_inputs_fails_its_check_saying_so():
    # A new user's prepare() drew from an unseeded generator: the float32 and float64 runs
    # served different requests, and the check passed a 330 % error as "no further than the
    # baseline's".
    unseeded = attrs.evolve(fx.application, prepare=_unseeded_prepare)
    arm = compare_application(
        unseeded, fx.reference, fx.good, Target(), {"M": 4, "N": 32}, 0, np.float32, {"rel_l2": 1e5}
    )
    assert not arm.passed
    assert "two float64 runs on the same seed gave different outputs" in arm.message
    assert "ctx.rng" in arm.message


@pytest.mark.parametrize(
    ("prepare", "said"),
    [
        (lambda ctx: lambda: None, "raised TypeError: request() returned None: return the request's output"),
        (lambda ctx: None, "raised TypeError: prepare() returned a NoneType, not the request"),
    ],
)
def test_an_application_that_hands_back_nothing_is_told_what_to_return(prepare, said):
    # A request() without `return` was reported as "1 element(s) of output are NaN or Inf".
    empty = attrs.evolve(fx.application, prepare=prepare)
    arm = compare_application(
        empty, fx.reference, fx.good, Target(), {"M": 4, "N": 32}, 0, np.float32, {"rel_l2": 1e-5}
    )
    assert not arm.passed and said in arm.message


def _gather_inputs(shape, rng, dtype):
    return {
        "table": rng.standard_normal(shape["N"]).astype(dtype),
        "idx": rng.integers(0, shape["N"], shape["M"]).astype(np.int64),
    }


def _gather_compute(table, idx):
    assert table.dtype == np.float64 and idx.dtype == np.int64
    return {"out": table[idx]}


def _gather_cpu(table, idx, out):
    out[...] = table[idx]


def test_integer_inputs_reach_the_reference_as_drawn():
    # Widened to float64 with the rest, an index array cannot index: a new user's gather
    # reference failed every case with "arrays used as indices must be of integer type".
    gather = Reference("gather", _gather_inputs, lambda shape: {"out": (shape["M"],)}, _gather_compute)
    result = check_variant(
        gather, Variant("gather", cpu=_gather_cpu), Target(), [{"M": 8, "N": 64}], [], SEEDS, np.float32, TOL
    )
    assert result.passed, [c.message for c in result.failures]


def test_a_reference_that_names_its_inputs_otherwise_says_which_names_it_gets():
    def compute(x, weights):  # `inputs` returns `w`
        return {"out": x * weights + 1.0}

    reference = Reference("scale_shift", fx.reference.inputs, fx.reference.outputs, compute)
    result = check_variant(reference, fx.good, Target(), WORKLOAD, [], [0], np.float32, TOL)
    (case,) = result.cases
    assert case.message.startswith(
        "reference `scale_shift` failed: TypeError: compute() takes its arrays by the names `inputs` "
        "gives them (`w`, `x`): "
    )
