"""`perfdsl new NAME [--directory DIR]`: a study and its kernel module to start from, in the
current directory or DIR (made if it does not exist).

A new user edits a study that already checks and runs rather than a blank
file: `NAME.perf` states every link of the chain, and `NAME_kernels.py` holds
the Numba CPU code it references, following the contract in `perfdsl/kernel.py`.
Neither file is ever overwritten: a name that is taken is refused before
anything is written, so a half-scaffold never replaces someone's work.
"""

from __future__ import annotations

import argparse
import errno
import re
import shlex
import string
from importlib import resources
from pathlib import Path

from perfdsl.commands import CommandError

# The study's name is a .perf NAME and the kernel module's name a Python module:
# both must be identifiers, so the one pattern covers both.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEMPLATES = {"study.perf.tmpl": "{name}.perf", "kernels.py.tmpl": "{name}_kernels.py"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the study's name: letters, digits and _, e.g. fused_scale")
    parser.add_argument(
        "--directory",
        "-C",
        metavar="DIR",
        default=".",
        help="write the two files into DIR (made if missing) instead of the current directory",
    )


def scaffold(name: str, directory: Path) -> list[Path]:
    """Write the study and its kernel module into `directory`; return their paths.

    Raises CommandError for a name that is not an identifier, one the study cannot carry, a
    directory that is a file, or a file that exists.
    """
    if not _IDENTIFIER.fullmatch(name):
        raise CommandError(f"`{name}` is not a study name; use letters, digits and _, not a leading digit")
    if directory.exists() and not directory.is_dir():
        raise CommandError(f"{directory}: is not a directory; --directory names the one to write into")
    targets = {template: directory / pattern.format(name=name) for template, pattern in _TEMPLATES.items()}
    values = {"name": name, "kernels": f"{name}_kernels"}
    templates = resources.files("perfdsl.scaffold")
    texts = {
        path: string.Template(templates.joinpath(template).read_text(encoding="utf-8")).substitute(values)
        for template, path in targets.items()
    }
    _refuse_a_name_that_does_not_check(name, targets["study.perf.tmpl"], texts[targets["study.perf.tmpl"]])
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for path in targets.values():
            if path.exists():
                raise FileExistsError(errno.EEXIST, "exists", str(path))
        for path, text in texts.items():
            # "x": never replace a file created since the check above.
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(text)
    except FileExistsError as error:
        raise CommandError(f"{error.filename} already exists; choose another name or move it away") from None
    except OSError as error:
        raise CommandError(f"cannot write {error.filename}: {error.strerror or error}") from None
    return list(targets.values())


def _refuse_a_name_that_does_not_check(name: str, path: Path, text: str) -> None:
    """The scaffold checks clean whatever its name, unless the name is a word the language reads
    as its own where the scaffold puts it (`perfdsl new import` wrote `operation import {`,
    which does not parse): then nothing is written, and the first error says why."""
    from perfdsl.commands.check import diagnose
    from perfdsl.source import Source

    errors = [d for d in diagnose(Source(str(path), text)) if d.is_error]
    if errors:
        raise CommandError(
            f"`{name}` cannot name the study: the scaffold would not check "
            f"({errors[0].code}: {errors[0].message}); choose another name, e.g. `{name}_study`"
        )


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    written = scaffold(args.name, directory)
    here = directory.resolve() == Path.cwd().resolve()
    for path in written:
        print(f"wrote {path.name if here else path}")
    study = written[0].name
    # The study finds its kernel module from its own directory, so the commands run from there.
    enter = "" if here else f"cd {shlex.quote(str(directory))} && "
    print(f"next: {enter}perfdsl check {study} && perfdsl run --target cpu --quick {study}")
    return 0
