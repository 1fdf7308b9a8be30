"""`perfdsl run` for a wholly imported study: copy the result files into a bundle, run no code.

Every file the study imports is read again with its format's parser (it may
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
from perfdsl.bundle.imported import IMPORTED, ImportedOperation, ImportedRun, ImportedSide
from perfdsl.bundle.registration import REGISTRATION, RegistrationRecord
from perfdsl.check.imported import resolve, study_directory
from perfdsl.imports.evidence import ImportFormatError
from perfdsl.imports.reading import read_bytes
from perfdsl.imports.registry import parse_import
from perfdsl.imports.select import select_entry
from perfdsl.nodes import Imported, Operation, Study
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
        bundle.write_json(
            IMPORTED,
            ImportedRun(versions.IMPORTED, study.name.id, bundle.run_id, started, operations).to_json(),
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
    return ImportedOperation(
        name=operation.name.id,
        sizes=sizes,
        models=models,
        baseline=_side(study, operation.baseline, bundle, copied),
        change=_side(study, operation.change, bundle, copied),
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
