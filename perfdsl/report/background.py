"""The report's figures drawn in a forked worker while this process lays the report out.

A fresh PDF build spends about 0.6 s importing matplotlib and 1 s drawing, and
about 0.9 s importing WeasyPrint, then more verifying the bundle, parsing the
document and computing its styles; none of that needs the figures until
WeasyPrint builds its boxes and asks for the first one. With a second core
they run at once: `drawing_worker` starts a worker that imports matplotlib
while this process verifies the bundle and writes the Markdown, and
`draw` hands it the drawings and returns at once; the figures arrive pickled
when first asked for. With one core, or off Linux (macOS's system libraries
are not safe across `fork`), they are drawn here when handed over. The report
is the same either way, and an exception raised while drawing is raised here,
where the figure is asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager

from perfdsl.report.context import FigureDrawing, draw_figures
from perfdsl.report.html import Figure


class Drawer:
    """Draws figures here, when they are handed over."""

    def draw(self, drawings: Mapping[str, FigureDrawing]) -> Mapping[str, Figure]:
        return draw_figures(drawings)


class _WorkerDrawer(Drawer):
    """Draws figures in its worker process; the figures wait there until asked for."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self._pool = pool

    def draw(self, drawings: Mapping[str, FigureDrawing]) -> Mapping[str, Figure]:
        return _Pending(tuple(drawings), self._pool.submit(draw_figures, dict(drawings)))


@contextmanager
def drawing_worker() -> Iterator[Drawer]:
    """A drawer whose worker, where there is one, starts importing matplotlib now."""
    if (os.cpu_count() or 1) < 2 or not sys.platform.startswith("linux"):
        yield Drawer()
        return
    import multiprocessing

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        pool.submit(_import_matplotlib)
        yield _WorkerDrawer(pool)


def _import_matplotlib() -> None:
    """Run first in the worker: the import is most of the first figure's cost."""
    import matplotlib.figure  # noqa: F401


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
