"""Re-evaluate recorded bundles with this code and compare the bytes with what older code wrote.

    .venv/bin/python benchmarks/same_bytes.py --record BUNDLE...  # once, with the code to compare against
    .venv/bin/python benchmarks/same_bytes.py BUNDLE...           # after each change: exit 1 if any differs
    .venv/bin/python benchmarks/same_bytes.py --layout NEW BUNDLE  # a fresh run's files against a recorded

A change meant to keep behaviour (a move, a new record in place of a dict) must
leave a bundle's evaluation and its report as they were, byte for byte. Each
bundle is copied to a fresh directory, evaluated there (`perfdsl evaluate`) and
reported (`perfdsl build --md`, from the bundle's own study.perf, so a later
edit of the study under studies/ changes nothing), both as child processes of
this checkout's perfdsl. `--record` keeps the evaluated files in the bundle and
the report beside it as `<BUNDLE>.md`; without it every file of the evaluated
copy (evaluation.json and the manifest among them) and the report must equal
those. The copy sits at the same relative place each time, so the bundle path
the report prints is always the same.

A run's own bytes cannot repeat (the timings differ), so a change on the
writer's side is checked with `--layout`: a fresh bundle of the same study
must hold the same kinds of file, every JSON file the same keys in the same
order with values of the same types, and every CSV the same header. Numbers in
file names and keys are merged (a run writes as many load probes as its search
takes), and evaluation.json, which `perfdsl evaluate` writes, is left out.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import filecmp
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EVALUATED = ("evaluation.json", "manifest.json")
"""The files `perfdsl evaluate` writes into a bundle: what `--record` keeps."""
SHOWN_LINES = 30


def _perfdsl(cwd: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfdsl", *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"perfdsl {' '.join(args)} exited {done.returncode}:\n{done.stderr.strip()}")


def _evaluate_copy(bundle: Path, work: Path) -> tuple[Path, str]:
    """The bundle copied under `work`, evaluated there, and its Markdown report."""
    copy = work / bundle.parent.name / bundle.name
    shutil.copytree(bundle, copy)
    relative = copy.relative_to(work).as_posix()
    _perfdsl(work, "evaluate", relative)
    _perfdsl(work, "build", "--md", "--results", relative, "-o", "report.md", f"{relative}/study.perf")
    return copy, (work / "report.md").read_text(encoding="utf-8")


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _diff(name: str, before: str, after: str) -> list[str]:
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"reference/{name}", f"now/{name}", lineterm=""
        )
    )
    if len(lines) > SHOWN_LINES:
        return [*lines[:SHOWN_LINES], f"... ({len(lines) - SHOWN_LINES} more lines)"]
    return lines


def _differences(bundle: Path, copy: Path, markdown: str) -> list[str]:
    """Every way the evaluated copy and its report differ from the recorded ones."""
    found = []
    reference, now = _files(bundle), _files(copy)
    for name in sorted(set(reference) ^ set(now)):
        found.append(f"{name}: only in {'the reference' if name in reference else 'the new evaluation'}")
    for name in sorted(set(reference) & set(now)):
        if not filecmp.cmp(bundle / name, copy / name, shallow=False):
            found.append(f"{name}: differs")
            if name.endswith(".json"):
                found += _diff(name, (bundle / name).read_text("utf-8"), (copy / name).read_text("utf-8"))
    recorded = bundle.with_name(bundle.name + ".md")
    if not recorded.is_file():
        found.append(f"{recorded}: no recorded report (make one with --record)")
    elif recorded.read_text(encoding="utf-8") != markdown:
        found.append("report (build --md): differs")
        found += _diff("report.md", recorded.read_text(encoding="utf-8"), markdown)
    return found


def _shape(value: object, path: str, out: dict[str, str]) -> None:
    """Every key path of a JSON value in document order, list items merged (`[]`), with its type."""
    out.setdefault(path, type(value).__name__)
    if isinstance(value, dict):
        for key, item in value.items():
            _shape(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        for item in value:
            _shape(item, f"{path}[]", out)


def _merged(name: str) -> str:
    return re.sub(r"\d+", "#", name)


def _layout(bundle: Path) -> dict[str, list[str]]:
    """Each kind of file's layout: a JSON file's key paths and types, a CSV file's header."""
    found: dict[str, dict[str, None]] = {}
    for name in _files(bundle):
        if name == EVALUATED[0]:
            continue
        path, lines = bundle / name, found.setdefault(_merged(name), {})
        if name.endswith(".json"):
            paths: dict[str, str] = {}
            _shape(json.loads(path.read_text(encoding="utf-8")), "", paths)
            # A number may be whole (int) in one run and not (float) in another.
            lines.update(
                {_merged(f"{key}: {kind}").replace(": int", ": float"): None for key, kind in paths.items()}
            )
        elif name.endswith(".csv"):
            with open(path, newline="", encoding="utf-8") as handle:
                lines[",".join(next(csv.reader(handle), []))] = None
    return {name: [line for line in lines if EVALUATED[0] not in line] for name, lines in found.items()}


def _layout_differences(new: Path, reference: Path) -> list[str]:
    left, right = _layout(reference), _layout(new)
    found = [
        f"{n}: only in {'the reference' if n in left else 'the new bundle'}"
        for n in sorted(set(left) ^ set(right))
    ]
    for name in sorted(set(left) & set(right)):
        if left[name] != right[name]:
            found += [f"{name}: layout differs", *_diff(name, "\n".join(left[name]), "\n".join(right[name]))]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", type=Path, metavar="BUNDLE")
    parser.add_argument("--record", action="store_true", help="keep this code's output as the reference")
    parser.add_argument(
        "--layout", action="store_true", help="compare the layout of the first bundle (new) with the second's"
    )
    args = parser.parse_args(argv)
    if args.layout:
        if len(args.bundles) != 2:
            parser.error("--layout compares two bundles: NEW REFERENCE")
        differences = _layout_differences(*args.bundles)
        print("\n".join(differences) or f"same layout: {len(_files(args.bundles[0]))} files")
        return 1 if differences else 0
    for bundle in args.bundles:
        if not (bundle / "manifest.json").is_file():
            parser.error(f"{bundle}: not a bundle directory (no manifest.json)")
    failed = 0
    for bundle in args.bundles:
        bundle = bundle.resolve()
        with tempfile.TemporaryDirectory(prefix="same-bytes-") as work:
            copy, markdown = _evaluate_copy(bundle, Path(work))
            if args.record:
                for name in EVALUATED:
                    shutil.copyfile(copy / name, bundle / name)
                bundle.with_name(bundle.name + ".md").write_text(markdown, encoding="utf-8")
                print(f"recorded {bundle}")
                continue
            differences = _differences(bundle, copy, markdown)
        if differences:
            failed += 1
            print(f"DIFFERENT {bundle}")
            print("\n".join(f"  {line}" for line in differences))
        else:
            print(f"same {bundle} ({len(_files(bundle))} files and the report)")
    if failed:
        print(f"{failed} of {len(args.bundles)} bundles differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
