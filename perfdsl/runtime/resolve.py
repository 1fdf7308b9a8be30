"""Resolve a study's Python references (`package.module:attr`) to the objects they name.

Where modules are looked for, in order:

1. the study's own directory (a study beside its kernels finds them);
2. the project root: the nearest ancestor of the study's directory holding a
   `pyproject.toml` or `.git` (so `studies/x.perf` finds `kernels/` at the root);
3. `sys.path` as it stands (installed packages).

What this leaves behind: the search directories are put at the front of
`sys.path` only for the duration of the import and removed afterwards, so
later imports elsewhere in the process are not redirected. The imported modules
stay in `sys.modules`, as any import does, which is what lets baseline and change
share a module and keeps kernels compiled once. The consequence, checked here
rather than left to surprise: a top-level package already imported from one
directory is not imported again from another; if the search order above would
find it somewhere else, resolution fails and says so instead of silently
returning the wrong code. `perfdsl run` runs one study per process, so this
only matters to callers that resolve several studies in one process.

An editable install puts perfdsl's own checkout on `sys.path`, and with it the
bundled example package `kernels`: a study outside that checkout is never
resolved to it (the user's own `kernels` must be found by steps 1 or 2). A
module that cannot be found is reported with every directory searched, and
where its parent package was found instead.

A run resolves through the plan (`resolve_operation`, `resolve_roof`,
`resolve_reference`): the orchestration to check every reference before it
starts, each worker to import the code it runs. A reference that does not
resolve is a `RunError` naming the study's file and line.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import pkgutil
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.arms import ARMS, ROOF_ARM
from perfdsl.bundle.plan import OperationPlan, Plan
from perfdsl.diagnostics import suggest
from perfdsl.kernel import Reference, Variant

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"^({_IDENT}(?:\.{_IDENT})*):({_IDENT}(?:\.{_IDENT})*)$")
_ROOT_MARKERS = ("pyproject.toml", ".git")


class ResolveError(Exception):
    """A reference that cannot be turned into the object the study needs.

    `message` and `help` are one line each, in the checker's style (lowercase,
    names in backticks, no final period); the caller adds the study's file and line.
    """

    def __init__(self, reference: str, message: str, help: str) -> None:
        super().__init__(message)
        self.reference = reference
        self.message = message
        self.help = help


def project_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a pyproject.toml or .git."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if any((directory / marker).exists() for marker in _ROOT_MARKERS):
            return directory
    return None


def search_path(study_dir: Path | None) -> tuple[Path, ...]:
    """The directories searched before `sys.path`, in order, without duplicates."""
    if study_dir is None:
        return ()
    study_dir = study_dir.resolve()
    found = [study_dir]
    root = project_root(study_dir)
    if root is not None and root != study_dir:
        found.append(root)
    return tuple(found)


def resolve(
    reference: str,
    expected: type | tuple[type, ...],
    study_dir: Path | None = None,
) -> Any:
    """Import `package.module:attr` and return the attribute, checked against `expected`.

    Raises ResolveError for a malformed reference, a missing module or
    attribute, a module that raises while importing, and an object of the
    wrong type. The original exception, if any, is chained as `__cause__`.
    """
    match = _REFERENCE.match(reference)
    if match is None:
        raise ResolveError(
            reference,
            f"`{reference}` is not a Python reference",
            "write it as `package.module:attribute`, e.g. `kernels.rmsnorm:fused`",
        )
    module_name, attr_path = match.groups()
    dirs = search_path(study_dir)
    module = _import(reference, module_name, dirs)
    value: Any = module
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as error:
            near = suggest(part, [n for n in dir(value) if not n.startswith("_")])
            raise ResolveError(
                reference,
                f"module `{module_name}` has no attribute `{attr_path}`",
                f"{near + ' otherwise, ' if near else ''}define `{attr_path}` in {_where(module)} "
                "or fix the name",
            ) from error
    if not isinstance(value, expected):
        wanted = " or ".join(
            f"`{t.__name__}`" for t in (expected if isinstance(expected, tuple) else (expected,))
        )
        raise ResolveError(
            reference,
            f"`{reference}` is a `{type(value).__name__}`, expected a {wanted}",
            f"make `{attr_path}` a {wanted} from `perfdsl.kernel`",
        )
    return value


def _import(reference: str, module_name: str, dirs: Sequence[Path]) -> Any:
    """Import `module_name` with `dirs` searched first, turning every failure into ResolveError."""
    top = module_name.partition(".")[0]
    _check_not_shadowed(reference, top, dirs)
    _check_not_perfdsl_examples(reference, top, dirs)
    try:
        with _prepended(dirs), _working_directory_kept():
            return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name + ".").startswith(error.name + "."):
            near = _near_module(error.name, dirs)
            raise ResolveError(
                reference,
                f"no module named `{error.name}`{_found_instead(error.name)}",
                f"{near + ' ' if near else ''}{_searched(dirs)}; put `{module_name}` beside the study "
                "or at the project root",
            ) from error
        raise _import_raised(reference, module_name, error) from error
    except (Exception, SystemExit) as error:
        raise _import_raised(reference, module_name, error) from error


def _import_raised(reference: str, module_name: str, error: BaseException) -> ResolveError:
    first_line = (str(error).splitlines() or [""])[0]
    return ResolveError(
        reference,
        f"importing `{module_name}` raised {type(error).__name__}: {first_line}",
        f"run `python -c 'import {module_name}'` from the project root to see the traceback",
    )


def _check_not_shadowed(reference: str, top: str, dirs: Sequence[Path]) -> None:
    """Refuse a package already imported from elsewhere than where the search would find it."""
    loaded = sys.modules.get(top)
    if loaded is None or not dirs:
        return
    spec = importlib.machinery.PathFinder.find_spec(top, [str(d) for d in dirs])
    if spec is None or spec.origin is None:
        return
    wanted = Path(spec.origin).resolve()
    have = getattr(loaded, "__file__", None)
    if have is not None and Path(have).resolve() == wanted:
        return
    raise ResolveError(
        reference,
        f"package `{top}` is already imported from {have or 'a built-in location'}, "
        f"but this study would import it from {wanted}",
        "run each study in its own process (`perfdsl run` does) or rename one of the packages",
    )


def _searched(dirs: Sequence[Path]) -> str:
    """Where the lookup went, in order, and the project root it did not find."""
    searched = ", ".join(str(d) for d in dirs) or "no study directory"
    said = f"searched {searched}, then sys.path"
    if dirs and project_root(dirs[0]) is None:
        said += f" (no {' or '.join(_ROOT_MARKERS)} at or above {dirs[0]}, so no project root)"
    return said


def _near_module(missing: str, dirs: Sequence[Path]) -> str:
    """`did you mean `mykernels.variance`?` for a module name one typo from one that exists:
    a submodule among its parent package's modules, a top-level one among the searched
    directories' and sys.path's (as `suggest` phrases it), or ""."""
    parent, _, name = missing.rpartition(".")
    loaded = sys.modules.get(parent) if parent else None
    where = getattr(loaded, "__path__", None) if parent else [*map(str, dirs), *sys.path]
    if where is None:
        return ""
    return suggest(name, [m.name for m in pkgutil.iter_modules(list(where))], f"{parent}." if parent else "")


def _found_instead(missing: str) -> str:
    """For `a.b.c` not found: where its parent package `a.b` was found, which lacks it."""
    parent = missing.rpartition(".")[0]
    loaded = sys.modules.get(parent)
    where = getattr(loaded, "__file__", None) if loaded is not None else None
    return f" (package `{parent}` was found at {Path(where).parent}, which has none)" if where else ""


def perfdsl_checkout() -> Path | None:
    """The source checkout perfdsl runs from (an editable install puts it on sys.path), if any."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "perfdsl").is_dir() else None


def _check_not_perfdsl_examples(reference: str, top: str, dirs: Sequence[Path]) -> None:
    """Refuse a user's module that would come from perfdsl's own checkout (its bundled `kernels`).

    An editable install puts perfdsl's checkout on sys.path, so a study elsewhere
    naming `kernels.x` would import perfdsl's examples, silently when one shares
    the name. Allowed when the study lives in that checkout, and when the user
    put the checkout on PYTHONPATH themselves.
    """
    checkout = perfdsl_checkout()
    if checkout is None or not dirs or dirs[0].resolve().is_relative_to(checkout):
        return
    explicit = {Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    if checkout in explicit:
        return
    loaded = sys.modules.get(top)
    origin = getattr(loaded, "__file__", None) if loaded is not None else None
    if loaded is None:
        spec = importlib.machinery.PathFinder.find_spec(top, [*map(str, dirs), *sys.path])
        origin = spec.origin if spec is not None else None
    if origin is None:
        return
    found = Path(origin).resolve()
    if not found.is_relative_to(checkout) or found.is_relative_to(checkout / "perfdsl"):
        return
    raise ResolveError(
        reference,
        f"`{top}` would be perfdsl's own bundled example package at {found.parent}, "
        f"not a module of this study",
        f"{_searched(dirs)}; put your `{top}` beside the study or at its project root",
    )


def _where(module: Any) -> str:
    path = getattr(module, "__file__", None)
    return f"`{path}`" if path else f"`{module.__name__}`"


@contextmanager
def _prepended(dirs: Sequence[Path]) -> Iterator[None]:
    """Put `dirs` at the front of sys.path for the duration of one import, then restore it."""
    saved = list(sys.path)
    sys.path[:0] = [str(d) for d in dirs]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = saved


@contextmanager
def _working_directory_kept() -> Iterator[None]:
    """Restore the working directory a user module's import changed.

    The study's directory, the artifacts and the bundle are found from paths the
    user gave relative to where they ran perfdsl; a kernel module that changed
    directory as it was imported sent the workers looking for it from there
    ("no module named `demo_kernels`; searched /").
    """
    try:
        saved = os.getcwd()
    except OSError:  # a directory deleted under us: nothing to restore to
        yield
        return
    try:
        yield
    finally:
        with suppress(OSError):
            os.chdir(saved)


class RunError(Exception):
    """The run could not start: a reference that does not resolve (or buffers that cannot fit), with its
    study line."""


@attrs.frozen
class Resolved:
    """The objects one operation's references name."""

    reference: Reference
    variants: dict[str, Variant]


def resolve_reference(reference: str, expected: type, plan: Plan, line: int) -> Any:
    """The object `reference` names, or RunError naming the study line."""
    try:
        return resolve(reference, expected, Path(plan.study_path).parent)
    except ResolveError as error:
        raise RunError(f"{plan.study_path}:{line}: {error.message}; help: {error.help}") from None


def resolve_operation(plan: Plan, operation: OperationPlan) -> Resolved:
    """The reference and both variants of an operation, or RunError naming the study line."""
    reference = resolve_reference(operation.reference, Reference, plan, operation.lines["reference"])
    variants = {
        arm: resolve_reference(getattr(operation, arm), Variant, plan, operation.lines[arm]) for arm in ARMS
    }
    return Resolved(reference, variants)


def roof_reference(plan: Plan) -> str:
    """Where the copy roof `module:NAME` takes its inputs from: `module:NAME_reference` when the
    module defines it, else `module:reference` (the layout of a module that holds only roofs).

    The roof is timed on the problem this Reference draws at each workload shape,
    so it must be the roof's own: an operation's reference of another rank or
    dtype hands the copy kernel arrays it was not written for.
    """
    assert plan.roof is not None
    module, name = plan.roof.split(":", 1)
    own = f"{module}:{name}_reference"
    try:
        resolve(own, Reference, Path(plan.study_path).parent)
    except ResolveError:
        return f"{module}:reference"
    return own


def resolve_roof(plan: Plan) -> dict[str, tuple[Reference, Variant]]:
    """The roofs' problems and kernels by arm: the copy roof the study names, on its reference
    (`roof_reference`), and the read and write roofs its module defines beside it
    (`read`/`read_reference`, `write`/`write_reference`)."""
    if plan.roof is None or ":" not in plan.roof:
        return {}
    module = plan.roof.split(":")[0]
    line = plan.roof_line
    roofs = {
        ROOF_ARM: (
            resolve_reference(roof_reference(plan), Reference, plan, line),
            resolve_reference(plan.roof, Variant, plan, line),
        )
    }
    for arm in ("read", "write"):
        try:
            roofs[arm] = (
                resolve(f"{module}:{arm}_reference", Reference, Path(plan.study_path).parent),
                resolve(f"{module}:{arm}", Variant, Path(plan.study_path).parent),
            )
        except ResolveError:
            continue  # an older roof module: the copy roof alone, and the evaluation says so
    return roofs
