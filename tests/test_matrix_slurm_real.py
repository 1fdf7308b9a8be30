"""A 4-cell CPU matrix on a real one-node Slurm cluster (tests/slurm_cluster.py), end to end.

reduction_launches runs `--quick` at two of its workload's shapes and at the
shape its `limit regression` declares (the report must show that limit as
measured), and a fourth cell names a shape the study does not declare, so its
`perfdsl run` fails on purpose and must be reported with its reason. One running cell is
cancelled with `scancel`, as a user would; a second `perfdsl matrix` must
record it CANCELLED, resubmit it alone, and leave the others as they ran. Each
cell asks for `--gres=gpu:1` on a node with four cores and two (stand-in)
GPUs, so Slurm must never run more than two at once. Correctness and plumbing
only: no timing is judged on a shared 2-core machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import slurm_cluster
from matrix_support import REPO, STUDY

pytestmark = pytest.mark.slow

SHAPES = ("N = 4096", "N = 65536", "N = 67108864", "N = 3")
CELLS = (
    "cpu.any.current.n4096",
    "cpu.any.current.n65536",
    "cpu.any.current.limit",
    "cpu.any.current.undeclared",
)
TIMEOUT_S = 900


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm_cluster.Cluster]:
    try:
        started = slurm_cluster.start(tmp_path_factory.mktemp("slurm"))
    except slurm_cluster.ClusterUnavailable as why:
        pytest.skip(f"no real Slurm cluster: {why}")
    yield started
    slurm_cluster.stop(started)


def matrix_file(tmp_path: Path) -> Path:
    names = ("n4096", "n65536", "limit", "undeclared")
    shapes = "".join(
        f'[[shapes]]\nname = "{n}"\nselect = [{{{s}}}]\n' for n, s in zip(names, SHAPES, strict=True)
    )
    path = tmp_path / "reduction.matrix.toml"
    path.write_text(
        f'name = "ci-reduction"\nstudy = "{STUDY}"\nquick = true\ntargets = ["cpu"]\n'
        f'[slurm]\npartition = "ci"\ngpus_per_cell = 1\ncpus_per_cell = 1\n{shapes}',
        encoding="utf-8",
    )
    return path


def perfdsl_matrix(cluster: slurm_cluster.Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    environment = dict(cluster.environment, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", "matrix", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=TIMEOUT_S,
        cwd=REPO,
    )


def squeue(cluster: slurm_cluster.Cluster) -> list[tuple[str, str, str]]:
    listed = subprocess.run(
        ["squeue", "--noheader", "--array", "--format=%i|%T|%r"],
        capture_output=True,
        text=True,
        env=cluster.environment,
        timeout=30,
        check=True,
    )
    return [tuple(line.split("|")) for line in listed.stdout.split()]  # type: ignore[misc]


def test_a_four_cell_matrix_on_a_real_cluster(cluster: slurm_cluster.Cluster, tmp_path: Path) -> None:
    matrix = matrix_file(tmp_path)
    out = tmp_path / "matrices"
    submitted = perfdsl_matrix(cluster, str(matrix), "--executor", "slurm", "--dir", str(out), "--no-wait")
    assert submitted.returncode == 1, submitted.stderr  # submitted, not yet complete
    (directory,) = out.iterdir()
    state_file = directory / "state.json"
    job = json.loads(state_file.read_text())["cells"][0]["job"].split("_")[0]

    # The GRES limit, seen from the queue: never more than two running while two more wait.
    most, waited_for_gres, deadline = 0, False, time.monotonic() + TIMEOUT_S
    while not any(t == f"{job}_0" and s == "RUNNING" for t, s, _ in squeue(cluster)):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    listed = squeue(cluster)
    most = sum(1 for _, s, _ in listed if s == "RUNNING")
    waited_for_gres = any(s == "PENDING" and r == "Resources" for _, s, r in listed)
    subprocess.run(["scancel", f"{job}_0"], env=cluster.environment, check=True, timeout=30)

    while True:
        listed = squeue(cluster)
        most = max(most, sum(1 for _, s, _ in listed if s == "RUNNING"))
        waited_for_gres = waited_for_gres or any(s == "PENDING" and r == "Resources" for _, s, r in listed)
        status = perfdsl_matrix(cluster, str(matrix), "--executor", "slurm", "--dir", str(out), "--status")
        cells = {c["id"]: c for c in json.loads(state_file.read_text())["cells"]}
        if cells[CELLS[0]]["state"] == "CANCELLED":
            break
        assert time.monotonic() < deadline, status.stderr
        time.sleep(0.5)
    assert cells[CELLS[0]]["reason"], "a cancelled cell keeps its reason"

    resumed = perfdsl_matrix(
        cluster, str(matrix), "--executor", "slurm", "--dir", str(out), "--poll", "1", "--pdf"
    )
    assert resumed.returncode == 1, resumed.stderr  # one cell fails on purpose
    cells = {c["id"]: c for c in json.loads(state_file.read_text())["cells"]}
    assert {i: c["state"] for i, c in cells.items()} == dict.fromkeys(CELLS[:3], "COMPLETED") | {
        CELLS[3]: "FAILED"
    }
    assert "shape N=3 is not among the workload's shapes" in cells[CELLS[3]]["reason"]
    assert most <= 2 and waited_for_gres, (most, waited_for_gres)

    spans = []
    for index, cell_id in enumerate(CELLS):
        cell = directory / "cells" / cell_id
        submission = json.loads((cell / "submission" / "submission.json").read_text())
        slurm = json.loads((cell / "task-environment.json").read_text())["slurm"]
        assert slurm["SLURM_ARRAY_JOB_ID"] == str(submission["job_id"])
        assert slurm["SLURM_ARRAY_TASK_ID"] == str(index) and slurm["SLURM_JOB_ID"]
        assert slurm.get("CUDA_VISIBLE_DEVICES") in ("0", "1"), "each cell holds one of the two GPUs"
        assert (cell / "submission" / "job.sh").read_text().count("#SBATCH --gres=gpu:1") == 1
        outcome = json.loads((cell / "outcome.json").read_text())
        spans.append((outcome["started"], outcome["ended"]))
        if index < 3:
            bundle = directory / cells[cell_id]["bundle"]
            verified = subprocess.run(
                [sys.executable, "-m", "perfdsl", "verify", str(bundle)],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert len(list((cell / "runs").glob("*/*"))) == 1, "the cancelled attempt left a bundle behind"
    assert max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans) <= 2
    # Completed cells never ran again; the failed one did too if it had failed before the resubmission.
    assert [cells[c]["attempts"] for c in CELLS[:3]] == [2, 1, 1], "a completed cell was run again"
    assert cells[CELLS[3]]["attempts"] in (1, 2)

    report = (directory / "report.md").read_text()
    assert (
        "| `cpu.any.current.undeclared` | FAILED | 1 | perfdsl run: error: shape N=3 is not among" in report
    )
    assert "between-machine (unpaired)" in report and "## Environment differences" in report
    assert report.index("## Environment differences") < report.index("## Every cell")
    assert re.search(
        r"- \*\*regression\*\* At 64M elements .*: measured\n  - on `any` \(cell `cpu.any.current.limit`\) "
        r"at N=67108864, run as \d+ \(quick\): ",
        report,
    ), report
    pdf = directory / "report.pdf"
    assert resumed.stdout.strip() == str(pdf)
    from pypdf import PdfReader

    first = PdfReader(pdf).pages[0].extract_text()
    assert "Matrix ci-reduction" in first and "undeclared" in first
    if os.environ.get("PERFDSL_KEEP_MATRIX_REPORT"):
        keep = Path(os.environ["PERFDSL_KEEP_MATRIX_REPORT"])
        keep.mkdir(parents=True, exist_ok=True)
        for name in ("report.md", "report.pdf", "state.json"):
            (keep / name).write_bytes((directory / name).read_bytes())
