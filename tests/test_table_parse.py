"""The one-loop parse over Lark's tables: used for text that parses, Lark's own parse for errors."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest
from check_case_paths import TEXT_CASES
from lark.exceptions import UnexpectedInput

from perfdsl import syntax
from perfdsl.cli import main
from perfdsl.parser_tables import parse_tables
from perfdsl.source import Source
from perfdsl.table_parse import Unparsed

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"


def test_the_bundled_grammar_is_parsed_by_the_one_loop() -> None:
    """Where the loop could not stand for Lark's parse, every parse would be Lark's, slower."""
    assert parse_tables(syntax._parser().lark) is not None
    assert syntax._parser().fast is not None


def test_the_loop_stops_where_lark_would_raise() -> None:
    parser = syntax._parser()
    builder = syntax._StatementBuilder(Source("s.perf", ""))
    reductions = builder.reductions(parser.fast.rules)
    with pytest.raises(Unparsed):
        parser.fast.parse("study s {\n  seeds 5 5\n}\n", reductions)  # a token the state refuses
    with pytest.raises(Unparsed):
        parser.fast.parse("study s {\n  seeds 5 @\n}\n", reductions)  # a character no terminal takes
    with pytest.raises(Unparsed):
        parser.fast.parse("study s {\n  seeds 5\n", reductions)  # the text ends inside a block


def test_an_error_is_lark_s_with_its_line_and_column() -> None:
    """The loop keeps no lines; the error comes from Lark's own parse of the same text."""
    _, diagnostics = syntax.parse_statements(Source("s.perf", "study s {\n  seeds 5 @\n}\n"))
    (diagnostic,) = diagnostics
    assert (diagnostic.code, diagnostic.message) == ("PD001", "unexpected character `@`")
    assert diagnostic.span.start == len("study s {\n  seeds 5 ")


def test_a_check_run_as_a_process_keeps_the_collector_off() -> None:
    script = (
        "import gc, sys; from perfdsl.cli import main; "
        f"sys.argv = ['perfdsl', 'check', {str(STUDY)!r}]; status = main(); print(gc.isenabled(), status)"
    )
    command = [sys.executable, "-c", script]
    said = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    assert said.stdout.split()[-2:] == ["False", "0"]


def test_a_check_called_in_process_leaves_the_collector_as_it_was(capsys) -> None:
    assert gc.isenabled()
    assert main(["check", str(STUDY)]) == 0
    assert gc.isenabled()


class _PlainBuilder(syntax._StatementBuilder):
    """The builder with every reach found the general way, by walking the symbols."""

    def _reach_for(self, terms):
        return self._reach


def _lark_only(text: str, source: Source) -> object:
    """The section Lark's own parser builds, through the builder with no shortcut."""
    parser = syntax._parser()
    table_parser = parser.lark.parser.parser.parser
    own = table_parser.callbacks
    table_parser.callbacks = _PlainBuilder(source).lark_callbacks(parser.lark.rules)
    try:
        return parser.lark.parse(text)
    finally:
        table_parser.callbacks = own


CORPUS = sorted([*(ROOT / "studies").glob("*.perf"), *TEXT_CASES])


# The bundled study laid out as a writer may: a comment and a blank line before it, a
# list wrapped inside its brackets and a tuple inside its parentheses (newlines there
# are layout), blank lines after `{`.
LAID_OUT = "# written by hand\n\n" + (
    STUDY.read_text()
    .replace(
        "[(64, 4096), (256, 8192), (4096, 8192)]",
        "[\n    (64,\n 4096),\n\n    (256, 8192), (4096, 8192)\n  ]",
    )
    .replace("workload {\n", "workload {\n\n\n")
)


@pytest.mark.parametrize(
    "path, text",
    [*((path, path.read_text()) for path in CORPUS), (Path("laid_out.perf"), LAID_OUT)],
    ids=lambda value: value.name if isinstance(value, Path) else "",
)
def test_the_loop_builds_what_lark_builds(path: Path, text: str) -> None:
    """Same statements, same spans: keywords retyped, `?rule`s passed through, long bodies,
    newlines dropped where they are layout, each reach taken from a terminal where the rule
    starts or ends with one. A golden study that does not parse stops the loop too."""
    source = Source(str(path), text)
    fast = syntax._parser().fast
    reductions = syntax._StatementBuilder(source).reductions(fast.rules)
    try:
        expected = _lark_only(text, source)
    except UnexpectedInput:
        with pytest.raises(Unparsed):
            fast.parse(text, reductions)
        return
    assert fast.parse(text, reductions) == expected
