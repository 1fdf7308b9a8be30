"""The report's figures drawn in a forked worker while this process lays the report out.

A fresh PDF build spends 1.5-2 s drawing (matplotlib's import and the
charts) and about 1 s importing WeasyPrint, then more parsing the document
and computing its styles; none of that needs the figures until WeasyPrint
builds its boxes and asks for the first one. With a second core the two run at
once: the worker draws while this process imports and styles, and the
figures arrive pickled when first asked for. With one core, or off Linux
(macOS's system libraries are not safe across `fork`), they are drawn here
first. The report is the same either way, and an exception raised while
drawing is raised here, where the figure is asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager

from perfdsl.report.context import FigureDrawing, draw_figures
from perfdsl.report.html import Figure


@contextmanager
def drawn_beside(drawings: Mapping[str, FigureDrawing]) -> Iterator[Mapping[str, Figure]]:
    """The figures, as a mapping whose keys are known now and whose values wait for the drawing."""
    if (os.cpu_count() or 1) < 2 or not sys.platform.startswith("linux"):
        yield draw_figures(drawings)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        yield _Pending(tuple(drawings), pool.submit(draw_figures, dict(drawings)))


class _Pending(Mapping[str, Figure]):
    """Figure keys now, the figures themselves once the worker has drawn them all."""

    def __init__(self, keys: tuple[str, ...], drawn: Future[dict[str, Figure]]) -> None:
        self._keys = keys
        self._drawn = drawn

    def __getitem__(self, key: str) -> Figure:
        if key not in self._keys:
            raise KeyError(key)
        return self._drawn.result()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys  # Mapping's default would look the value up, and wait

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)
