"""The tools that compile and disassemble a CUDA kernel without a GPU, and their versions.

Python -> PTX (Numba's NVVM) -> cubin (nvJitLink, from PyPI) -> SASS (nvdisasm,
from PyPI). A missing tool is never an exception: each step returns None and
why. Numba and cuda.bindings are imported inside the steps that use them.
"""

from __future__ import annotations

import importlib.metadata
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

_TOOL_TIMEOUT_S = 60


def package_version(distribution: str) -> str | None:
    """The installed version of a distribution, recorded beside what it produced."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def first_line(error: BaseException) -> str:
    """A failed tool's reason in one line: the exception's type and first line."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def compile_ptx(pyfunc: Any, signature: str, cc: tuple[int, int]) -> tuple[str | None, str | None]:
    from numba import config

    if config.ENABLE_CUDASIM:
        return None, "NUMBA_ENABLE_CUDASIM=1: numba.cuda is the simulator, which compiles no PTX"
    try:
        from numba import cuda

        ptx, _ = cuda.compile_ptx(pyfunc, signature, cc=cc)
    except Exception as error:  # NVVM missing, or the kernel does not type for this signature
        return None, f"numba.cuda.compile_ptx failed: {first_line(error)}"
    return ptx, None


def link(ptx: str, arch: str) -> tuple[bytes | None, str, str | None, str | None]:
    """PTX -> cubin with nvJitLink; returns (cubin, info log, nvJitLink version, why no cubin)."""
    try:
        from cuda.bindings import nvjitlink
    except ImportError as error:
        reason = f"nvJitLink not importable (install numba-cuda[cu13]): {first_line(error)}"
        return None, "", None, reason
    version = ".".join(map(str, nvjitlink.version()))
    data = ptx.encode()
    options = [f"-arch={arch}".encode(), b"-verbose"]  # options must be bytes, not str
    try:
        handle = nvjitlink.create(len(options), options)
    except nvjitlink.nvJitLinkError as error:
        return None, "", version, f"nvJitLink rejected {options}: {error}"
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
    except nvjitlink.nvJitLinkError as error:
        log = bytearray(nvjitlink.get_error_log_size(handle))
        nvjitlink.get_error_log(handle, log)
        detail = log.rstrip(b"\0").decode(errors="replace").strip().replace("\n", "; ")
        nvjitlink.destroy(handle)
        return None, "", version, f"nvJitLink failed ({error}): {detail}"
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    log = bytearray(nvjitlink.get_info_log_size(handle))
    nvjitlink.get_info_log(handle, log)
    nvjitlink.destroy(handle)
    return bytes(cubin), log.rstrip(b"\0").decode(errors="replace"), version, None


def find_nvdisasm() -> str | None:
    """The disassembler from the nvidia-cuda-nvdisasm wheel first, then a CUDA toolkit."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        import shutil

        return shutil.which("nvdisasm")
    return find_nvidia_binary_utility("nvdisasm")


def _tool_version(executable: str) -> str | None:
    """ "13.5.37" from the `V13.5.37` in `--version` (the CUDA tools' common banner)."""
    try:
        result = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\bV(\d+\.\d+\.\d+)", result.stdout)
    return match.group(1) if match else None


def disassemble(cubin: bytes, workdir: Path) -> tuple[str | None, str | None, str | None]:
    """cubin -> SASS with nvdisasm; returns (sass, nvdisasm version, reason it is missing)."""
    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        return None, None, "nvdisasm not found (pip install nvidia-cuda-nvdisasm)"
    path = workdir / "kernel.cubin"
    path.write_bytes(cubin)
    try:
        result = subprocess.run(
            [nvdisasm, "-c", str(path)], capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, None, f"nvdisasm at {nvdisasm} did not run: {first_line(error)}"
    if result.returncode != 0:
        detail = result.stderr.strip().replace("\n", "; ")
        return None, None, f"nvdisasm exited with {result.returncode}: {detail}"
    return result.stdout, _tool_version(nvdisasm), None


def elf_section_sizes(image: bytes) -> dict[str, int]:
    """Section name -> size in bytes, from a 64-bit little-endian ELF image such as a cubin."""
    if image[:4] != b"\x7fELF" or image[4:6] != b"\x02\x01":
        return {}
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]

    def name(offset: int) -> str:
        start = names + offset
        return image[start : image.index(b"\0", start)].decode(errors="replace")

    return {name(h[0]): h[5] for h in headers}
