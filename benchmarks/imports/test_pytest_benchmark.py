"""pytest-benchmark of the pair: `pytest benchmarks/imports/test_pytest_benchmark.py --benchmark-json=FILE`.

Not part of the test suite (pytest collects only tests/): it measures, it asserts nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from workload import VARIANTS, bound_call


@pytest.mark.parametrize("name", list(VARIANTS))
def test_batchnorm(benchmark: Any, name: str) -> None:
    benchmark(bound_call(name))
