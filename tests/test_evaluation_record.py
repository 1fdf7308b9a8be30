"""evaluation.json as records: what `perfdsl evaluate` writes reads back to the same record and bytes.

The bundles are planted ones (`evaluate_fixtures.make_bundle`) that reach every
section: kernels with a combination, the application with Amdahl's check, a
load test with goodputs and a capacity interval, value, predictions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from evaluate_fixtures import make_bundle

from perfdsl.bundle import versions
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import Comparison
from perfdsl.bundle.files import dumps
from perfdsl.bundle.plain import from_plain, to_plain
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A planted bundle with a load test and a value, evaluated and written."""
    bundle = make_bundle(tmp_path_factory.mktemp("planted"))
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    return bundle


def test_a_written_evaluation_reads_back_to_a_record_that_writes_the_same_bytes(written: Path) -> None:
    text = (written / versions.EVALUATION_FILE).read_text(encoding="utf-8")
    record = Evaluation.read(written)
    assert record.load is not None and record.load.arms and record.value is not None
    assert record.end_to_end is not None and record.end_to_end.amdahl is not None
    assert dumps(record.to_json()) == text
    again = Evaluation.from_json(json.loads(dumps(record.to_json())), written)
    assert again == record


def test_the_record_read_is_the_evaluation_to_the_files_precision(written: Path) -> None:
    evaluation = evaluate(open_evaluated(written))
    record = Evaluation.read(written)
    assert record.operations[0].shapes[0].comparison is not None
    assert record.operations[0].name == evaluation.operations[0].name
    assert math.isclose(
        record.operations[0].shapes[0].comparison.ratio,
        evaluation.operations[0].shapes[0].comparison.ratio,
        rel_tol=1e-11,
    )


def test_derived_keys_are_written_and_ignored_on_reading(written: Path) -> None:
    data = json.loads((written / versions.EVALUATION_FILE).read_text(encoding="utf-8"))
    point = data["load"]["arms"][0]["curve"][0]
    assert "passed" in point and "passed" in point["result"]
    point["passed"] = not point["passed"]
    record = Evaluation.from_json(data, written)
    assert record.load.arms[0].curve[0].passed != point["passed"]


def test_a_float_written_as_null_reads_as_nan_and_writes_as_null() -> None:
    plain = to_plain(
        Comparison(
            ratio=math.inf, ci_low=None, ci_high=None, level=0.95, theta=0.01, verdict="inconclusive",
            n_baseline=1, n_change=1, rank_p_value=math.nan, rank_disagrees=False,
            baseline_dispersion=_dispersion(), change_dispersion=_dispersion(), sigma_log=0.0,
            mde=math.inf, effect_of_interest=0.05, underpowered=True, seed=0,
        )
    )  # fmt: skip
    assert plain["ratio"] is None and plain["rank_p_value"] is None and plain["ci_low"] is None
    record = from_plain(Comparison, plain)
    assert math.isnan(record.ratio) and record.ci_low is None
    assert to_plain(record) == plain


def _dispersion() -> object:
    from perfdsl.bundle.evaluation.kernels import Dispersion

    return Dispersion(median=1.0, iqr_rel=0.0, mad_rel=0.0)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema="perfdsl.evaluation/99"), "format version 'perfdsl.evaluation/99'"),
        (lambda d: d["operations"][0].update(shapes="none"), "Evaluation.operations[0].shapes"),
        (lambda d: d["decision"].pop("consistent"), "no `consistent`"),
        (lambda d: d["operations"][0]["shapes"][0]["comparison"].update(verdict="better"), "'better'"),
    ],
)
def test_a_file_that_does_not_fit_is_refused_naming_it(written: Path, edit: object, message: str) -> None:
    data = json.loads((written / versions.EVALUATION_FILE).read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    with pytest.raises(versions.BundleFormatError, match=r"evaluation\.json") as refused:
        Evaluation.from_json(data, written / versions.EVALUATION_FILE)
    assert message in str(refused.value) and "\n" not in str(refused.value)
