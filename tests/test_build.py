"""`perfdsl build`: every bundled study's PDF from a `--quick` CPU run, and the builder's refusals.

Each quick run takes about 30 s, so the four bundles come from the session's
`quick_runs` (tests/conftest.py), copied once for this file, whose builds
evaluate them; tests that must change a bundle or a study work on further
copies. The CLI is run as a subprocess, as a user runs it, with stderr checked.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from run_support import QuickRuns

from perfdsl.report import formatting as fmt
from perfdsl.report.markdown import SECTIONS

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ("rmsnorm_fusion", "transpose_bank_conflicts", "reduction_chains", "reduction_launches")
ATTACKS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>')


def perfdsl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", *args],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="session")
def bundles(quick_runs: QuickRuns, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One quick CPU bundle per bundled study, this file's own copies (the builds evaluate them)."""
    quick_runs.prefetch((ROOT / "studies" / f"{name}.perf", "cpu") for name in STUDIES)
    artifacts = tmp_path_factory.mktemp("artifacts")
    return {name: quick_runs(ROOT / "studies" / f"{name}.perf").copy(artifacts) for name in STUDIES}


@pytest.fixture(scope="session")
def pdfs(bundles: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each study's PDF, built from its bundle (which the build evaluates)."""
    out = tmp_path_factory.mktemp("pdf")
    built = {}
    for name, bundle in bundles.items():
        target = out / f"{name}.pdf"
        done = perfdsl("build", "--pdf", f"studies/{name}.perf", "--results", str(bundle), "-o", str(target))
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        built[name] = target
    return built


def pages(pdf: Path) -> list[str]:
    """Each page's text with whitespace runs made single spaces (line breaks fall anywhere)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf.read_bytes()))
    return [" ".join((page.extract_text() or "").split()) for page in reader.pages]


def evaluation(bundle: Path) -> Mapping[str, Any]:
    import json

    return json.loads((bundle / "evaluation.json").read_text(encoding="utf-8"))


def headline_numbers(ev: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The first page's numbers, formatted as the report formats them, with their exact values."""
    out = []
    end = ev.get("end_to_end") or {}
    c = end.get("comparison")
    if c:
        # A quick run has too few block pairs for an interval: only the ratio is a number then.
        out += [(fmt.ratio(c[k]), c[k]) for k in ("ratio", "ci_low", "ci_high") if c[k] is not None]
    # The capacity ratio is shown as the interval the goodput brackets allow, never the quotient.
    capacity = (ev.get("load") or {}).get("capacity_range")
    if capacity:
        out += [(fmt.ratio(capacity[k]), capacity[k]) for k in ("low", "high") if capacity[k] is not None]
    for op in ev["operations"]:
        combined = op.get("combined")
        if combined:
            out += [(fmt.ratio(combined[k]), combined[k]) for k in ("ratio", "ci_low", "ci_high")]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", STUDIES)
def test_pdf_has_every_section_in_order_and_the_headline_numbers(
    name: str, pdfs: dict[str, Path], bundles: dict[str, Path]
) -> None:
    text = pages(pdfs[name])
    whole = " ".join(text)
    # Each heading after the previous one (running heads repeat them, so search onwards).
    position = 0
    for _, heading in SECTIONS:
        found = whole.find(heading, position)
        assert found >= 0, f"`{heading}` is missing, or out of order"
        position = found + len(heading)
    first = text[0]
    assert first.index("Decision and result") < first.index("Decision:")
    ev = evaluation(bundles[name])
    c = (ev.get("end_to_end") or {}).get("comparison")
    if c and c["ci_low"] is None:
        assert f"no interval ({c['interval_missing']})" in first
    for shown, exact in headline_numbers(ev):
        assert shown in first, f"{shown} ({exact}) is not on page 1"
        assert float(shown.replace(",", "")) == pytest.approx(exact, rel=5e-4)
    correct = all(op["correctness"]["passed"] for op in ev["operations"])
    correct = correct and (ev.get("model_level") or {}).get("passed") is not False
    assert ("Correctness: passed" if correct else "Correctness: FAILED") in first
    # A quick run is a smoke run, and page 1 says so.
    assert "Smoke run" in first
    footer = f"{name} · bundle {ev['run_id']} · study"
    assert all(footer in page for page in text)


@pytest.mark.slow
def test_markdown_is_deterministic_even_after_reevaluation(bundles: dict[str, Path], tmp_path: Path) -> None:
    bundle = bundles["rmsnorm_fusion"]
    built = []
    for name in ("a.md", "b.md"):
        # Each build evaluates the bundle afresh: evaluation and rendering are both pure.
        (bundle / "evaluation.json").unlink(missing_ok=True)
        out = tmp_path / name
        done = perfdsl(
            "build", "--md", "studies/rmsnorm_fusion.perf", "--results", str(bundle), "-o", str(out)
        )
        assert done.returncode == 0, done.stderr
        assert "evaluated" in done.stderr
        built.append(out.read_bytes())
    assert built[0] == built[1]
    headings = re.findall(r"^## (.+)$", built[0].decode("utf-8"), flags=re.MULTILINE)
    assert headings == [heading for _, heading in SECTIONS]


def _study_copy(tmp_path: Path, replace: Mapping[str, str]) -> Path:
    text = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "rmsnorm_fusion.perf"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", STUDIES)
def test_every_word_of_the_report_lies_inside_the_page(
    name: str, bundles: dict[str, Path], tmp_path: Path
) -> None:
    """Laid out as the PDF is: a table too wide for the page runs into the margin, unclipped."""
    from pdf_layout import words_past_margin

    out = tmp_path / "report.html"
    done = perfdsl("build", "--html", f"studies/{name}.perf", "--results", str(bundles[name]), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert words_past_margin(out.read_text(encoding="utf-8")) == []


@pytest.mark.slow
def test_html_escapes_markup_in_every_study_string(bundles: dict[str, Path], tmp_path: Path) -> None:
    attack = " ".join(ATTACKS).replace('"', '\\"')
    study = _study_copy(
        tmp_path,
        {
            "Fuse RMSNorm's reduction": f"Fuse {attack} reduction",
            "Decoder step, hidden size": f"Decoder {attack} step",
            "float16 and bfloat16 inputs": f"float16 {attack} inputs",
            "Occupancy tuning would": f"Occupancy {attack} would",
            "both kernels already run": f"both {attack} kernels",
            "restores the two-pass path": f"restores {attack} path",
        },
    )
    out = tmp_path / "report.html"
    done = perfdsl("build", "--html", str(study), "--results", str(bundles["rmsnorm_fusion"]), "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "<img" not in html
    assert "onerror=alert(1)>" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6


@pytest.mark.slow
def test_predict_section_edited_after_the_run_is_on_page_one(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    study = _study_copy(tmp_path, {"normalize.time   ratio <= 0.55": "normalize.time   ratio <= 0.95"})
    out = tmp_path / "edited.pdf"
    done = perfdsl("build", "--pdf", str(study), "--results", str(bundles["rmsnorm_fusion"]), "-o", str(out))
    assert done.returncode == 0, done.stderr
    first = pages(out)[0]
    assert "Predictions edited after the run" in first
    assert "edited after the run: these predictions were not registered" in first


@pytest.mark.slow
def test_tampered_bundle_is_refused(bundles: dict[str, Path], tmp_path: Path) -> None:
    bundle = tmp_path / "copy" / bundles["rmsnorm_fusion"].name
    shutil.copytree(bundles["rmsnorm_fusion"], bundle)
    samples = next((bundle / "samples" / "normalize").glob("*.csv"))
    with open(samples, "a", encoding="utf-8") as handle:
        handle.write("change,0,99,0,1,1\n")  # one faster sample, added after the run
    out = tmp_path / "never.pdf"
    done = perfdsl("build", "--pdf", "studies/rmsnorm_fusion.perf", "--results", str(bundle), "-o", str(out))
    assert done.returncode == 2
    assert "refusing to build" in done.stderr
    assert f"`samples/normalize/{samples.name}` has changed since the run" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_no_bundle_says_how_to_make_one(tmp_path: Path) -> None:
    study = _study_copy(tmp_path, {'artifacts "../artifacts/"': 'artifacts "nothing-here/"'})
    done = perfdsl("build", "--pdf", str(study), cwd=tmp_path)
    assert done.returncode == 2
    assert f"`perfdsl run {study} --quick`" in done.stderr
    assert list(tmp_path.iterdir()) == [study]


def test_a_study_with_errors_is_not_built(tmp_path: Path) -> None:
    study = _study_copy(
        tmp_path, {'  fallback          "PERF_RMSNORM=unfused restores the two-pass path"\n': ""}
    )
    done = perfdsl("build", "--md", str(study), cwd=tmp_path)
    assert done.returncode == 1
    assert "error[" in done.stderr
    assert list(tmp_path.iterdir()) == [study]


def test_build_run_hands_run_every_option_run_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """`build --run` once built run's arguments by hand and lacked `--shape`'s: AttributeError."""
    import argparse

    from perfdsl.commands import build
    from perfdsl.commands import run as run_command

    handed: list[argparse.Namespace] = []
    monkeypatch.setattr(run_command, "run", lambda args: handed.append(args) or 0)
    args = argparse.Namespace(study="-odd name.perf", target="cpu", quick=True)
    assert build._run_first(args) == 0
    parser = argparse.ArgumentParser()
    run_command.add_arguments(parser)
    expected = vars(parser.parse_args(["x.perf"]))
    (got,) = handed
    assert set(vars(got)) == set(expected)
    assert (got.study, got.target, got.quick, got.shapes) == ("-odd name.perf", "cpu", True, None)


def test_no_bundle_of_an_imported_study_says_to_run_it_without_quick(tmp_path: Path) -> None:
    # An imported study's run copies its files and measures nothing, so `--quick` is no smoke run.
    studies = Path(__file__).resolve().parents[1] / "studies"
    shutil.copytree(studies / "imported", tmp_path / "imported")
    study = tmp_path / "batchnorm_imported.perf"
    text = (studies / "batchnorm_imported.perf").read_text(encoding="utf-8")
    study.write_text(re.sub(r'artifacts "[^"]*"', 'artifacts "nothing-here/"', text), encoding="utf-8")
    done = perfdsl("build", "--md", str(study), cwd=tmp_path)
    assert done.returncode == 2
    assert f"`perfdsl run {study}` (or add --run)" in done.stderr
