"""Source text and positions in it.

Spans are byte-free character offsets `(start, end)` into the text, as
codespan-reporting keeps them: line and column are computed only when a
diagnostic or a report needs them, so every stage can carry spans cheaply.
"""

from __future__ import annotations

import bisect
from functools import cached_property
from pathlib import Path

import attrs

BOM = "\ufeff"
"""The byte-order mark some editors start a UTF-8 file with."""

MAX_STUDY_BYTES = 64 << 20
"""A study larger than this is no study a person wrote (20,000 dense lines are under 2 MiB)."""
MAX_IMPORTED_BYTES = 4 << 30
"""An imported tool's file larger than this is more than perfdsl reads into memory."""


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """A file's bytes, or a pipe's to its end (a shell's `<(...)`), at most `limit`; OSError naming
    why not for a device, socket or folder, or for more than `limit` bytes (`what` says of what).

    `check /dev/zero` (or a study that links to it, or imports it) read until the kernel
    killed the process for its memory: `check` promises to be safe on untrusted studies.
    """
    import errno
    import os
    import stat

    status = os.stat(path)
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not (stat.S_ISREG(status.st_mode) or stat.S_ISFIFO(status.st_mode)):
        raise OSError(errno.EINVAL, "not a file (a device or socket)", str(path))
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20:,} MiB, more than any {what}", str(path))
    return data


@attrs.frozen
class Span:
    """A half-open range of character offsets `[start, end)` in one source."""

    start: int
    end: int

    def to(self, other: Span) -> Span:
        """The smallest span covering this one and `other`."""
        return Span(min(self.start, other.start), max(self.end, other.end))


@attrs.frozen
class Position:
    """A 1-based line and column, for people."""

    line: int
    column: int


@attrs.frozen(eq=False)
class Source:
    """A study's text and the path it was read from (as the user wrote it)."""

    path: str
    text: str

    @classmethod
    def read(cls, path: str | Path) -> Source:
        """Read a UTF-8 study file; OSError (`read_bounded`) and UnicodeDecodeError propagate.

        Newlines are translated as text mode translates them (\r\n and \r to \n)."""
        text = read_bounded(path, MAX_STUDY_BYTES, "study").decode("utf-8")
        return cls(str(path), text.replace("\r\n", "\n").replace("\r", "\n"))

    @cached_property
    def _line_starts(self) -> list[int]:
        starts = [0]
        starts.extend(i + 1 for i, char in enumerate(self.text) if char == "\n")
        return starts

    def position(self, offset: int) -> Position:
        """The line and column of a character offset (clamped into the text).

        A byte-order mark is no column: editors do not show it, and counting it put every
        position on line 1 one column right of the character it named.
        """
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        column = offset - self._line_starts[line_index] + 1
        if line_index == 0 and offset > 0 and self.text.startswith(BOM):
            column -= 1
        return Position(line_index + 1, column)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline (or a byte-order mark before it)."""
        starts = self._line_starts
        if not 1 <= line <= len(starts):
            return ""
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        text = self.text[starts[line - 1] : end].rstrip("\r")
        return text.removeprefix(BOM) if line == 1 else text

    def snippet(self, span: Span) -> str:
        """The text a span covers."""
        return self.text[span.start : span.end]

    @property
    def end(self) -> Span:
        """An empty span at the end of the text, where end-of-input errors point."""
        end = len(self.text.rstrip())
        return Span(end, end)
