"""The investigation record quotes the evidence a rejected hypothesis cites, from the evaluation.

Rendered from a planted bundle's evaluation with its numbers set here: the
section reads only the study and evaluation.json, so the numbers it must print
are known exactly.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import make_bundle

from perfdsl.bundle import versions
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import ShapeResult
from perfdsl.bundle.evaluation.mechanism import KernelCounts
from perfdsl.bundle.manifest import Manifest
from perfdsl.bundle.plan import CorrectnessPlan, Plan, TimingPlan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.parse import parse
from perfdsl.report.context import Blocks, ReportContext
from perfdsl.report.investigation import render_investigation
from perfdsl.source import Source

STUDY = """study s {
  operation normalize { baseline kernels.rmsnorm:unfused; change kernels.rmsnorm:fused }
  application decode_step { entry kernels.apps:decoder_step; uses normalize }
  rejected "Occupancy *limits* the unfused kernel" {
    because  "both kernels run at the roof"
    evidence normalize.bandwidth, normalize.bytes, normalize.static, decode_step.time
  }
  rejected "Bank conflicts slow the baseline" {
    because  "it stages nothing in shared memory"
    evidence normalize.bank_conflicts, normalize.time
  }
  rejected "Launch overhead" { because "one launch per call" }
}
"""

NO_COUNTERS = "counters need --target cuda and Nsight Compute (ncu)"


SHAPES = (("64x4096", (0.91, 0.61), 0.4018), ("256x8192", (0.95, 0.92), 0.4001))
STATIC = {
    "baseline": (
        KernelCounts(
            "rmsnorm_reduce_kernel", "cuda", {"registers": 28, "shared_bytes": 2048, "global_loads": 9}
        ),
    ),
    "change": (KernelCounts("rmsnorm_fused_cpu", "cpu", {"instructions": 132}),),
}


def _shape(
    shape: ShapeResult, label: str, roof_fractions: tuple[float, float], bytes_ratio: float
) -> ShapeResult:
    mechanism = shape.mechanism
    bandwidth = tuple(
        attrs.evolve(b, roof_fraction=f, invalid=None)
        for b, f in zip(mechanism.bandwidth, roof_fractions, strict=True)
    )
    (quantity,) = (q for q in mechanism.quantities if q.name == "bytes")
    return attrs.evolve(
        shape,
        label=label,
        mechanism=attrs.evolve(
            mechanism,
            bandwidth=bandwidth,
            quantities=(attrs.evolve(quantity, label="modelled", ratio=bytes_ratio),),
            counters_missing=NO_COUNTERS,
        ),
    )


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """A planted bundle's evaluation, its numbers set to the ones the tests quote.

    A real record, read back from the evaluation.json it wrote, so the section
    renders from exactly what a report reads.
    """
    bundle = make_bundle(tmp_path_factory.mktemp("planted"))
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    base = Evaluation.read(bundle)
    op = base.operations[0]
    shapes = tuple(_shape(s, *planted) for s, planted in zip(op.shapes, SHAPES, strict=True))
    assert base.end_to_end is not None and base.end_to_end.comparison is not None
    comparison = attrs.evolve(
        base.end_to_end.comparison, ratio=0.6481, ci_low=0.4867, ci_high=0.9869, verdict="faster"
    )
    return attrs.evolve(
        base,
        timings_valid=True,
        level=0.95,
        operations=(
            attrs.evolve(
                op,
                name="normalize",
                shapes=shapes,
                combined=None,
                combined_missing="shape 64x4096 has no timing evidence",
                static=STATIC,
            ),
        ),
        end_to_end=attrs.evolve(base.end_to_end, application="decode_step", comparison=comparison),
    )


def _plan() -> Plan:
    """A plan with no operations: the investigation section reads none of it."""
    return Plan(
        study="s",
        study_path="s.perf",
        study_text=STUDY,
        study_hash="",
        predict_hash="",
        target="cpu",
        quick=True,
        dtype="float32",
        operations=(),
        timing=TimingPlan(3, 5, 4, 2, 0.95, 0.01),
        correctness=CorrectnessPlan(2, {}, "nan"),
        roof=None,
        roof_line=0,
        measures=(),
        application=None,
        load=None,
        artifacts="",
    )


def _render(evaluation: Evaluation) -> list[str]:
    """The section's bullets, one per rejected hypothesis."""
    study = parse(Source("s.perf", STUDY)).study
    assert study is not None
    ctx = ReportContext(
        study=study,
        evaluation=evaluation,
        results=Results.from_json({"schema": versions.RESULTS, "target": "cpu"}, Path("results.json")),
        plan=_plan(),
        environment=None,
        environment_missing=None,
        manifest=Manifest(None, ()),
        registration=RegistrationRecord(None, None, None),
        bundle_label="bundle",
        current=None,
        bundle_study_text=STUDY,
    )
    out = Blocks()
    render_investigation(ctx, out)
    (section,) = out.parts
    return section.split("\n")


def test_cited_evidence_is_quoted_from_the_evaluation(evaluation: Evaluation) -> None:
    occupancy, _, _ = _render(evaluation)
    assert occupancy.startswith(r"- **Rejected:** Occupancy \*limits\* the unfused kernel.")  # escaped
    assert "baseline 91% to 95% (2 shapes), change 61% to 92% (2 shapes)" in occupancy
    assert "`normalize.bytes`: modelled ratio (change / baseline) 0.4001 to 0.4018 (2 shapes)" in occupancy
    assert f"not counted ({NO_COUNTERS})" in occupancy
    assert "`rmsnorm_reduce_kernel` registers 28, shared memory 2,048 B, global loads 9" in occupancy
    assert "change `rmsnorm_fused_cpu` instructions 132" in occupancy
    end_to_end = "request-time ratio (change / baseline) 0.6481, 95% interval [0.4867, 0.9869]: **faster**"
    assert end_to_end in occupancy


def test_missing_evidence_is_stated_with_its_reason(evaluation: Evaluation) -> None:
    _, conflicts, launches = _render(evaluation)
    assert f"`normalize.bank_conflicts`: missing from this run ({NO_COUNTERS})" in conflicts
    assert "`normalize.time`: missing from this run (shape 64x4096 has no timing evidence" in conflicts
    assert launches.endswith("**Evidence:** no evidence named; argued from the evidence above.")


def test_timings_that_are_not_evidence_give_no_timed_numbers(evaluation: Evaluation) -> None:
    note = "timings on `cudasim` are not evidence: no timing result has a verdict"
    occupancy, _, _ = _render(attrs.evolve(evaluation, timings_valid=False, timings_note=note))
    assert "`normalize.bandwidth`: missing from this run (timings on `cudasim` are not evidence" in occupancy
    assert "`decode_step.time`: missing from this run" in occupancy
    assert "0.6481" not in occupancy and "91%" not in occupancy
    assert "registers 28" in occupancy  # compiled code does not depend on timings


def test_the_cubin_s_shared_memory_note_is_given_only_where_a_cuda_kernel_was_counted(
    evaluation: Evaluation,
) -> None:
    """A study of CPU functions alone read "shared memory per block as the cubin allocates it,
    including the 1 KiB sm_90 reserves" beside its assembly counts."""
    occupancy, _, _ = _render(evaluation)
    assert "sm_90 reserves" in occupancy
    (op,) = evaluation.operations
    cpu_only = {arm: tuple(k for k in kernels if k.kind == "cpu") for arm, kernels in STATIC.items()}
    cpu = attrs.evolve(evaluation, operations=(attrs.evolve(op, static=cpu_only),))
    occupancy, _, _ = _render(cpu)
    assert "static counts (compiled, not run): change `rmsnorm_fused_cpu` instructions 132" in occupancy
    assert "cubin" not in occupancy and "sm_90" not in occupancy


def test_a_cpu_function_s_counts_say_how_wide_its_vector_instructions_are(evaluation: Evaluation) -> None:
    """A new user's rejected "only the change is vectorised" quoted 179 against 187 instructions,
    which cannot tell a vectorised loop from a scalar one."""
    (op,) = evaluation.operations
    counts = {"instructions": 187, "simd_zmm": 0, "simd_ymm": 50, "simd_xmm": 54}
    static = {"change": (KernelCounts("estrin_cpu", "cpu", counts),)}
    occupancy, _, _ = _render(attrs.evolve(evaluation, operations=(attrs.evolve(op, static=static),)))
    widths = "of which by the widest vector register they name: zmm 0, ymm 50, xmm 54"
    said = f"`estrin_cpu` instructions 187, {widths}"
    assert said in occupancy
