"""The real-cluster fixture installs nothing and says why it cannot start, so a skip is never silent."""

from __future__ import annotations

from pathlib import Path

import pytest
import slurm_cluster


def test_without_the_daemons_the_cluster_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(slurm_cluster.ClusterUnavailable) as why:
        slurm_cluster.start(tmp_path / "cluster")
    assert str(why.value).startswith("Slurm is not installed (munged, slurmctld, slurmd, sbatch")
    assert "tests/system_packages.sh" in str(why.value)
    assert not (tmp_path / "cluster").exists(), "nothing is set up before the check"


def test_the_generated_configuration_declares_two_gpus_on_four_cores(tmp_path: Path) -> None:
    text = slurm_cluster._conf(tmp_path)
    assert "NodeName=localhost CPUs=4 Gres=gpu:2 State=UNKNOWN" in text
    assert f"AuthInfo=socket={tmp_path}/munge.socket" in text
    assert "AccountingStorageType=accounting_storage/none" in text
