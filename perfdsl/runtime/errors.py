"""An exception raised by a study's own code, as one line that says what and where.

A kernel, reference or application that raises is a recorded failure, never a
traceback (`runtime.isolation`), so this line is all its author sees: the
type, the first line of the message, and the innermost frame of their own
code. A new user's three failures (a reference's TypeError, an application's
ValueError, a kernel's ValueError) named no file or line, and one of them was
raised from a line of numpy called deep in their module.
"""

from __future__ import annotations

import inspect
import os
import sysconfig
import traceback
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

_NOT_THEIRS = tuple(
    sorted(
        {
            str(Path(__file__).resolve().parent.parent),
            *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
        }
    )
)
"""perfdsl itself, the standard library and installed packages: frames in them are not the
study's code (an editable install of a user's package lies outside all of these)."""


def describe_error(error: BaseException) -> str:
    """Its type and the first line of its message, and where in the study's code it arose:
    `ValueError: batch too large (at gather_kernels.py:42 in sorted_gather)`."""
    first_line = (str(error).splitlines() or [""])[0]
    said = f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__
    where = user_frame(error)
    return f"{said} (at {where})" if where else said


def user_frame(error: BaseException) -> str | None:
    """`file:line in function` of the innermost frame of the traceback outside perfdsl, the
    standard library and installed packages; None when every frame is theirs (the call never
    reached the study's code, or it ran compiled, as a Numba function does)."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = os.path.realpath(frame.filename)
        if frame.filename.startswith("<") or path.startswith(_NOT_THEIRS):
            continue
        return f"{_shown(path)}:{frame.lineno} in {frame.name}"
    return None


def _shown(path: str) -> str:
    """The path relative to the working directory where it lies below it, else as it is."""
    try:
        return os.path.relpath(path) if Path(path).is_relative_to(Path.cwd()) else path
    except (OSError, ValueError):
        return path


def check_names(function: Callable[..., Any], names: Collection[str], what: str, source: str) -> None:
    """TypeError saying that `what` takes its arrays by the names `source` gives them, where its
    parameters do not take `names`.

    A reference whose `compute` spelt a parameter `indices` where `inputs` returned
    `idx` failed on every case with Python's "unexpected keyword argument 'idx'",
    which does not say that the names must be the keys `inputs` returns. A function
    whose signature cannot be read, or that takes `**kwargs`, is left to the call.
    """
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(**dict.fromkeys(names))
    except TypeError as error:
        shown = ", ".join(f"`{n}`" for n in sorted(names))
        raise TypeError(
            f"{what} takes its arrays by the names {source} gives them ({shown}): {error}"
        ) from None
