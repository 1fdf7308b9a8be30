"""An operation's counted mechanism evidence from an imported Nsight Compute profile.

`baseline_counters` and `change_counters` name rows of one or two
`ncu --csv --page raw` files. `check` reads them with the same pure parser the
evaluation uses and reports at the `import` line what would leave the
mechanism uncounted: a file that cannot be read, a selector that matches no
kernel, both arms selecting the same kernels, or a profile that lacks the
metrics the study's mechanism is counted by (PD316).

Imported counts stand only beside imported timing. perfdsl counts its own
kernels with Nsight Compute on a cuda run, on the launch it times; a profile
taken elsewhere counts another build (and for a cpu run, another target), so
setting it beside perfdsl's samples would explain one measurement with
another's counts. That mix is refused (PD412) with this reason.

The profile's reader is imported only for an operation that names counters,
so that checking any other study does not load `perfdsl.imports`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.imported import resolve
from perfdsl.counter_metrics import MEASURE_METRICS
from perfdsl.nodes import Imported, Operation

if TYPE_CHECKING:
    from perfdsl.imports.evidence import Entry, ImportedEvidence


def check_imported_counters(ctx: Context) -> None:
    for operation in ctx.study.operations:
        sides = (operation.baseline_counters, operation.change_counters)
        if sides == (None, None):
            continue
        if not _paired(ctx, operation) or not _beside_imported_timing(ctx, operation):
            continue
        baseline, change = (_kernels(ctx, side) for side in sides)  # type: ignore[arg-type]
        if baseline is None or change is None:
            continue
        shared = sorted({e.name for e in baseline} & {e.name for e in change})
        if shared:
            ctx.report(
                "PD315",
                f"the counters of `{operation.name.id}` select kernel `{shared[0]}` for both arms",
                operation.change_counters.entry.span,  # type: ignore[union-attr]
                label="a launch is one implementation's",
                help="write a selector for each arm that matches only that arm's kernels",
            )
            continue
        _metrics(ctx, operation, baseline, change)


def _paired(ctx: Context, operation: Operation) -> bool:
    """Both arms counted, or neither: one counted arm has nothing to be a ratio of."""
    given = operation.baseline_counters or operation.change_counters
    if operation.baseline_counters is not None and operation.change_counters is not None:
        return True
    assert given is not None
    from perfdsl.imports.counted import COUNTER_FORMAT

    absent = "change_counters" if operation.change_counters is None else "baseline_counters"
    ctx.report(
        "PD412",
        f"operation `{operation.name.id}` imports the counters of one implementation only",
        given.span,
        label=f"`{absent}` missing",
        help=f'add `{absent} import "FILE" format {COUNTER_FORMAT} entry "KERNEL NAME OR REGEX"`',
    )
    return False


def _beside_imported_timing(ctx: Context, operation: Operation) -> bool:
    if operation.imported:
        return True
    assert operation.baseline_counters is not None
    ctx.report(
        "PD412",
        f"operation `{operation.name.id}` imports counters for kernels that perfdsl runs",
        operation.baseline_counters.span,
        label="the profile counted another build than the one this run times",
        help="remove the counters and let a cuda run count its own launches (`evidence mechanism "
        "{ measure bytes }` with Nsight Compute on the PATH), or import the timing too",
    )
    return False


def _kernels(ctx: Context, imported: Imported) -> tuple[Entry, ...] | None:
    """The arm's kernels; None (reported) when the file or the selector cannot be used."""
    from perfdsl.imports.counted import COUNTER_FORMAT, select_kernels
    from perfdsl.imports.evidence import ImportFormatError
    from perfdsl.imports.registry import parse_import

    if imported.format.id != COUNTER_FORMAT:
        ctx.report(
            "PD315",
            f"counters are read from `{COUNTER_FORMAT}` files, not `{imported.format.id}`",
            imported.format.span,
            label="this format holds no counters per launch",
            help=f"profile with `ncu --csv --page raw` and write `format {COUNTER_FORMAT}`",
        )
        return None
    try:
        evidence: ImportedEvidence = parse_import(COUNTER_FORMAT, resolve(ctx.study, imported))
        return select_kernels(evidence, imported.entry.value)
    except ImportFormatError as error:
        ctx.report(
            "PD315",
            f"imported counters `{imported.path.value}` cannot be used",
            imported.span,
            label=str(error),
            help="paths are relative to the study's directory; `entry` is a kernel name or a regular "
            "expression that fully matches every kernel of this arm",
        )
        return None


def _metrics(
    ctx: Context, operation: Operation, baseline: tuple[Entry, ...], change: tuple[Entry, ...]
) -> None:
    """The profile counts what the mechanism changes, for both arms."""
    from perfdsl.imports.counted import missing_metrics

    mechanism = ctx.study.change.mechanism if ctx.study.change else None
    measure = words.MECHANISM_MEASURES.get(mechanism.id) if mechanism else None
    if measure is None:
        return
    for arm, entries, imported in (
        ("baseline", baseline, operation.baseline_counters),
        ("change", change, operation.change_counters),
    ):
        assert imported is not None
        absent = missing_metrics(entries, measure)
        if absent:
            ctx.report(
                "PD316",
                f"the {arm}'s profile does not count `{measure}`, which `{mechanism.id}` changes",  # type: ignore[union-attr]
                imported.span,
                label=f"no value for {', '.join(f'`{m}`' for m in absent)} in the selected rows",
                help="profile again with `ncu --csv --page raw --metrics "
                f"{','.join(MEASURE_METRICS[measure])}`",
            )
