"""The VS Code extension folder: its files exist, parse, and agree with the language's words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from perfdsl.editor.words import CONSTANTS, GRAMMAR_WORDS, SECTIONS, SETTINGS

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


def _json(name: str) -> dict:
    return json.loads((EXTENSION / name).read_text(encoding="utf-8"))


def _grammar() -> dict:
    return _json("syntaxes/perf.tmLanguage.json")


def test_package_names_files_that_exist() -> None:
    contributes = _json("package.json")["contributes"]
    (language,) = contributes["languages"]
    (grammar,) = contributes["grammars"]
    assert language["extensions"] == [".perf"]
    assert grammar["language"] == language["id"]
    assert grammar["scopeName"] == _grammar()["scopeName"]
    for relative in (language["configuration"], grammar["path"], _json("package.json")["main"]):
        assert (EXTENSION / relative).is_file(), relative


def test_language_configuration_has_comments_and_brackets() -> None:
    configuration = _json("language-configuration.json")
    assert configuration["comments"] == {"lineComment": "#"}
    assert ["{", "}"] in configuration["brackets"]
    assert ["(", ")"] in configuration["brackets"]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [("section", SECTIONS), ("keyword", GRAMMAR_WORDS), ("setting", SETTINGS), ("constant", CONSTANTS)],
)
def test_grammar_words_match_the_language(rule: str, expected: tuple[str, ...]) -> None:
    """A word added to the schemas or the vocabulary must reach the grammar too."""
    match = _grammar()["repository"][rule]["match"]
    words = re.fullmatch(r"\\b\((.*)\)\\b", match).group(1).split("|")
    assert sorted(words) == sorted(expected)


def test_grammar_patterns_compile_and_match_their_examples() -> None:
    """The patterns are plain enough to compile as Python regular expressions too."""
    repository = _grammar()["repository"]
    examples = {
        "comment": "# why",
        "reference": "kernels.rmsnorm:fused",
        "number": "1e-5",
        "operator": "<=",
        "section": "workload",
        "setting": "repeats",
        "constant": "bytes_removed",
    }
    for rule, example in examples.items():
        assert re.fullmatch(repository[rule]["match"], example), rule
