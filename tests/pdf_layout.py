"""Where the PDF's text falls: every word a report prints must lie inside the page's printable area.

A table whose columns do not fit is not clipped by WeasyPrint: its last column
runs into the right margin or off the page, and nothing fails. So the tests lay
the report out as the PDF stage does and read each text box's position back.
WeasyPrint has no public API for the laid-out boxes; `Page._page_box` is the
root of each page's box tree (stable across the versions this project pins),
and each box's `position_x` and `width` are in CSS pixels, as the page's are.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

SLACK_PX = 0.5
"""Rounding in the layout: a word this close to the edge is at it, not past it."""


def words_past_margin(html: str) -> list[str]:
    """Each word (page, its text, how far past) whose box ends right of the page's content box."""
    import weasyprint

    document = weasyprint.HTML(string=html).render()
    out = []
    for number, page in enumerate(document.pages, start=1):
        root = page._page_box
        right = root.content_box_x() + root.width
        for box in _boxes(root):
            if type(box).__name__ != "TextBox":
                continue
            past = box.position_x + box.width - right
            if past > SLACK_PX:
                out.append(f"page {number}: {box.text.strip()!r} {past:.1f} px past the right margin")
    return out


def _boxes(box: Any) -> Iterator[Any]:
    yield box
    for child in getattr(box, "children", None) or ():
        yield from _boxes(child)
