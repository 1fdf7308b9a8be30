"""The Pygments lexer: every bundled study highlights without an error token."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import bundled_studies
import pytest
from pygments.token import Error, Name, _TokenType
from run_support import imported

from perfdsl.editor.lexer import PerfLexer, highlight_css, highlight_html

ROOT = Path(__file__).resolve().parent.parent
STUDIES = bundled_studies.PATHS


def _errors(lexer: PerfLexer, text: str) -> list[str]:
    return [value for token, value in lexer.get_tokens(text) if token in Error]


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_bundled_study_has_no_error_token(path: Path) -> None:
    assert _errors(PerfLexer(), path.read_text(encoding="utf-8")) == []


class _WithoutReferences(PerfLexer):
    """A planted bad rule set: the Python-reference rule is missing."""

    tokens = {  # noqa: RUF012
        "root": [rule for rule in PerfLexer.tokens["root"] if rule[1] is not Name.Namespace]
    }


def test_a_lexer_missing_a_rule_fails_the_check() -> None:
    """The check above can fail: without the reference rule, `kernels.rmsnorm:fused` has a stray `:`."""
    # An imported study names no Python reference, so it cannot show the planted fault.
    with_references = [p for p in STUDIES if not imported(p)]
    assert with_references
    assert all(":" in _errors(_WithoutReferences(), p.read_text(encoding="utf-8")) for p in with_references)


def _kinds(text: str) -> list[tuple[_TokenType, str]]:
    return [(token, value) for token, value in PerfLexer().get_tokens(text) if value.strip()]


def test_tokens_by_kind() -> None:
    kinds = dict((value, token) for token, value in _kinds("operation op { baseline k.m:f; share 8% } # why"))
    assert str(kinds["operation"]) == "Token.Keyword.Declaration"
    assert str(kinds["k.m:f"]) == "Token.Name.Namespace"
    assert str(kinds["8"]) == "Token.Literal.Number"
    assert str(kinds["share"]) == "Token.Name.Attribute"
    assert str(kinds["# why"]) == "Token.Comment.Single"


def test_entry_point_names_the_lexer() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    target = project["project"]["entry-points"]["pygments.lexers"]["perf"]
    module, attribute = target.split(":")
    lexer = getattr(importlib.import_module(module), attribute)
    assert lexer is PerfLexer
    assert "perf" in lexer.aliases


def test_highlight_html_numbers_lines_from_the_excerpt_start() -> None:
    html = highlight_html('  decision adopt\n  title "x"\n', first_line=3)
    assert html.startswith('<div class="perf-source">')
    assert '<span class="linenos">3</span>' in html
    assert '<span class="linenos">4</span>' in html
    assert '<span class="na">decision</span>' in html
    assert ".perf-source .na" in highlight_css()
