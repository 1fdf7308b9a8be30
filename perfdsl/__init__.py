"""perfdsl: a performance diagnosis study as a program.

The stages hand each other immutable values:

    parse(Source) -> Study            check(Study) -> list[Diagnostic]
    plan(Study, target) -> Plan       run(Plan) -> Bundle
    evaluate(Bundle) -> Evaluation    render(Study, Evaluation) -> Markdown -> HTML -> PDF

This module stays import-light so that `perfdsl check` starts fast: the run,
evaluate and report stages import their heavy dependencies where they are used.
"""

__version__ = "0.1.0"
# Where the tool is described, for the SARIF driver and the Pygments lexer.
HOMEPAGE = "https://pypi.org/project/perfdsl/"
