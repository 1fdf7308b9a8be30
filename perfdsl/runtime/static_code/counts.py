"""Static instruction counts of SASS and PTX text: what a kernel's code does, by kind and width.

Pure text processing: the opcodes of each memory space, barriers and atomics,
with the bits one execution moves per thread.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import attrs


@attrs.frozen
class OpCount:
    """How often one opcode occurs, and how many bits one execution moves per thread."""

    opcode: str
    """With its modifiers, as the listing spells it: `LDG.E.128`, `ld.global.v4.f32`."""
    count: int
    width_bits: int | None
    """Access width for loads, stores and atomics; None for barriers."""


@attrs.frozen
class CodeCounts:
    """The memory, atomic and barrier instructions of one listing (PTX or SASS).

    Each field holds the opcodes of one kind, sorted by opcode. Generic loads and
    stores are those the compiler could not place in a state space; in SASS they
    are `LD`/`ST`, in PTX `ld`/`st` without `.global`/`.shared`/`.local`.
    """

    instructions: int
    """Every instruction in the listing (SASS: without the NOP padding)."""
    global_loads: tuple[OpCount, ...]
    global_stores: tuple[OpCount, ...]
    shared_loads: tuple[OpCount, ...]
    shared_stores: tuple[OpCount, ...]
    local_loads: tuple[OpCount, ...]
    local_stores: tuple[OpCount, ...]
    generic_loads: tuple[OpCount, ...]
    generic_stores: tuple[OpCount, ...]
    atomics: tuple[OpCount, ...]
    barriers: tuple[OpCount, ...]


KINDS = tuple(f.name for f in attrs.fields(CodeCounts) if f.name != "instructions")


def total(ops: tuple[OpCount, ...]) -> int:
    """The number of instructions of one kind, whatever their width."""
    return sum(op.count for op in ops)


def by_width(ops: tuple[OpCount, ...]) -> dict[int, int]:
    """Instructions of one kind per access width in bits, e.g. {32: 3, 128: 1}."""
    widths: Counter[int] = Counter()
    for op in ops:
        if op.width_bits is not None:
            widths[op.width_bits] += op.count
    return dict(sorted(widths.items()))


def _counts(
    instructions: int, found: dict[str, Counter[str]], width: Callable[[str], int | None]
) -> CodeCounts:
    return CodeCounts(
        instructions,
        *(
            tuple(
                OpCount(op, n, None if kind == "barriers" else width(op))
                for op, n in sorted(found.get(kind, Counter()).items())
            )
            for kind in KINDS
        ),
    )


# SASS: `/*0370*/   @!P1 STS [R11], R10 ;` -> "STS". The opcode is the first word
# after the address and the optional predicate.
_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_SASS_KIND = {
    "LDG": "global_loads",
    "STG": "global_stores",
    "LDS": "shared_loads",
    "STS": "shared_stores",
    "LDL": "local_loads",
    "STL": "local_stores",
    "LD": "generic_loads",
    "ST": "generic_stores",
    "ATOM": "atomics",
    "ATOMG": "atomics",
    "ATOMS": "atomics",
    "RED": "atomics",
    "REDG": "atomics",
    "BAR": "barriers",
}


def _sass_width(opcode: str) -> int:
    """Width of a SASS memory access: `.128`/`.64`/`.U16`/`.S8` modifiers, else 32 bits."""
    mods = opcode.split(".")[1:]
    for mod, bits in (("128", 128), ("64", 64), ("U16", 16), ("S16", 16), ("U8", 8), ("S8", 8)):
        if mod in mods:
            return bits
    return 32


def count_sass(sass: str) -> CodeCounts:
    """Count memory, atomic and barrier instructions in nvdisasm (or `inspect_sass`) output."""
    found: dict[str, Counter[str]] = {}
    instructions = 0
    for line in sass.splitlines():
        match = _SASS_LINE.match(line)
        if match is None:
            continue
        opcode = match.group(1)
        base = opcode.split(".")[0]
        if base == "NOP":
            continue
        instructions += 1
        kind = _SASS_KIND.get(base)
        if kind is not None:
            found.setdefault(kind, Counter())[opcode] += 1
    return _counts(instructions, found, _sass_width)


# PTX: `\t@%p1 ld.global.nc.v4.f32 \t{...}, [%rd5];` -> "ld.global.nc.v4.f32".
_PTX_LINE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)*)[\s;]")
_PTX_SPACES = ("global", "shared", "local", "param", "const")
_PTX_TYPE = re.compile(r"^[bsuf](8|16|32|64|128)$")


def _ptx_width(opcode: str) -> int | None:
    """Width of a PTX access: the element type's bits times the vector length."""
    parts = opcode.split(".")
    lanes = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    bits = next((int(m.group(1)) for p in reversed(parts) if (m := _PTX_TYPE.match(p))), None)
    return None if bits is None else bits * lanes


def count_ptx(ptx: str) -> CodeCounts:
    """Count memory, atomic and barrier instructions in PTX (not parameter or constant loads)."""
    found: dict[str, Counter[str]] = {}
    instructions = 0
    for line in ptx.splitlines():
        match = _PTX_LINE.match(line)
        if match is None:
            continue
        opcode = match.group(1)
        parts = opcode.split(".")
        instructions += 1
        head = parts[0]
        # The state space may follow qualifiers (`ld.volatile.global`) and carry a
        # scope (`st.shared::cta`); none at all means a generic address.
        space = next((p for p in (q.split("::")[0] for q in parts[1:]) if p in _PTX_SPACES), None)
        if head in ("ld", "ldu", "st"):
            if space in ("param", "const"):
                continue
            direction = "stores" if head == "st" else "loads"
            kind = f"{space or 'generic'}_{direction}"
        elif head in ("atom", "red"):
            kind = "atomics"
        elif head in ("bar", "barrier"):
            kind = "barriers"
        else:
            continue
        found.setdefault(kind, Counter())[opcode] += 1
    return _counts(instructions, found, _ptx_width)
