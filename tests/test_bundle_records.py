"""The bundle's records: every one survives its own JSON, and an unknown version is refused."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import make_bundle

from perfdsl import targets
from perfdsl.bundle import versions
from perfdsl.bundle.application import (
    ApplicationRecord,
    ArmShare,
    ModelLevelArm,
    ModelLevelRecord,
    OutputRecord,
)
from perfdsl.bundle.files import replace_file
from perfdsl.bundle.load import (
    OLDER_BUNDLE,
    GeneratorLagRecord,
    GoodputSearchRecord,
    LoadProbeRecord,
    LoadRecord,
)
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import (
    CorrectnessCase,
    CorrectnessRecord,
    OperationRecord,
    Results,
    ShapeRecord,
)
from perfdsl.bundle.sampling import ApplicationTiming, TimingRecord
from perfdsl.bundle.static import (
    CodeSummary,
    CpuFunctionSummary,
    CudaKernelSummary,
    InstructionGroup,
    StaticCode,
    VariantCode,
)
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
PATH = Path("bundle/results.json")

REGISTRATION = RegistrationRecord("ab" * 32, "cd" * 32, "2026-11-29T11:30:00Z")
PROBE = LoadProbeRecord("change", 3, 412.5, "bisect", "load/change-003.csv", 23, True, "ValueError: no")
LAGGED = LoadProbeRecord(
    "baseline",
    4,
    800.0,
    "confirm",
    "load/baseline-004.csv",
    23,
    False,
    None,
    GeneratorLagRecord(2e-4, 1.8e-3, 1e-4, 2e-4, 1.25e-3, "jitter"),
)
LOAD = LoadRecord(
    "poisson",
    7,
    0.025,
    0.99,
    (PROBE, LAGGED),
    ("`baseline` load search stopped",),
    "a goodput passes twice",
    (
        GoodputSearchRecord("change", 562.5, 575.0, True, ""),
        GoodputSearchRecord("baseline", 400.0, None, False, "the probe budget (16 runs) ran out"),
    ),
)
OUTPUT = OutputRecord("out", 1e-7, None, 0, 2, "2 NaN or Inf")
MODEL_LEVEL = ModelLevelRecord(
    rule="change error <= baseline error + tolerance",
    passed=False,
    excess={"rel_l2": None, "max_abs": 1e-6},
    arms={
        "baseline": ModelLevelArm(
            "decode_step", "unfused", "cpu", (("M", 8), ("N", 16)), 0, True, OUTPUT, ""
        ),
        "change": ModelLevelArm("decode_step", "fused", "cpu", (("M", 8),), 0, False, None, "raised"),
    },
)
SHARE = ArmShare((10, 12, 11), (4, 5, 4))
APPLICATION = ApplicationRecord(
    name="decode_step",
    entry="kernels.apps:decoder_step",
    shape={"M": 64, "N": 4096},
    uses=("normalize",),
    model_level=MODEL_LEVEL,
    samples="samples/application.csv",
    timing=ApplicationTiming.from_json({"blocks": [{"index": 0, "arm": "baseline"}], "failures": []}),
    share={"baseline": SHARE, "change": ArmShare((9,), (2,))},
    load=LOAD,
)
CASE = CorrectnessCase(
    arm="change",
    variant="fused",
    shape={"M": 3, "N": 31},
    adversarial=True,
    seed=1,
    passed=False,
    rel_l2=0.5,
    max_abs=None,
    unwritten=7,
    nonfinite=1,
    deterministic=False,
    message="rel_l2 0.5 > 1e-05",
)
CORRECTNESS = CorrectnessRecord(False, {"rel_l2": 1e-5}, 2, (CASE,))
SHAPE = ShapeRecord(
    label="64x4096",
    sizes={"M": 64, "N": 4096},
    weight=0.5,
    models={"bytes": {"baseline": 5243136.0, "change": 2113536.0}},
    samples="samples/normalize/64x4096.csv",
    timing=TimingRecord.from_json({"set_bytes": {"copy": 2097152}, "blocks": [{"index": 1}]}),
    counters={"launches": {"baseline": 3.0, "change": 1.0}},
    counters_detail={"tool": "ncu"},
    counters_log="counters/normalize.ncu.log",
)
GROUP = InstructionGroup(2, {"LDG.E": 2}, {"32": 2}, 64)
KERNEL = CudaKernelSummary(
    name="rmsnorm_fused_kernel",
    signature="(float32[:, :],)",
    arch="sm_90",
    symbol="_Z6kernel",
    ptx_missing=None,
    cubin_missing=None,
    sass_missing="nvdisasm not installed",
    registers=28,
    shared_bytes_declared=0,
    shared_bytes=0,
    local_bytes=0,
    spill_store_bytes=0,
    spill_load_bytes=0,
    ptx=CodeSummary(40, {"global_loads": GROUP, "barriers": InstructionGroup(1, {"bar.sync": 1})}),
    sass=None,
    tools={"nvvm": "12.4.0"},
    files=("rmsnorm_fused_kernel.ptx",),
)
FUNCTION = CpuFunctionSummary("f_cpu", "(float32[:],)", "_ZN1f", None, 132, {"ymm": 12}, 4, {}, ("f_cpu.ll",))
STATIC = StaticCode(
    cuda={KERNEL.name: KERNEL},
    cpu={FUNCTION.name: FUNCTION},
    variants={"fused": VariantCode((KERNEL.name,), (FUNCTION.name,))},
    cuda_missing=None,
)
OPERATION = OperationRecord(
    name="normalize",
    baseline="kernels.rmsnorm:unfused",
    change="kernels.rmsnorm:fused",
    reference="kernels.rmsnorm:reference",
    variants={"baseline": "unfused", "change": "fused"},
    deterministic={"baseline": True, "change": False},
    shapes=(SHAPE, ShapeRecord("8x8", {"M": 8, "N": 8}, 0.5, {}, samples_missing="not timed")),
    correctness=CORRECTNESS,
)
RESULTS = Results(
    schema=versions.RESULTS,
    study="rmsnorm_fusion",
    run_id="20261129T113000Z-3fa2c1",
    target="cuda",
    timings_valid=True,
    timer_resolution_ns=500.0,
    quick=True,
    dtype="float32",
    started="2026-11-29T11:30:00Z",
    finished="2026-11-29T11:31:10Z",
    roof="kernels.copy:copy",
    roof_missing=None,
    operations=(OPERATION,),
    static=STATIC,
    application=APPLICATION,
    application_missing=None,
)


def _through_json(data: dict) -> dict:
    """What a reader gets back: the JSON text, parsed."""
    return json.loads(json.dumps(data))


@pytest.mark.parametrize(
    "record",
    [
        GROUP,
        KERNEL,
        FUNCTION,
        STATIC,
        PROBE,
        LAGGED,
        LOAD,
        SHARE,
        OUTPUT,
        MODEL_LEVEL,
        APPLICATION,
        CASE,
        CORRECTNESS,
        SHAPE,
        OPERATION,
        REGISTRATION,
    ],
    ids=lambda r: type(r).__name__,
)
def test_every_part_survives_its_json(record: object) -> None:
    kind = type(record)
    assert kind.from_json(_through_json(record.to_json())) == record  # type: ignore[attr-defined]


def test_results_survive_their_json() -> None:
    assert Results.from_json(_through_json(RESULTS.to_json()), PATH) == RESULTS


def test_a_probe_from_before_version_3_says_why_it_has_no_generator_lag() -> None:
    old = {k: v for k, v in LAGGED.to_json().items() if k not in ("generator", "generator_missing")}
    probe = LoadProbeRecord.from_json(old)
    assert probe.generator is None and probe.generator_missing == OLDER_BUNDLE


def test_a_load_record_reads_the_keys_older_results_lack_as_they_meant() -> None:
    """The earliest load records wrote a probe's rate, arm and CSV, and a search's goodput and
    verdict, and little else; each key they lack reads as what that version did."""
    old = {
        "probes": [{"arm": "change", "rate": 100.0, "records": "load/change-000.csv"}],
        "searches": [{"arm": "change", "goodput": 100.0, "confirmed": True}],
    }
    probe = LoadProbeRecord("change", 0, 100.0, "", "load/change-000.csv", 0, False, None)
    assert LoadRecord.from_json(old) == LoadRecord(
        "",
        0,
        None,
        0.99,
        (attrs.evolve(probe, generator_missing=OLDER_BUNDLE),),
        searches=(GoodputSearchRecord("change", 100.0, None, True, ""),),
    )


def test_a_load_probe_without_its_rate_is_refused_in_one_line_naming_the_file() -> None:
    data = _through_json(RESULTS.to_json())
    del data["application"]["load"]["probes"][0]["rate"]
    with pytest.raises(versions.BundleFormatError, match=r"results.json: unreadable: .*no `rate`"):
        Results.from_json(data, PATH)


def test_an_application_that_was_not_timed_survives_its_json() -> None:
    untimed = ApplicationRecord("app", "m:f", {}, (), None, samples_missing="not timed", load_missing="no")
    assert ApplicationRecord.from_json(_through_json(untimed.to_json())) == untimed


def test_a_written_bundle_reads_back_to_the_same_record(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    results = Results.read(bundle)
    assert results.operations and results.application and results.application.load
    assert Results.from_json(_through_json(results.to_json()), PATH) == results
    registration = RegistrationRecord.read(bundle)
    assert registration.predict_hash and registration.registered
    assert RegistrationRecord.from_json(_through_json(registration.to_json())) == registration


@pytest.mark.parametrize("target", targets.NAMES)
def test_version_1_takes_the_timer_resolution_of_its_target(tmp_path: Path, target: str) -> None:
    data = {"schema": "perfdsl.results/1", "target": target}
    assert Results.from_json(data, PATH).timer_resolution_ns == targets.BY_NAME[target].resolution_ns


def test_a_recorded_resolution_wins_over_the_target(tmp_path: Path) -> None:
    data = {**RESULTS.to_json(), "timer_resolution_ns": 32.0}
    assert Results.from_json(data, PATH).timer_resolution_ns == 32.0


def test_an_unknown_target_without_a_resolution_is_refused() -> None:
    with pytest.raises(versions.BundleFormatError, match=r"results\.json: .*unknown target `tpu`"):
        Results.from_json({"schema": "perfdsl.results/1", "target": "tpu"}, PATH)


@pytest.mark.parametrize("schema", ["perfdsl.results/99", None, "perfdsl.evaluation/2"])
def test_an_unknown_version_is_refused_naming_the_file(schema: str | None) -> None:
    with pytest.raises(versions.BundleFormatError, match=r"^bundle/results\.json: format version"):
        Results.from_json({**RESULTS.to_json(), "schema": schema}, PATH)


def test_reading_a_bundle_checks_its_version(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    data = json.loads((bundle / "results.json").read_text())
    replace_file(bundle, "results.json", json.dumps({**data, "schema": "perfdsl.results/99"}).encode())
    with pytest.raises(versions.BundleFormatError, match=r"perfdsl\.results/99"):
        Results.read(bundle)


def _study_plan(name: str) -> Plan:
    source = Source.read(ROOT / "studies" / f"{name}.perf")
    study = parse(source).study
    assert study is not None
    return plan(study, "cpu", quick=False)


@pytest.mark.parametrize("name", ["rmsnorm_fusion", "transpose_bank_conflicts"])
def test_a_plan_survives_its_json(name: str) -> None:
    planned = _study_plan(name)
    assert planned.operations and planned.application and planned.load
    assert Plan.from_json(_through_json(planned.to_json()), PATH, study_text=planned.study_text) == planned


def test_a_plan_written_before_it_carried_its_version_still_reads() -> None:
    planned = _study_plan("rmsnorm_fusion")
    data = planned.to_json()
    del data["schema"]
    assert Plan.from_json(data, PATH, study_text=planned.study_text) == planned


def test_a_plan_of_an_unknown_version_is_refused() -> None:
    planned = _study_plan("rmsnorm_fusion")
    with pytest.raises(versions.BundleFormatError, match=r"'perfdsl\.plan/9'"):
        Plan.from_json({**planned.to_json(), "schema": "perfdsl.plan/9"}, PATH, study_text=planned.study_text)
