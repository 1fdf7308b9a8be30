"""Read every record file of recorded bundles with this code, write it back, and compare the bytes.

    .venv/bin/python benchmarks/round_trip.py BUNDLE...                    # exit 1 if a file differs
    .venv/bin/python benchmarks/round_trip.py --records OUT.json BUNDLE...  # also keep each record's repr
    .venv/bin/python benchmarks/round_trip.py --against OUT.json BUNDLE...  # and compare them with those

`same_bytes.py` checks what `perfdsl evaluate` and the report make of a bundle;
this checks the bundle's records themselves, the way a change to how they are
written and read must leave them: each of results.json, plan.json,
registration.json, imported.json and evaluation.json that a bundle holds is
read into its record and written again (`bundle.files.dumps`), and must equal
the file byte for byte. A file of an older format version is read but not
compared (the writer writes only the current version's keys); what any file
reads as is compared instead with `--against`, the records' reprs an older
checkout of the code kept with `--records`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfdsl.bundle import versions
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.bundle.files import dumps
from perfdsl.bundle.imported import ImportedRun, is_imported_bundle
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results

CURRENT = {
    "results.json": versions.RESULTS,
    "plan.json": versions.PLAN,
    "imported.json": versions.IMPORTED,
    "evaluation.json": (versions.EVALUATION, versions.IMPORTED_EVALUATION),
}
"""Each versioned file's current version: the only one whose bytes a rewrite can repeat."""


def readers(bundle: Path) -> dict[str, Callable[[Path], Any]]:
    """Each record file this bundle holds, with the record's reader."""
    found: dict[str, Callable[[Path], Any]] = {
        "results.json": Results.read,
        "plan.json": Plan.read,
        "registration.json": RegistrationRecord.read,
        "imported.json": ImportedRun.read,
        "evaluation.json": ImportedEvaluation.read if is_imported_bundle(bundle) else Evaluation.read,
    }
    return {name: read for name, read in found.items() if (bundle / name).is_file()}


def round_trip(bundle: Path) -> tuple[list[str], dict[str, str]]:
    """Every file whose rewrite differs from its bytes, and every record's repr, by file."""
    differences, records = [], {}
    for name, read in readers(bundle).items():
        record = read(bundle)
        records[name] = repr(record)
        text = (bundle / name).read_text(encoding="utf-8")
        current = CURRENT.get(name)
        schema = json.loads(text).get("schema")
        if current is not None and schema not in (current if isinstance(current, tuple) else (current,)):
            continue
        if dumps(record.to_json()) != text:
            differences.append(f"{name}: written back differs")
    return differences, records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", type=Path, metavar="BUNDLE")
    parser.add_argument("--records", type=Path, help="write each record's repr here, by bundle and file")
    parser.add_argument("--against", type=Path, help="compare each record's repr with this --records file")
    args = parser.parse_args(argv)
    kept = json.loads(args.against.read_text(encoding="utf-8")) if args.against else None
    every: dict[str, dict[str, str]] = {}
    failed = 0
    for bundle in args.bundles:
        differences, records = round_trip(bundle)
        key = bundle.resolve().as_posix()
        every[key] = records
        if kept is not None:
            before = kept.get(key, {})
            differences += [f"{n}: reads as another record" for n in records if before.get(n) != records[n]]
            differences += [f"{n}: not read now" for n in before if n not in records]
        failed += bool(differences)
        print(f"{'DIFFERENT' if differences else 'same'} {bundle} ({', '.join(sorted(records))})")
        print("".join(f"  {line}\n" for line in differences), end="")
    if args.records:
        args.records.write_text(json.dumps(every, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
