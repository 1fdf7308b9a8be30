"""Where a command may write: never over what it reads.

A report, export or CI file named inside the bundle being read replaced its raw
samples or its manifest, and the bundle failed verification for good; one named as
the study replaced the study with its own report. Each command that writes names
its inputs here before it writes anything, and is refused in one line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from perfdsl.commands import CommandError

STUDY_SUFFIX = ".perf"


def refuse_over_inputs(
    output: Path | str,
    option: str,
    *,
    files: Iterable[Path | str] = (),
    bundles: Iterable[Path | str] = (),
) -> None:
    """CommandError where `output` is a study file, one of the input `files`, or inside one of `bundles`.

    Paths are compared as the file system resolves them, links followed, so that a
    link to the study or `bundle/../bundle/results.json` is caught as well."""
    if Path(output).suffix == STUDY_SUFFIX:
        # `evaluate --summary study.perf` appended Markdown to a study it never read.
        raise CommandError(f"{option} {output}: names a study file; perfdsl writes no `{STUDY_SUFFIX}` file")
    target = _real(output)
    for read in files:
        if target == _real(read):
            raise CommandError(
                f"{option} {output}: is {read}, which this command reads; write the output elsewhere"
            )
    for bundle in bundles:
        root = _real(bundle)
        if target == root or root in target.parents:
            raise CommandError(
                f"{option} {output}: is inside the bundle {bundle}, whose files are the run's evidence "
                "(the manifest holds their hashes); write the output outside it"
            )


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))
