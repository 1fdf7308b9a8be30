"""No command writes over what it reads: the bundle's evidence, the study, or any study file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from evaluate_fixtures import CHECKED, make_bundle

from perfdsl.bundle.files import verify_bundle
from perfdsl.cli import main


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return make_bundle(tmp_path / "made", **CHECKED)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("option", "inside"),
    [("--jsonl", "results.json"), ("--junit", "manifest.json"), ("--summary", "samples/notes.md")],
)
def test_evaluate_refuses_an_output_inside_the_bundle_it_reads(
    bundle: Path, option: str, inside: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `evaluate --jsonl B/imported.json B` replaced the evidence, exit 0, and the bundle then
    # failed verification for good.
    before = {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()}
    assert main(["evaluate", option, str(bundle / inside), str(bundle)]) == 2
    err = capsys.readouterr().err
    assert f"{option} {bundle / inside}: is inside the bundle {bundle}" in err
    assert {p: p.read_bytes() for p in bundle.rglob("*") if p.is_file()} == before
    verify_bundle(bundle)


def test_build_refuses_to_write_its_report_over_the_study_or_into_the_bundle(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study.perf"
    shutil.copy(bundle / "study.perf", study)
    text = study.read_bytes()
    assert main(["build", "--md", "--results", str(bundle), "-o", str(study), str(study)]) == 2
    assert "names a study file" in capsys.readouterr().err and study.read_bytes() == text
    link = tmp_path / "report.md"
    link.symlink_to(bundle / "results.json")
    assert main(["build", "--md", "--results", str(bundle), "-o", str(link), str(study)]) == 2
    assert f"-o {link}: is inside the bundle {bundle}" in capsys.readouterr().err
    verify_bundle(bundle)
    assert main(["build", "--md", "--results", str(bundle), "-o", str(tmp_path / "out.md"), str(study)]) == 0


def test_no_output_is_written_to_a_study_file(bundle: Path, tmp_path: Path) -> None:
    # `evaluate --summary softmax_online.perf B` appended Markdown to the study.
    assert main(["evaluate", "--summary", str(tmp_path / "other.perf"), str(bundle)]) == 2
    assert not (tmp_path / "other.perf").exists()


def test_history_refuses_a_page_inside_a_run_it_reads(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study.perf"
    shutil.copy(bundle / "study.perf", study)
    page = bundle / "history.html"
    artifacts = bundle.parent.parent
    assert main(["history", "--artifacts", str(artifacts), "-o", str(page), str(study)]) == 2
    assert f"-o {page}: is inside the bundle {bundle}" in capsys.readouterr().err and not page.exists()
