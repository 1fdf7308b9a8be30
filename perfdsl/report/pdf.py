"""HTML -> PDF with WeasyPrint, fetching nothing, written atomically.

The HTML from `report.html` is self-contained but for its figures, which it
addresses as ``figure:KEY`` (`render_html(..., inline_figures=False)`). So
WeasyPrint is given a URL fetcher that serves exactly those figures, from the
builder's own memory, and refuses every other URL, ``data:`` included; the
build fails loudly when anything tries: a fetch can only come from a bug in
the renderer or from study text smuggled past the escaping, and a report
silently missing a piece (or one that read ``file:///etc/passwd`` into a PDF)
is worse than none.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfdsl.atomic import replacing
from perfdsl.report.html import FIGURE_SCHEME, Figure


class FetchRefused(RuntimeError):
    """The document asked for an external resource; reports fetch nothing."""


def write_pdf(html: str, path: Path, figures: Mapping[str, Figure] | None = None) -> int:
    """Lay out `html` and write it as a PDF to `path`; return the number of pages.

    `figures` are the SVG figures `html` refers to as ``figure:KEY``. The PDF
    is written to a temporary file beside `path` and renamed over it, so
    `path` holds either the previous report or the complete new one, never a
    partial file. Raises FetchRefused when the document refers to any other URL.
    """
    import weasyprint
    from weasyprint.urls import FatalURLFetchingError

    try:
        document = weasyprint.HTML(string=html, url_fetcher=_figure_fetcher(figures or {})).render()
    except FatalURLFetchingError as error:
        # WeasyPrint wraps the fetcher's exception in a BaseException; unwrap it.
        raise error.__cause__ or FetchRefused(str(error)) from None
    with replacing(path) as target:
        document.write_pdf(target)
    return len(document.pages)


def _figure_fetcher(figures: Mapping[str, Figure]) -> Any:
    """A WeasyPrint URL fetcher that serves `figures` and raises FetchRefused for every other URL.

    WeasyPrint 70 expects a `weasyprint.urls.URLFetcher` (it reads the
    instance's `fail_on_errors`), so this subclasses it rather than passing a
    plain function; `fail_on_errors=True` turns the refusal into an error that
    stops rendering instead of a logged warning.
    """
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class FigureFetcher(URLFetcher):
        def fetch(self, url: str, headers: object = None) -> Any:
            figure = figures.get(url[len(FIGURE_SCHEME) :]) if url.startswith(FIGURE_SCHEME) else None
            if figure is None:
                raise FetchRefused(f"the report refers to `{url}`; reports fetch nothing")
            return URLFetcherResponse(
                url, figure.svg.encode("utf-8"), headers={"Content-Type": "image/svg+xml"}
            )

    return FigureFetcher(fail_on_errors=True)
