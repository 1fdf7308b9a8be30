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

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import run_support

MEMORY_TEMP_ROOT = Path("/dev/shm")
MEMORY_TEMP_MIN_FREE = 4 << 30
"""The free space a memory-backed temporary root must have: a container's default /dev/shm
(64 MiB) would fill with the suite's bundles, and a disk then serves instead."""


def pytest_configure(config: pytest.Config) -> None:
    """Put the tests' temporary directories in memory where the machine has room there.

    Every bundle the tests write is synced to disk file by file, as `perfdsl run`
    writes it (`bundle.files`), and on a disk those waits were about 5 s of the fast
    loop's 65 s on two cores. On a tmpfs the same code runs and the sync returns at
    once. A `--basetemp` or PYTEST_DEBUG_TEMPROOT the caller chose is kept.
    """
    if config.option.basetemp is not None or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    try:
        room = os.statvfs(MEMORY_TEMP_ROOT)
    except OSError:
        return
    if os.access(MEMORY_TEMP_ROOT, os.W_OK) and room.f_bavail * room.f_frsize >= MEMORY_TEMP_MIN_FREE:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_TEMP_ROOT)


@pytest.fixture(autouse=True)
def _runs_only_when_slow(request: pytest.FixtureRequest) -> Iterator[None]:
    run_support.RUNS_ALLOWED = request.node.get_closest_marker("slow") is not None
    yield
    run_support.RUNS_ALLOWED = True


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> run_support.QuickRuns:
    """Quick runs by (study, target), each made the first time a test asks for it."""
    return run_support.QuickRuns(tmp_path_factory.mktemp("quick-runs"))
