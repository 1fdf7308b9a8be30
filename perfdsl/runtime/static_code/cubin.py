"""What a cubin itself says about one of its kernels: registers and stack frame, from `.nv.info`.

A kernel compiled by someone else (Triton's own ptxas, CuPy, NVRTC) comes as a
cubin with no compiler log beside it, so its resources are read from the ELF:
the `.nv.info` section holds attribute records (one byte of format, one of
attribute, a 16-bit value or payload size, then the payload), among them
EIATTR_REGCOUNT and EIATTR_FRAME_SIZE, each a (symbol index, value) pair. The
symbol index is the kernel's entry in `.symtab`. This is what `cuobjdump
--dump-resource-usage` prints, read without the tool.
"""

from __future__ import annotations

import struct

_EIFMT_SVAL = 0x04
"""The record carries a payload of the size its 16-bit field gives; other formats carry none."""
_EIATTR = {0x2F: "registers", 0x11: "local_bytes"}
"""EIATTR_REGCOUNT and EIATTR_FRAME_SIZE (the per-thread stack frame: local arrays and spills)."""
_SYM_SIZE = 24
"""An Elf64_Sym: name, info, other, shndx, value, size."""


def _sections(image: bytes) -> dict[str, tuple[int, int, int]]:
    """Section name -> (offset, size, link) of a 64-bit little-endian ELF image; {} for anything else."""
    if image[:4] != b"\x7fELF" or image[4:6] != b"\x02\x01":
        return {}
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for header in headers:
        start = names + header[0]
        out[image[start : image.index(b"\0", start)].decode(errors="replace")] = (
            header[4],
            header[5],
            header[6],
        )
    return out


def _symbol_index(image: bytes, sections: dict[str, tuple[int, int, int]], symbol: str) -> int | None:
    if ".symtab" not in sections or ".strtab" not in sections:
        return None
    offset, size, _ = sections[".symtab"]
    strtab = sections[".strtab"][0]
    for index in range(size // _SYM_SIZE):
        (name,) = struct.unpack_from("<I", image, offset + index * _SYM_SIZE)
        start = strtab + name
        if image[start : image.index(b"\0", start)].decode(errors="replace") == symbol:
            return index
    return None


def function_attributes(image: bytes, symbol: str) -> dict[str, int]:
    """{"registers": n, "local_bytes": n} of the kernel `symbol` in a cubin; what is not there is left out."""
    sections = _sections(image)
    index = _symbol_index(image, sections, symbol)
    if index is None or ".nv.info" not in sections:
        return {}
    offset, size, _ = sections[".nv.info"]
    found: dict[str, int] = {}
    position, end = offset, offset + size
    while position + 4 <= end:
        fmt, attribute, value = struct.unpack_from("<BBH", image, position)
        position += 4
        if fmt != _EIFMT_SVAL:
            continue
        payload_at, position = position, position + value
        if attribute in _EIATTR and value >= 8:
            owner, number = struct.unpack_from("<II", image, payload_at)
            if owner == index:
                found[_EIATTR[attribute]] = number
    return found
