"""Replacing a file so that it is never seen half-written.

A report, evaluation.json and a bundle's manifest are each written to a
temporary file beside their path, flushed to disk and renamed over it: the
path holds either the previous complete file or the new one, whatever
interrupts the write (an error, Ctrl-C, a crash, a full disk).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{12}\.tmp$")


def temporary_of(name: str) -> str | None:
    """The file a temporary of `replacing` was to replace, from its name; None for any other name.

    Only a process killed outright (SIGKILL, a power cut) leaves one behind:
    it never became the file, so it can be removed whenever it is found.
    """
    match = _TEMPORARY.match(name)
    return match.group("name") if match else None


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary handle on a new file that replaces `path` when the block ends without an error.

    The temporary file is created exclusively beside the file `path` names (the
    same file system, so the rename is atomic), with the permissions of the file it
    replaces (or, for a new file, those an ordinary creation would get), and is removed
    if the block raises.

    A symbolic link is written through: the file it points to is replaced and the
    link stays. A path that is not a regular file (`/dev/stdout`, a named pipe) is
    written into directly, since renaming over it would replace the device itself:
    `--jsonl /dev/stdout`, run as root, turned the system's /dev/stdout into a file.
    Such a write is not atomic, and cannot be: a reader is already taking the bytes.
    """
    if path.exists() and not path.is_file():
        with open(path, "wb") as stream:
            yield stream
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        kept = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        kept = None  # a new file: the umask decides, as for any file created
    try:
        with open(temporary, "xb") as handle:
            yield handle
            handle.flush()
            if kept is not None:
                # A report kept private (mode 600) came back readable by all (644) once replaced.
                os.fchmod(handle.fileno(), kept)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
