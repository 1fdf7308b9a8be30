"""`perfdsl run --shape`: a run of a subset of the declared shapes (a matrix cell's shapes axis)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.plan import PlanError, plan
from perfdsl.source import Source

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "studies" / "rmsnorm_fusion.perf"


def study() -> Study:
    parsed = parse(Source(str(STUDY), STUDY.read_text(encoding="utf-8")))
    assert parsed.study is not None
    return parsed.study


def test_a_subset_keeps_the_named_shapes_in_declared_order_with_their_weights() -> None:
    chosen = plan(study(), "cpu", False, [{"M": 4096, "N": 8192}, {"M": 64, "N": 4096}])
    shapes = chosen.operations[0].shapes
    assert [s.sizes for s in shapes] == [{"M": 64, "N": 4096}, {"M": 4096, "N": 8192}]
    assert [s.weight for s in shapes] == [0.5, 0.2]
    # The whole workload, and beside it the limit's shape, weight 0.
    full = plan(study(), "cpu", False).operations[0].shapes
    assert [(s.weight, s.limit) for s in full] == [(0.5, False), (0.3, False), (0.2, False), (0.0, True)]


def test_a_subset_is_chosen_before_quick_shrinking() -> None:
    quick = plan(study(), "cpu", True, [{"M": 256, "N": 8192}]).operations[0].shapes
    assert len(quick) == 1 and quick[0].sizes == plan(study(), "cpu", True).operations[0].shapes[1].sizes


def test_a_shape_the_workload_does_not_declare_is_refused() -> None:
    with pytest.raises(
        PlanError,
        match=r"shape M=3,N=4 is not among the workload's shapes: M=64,N=4096, "
        r".* \(or its limits': M=65536,N=64\)",
    ):
        plan(study(), "cpu", False, [{"M": 3, "N": 4}])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("shape", "says"), [("M=3,N=4", "is not among"), ("M=x", "give a shape as NAME=SIZE")]
)
def test_run_refuses_a_bad_shape_in_one_line(shape: str, says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfdsl", "run", str(STUDY), "--target", "cpu", "--shape", shape],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr


def test_a_limits_shapes_run_on_their_own_equally_weighted() -> None:
    chosen = plan(study(), "cpu", False, [{"M": 65536, "N": 64}]).operations[0].shapes
    assert [(s.sizes, s.weight) for s in chosen] == [({"M": 65536, "N": 64}, 1.0)]
    with pytest.raises(PlanError, match="a limit's shapes run on their own"):
        plan(study(), "cpu", False, [{"M": 65536, "N": 64}, {"M": 64, "N": 4096}])
