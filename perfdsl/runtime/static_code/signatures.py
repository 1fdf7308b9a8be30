"""Whether the archived code of a Numba CPU function is the code the measured calls ran.

A kernel module declares each CPU function with the signature its static
evidence is compiled for (`Variant.cpu_kernels`: `"void({dtype}[:], {dtype}[:])"`),
and the parent compiles and archives that one. The measuring worker compiles
whatever the arrays it is handed ask for: a declared float32 signature beside a
reference that builds float64 arrays archives float32 code that never ran, and
its counts then support or refute a hypothesis about code nobody timed. The
worker reports what each function compiled for (`compiled_for`), and the two
are set side by side here (`declared_ran`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from perfdsl.kernel import KernelSignature


def compiled_for(kernels: Iterable[KernelSignature], dtype: str) -> dict[str, tuple[tuple[str, ...], bool]]:
    """For each CPU function: the argument types this process compiled it for (Numba's names), and
    whether its declared signature is among them. Called in the measuring worker after timing."""
    found: dict[str, tuple[tuple[str, ...], bool]] = {}
    for function, declared in kernels:
        compiled = list(getattr(function, "signatures", ()))
        name = getattr(getattr(function, "py_func", function), "__name__", str(function))
        ran = declared_ran(declared.replace("{dtype}", dtype), compiled)
        found[name] = (tuple(_shown(args) for args in compiled), ran)
    return found


def declared_ran(declared: str, compiled: Iterable[tuple[Any, ...]]) -> bool:
    """Whether a call compiled for one of `compiled` (tuples of Numba types) ran the code the
    `declared` signature compiles to: the same argument types, an array's layout aside when
    the declared one is any (`A`, what `float32[:]` means)."""
    from numba.core import sigutils

    try:
        wanted, _ = sigutils.normalize_signature(declared)
    except Exception:  # a signature Numba cannot read: the archive already says it failed
        return False
    return any(_same_arguments(wanted, args) for args in compiled)


def _same_arguments(wanted: tuple[Any, ...], ran: tuple[Any, ...]) -> bool:
    return len(wanted) == len(ran) and all(_same_type(w, r) for w, r in zip(wanted, ran, strict=True))


def _same_type(wanted: Any, ran: Any) -> bool:
    from numba.core import types

    if isinstance(wanted, types.Array) and isinstance(ran, types.Array):
        layout = wanted.layout == "A" or wanted.layout == ran.layout
        return wanted.dtype == ran.dtype and wanted.ndim == ran.ndim and layout
    return bool(wanted == ran)


def _shown(args: tuple[Any, ...]) -> str:
    """`(array(float64, 1d, C), int64)`: Numba's own names for one compiled signature."""
    return f"({', '.join(str(a) for a in args)})"
