"""`perfdsl run` for a wholly imported study: copy the result files into a bundle, run no code.

Every file the study imports (operation timing, an operation's Nsight Compute
counters, an application's request times) is read again with its format's parser (it may
have changed since `check`), its entries selected, and copied byte for byte
into `imports/` of the bundle, NVBench's `-bin` sidecar directory with it; the
manifest then holds their SHA-256, so `perfdsl verify` catches a copy edited
after the run. No kernel is imported or compiled and no GPU is asked for.

A file that cannot be read, or an entry that is no longer there, is an
`ImportFormatError` naming the file and the field: the command prints it as
one line (exit status 2).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from perfdsl.bundle import versions
from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.imported import (
    IMPORTED,
    CounterSide,
    ImportedApplication,
    ImportedOperation,
    ImportedRun,
    ImportedSide,
)
from perfdsl.bundle.registration import REGISTRATION, RegistrationRecord
from perfdsl.check.imported import resolve, study_directory
from perfdsl.imports.counted import COUNTER_FORMAT, select_kernels
from perfdsl.imports.evidence import ImportFormatError
from perfdsl.imports.reading import read_bytes
from perfdsl.imports.registry import parse_import
from perfdsl.imports.select import select_entry
from perfdsl.nodes import Application, Imported, Operation, Study
from perfdsl.plan import evaluate_formula, predict_section_hash

IMPORTS_DIR = "imports"
_HASH_PREFIX = 12
"""Enough of the SHA-256 to keep two files of one name apart in `imports/`."""


def artifacts_of(study: Study) -> Path:
    """Where the study's bundles go: its `artifacts` path, relative to the study's directory."""
    artifacts = study.artifacts.value if study.artifacts else "artifacts/"
    return (study_directory(study) / artifacts).resolve()


def run_imported(study: Study, artifacts: Path) -> Path:
    """Write the bundle of a wholly imported study and return its path."""
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = study.source.text
    with BundleWriter(artifacts, study.name.id) as bundle:
        bundle.write_text("study.perf", text)
        bundle.write_json(
            REGISTRATION,
            RegistrationRecord(predict_section_hash(study), _sha256_text(text), started).to_json(),
        )
        copied: dict[str, str] = {}
        operations = tuple(_operation(study, op, bundle, copied) for op in study.operations)
        applications = tuple(_application(study, app, bundle, copied) for app in study.applications)
        bundle.write_json(
            IMPORTED,
            ImportedRun(
                versions.IMPORTED, study.name.id, bundle.run_id, started, operations, applications
            ).to_json(),
        )
    return bundle.path


def _operation(
    study: Study, operation: Operation, bundle: BundleWriter, copied: dict[str, str]
) -> ImportedOperation:
    assert isinstance(operation.baseline, Imported) and isinstance(operation.change, Imported)
    workload = study.workload
    assert workload is not None and workload.shapes is not None
    # check (PD412) allows one shape: the one the files measured.
    shape = workload.shapes.shapes[0]
    sizes = {symbol.id: size for symbol, size in zip(workload.shapes.symbols, shape.sizes, strict=True)}
    models = {
        model.quantity.id: {
            "baseline": evaluate_formula(model.baseline, sizes),
            "change": evaluate_formula(model.change, sizes),
        }
        for model in operation.models
    }
    counters = None
    if operation.baseline_counters is not None and operation.change_counters is not None:
        counters = (
            _counter_side(study, operation.baseline_counters, bundle, copied),
            _counter_side(study, operation.change_counters, bundle, copied),
        )
    return ImportedOperation(
        name=operation.name.id,
        sizes=sizes,
        models=models,
        baseline=_side(study, operation.baseline, bundle, copied),
        change=_side(study, operation.change, bundle, copied),
        counters=counters,
    )


def _application(
    study: Study, application: Application, bundle: BundleWriter, copied: dict[str, str]
) -> ImportedApplication:
    # check (PD412) admits only applications that import both arms into a wholly imported study.
    assert isinstance(application.baseline, Imported) and isinstance(application.change, Imported)
    return ImportedApplication(
        name=application.name.id,
        uses=tuple(name.id for name in application.uses),
        share=application.share.quantity.base if application.share else None,
        baseline=_side(study, application.baseline, bundle, copied),
        change=_side(study, application.change, bundle, copied),
    )


def _counter_side(
    study: Study, imported: Imported, bundle: BundleWriter, copied: dict[str, str]
) -> CounterSide:
    """Parse, select and copy one arm's rows of a profile, as `_side` does for timing."""
    path = resolve(study, imported)
    evidence = parse_import(COUNTER_FORMAT, path)
    kernels = select_kernels(evidence, imported.entry.value)
    digest = evidence.label.sha256
    if path.as_posix() not in copied:
        copied[path.as_posix()] = _copy(path, digest, bundle)
    return CounterSide(
        file=copied[path.as_posix()],
        source=imported.path.value,
        selector=imported.entry.value,
        kernels=tuple(entry.name for entry in kernels),
        sha256=digest,
    )


def _side(study: Study, imported: Imported, bundle: BundleWriter, copied: dict[str, str]) -> ImportedSide:
    """Parse, select and copy one imported file (once per file, however many sides name it)."""
    path = resolve(study, imported)
    evidence = parse_import(imported.format.id, path)
    entry = select_entry(evidence, imported.entry.value)
    digest = evidence.label.sha256
    if path.as_posix() not in copied:
        copied[path.as_posix()] = _copy(path, digest, bundle)
    return ImportedSide(
        file=copied[path.as_posix()],
        source=imported.path.value,
        format=imported.format.id,
        selector=imported.entry.value,
        entry=entry.name,
        sha256=digest,
    )


def _copy(path: Path, digest: str, bundle: BundleWriter) -> str:
    """Copy the file (and an NVBench `<file>-bin/` sidecar directory) into `imports/<hash>/`."""
    data, actual = read_bytes(path)
    if actual != digest:
        raise ImportFormatError(f"{path}: the file changed while it was read; run again")
    # Under a directory of its own, with its own name: a sidecar is named relative to the file.
    relpath = f"{IMPORTS_DIR}/{digest[:_HASH_PREFIX]}/{path.name}"
    bundle.write_bytes(relpath, data)
    sidecar = path.with_name(path.name + "-bin")
    if sidecar.is_dir():
        for item in sorted(sidecar.iterdir()):
            if item.is_file():
                bundle.write_bytes(f"{relpath}-bin/{item.name}", read_bytes(item)[0])
    return relpath


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
