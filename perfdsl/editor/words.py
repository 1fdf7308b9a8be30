"""The words a .perf file is written with, grouped as editors colour and complete them.

Taken from the lowering schemas and the vocabulary rather than restated, so a
setting or a mechanism added there is highlighted and completed everywhere
without a second edit. Shared by the Pygments lexer and the language server.
"""

from __future__ import annotations

from perfdsl import vocabulary
from perfdsl.schema import EVIDENCE_KINDS, SCHEMAS, STUDY_SECTIONS, STUDY_SETTINGS

SECTIONS: tuple[str, ...] = ("study", *STUDY_SECTIONS)
"""Words that open a block (`workload {`), and `study` itself."""

SETTINGS: tuple[str, ...] = tuple(
    sorted({*STUDY_SETTINGS, *(key for schema in SCHEMAS.values() for key in schema), "fallback"})
)
"""Words that start a statement inside a section (`repeats 100`), plus the modelled quantities."""

GRAMMAR_WORDS: tuple[str, ...] = (
    "in",
    "at",
    "vs",
    "per",
    "step",
    "load",
    "baseline",
    "change",
    "ratio",
    "import",
    "format",
    "entry",
)
"""Keywords fixed by the grammar inside statements."""

CONSTANTS: tuple[str, ...] = tuple(
    sorted(
        {
            *vocabulary.DECISIONS,
            *vocabulary.MECHANISMS,
            *vocabulary.MEASURES,
            *vocabulary.DTYPES,
            *vocabulary.TARGETS,
            *vocabulary.POISONS,
            *vocabulary.STOPS,
            *vocabulary.ARRIVALS,
            *vocabulary.LIMIT_KINDS,
            *vocabulary.OBJECTIVE_METRICS,
            *vocabulary.STATISTICS,
            *vocabulary.ERROR_METRICS,
            *vocabulary.APPLICATION_QUANTITIES,
            *vocabulary.OPERATION_EVIDENCE,
            *EVIDENCE_KINDS,
            vocabulary.AMDAHL,
        }
    )
)
"""The fixed values a setting chooses from: `adopt`, `bytes_removed`, `float32`, `poisson` ..."""

SETTINGS_BY_SECTION: dict[str, tuple[str, ...]] = {
    "study": (*STUDY_SETTINGS, *STUDY_SECTIONS),
    **{section: tuple(schema) for section, schema in SCHEMAS.items()},
}
"""What may be written directly inside each kind of block, for completion."""

VALUE_KINDS: dict[str, dict[str, str]] = {
    section: {name: spec.kind for name, spec in schema.items()}
    for section, schema in {"study": STUDY_SETTINGS, **SCHEMAS}.items()
}
"""What each section's settings take, in the words of the checker's messages (`a whole number`)."""
