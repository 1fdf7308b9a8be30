"""Where a checked file is, as CI systems want it: relative to the repository root.

GitHub code scanning and annotations match a result to a file by its path from
the repository root, whatever directory `perfdsl check` ran in. So paths are
made relative to the git work tree that holds the current directory (the
nearest ancestor with a `.git`), or to the current directory outside a
repository; a file outside both keeps its absolute path. Separators are `/`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def repository_root(cwd: Path) -> Path:
    """The git work tree holding `cwd`, or `cwd` itself when there is none."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def ci_path(path: str, cwd: Path | None = None) -> str:
    """`path` (as the user wrote it) relative to the repository root, with `/` separators."""
    cwd = (cwd or Path.cwd()).resolve()
    absolute = (cwd / path).resolve()
    try:
        return absolute.relative_to(repository_root(cwd)).as_posix()
    except ValueError:
        return absolute.as_posix()
