"""The import formats by name: what a study's `format NAME` (and a future CLI option) looks up."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from perfdsl.imports.evidence import ImportedEvidence, ImportFormatError
from perfdsl.imports.google_benchmark import parse_google_benchmark
from perfdsl.imports.hyperfine import parse_hyperfine
from perfdsl.imports.ncu import parse_ncu_raw
from perfdsl.imports.nsys import parse_nsys_gpu_trace, parse_nsys_kern_sum
from perfdsl.imports.nvbench import parse_nvbench
from perfdsl.imports.pyperf_json import parse_pyperf
from perfdsl.imports.pytest_benchmark import parse_pytest_benchmark

Parser = Callable[[Path], ImportedEvidence]

FORMATS: dict[str, Parser] = {
    "google-benchmark": parse_google_benchmark,
    "pytest-benchmark": parse_pytest_benchmark,
    "pyperf": parse_pyperf,
    "hyperfine": parse_hyperfine,
    "nvbench": parse_nvbench,
    "nsys-gpu-trace": parse_nsys_gpu_trace,
    "nsys-kern-sum": parse_nsys_kern_sum,
    "ncu-raw": parse_ncu_raw,
}
"""Each name is the `format` field of the evidence its parser returns."""


def parse_import(format_name: str, path: Path) -> ImportedEvidence:
    """Read `path` as `format_name`; an unknown format is an ImportFormatError with close matches."""
    parser = FORMATS.get(format_name)
    if parser is None:
        close = difflib.get_close_matches(format_name, FORMATS, n=4)
        hint = f"did you mean {', '.join(f'`{c}`' for c in close)}? " if close else ""
        known = ", ".join(f"`{name}`" for name in FORMATS)
        raise ImportFormatError(
            f"{path}: unknown import format `{format_name}`: {hint}known formats: {known}"
        )
    return parser(Path(path))
