"""Kernel names between Numba and Nsight Compute: the filter ncu applies, the name a row carries.

Numba's kernel names are Itanium-mangled
(`_ZN7kernels4copy11copy_kernelB2v1B92cw51...E5ArrayIfLi1E...`). ncu must profile
the variants' kernels and the marker, and nothing else: the filter, matched
against the mangled name, is the length-prefixed Python name followed by an ABI
tag or the end of the nested name, so `fused_kernel` never selects
`unfused_kernel`. Reading the CSV back, each row's name, however ncu printed it,
is reduced to the Python function's own name.

Kernels beyond Numba (Triton, CuPy, NVRTC) are not mangled this way: their
entry symbol is what the implementation declares in the `KernelCode` its
`cuda_code` hook hands over, and the filter matches it exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfdsl.kernel import Variant

MARKER_KERNEL = "perfdsl_counters_marker"
"""The empty kernel the driver launches before each variant: rows after the i-th marker
belong to the i-th variant."""

_INVALID_IDENTIFIER_CHAR = re.compile(r"[^a-z0-9_]", re.IGNORECASE)
_LENGTH = re.compile(r"\d+")


def mangled_identifier(name: str) -> str:
    """A Python name as Numba's Itanium mangler writes it: `<length><name>`.

    Characters outside [A-Za-z0-9_] become `_xx` (their UTF-8 bytes in hex), as in
    numba.core.itanium_mangler, so the length counts the escaped form.
    """
    escaped = _INVALID_IDENTIFIER_CHAR.sub(
        lambda m: "".join(f"_{byte:02x}" for byte in m.group(0).encode("utf-8")), name
    )
    return f"{len(escaped)}{escaped}"


def kernel_regex(names: Iterable[str], exact: Iterable[str] = ()) -> str:
    """The `--kernel-name regex:` body (with `--kernel-name-base mangled`) selecting these
    kernels and the marker.

    Plain alternation, literals, groups and one character class only: ncu's regex
    engine is not Python's, so nothing here depends on lookaround. The length prefix
    makes the name exact; the ABI tag (`B2v1`, numba-cuda) or `E` (the end of the
    nested name, older Numba) rules out a longer name that starts the same way.
    `exact` are foreign kernels' entry symbols, matched whole (`^name$`).
    """
    unique = sorted({*names, MARKER_KERNEL})
    numba = [f"{mangled_identifier(name)}(B[0-9]|E)" for name in unique]
    return "|".join([*numba, *(f"^{re.escape(name)}$" for name in sorted(set(exact)))])


def kernel_function_name(kernel: str) -> str:
    """The function's own name from ncu's "Kernel Name" column, however ncu printed it.

    Mangled (`_ZN7kernels4copy11copy_kernelB2v1...E5Array...`): the last component
    of the nested name. Demangled (`kernels::copy::copy_kernel[abi:v1](Array<...>)`)
    or bare (`copy_kernel`): the text before any ABI tag, template or parameter list,
    after the last `::`.
    """
    kernel = kernel.strip()
    if kernel.startswith("_Z"):
        nested = kernel.startswith("_ZN")
        position, last = (3 if nested else 2), None
        while (match := _LENGTH.match(kernel, position)) is not None:
            length = int(match.group())
            last = kernel[match.end() : match.end() + length]
            position = match.end() + length
            if not nested:
                break
        if last:
            return last
    head = re.split(r"[\[(<]", kernel, maxsplit=1)[0]
    words = head.rsplit("::", 1)[-1].split()
    return words[-1] if words else kernel


def foreign_kernel_names(variants: Iterable[Variant], dtype: str, cc: tuple[int, int]) -> tuple[str, ...]:
    """The entry symbols of every kernel the foreign variants hand over (`Variant.cuda_code`).

    A hook that raises contributes nothing: its launches then do not pass the
    filter, and its arm is reported as counting no launch, not as a crash.
    """
    names = set()
    for variant in variants:
        if variant.cuda_code is None:
            continue
        try:
            names.update(code.name for code in variant.cuda_code(dtype, cc))
        except Exception:  # the hook's failure is recorded with the static code
            continue
    return tuple(sorted(names))


def variant_kernel_names(variants: Iterable[Variant]) -> tuple[str, ...]:
    """The Python names of every Numba CUDA kernel the variants declare they launch."""
    names = set()
    for variant in variants:
        for kernel, _ in variant.cuda_kernels:
            names.add(getattr(getattr(kernel, "py_func", kernel), "__name__", str(kernel)))
    return tuple(sorted(names))
