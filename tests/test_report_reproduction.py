"""The reproduction section's environment table: what the run recorded, in words a reader can use."""

from __future__ import annotations

from evaluate_fixtures import planted_environment

from perfdsl.bundle.environment import EnvironmentRecord
from perfdsl.report.reproduction import _environment_rows


def test_a_distribution_the_run_did_not_find_reads_not_installed() -> None:
    data = planted_environment("0.68.1", "a")
    data["packages"] = {**data["packages"], "nvidia-ml-py": None}
    rows = dict((name, value) for name, value in _environment_rows(EnvironmentRecord.from_json(data)))
    assert rows["nvidia-ml-py"] == "not installed"
    assert rows["numba"] == "0.68.1"
