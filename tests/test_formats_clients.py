"""`check`'s CI formats as the consumers perfdsl did not write read them.

JUnit against Jenkins' `junit-10.xsd` (vendored, see tests/fixtures/README.md)
with xmlschema, and through junitparser and junit2html; SARIF through
sarif-tools and through Microsoft's SARIF Multitool itself (from npm, installed by
tests/npm_consumers.sh); GitHub annotations against the toolkit's documented
`AnnotationProperties` rule. Each PyPI consumer is in the `test` extra; a test
skips, saying which, when its consumer is not installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import check_case_paths
import pytest

from perfdsl import codes
from perfdsl.commands.check import diagnose, diagnose_file
from perfdsl.diagnostics import Diagnostic, render_short
from perfdsl.formats import render
from perfdsl.source import Source

pytestmark = pytest.mark.slow  # runs each real consumer of check's output over every check case

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CASES = list(check_case_paths.CASES)
CLEAN = ROOT / "studies" / "rmsnorm_fusion.perf"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths are repository-relative; run from the root, as CI does."""
    monkeypatch.chdir(ROOT)


def _checked(paths: list[Path] | None = None) -> tuple[list[str], list[Diagnostic]]:
    checked, found = [], []
    for path in paths or [*CASES, CLEAN]:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        source, diagnostics = diagnose_file(shown)  # as `check` reads it
        checked.append(source.path)
        found.extend(diagnostics)
    return checked, found


def _junit(tmp_path: Path) -> tuple[Path, list[Diagnostic]]:
    checked, found = _checked()
    path = tmp_path / "check.xml"
    path.write_text(render("junit", checked, found), encoding="utf-8")
    return path, found


# ------------------------------------------------------------------ JUnit


def test_junit_is_valid_against_jenkins_junit_10_xsd(tmp_path: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema validates against junit-10.xsd")
    path, _ = _junit(tmp_path)
    schema = xmlschema.XMLSchema(FIXTURES / "junit-10.xsd")
    assert [str(error.reason) for error in schema.iter_errors(str(path))] == []


@pytest.mark.parametrize("quick", [False, True])
def test_the_predictions_junit_of_a_failed_quick_run_is_valid_against_junit_10_xsd(
    tmp_path: Path, quick: bool
) -> None:
    # `evaluate --junit`: the evidence's own failing case and a quick run's note sit where the
    # schema allows (cases, then the suite's system-out, then its system-err).
    import attrs
    from evaluate_fixtures import make_bundle

    from perfdsl.evaluate.evaluation import evaluate
    from perfdsl.evaluate.inputs import open_evaluated
    from perfdsl.formats.predictions import render_junit

    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema validates against junit-10.xsd")
    broken = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.time ratio <= 0.9",), correct=False))
    )
    path = tmp_path / "predictions.xml"
    path.write_text(render_junit(attrs.evolve(broken, quick=quick), {"invalid"}), encoding="utf-8")
    schema = xmlschema.XMLSchema(FIXTURES / "junit-10.xsd")
    assert [str(error.reason) for error in schema.iter_errors(str(path))] == []


def test_junitparser_counts_one_failure_per_failing_file(tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser", reason="junitparser reads the JUnit XML")
    path, found = _junit(tmp_path)
    (suite,) = list(junitparser.JUnitXml.fromfile(str(path)))
    failing = {d.source.path for d in found if d.is_error}
    stated = suite.failures
    suite.update_statistics()  # junitparser's own recount from the elements
    assert stated == suite.failures == len(failing)
    for case in suite:
        (failure,) = case.result if case.name in failing else ((None,) if not case.result else ())
        if failure is not None:
            errors = [d for d in found if d.source.path == case.name and d.is_error]
            assert failure.text.splitlines()[0] == render_short(errors[0])


def test_junit2html_shows_every_error(tmp_path: Path) -> None:
    """junit2html shows one failure per test case: every error of a file must be in it."""
    pytest.importorskip("junit2htmlreport", reason="junit2html renders the JUnit XML")
    path, found = _junit(tmp_path)
    html = tmp_path / "check.html"
    subprocess.run(
        [sys.executable, "-m", "junit2htmlreport", str(path), str(html)], check=True, capture_output=True
    )
    page = unescape(html.read_text(encoding="utf-8"))
    assert [render_short(d) for d in found if d.is_error and render_short(d) not in page] == []


# ------------------------------------------------------------------ SARIF


def _sarif(paths: list[Path] | None = None) -> dict:
    return json.loads(render("sarif", *_checked(paths)))


def test_sarif_tools_reads_every_result(tmp_path: Path) -> None:
    loader = pytest.importorskip("sarif.loader", reason="sarif-tools reads the SARIF")
    checked, found = _checked()
    path = tmp_path / "check.sarif"
    path.write_text(render("sarif", checked, found), encoding="utf-8")
    records = loader.load_sarif_file(str(path)).get_records()
    assert sorted((r["Location"], r["Line"], r["Code"]) for r in records) == sorted(
        (d.source.path, d.source.position(d.span.start).line, d.code) for d in found
    )


def test_sarif_file_outside_the_repository_is_an_absolute_uri_without_a_base(tmp_path: Path) -> None:
    """SARIF1004: a uri under a uriBaseId is relative and does not begin with `/`; else it is absolute."""
    outside = tmp_path / "a b.perf"
    outside.write_text((ROOT / "tests/check_cases/PD004_unknown_setting.perf").read_text(encoding="utf-8"))
    log = _sarif([outside, ROOT / "tests/check_cases/PD004_unknown_setting.perf"])
    locations = [
        location["physicalLocation"]["artifactLocation"]
        for result in log["runs"][0]["results"]
        for location in result["locations"]
    ]
    for artifact in locations:
        parts = urlsplit(artifact["uri"])
        if "uriBaseId" in artifact:
            assert not parts.scheme and not artifact["uri"].startswith("/"), artifact
        else:
            assert parts.scheme == "file" and Path(parts.path.replace("%20", " ")) == outside, artifact
    assert {"uriBaseId" in a for a in locations} == {True, False}


def test_sarif_rules_have_friendly_names_and_the_driver_an_information_uri() -> None:
    """SARIF2012 and SARIF2005: a rule's `name` is a PascalCase identifier, the driver has an absolute URI."""
    driver = _sarif([CLEAN])["runs"][0]["tool"]["driver"]
    names = [rule["name"] for rule in driver["rules"]]
    assert all(re.fullmatch(r"[A-Z][A-Za-z0-9]*", name) and not re.search("[A-Z]{2}", name) for name in names)
    assert len(set(names)) == len(names) == len(codes.CODES)
    assert urlsplit(driver["informationUri"]).scheme == "https"


MULTITOOL = ROOT / ".consumers/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
"""Microsoft's SARIF Multitool, installed from npm by tests/npm_consumers.sh (`make test` runs it)."""


def _multitool_findings(log: dict, tmp_path: Path) -> list[tuple[str, str, str]]:
    """(level, rule, message id) of every finding `Sarif.Multitool validate` makes on `log`, notes
    included."""
    if not MULTITOOL.is_file():
        pytest.skip(f"no SARIF Multitool at {MULTITOOL.relative_to(ROOT)}: run sh tests/npm_consumers.sh")
    given, out = tmp_path / "check.sarif", tmp_path / "validation.sarif"
    given.write_text(json.dumps(log), encoding="utf-8")
    done = subprocess.run(
        [str(MULTITOOL), "validate", str(given), "-o", str(out), "--level", "Error;Warning;Note"],
        capture_output=True,
        text=True,
        env={"DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    validation = json.loads(out.read_text(encoding="utf-8"))
    return [
        (r.get("level", "warning"), r["ruleId"], r["message"].get("id", ""))
        for run in validation["runs"]
        for r in run.get("results", [])
    ]


def test_sarif_multitool_finds_no_error_or_warning(tmp_path: Path) -> None:
    """Every check case, and a study outside the repository (the SARIF1004 case), validated by the
    Multitool itself: its notes are advice (message ids, help URIs, context regions), never errors,
    and every rule's friendly name is one it takes for PascalCase (`TheGPUWasThrottled` was not)."""
    outside = tmp_path / "elsewhere.perf"
    outside.write_text((ROOT / "tests/check_cases/PD004_unknown_setting.perf").read_text(encoding="utf-8"))
    findings = _multitool_findings(_sarif([*CASES, CLEAN, outside]), tmp_path)
    assert [f for f in findings if f[0] in ("error", "warning")] == []
    assert [f for f in findings if f[2] == "Note_FriendlyNameNotAPascalIdentifier"] == []


def test_sarif_multitool_rejects_an_absolute_uri_under_a_base(tmp_path: Path) -> None:
    """The planted fault the Multitool caught before (SARIF1004): an absolute path given a uriBaseId."""
    outside = tmp_path / "elsewhere.perf"
    outside.write_text((ROOT / "tests/check_cases/PD004_unknown_setting.perf").read_text(encoding="utf-8"))
    log = _sarif([outside])
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    location.update(uri=str(outside), uriBaseId="SRCROOT")
    assert "SARIF1004" in {rule for level, rule, _ in _multitool_findings(log, tmp_path) if level == "error"}


# ------------------------------------------------------------------ GitHub


WRAPPED = CLEAN.read_text(encoding="utf-8").replace(
    "weights   [0.5, 0.3, 0.2]", "weights   [0.5,\n               0.3,\n               0.2, 0.1]"
)


def test_github_annotation_of_a_multi_line_span_has_no_columns() -> None:
    """`AnnotationProperties`: startColumn/endColumn cannot be sent when startLine != endLine."""
    source = Source("studies/wrapped.perf", WRAPPED)
    found = [d for d in diagnose(source) if d.code == "PD405"]
    assert found, "the wrapped weights should not match the shapes"
    line = render("github", [source.path], found[:1]).splitlines()[0]
    properties = dict(field.split("=", 1) for field in line.split("::")[1].split(" ", 1)[1].split(","))
    assert properties["line"] != properties["endLine"]
    assert "col" not in properties and "endColumn" not in properties
