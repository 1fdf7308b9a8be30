"""Implementations taken from other harnesses' result files: readable, selectable, honestly labelled.

`check` reads each imported file with its format's pure parser (no harness is
run or imported, so an untrusted study stays safe to check) and reports at the
`import` line what the run would otherwise fail on: a missing or malformed
file, an entry that is not there. A file whose label is not evidence-grade is
a warning quoting its caveats. The rules that tie imported evidence to the
rest of the chain (one shape, correctness stated as not run, an application
timed by a file or stated as not run) are here too; the links that a run
would otherwise satisfy skip a wholly imported study through `Study.imported`.

An application's request times may be imported too, but only in a wholly
imported study: beside perfdsl's own kernel timing, the end-to-end ratio would
come from another harness than the operation's, and Amdahl would set one
against the other as if one run had measured both.

The readers (`perfdsl.imports`) are imported where a file is read, so that a
study that runs its own kernels, the usual one, is checked without loading them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from perfdsl.check.context import Context
from perfdsl.check.names import choice
from perfdsl.nodes import Application, Imported, Operation, Study

if TYPE_CHECKING:
    from perfdsl.imports.evidence import ImportedEvidence


def study_directory(study: Study) -> Path:
    """Where an imported path is resolved from: the study file's directory, as for `artifacts`."""
    return Path(study.source.path).parent


def resolve(study: Study, imported: Imported) -> Path:
    """The imported file's path as this process can open it."""
    return study_directory(study) / imported.path.value


def check_imported(ctx: Context) -> None:
    operations = ctx.study.operations
    if not any(op.imported for op in operations):
        _applications_in_a_run(ctx)
        return
    parsed: dict[tuple[str, str], ImportedEvidence | None] = {}
    for subject in (*operations, *ctx.study.applications):
        _sides(ctx, subject)
        for imported in _imports(subject):
            evidence = _read(ctx, imported, parsed)
            if evidence is not None:
                _entry(ctx, imported, evidence)
    _whole_study(ctx)
    _caveats(ctx, parsed)


def _imports(subject: Operation | Application) -> list[Imported]:
    return [side for side in (subject.baseline, subject.change) if isinstance(side, Imported)]


def _applications_in_a_run(ctx: Context) -> None:
    for application in ctx.study.applications:
        if application.imported:
            ctx.report(
                "PD412",
                f"application `{application.name.id}` imports its times, but the study runs its operations",
                application.name.span,
                label="end-to-end and kernel timing would come from two harnesses",
                help="give the application an `entry` that perfdsl calls, or import the operations' "
                "timing too",
            )


def _sides(ctx: Context, subject: Operation | Application) -> None:
    """One side imported and the other run would compare two harnesses' numbers as one."""
    if isinstance(subject, Application):
        _application_sides(ctx, subject)
        return
    sides = (subject.baseline, subject.change)
    if subject.imported and not all(isinstance(s, Imported) for s in sides) and None not in sides:
        ctx.report(
            "PD412",
            f"operation `{subject.name.id}` imports one implementation and runs the other",
            subject.name.span,
            label="baseline and change must come from the same harness",
            help="import both `baseline` and `change`, or give both as Python references",
        )


def _application_sides(ctx: Context, application: Application) -> None:
    """An imported application is timed by its files alone: both arms, and no `entry` beside them."""
    if not application.imported:
        return
    if application.baseline is None or application.change is None:
        absent = "change" if application.change is None else "baseline"
        ctx.report(
            "PD412",
            f"application `{application.name.id}` imports the times of one arm only",
            application.name.span,
            label=f"`{absent}` missing",
            help=f'add `{absent} import "FILE" format FORMAT entry "NAME"`',
        )
    if application.entry is not None:
        ctx.report(
            "PD412",
            f"application `{application.name.id}` has both an `entry` and imported times",
            application.entry.span,
            label="perfdsl would call the entry and also read the files",
            help="remove `entry`: the imported files are its timing",
        )


def _read(
    ctx: Context, imported: Imported, parsed: dict[tuple[str, str], ImportedEvidence | None]
) -> ImportedEvidence | None:
    """The parsed file, once per file and format; None (reported once) when it cannot be used."""
    from perfdsl.imports.evidence import ImportFormatError
    from perfdsl.imports.registry import FORMATS, parse_import

    if not choice(ctx, imported.format, tuple(FORMATS), "import format"):
        return None
    key = (imported.path.value, imported.format.id)
    if key not in parsed:
        try:
            parsed[key] = parse_import(imported.format.id, resolve(ctx.study, imported))
        except ImportFormatError as error:
            parsed[key] = None
            ctx.report(
                "PD315",
                f"imported file `{imported.path.value}` cannot be used as `{imported.format.id}`",
                imported.path.span,
                label=str(error),
                help="paths are relative to the study's directory; check the file and its format",
            )
    return parsed[key]


def _entry(ctx: Context, imported: Imported, evidence: ImportedEvidence) -> None:
    from perfdsl.imports.evidence import ImportFormatError
    from perfdsl.imports.select import select_entry

    try:
        select_entry(evidence, imported.entry.value)
    except ImportFormatError as error:
        ctx.report(
            "PD315",
            f"`{imported.entry.value}` selects no single entry of `{imported.path.value}`",
            imported.entry.span,
            label=str(error),
            help="give an entry's exact name, or a regular expression that matches exactly one",
        )


def _whole_study(ctx: Context) -> None:
    """A run imports every operation or none; an imported run measures one shape and no application."""
    study = ctx.study
    if not study.imported:
        mixed = next(op for op in study.operations if op.imported)
        if any(not op.imported for op in study.operations):
            ctx.report(
                "PD412",
                "the study imports some operations and runs others",
                mixed.name.span,
                label="an imported operation in a study that runs code",
                help="put the imported operations in a study of their own",
            )
        return
    workload = study.workload
    if workload is not None and workload.shapes is not None and len(workload.shapes.shapes) > 1:
        ctx.report(
            "PD412",
            f"imported timing measures one shape, but the workload has {len(workload.shapes.shapes)}",
            workload.shapes.span,
            label="the files do not say which shape each entry measured",
            help="list only the shape the files measured, e.g. `shapes (M, N) in [(4096, 1024)]`",
        )
    for application in study.applications:
        if application.imported:
            continue
        ctx.report(
            "PD412",
            f"application `{application.name.id}` cannot be run: the study's operations are imported",
            application.name.span,
            label="no operation to call",
            help="import its request times (`baseline import ...`, `change import ...`), or remove it "
            'and write `evidence end_to_end { not_run "..." }`',
        )


def _caveats(ctx: Context, parsed: dict[tuple[str, str], ImportedEvidence | None]) -> None:
    """One warning per readable file that is not evidence-grade, at its first `import`."""
    warned: set[tuple[str, str]] = set()
    for subject in (*ctx.study.operations, *ctx.study.applications):
        for imported in _imports(subject):
            key = (imported.path.value, imported.format.id)
            evidence = parsed.get(key)
            if evidence is None or key in warned or evidence.label.evidence_grade:
                continue
            warned.add(key)
            ctx.report(
                "PD508",
                f"imported timing from `{imported.path.value}` is not evidence-grade",
                imported.span,
                label="; ".join(evidence.label.caveats),
                help='the report marks its verdict "not evidence-grade"; re-run the harness '
                "interleaved with every sample kept, or time the change with `perfdsl run`",
            )
