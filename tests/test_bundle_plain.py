"""Every record file of a bundle written before its records were walked by `bundle.plain` reads and
writes back to the same bytes.

The fixtures under tests/fixtures/bundles/ were written by the hand-written
writers the walker replaced (README there says how), so a walker that spells a
key, formats a float, leaves out a None or orders a list otherwise fails here,
file by file, before any run does.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.bundle.files import dumps
from perfdsl.bundle.imported import ImportedRun, is_imported_bundle
from perfdsl.bundle.plain import Plain, from_plain, to_plain
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results
from perfdsl.bundle.sampling import Block, BlockReading, LoadReading

FIXTURES = Path(__file__).parent / "fixtures" / "bundles"
BUNDLES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def _roots(bundle: Path) -> list[type[Plain]]:
    """The records of the files this bundle holds."""
    evaluation = ImportedEvaluation if is_imported_bundle(bundle) else Evaluation
    kinds: list[type[Plain]] = [Results, Plan, RegistrationRecord, ImportedRun, evaluation]
    return [kind for kind in kinds if (bundle / kind.FILE).is_file()]


def _written_back(bundle: Path, kind: type[Plain]) -> str:
    return dumps(kind.read(bundle).to_json())


CASES = [(bundle, kind) for bundle in BUNDLES for kind in _roots(bundle)]


@pytest.mark.parametrize(("bundle", "kind"), CASES, ids=[f"{b.name}-{k.FILE}" for b, k in CASES])
def test_a_bundle_file_reads_and_writes_back_to_its_bytes(bundle: Path, kind: type[Plain]) -> None:
    assert _written_back(bundle, kind) == (bundle / kind.FILE).read_text(encoding="utf-8")


def test_the_fixtures_hold_every_record_file() -> None:
    held = {(b.name, k.FILE) for b, k in CASES}
    native = {
        ("rmsnorm_fusion", n) for n in ("results.json", "plan.json", "registration.json", "evaluation.json")
    }
    imported = {("batchnorm_imported", n) for n in ("imported.json", "registration.json", "evaluation.json")}
    assert native | imported <= held


def test_a_float_written_otherwise_breaks_the_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = FIXTURES / "rmsnorm_fusion"
    monkeypatch.setattr(Results, "DIGITS", 6)
    assert _written_back(bundle, Results) != (bundle / Results.FILE).read_text(encoding="utf-8")


def test_a_clocked_reading_writes_every_clock_key_and_an_unclocked_one_none() -> None:
    load = LoadReading(1.0, 0.5, 0.0, 2.0, 0.25, 0.5)
    clocked = BlockReading(monotonic_s=3.0, sm_clock_mhz=1980.0, missing="power: not supported", load=load)
    written = clocked.to_json()
    assert written["power_w"] is None and written["wall_s"] == 1.0 and "load" not in written
    assert BlockReading.from_json(json.loads(json.dumps(written))) == clocked
    assert BlockReading(load=load).to_json() == to_plain(load)


def test_a_shape_block_log_leaves_out_the_sample_counts_the_application_log_keeps() -> None:
    results = Results.read(FIXTURES / "rmsnorm_fusion")
    assert results.application is not None and results.application.timing is not None
    timing = results.operations[0].shapes[0].timing
    assert timing is not None and timing.blocks
    counted = attrs.evolve(timing, blocks=tuple(attrs.evolve(b, samples=5) for b in timing.blocks))
    assert all("samples" not in b for b in counted.to_json()["blocks"])
    assert all("samples" in b for b in results.application.timing.to_json()["blocks"])
    assert from_plain(Block, counted.to_json()["blocks"][0]).samples is None


def test_evaluation_json_rounds_its_floats_and_results_json_keeps_every_bit() -> None:
    evaluation = Evaluation.read(FIXTURES / "rmsnorm_fusion")
    assert attrs.evolve(evaluation, level=0.1 + 0.2).to_json()["level"] == 0.3
    results = Results.read(FIXTURES / "rmsnorm_fusion")
    assert attrs.evolve(results, timer_resolution_ns=0.1 + 0.2).to_json()["timer_resolution_ns"] == 0.1 + 0.2
