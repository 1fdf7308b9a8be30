"""What every test file shares: the `slow` marker's rule and one quick run per study and target.

A quick run takes about half a minute on two cores, and several test files read
a bundle of the same study: `quick_runs` makes each (study, target) once per
session. A test that starts `perfdsl run`, itself or through `quick_runs`, is
marked `slow`, as is one that takes seconds for another reason (the CUDA
simulator, compiling kernels, a statistical calibration, the CLI started case
by case), so that `pytest -m "not slow"` is the fast loop (`-n 2` spreads it over
two cores with pytest-xdist); run_support refuses to start a run from a test that
is not marked.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import run_support


@pytest.fixture(autouse=True)
def _runs_only_when_slow(request: pytest.FixtureRequest) -> Iterator[None]:
    run_support.RUNS_ALLOWED = request.node.get_closest_marker("slow") is not None
    yield
    run_support.RUNS_ALLOWED = True


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> run_support.QuickRuns:
    """Quick runs by (study, target), each made the first time a test asks for it."""
    return run_support.QuickRuns(tmp_path_factory.mktemp("quick-runs"))
