"""`perfdsl check FILE|DIR...`: static checks of studies, never importing their code."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perfdsl import formats
from perfdsl.collector import collector_paused
from perfdsl.commands import CommandError
from perfdsl.diagnostics import (
    ERROR,
    Diagnostic,
    count_errors,
    render_full,
    render_json,
    render_short,
    summary_line,
)
from perfdsl.source import Source, Span

if TYPE_CHECKING:
    from perfdsl.nodes import Study


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="study files, or directories searched for *.perf"
    )
    parser.add_argument(
        "--format",
        choices=("full", "short", "json", *formats.FORMATS),
        default="full",
        help="full (rustc-style, default), short (one line each), json, or for CI: "
        "sarif (2.1.0), github (workflow annotations) or junit (XML); CI paths are repository-relative",
    )


def study_paths(paths: list[str]) -> list[Path]:
    """Expand directories into their *.perf files, sorted, each file once.

    A directory's search leaves out the bundles under it: each holds a copy of the study
    it ran (`study.perf`, beside its `manifest.json`), and a matrix writes its cells'
    bundles under the study's own directory, so `check studies/` grew by one copy a cell.
    A file named twice (`studies/x.perf studies`) is checked once, as first named: its
    results were reported twice. A path that is not there is kept: `check` reports it as
    a file it cannot read, in every format, beside the other files' results.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            studies = sorted(p for p in _perf_files(path) if not _in_bundle(p, path))
            if not studies:
                raise CommandError(f"{raw}: directory holds no *.perf study")
        else:
            studies = [path]
        for study in studies:
            key = study.resolve()
            if key not in seen:
                seen.add(key)
                found.append(study)
    return found


def _perf_files(directory: Path) -> list[Path]:
    """Every *.perf file under `directory`; CommandError naming a folder it cannot read.

    `Path.rglob` passes over a folder it may not list, so a study in it was never
    checked and `check` said "no problems found", status 0: a CI gate passed."""
    unreadable: list[OSError] = []
    found = [
        Path(folder) / name
        for folder, _, files in os.walk(directory, onerror=unreadable.append)
        for name in files
        if name.endswith(".perf") and (Path(folder) / name).is_file()
    ]
    if unreadable:
        error = unreadable[0]
        raise CommandError(
            f"{error.filename}: cannot read the directory: {error.strerror or error}; the studies in it "
            "would go unchecked"
        )
    return found


def _in_bundle(study: Path, searched: Path) -> bool:
    """Whether `study` lies in a bundle (a folder with a manifest) below the folder `searched`."""
    folder = searched
    for part in study.relative_to(searched).parts[:-1]:
        folder = folder / part
        if (folder / "manifest.json").is_file():
            return True
    return False


def read_source(path: Path) -> Source:
    """Read a study as UTF-8, turning OS and decoding errors into one-line messages."""
    try:
        return Source.read(path)
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: not UTF-8 text (byte {error.start}); save the study as UTF-8") from None
    except IsADirectoryError:
        raise CommandError(
            f"{path}: is a directory; name one study file in it (`perfdsl check {path}` checks them all)"
        ) from None
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror or error}") from None


def diagnose_file(path: Path) -> tuple[Source, list[Diagnostic]]:
    """A study file's text and every diagnostic for it; a file that cannot be read is one error
    (PD008) at the first byte that is not UTF-8, or at its start, in place of the study's."""
    try:
        source = Source.read(path)
    except UnicodeDecodeError as bad:
        raw = path.read_bytes()
        text = raw.decode("utf-8", errors="replace")
        at = len(raw[: bad.start].decode("utf-8"))
        source = Source(str(path), text)
        why = f"not UTF-8 text (byte {bad.start})"
        help_ = "save the file as UTF-8 (`iconv -f latin1 -t utf-8`, or the editor's encoding menu)"
        return source, [_unreadable(source, Span(at, at + 1), why, "not UTF-8 here", help_)]
    except OSError as error:
        source = Source(str(path), "")
        why = error.strerror or str(error)
        help_ = (
            "name the study's own file: a regular file of UTF-8 text"
            if error.errno in (errno.EINVAL, errno.EFBIG)
            else "make the file readable to this user, or leave it out"
        )
        return source, [_unreadable(source, Span(0, 0), why, "", help_)]
    return source, diagnose(source)


def _unreadable(source: Source, span: Span, why: str, label: str, help_: str) -> Diagnostic:
    """The PD008 error for a study file that could not be read."""
    return Diagnostic("PD008", ERROR, f"the study file cannot be read: {why}", source, span, label, help_)


def diagnose(source: Source) -> list[Diagnostic]:
    """Every diagnostic for one study: syntax and structure, then the chain's rules."""
    return parse_and_check(source)[1]


def checked_study(path: Path, command: str) -> Study | None:
    """The study at `path`, parsed once, when it has no errors; else None, its diagnostics printed.

    `run` and `build` refuse a study that does not check: they print what
    `perfdsl check` would, and say so in one line naming `command`.
    """
    study, diagnostics = parse_and_check(read_source(path))
    if study is not None and not count_errors(diagnostics):
        return study
    for diagnostic in diagnostics:
        print(render_full(diagnostic), file=sys.stderr)
    print(
        f"perfdsl {command}: the study does not check; fix the errors above (`perfdsl check {path}`)",
        file=sys.stderr,
    )
    return None


def parse_and_check(source: Source) -> tuple[Study | None, list[Diagnostic]]:
    """Syntax and structure first, then the chain's rules, each group in text order.

    A misspelt setting (`tragets`) also leaves its link missing ("the workload
    has no `targets`"); printing the structural error first puts the cause
    before the effect, whatever lines they point at.

    The cyclic collector is paused throughout, as the parser pauses it (see
    `perfdsl.syntax.parse_statements`): the study and its statements stay alive
    to the end, and the collections that lowering and checking triggered
    rescanned all of them each time, a quarter of a 20,000-line study's check.
    """
    from perfdsl.check import check
    from perfdsl.parse import parse

    with collector_paused():
        parsed = parse(source)
        diagnostics = sorted(parsed.diagnostics, key=Diagnostic.sort_key)
        if parsed.study is not None and not any(d.is_error for d in diagnostics):
            diagnostics.extend(check(parsed.study))
        elif parsed.study is not None:
            diagnostics.extend(d for d in check(parsed.study) if d.code not in _HIDDEN_AFTER_ERRORS)
    return parsed.study, diagnostics


# After a structural error, a link reported missing is often the one that failed to
# read: hide those so that the first fix is the one that is shown.
_HIDDEN_AFTER_ERRORS = frozenset(f"PD1{n:02d}" for n in range(100))


def run(args: argparse.Namespace) -> int:
    paths = study_paths(args.paths)
    color = args.format == "full" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    everything: list[Diagnostic] = []
    checked: list[str] = []
    unreadable: list[str] = []
    for path in paths:
        source, diagnostics = diagnose_file(path)
        if not source.text and any(d.code == "PD008" for d in diagnostics):
            # Not opened at all (missing, a directory, no permission): the command could not
            # check it. A file that opened but is not UTF-8 is a broken study, status 1.
            unreadable.append(f"{path}: {diagnostics[0].message}")
        everything.extend(diagnostics)
        checked.append(source.path)
        if args.format == "full":
            for diagnostic in diagnostics:
                print(render_full(diagnostic, color))
            line = summary_line(str(path), diagnostics)
            if line:
                print(line + "\n")
        elif args.format == "short":
            for diagnostic in diagnostics:
                print(render_short(diagnostic))
    if args.format == "json":
        sys.stdout.write(render_json(everything))
    elif args.format in formats.FORMATS:
        sys.stdout.write(formats.render(args.format, checked, everything))
    # The PD008 error is in the output, whatever its format, beside every other file's
    # results; status 2 is said on stderr too, in one line, as every command says it.
    for message in unreadable:
        print(f"perfdsl check: error: {message}", file=sys.stderr)
    if unreadable:
        return 2
    if args.format == "full" and not everything:
        checked = f"{len(paths)} stud{'ies' if len(paths) != 1 else 'y'}"
        print(f"ok: {checked} checked, no problems found")
    return 1 if count_errors(everything) else 0
