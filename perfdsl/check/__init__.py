"""The checker: `check(Study) -> list[Diagnostic]`, one `check_<link>` per link.

The links of the chain of evidence (SPEC.md section 4) are checked in the order
the report presents them. Each link is a function found by name in the module
that groups it, as Jinja's NodeVisitor finds `visit_<Node>`: a new link needs
one `check_<link>` and one entry in `LINKS`, nowhere else. Every finding is a
value; nothing here raises for a mistake in a study, and nothing here imports
the Python the study refers to.
"""

from __future__ import annotations

from perfdsl.check import (
    end_to_end,
    evidence,
    imported,
    imported_counters,
    links,
    operations,
    predictions,
    runnable,
    stopping,
    targets,
    workload,
)
from perfdsl.check.context import Context
from perfdsl.diagnostics import Diagnostic
from perfdsl.nodes import Study

# The links, in the order the report presents them, each beside the module
# that holds its `check_<link>`.
LINKS = (
    ("decision", links),
    ("workload", workload),
    ("baseline", workload),
    ("operation", operations),
    ("imported", imported),
    ("imported_counters", imported_counters),
    ("mechanism", operations),
    ("prediction", predictions),
    ("targets", targets),
    ("correctness", evidence),
    ("mechanism_evidence", evidence),
    ("timing", evidence),
    ("stopping", stopping),
    ("load_probe", stopping),
    ("end_to_end", end_to_end),
    ("value", end_to_end),
    ("limitations", links),
    ("investigation", links),
    ("artifacts", links),
    # Last: not a link of the chain, but whether `perfdsl run` can carry the study out.
    ("runnable", runnable),
)


def check(study: Study) -> list[Diagnostic]:
    """Every diagnostic about `study`'s chain of evidence, sorted by position."""
    ctx = Context(study)
    for link, module in LINKS:
        getattr(module, f"check_{link}")(ctx)
    return sorted(ctx.diagnostics, key=Diagnostic.sort_key)
