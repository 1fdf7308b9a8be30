"""Markdown -> one standalone HTML document, ready for print.

The Markdown producer writes plain CommonMark plus GFM tables and four
conventions, all of which survive as ordinary Markdown when read on their own:

* a figure is an image standing alone in its paragraph whose address names a
  key of the `figures` mapping: ``![p99 latency against offered load](figure:load)``;
  the alt text becomes the numbered caption and may carry inline Markdown;
* a table caption is the paragraph right before the table, starting ``Table:``
  (pandoc's convention), e.g. ``Table: kernel time per shape``;
* a callout is a blockquote whose first line is ``[!WARNING]`` or ``[!NOTE]``
  (GitHub's alert syntax); the report uses warnings for refuted predictions,
  failed correctness checks and timings taken under the simulator;
* a numeric column is marked by right alignment, ``---:``; it is set in
  tabular figures and its header is right-aligned with it. Its cells may wrap
  (a column of verdicts such as "above the roof: the byte model is wrong"
  kept on one line pushed a table past the right margin), but never between a
  number and the word after it: "284 µs" and "4 of 4" do not break at the unit.

Raw HTML in the Markdown is not interpreted: study text is untrusted, so
markdown-it escapes it like any other text, and every string this module
inserts itself (metadata, captions) goes through `html.escape`. An image that
is not a figure is not embedded (it would be a fetch): its alt text stands in.

Figures are vectors either way, never ``data:`` URIs. In a standalone HTML
report they are inlined as ``<svg>`` elements. For the PDF they are
``<img src="figure:KEY">`` references that the PDF stage serves from the
`figures` mapping in memory (`pdf.write_pdf`), and nothing else: WeasyPrint
then parses each SVG as a document of its own instead of running every SVG
node through the report's CSS cascade, which was half of its layout time.
WeasyPrint draws both as vectors with real, selectable figure text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import attrs

import perfdsl

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

_SVG_NS = "{http://www.w3.org/2000/svg}"
FIGURE_SCHEME = "figure:"
"""How the Markdown, and the PDF stage's HTML, address a figure of the `figures` mapping."""
_FIGURE_KEY = re.compile(r"[A-Za-z0-9_.-]+")
_CALLOUT_MARKER = re.compile(r"\[!(NOTE|WARNING)\][ \t]*", re.IGNORECASE)
_CAPTION_PREFIX = "Table:"
# Cell alignment from `---:` / `:---:` becomes a class, so the stylesheet can
# give numeric columns tabular figures instead of relying on an inline style.
_ALIGN_CLASS = {"text-align:right": "num", "text-align:center": "center", "text-align:left": "left"}
_NUMBER_THEN_WORD = re.compile(r"(?<=\d) (?=[^\s(])")
"""A space that joins a number to its unit or the word after it: no line break there."""
# Elements and attributes that would let an SVG run code or fetch something.
# What may precede the root: it is cut off before inlining, so nothing else may hide there.
_SVG_PROLOG = re.compile(r"\s*(<\?xml[^>]*\?>)?\s*(<!DOCTYPE[^>]*>)?\s*")
_SVG_FORBIDDEN = frozenset({"script", "foreignObject", "iframe", "image", "feImage"})


def _validate_svg(instance: Figure, attribute: attrs.Attribute[str], value: str) -> None:
    """Refuse anything that is not a self-contained SVG document.

    The text is pasted into the HTML as markup, so it is checked here once,
    where it enters: it must parse as XML with an ``<svg>`` root, and must not
    contain scripts, foreign HTML, or references outside itself.
    """
    try:
        root = ElementTree.fromstring(value)
    except ElementTree.ParseError as error:
        raise ValueError(f"figure is not well-formed SVG: {error}") from None
    if root.tag != f"{_SVG_NS}svg":
        raise ValueError(f"figure root is `{root.tag}`, not an SVG `svg` element")
    if not _SVG_PROLOG.fullmatch(value[: value.find("<svg")]):
        raise ValueError("figure has more than an XML declaration and doctype before `<svg`")
    for element in root.iter():
        name = element.tag.rpartition("}")[2]
        if name in _SVG_FORBIDDEN:
            raise ValueError(f"figure contains a `{name}` element")
        for key, attr in element.attrib.items():
            local = key.rpartition("}")[2]
            if local.startswith("on"):
                raise ValueError(f"figure has an event handler attribute `{local}`")
            if local == "href" and not attr.startswith("#"):
                raise ValueError(f"figure refers outside itself: `{attr}`")


@attrs.frozen
class Figure:
    """A vector figure to inline in the report: SVG text, e.g. from `report.figures`."""

    svg: str = attrs.field(validator=_validate_svg)

    @property
    def markup(self) -> str:
        """The ``<svg>`` element alone: the XML declaration and doctype are not HTML."""
        return self.svg[self.svg.index("<svg") :].strip()


@attrs.frozen
class ReportMeta:
    """What identifies a report: it goes into the title, running head and every footer."""

    study: str
    """The study's name, e.g. `rmsnorm_fusion`: the running head of every page."""
    title: str
    """The document title (HTML `<title>`, PDF metadata)."""
    bundle_id: str
    """The evidence bundle the report was built from."""
    study_hash: str
    """Hash of the study source, so a printed page can be matched to its program."""
    generated_at: datetime
    """When the report was built: first page's head and PDF metadata, not the footer,
    so that two builds of the same evidence carry the same version line."""
    perfdsl_version: str = perfdsl.__version__
    """The perfdsl that built the report; defaults to the running one."""
    smoke: bool = False
    """A `--quick` run's report: every page says so, not only a callout on page 1 (a reviewer
    read a smoke run's page 2 onwards as evidence)."""

    @property
    def version_line(self) -> str:
        """The report's version as printed on every page (SPEC section 7)."""
        smoke = " · SMOKE RUN: not evidence" if self.smoke else ""
        return (
            f"{self.study} · bundle {self.bundle_id} · study {self.study_hash}"
            f" · perfdsl {self.perfdsl_version}{smoke}"
        )


def render_html(
    markdown: str, meta: ReportMeta, figures: Mapping[str, Figure], *, inline_figures: bool = True
) -> str:
    """Render the report's Markdown as a complete HTML document.

    With `inline_figures` the document stands alone; without, each figure is
    a ``figure:KEY`` reference for `pdf.write_pdf` to serve from `figures`.
    Raises ValueError when the Markdown refers to a figure that `figures` does
    not have, or places a figure inside running text: both are bugs in the
    producer of the Markdown, not in the study.
    """
    for key in figures:
        if not _FIGURE_KEY.fullmatch(key):
            raise ValueError(f"figure key `{key}` is not of the form {_FIGURE_KEY.pattern}")
    md = _markdown(figures, inline_figures)
    body = md.render(markdown)
    return _DOCUMENT.format(
        title=_esc(meta.title),
        version=_esc(meta.perfdsl_version),
        created=_esc(meta.generated_at.isoformat(timespec="seconds")),
        generated=_esc(meta.generated_at.strftime("%Y-%m-%d %H:%M %Z").strip()),
        study=_esc(meta.study),
        version_line=_esc(meta.version_line),
        css=stylesheet(),
        body=body,
    )


def stylesheet() -> str:
    """The print stylesheet shipped beside this module (inlined: nothing is fetched)."""
    return resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")


_DOCUMENT = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<meta name="generator" content="perfdsl {version}">
<meta name="dcterms.created" content="{created}">
<style>
{css}</style>
</head>
<body>
<header class="running">
<span class="running-study">{study}</span>
<span class="running-generated">generated {generated}</span>
<span class="running-version">{version_line}</span>
</header>
<main>
{body}</main>
</body>
</html>
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _markdown(figures: Mapping[str, Figure], inline_figures: bool) -> MarkdownIt:
    """A CommonMark parser with tables and the report's conventions, raw HTML off."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.core.ruler.push("perfdsl_callouts", _callouts)
    md.core.ruler.push("perfdsl_table_captions", _table_captions)
    md.core.ruler.push("perfdsl_figures", _figure_rule(md, figures, inline_figures))
    return md


def _callouts(state: StateCore) -> None:
    """Turn ``> [!WARNING]`` blockquotes into titled ``<aside class="callout">`` blocks."""
    tokens = state.tokens
    for i, opening in enumerate(tokens):
        if opening.type != "blockquote_open" or tokens[i + 1].type != "paragraph_open":
            continue
        inline = tokens[i + 2]
        children = inline.children or []
        if not children or children[0].type != "text":
            continue
        marker = _CALLOUT_MARKER.match(children[0].content)
        if marker is None:
            continue
        kind = marker.group(1).lower()
        rest = children[0].content[marker.end() :]
        if rest:
            children[0].content = rest
        else:
            # The marker is alone on its line: drop it and the line break after it.
            del children[: 2 if len(children) > 1 and children[1].type == "softbreak" else 1]
        inline.content = inline.content[marker.end() :].lstrip("\n")
        _retag(tokens, i, "aside", {"class": f"callout {kind}", "role": "note"})
        title = _paragraph(kind.capitalize(), opening.level + 1)
        title[0].attrSet("class", "callout-title")
        if not children:
            # Nothing else on the first paragraph (a blank `>` line followed).
            tokens[i + 1 : i + 4] = title
        else:
            tokens[i + 1 : i + 1] = title


def _paragraph(text: str, level: int) -> list[Token]:
    """Tokens for a plain paragraph holding `text` (escaped by the renderer)."""
    from markdown_it.token import Token

    content = Token("text", "", 0, content=text)
    inline = Token("inline", "", 0, content=text, children=[content], level=level + 1)
    return [
        Token("paragraph_open", "p", 1, block=True, level=level),
        inline,
        Token("paragraph_close", "p", -1, block=True, level=level),
    ]


def _retag(tokens: Sequence[Token], opening: int, tag: str, attributes: dict[str, str]) -> None:
    """Give a block's opening token and its matching closing token a new tag."""
    start = tokens[opening]
    start.tag = tag
    for name, value in attributes.items():
        start.attrSet(name, value)
    closing_type = start.type.replace("_open", "_close")
    for token in tokens[opening + 1 :]:
        if token.type == closing_type and token.level == start.level:
            token.tag = tag
            return


def _table_captions(state: StateCore) -> None:
    """Move a ``Table: ...`` paragraph just before a table into its ``<caption>``;
    mark aligned cells with classes."""
    from markdown_it.token import Token

    tokens = state.tokens
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type in ("th_open", "td_open"):
            style = token.attrGet("style")
            if style in _ALIGN_CLASS:
                del token.attrs["style"]
                token.attrSet("class", _ALIGN_CLASS[str(style)])
                if style == "text-align:right":
                    _join_numbers(tokens[i + 1])
            _break_long_words(tokens[i + 1])
        if token.type == "table_open" and i >= 3 and _is_caption(tokens[i - 3 : i]):
            inline = tokens[i - 2]
            first = (inline.children or [])[0]
            first.content = first.content[len(_CAPTION_PREFIX) :].lstrip()
            caption = [
                Token("caption_open", "caption", 1, block=True, level=token.level + 1),
                inline,
                Token("caption_close", "caption", -1, block=True, level=token.level + 1),
            ]
            tokens[i - 3 : i + 1] = [token, *caption]
            i -= 3
        i += 1


def _join_numbers(inline: Token) -> None:
    """Put a no-break space between each number and the word after it in a cell's text."""
    for child in inline.children or ():
        if child.type == "text":
            child.content = _NUMBER_THEN_WORD.sub("\u00a0", child.content)


LONG_WORD = 24
"""Characters from which a word in a table cell gets break opportunities (`_break_long_words`)."""
_BREAK_AFTER = re.compile(r"(?<=[/_:])(?=.)|(?<=\.)(?=[A-Za-z])|(?<=\dx)(?=\d)")
"""After a path's `/`, a name's `_` or `:`, a module's `.` before a letter (never inside
`1.5`), and a shape's `x` between digits."""
_ZWSP = "\u200b"
_LONG = re.compile(rf"\S{{{LONG_WORD},}}")


def _break_long_words(inline: Token) -> None:
    """Let a cell's long unbroken words wrap: module paths, file paths, shapes, hashes.

    A table's automatic layout never makes a column narrower than its longest word, and
    `overflow-wrap: break-word` does not change that, so one long identifier pushed the
    whole table past the right margin. Words of `LONG_WORD` characters or more get a
    zero-width space at their natural joints, and every 16 characters of a run that has
    none (a hash); shorter words (`267 µs`, most names) keep wrapping only at spaces.
    Only the HTML is changed: the Markdown report keeps its bytes.
    """
    for child in inline.children or ():
        if child.type in ("text", "code_inline"):
            child.content = _LONG.sub(_with_breaks, child.content)


def _with_breaks(word: re.Match[str]) -> str:
    """The word with a break after each joint, and every 16 characters between joints."""
    parts = _BREAK_AFTER.sub(_ZWSP, word.group()).split(_ZWSP)
    return _ZWSP.join(_ZWSP.join(part[k : k + 16] for k in range(0, len(part), 16)) for part in parts)


def _is_caption(paragraph: Sequence[Token]) -> bool:
    opening, inline, closing = paragraph
    children = inline.children or []
    return (
        opening.type == "paragraph_open"
        and closing.type == "paragraph_close"
        and bool(children)
        and children[0].type == "text"
        and children[0].content.startswith(_CAPTION_PREFIX)
    )


def _figure_rule(
    md: MarkdownIt, figures: Mapping[str, Figure], inline_figures: bool
) -> Callable[[StateCore], None]:
    """A core rule that replaces ``![caption](figure:key)`` paragraphs by numbered figures."""
    from markdown_it.token import Token

    def rule(state: StateCore) -> None:
        tokens = state.tokens
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.type != "inline":
                i += 1
                continue
            children = token.children or []
            images = [child for child in children if child.type == "image"]
            standalone = (
                len(children) == 1
                and len(images) == 1
                and tokens[i - 1].type == "paragraph_open"
                and str(images[0].attrGet("src")).startswith(FIGURE_SCHEME)
            )
            if standalone:
                block = Token("html_block", "", 0, block=True, level=tokens[i - 1].level)
                block.content = _figure_html(md, images[0], figures, inline_figures, state.env)
                tokens[i - 1 : i + 2] = [block]
                continue
            for position, image in enumerate(children):
                if image.type != "image":
                    continue
                src = str(image.attrGet("src"))
                if src.startswith(FIGURE_SCHEME):
                    raise ValueError(f"figure `{src}` must stand alone in its paragraph")
                # Embedding it would mean fetching it: show what it was instead.
                alt = md.renderer.renderInlineAsText(image.children or [], md.options, state.env)
                children[position] = Token("text", "", 0, content=f"[image not embedded: {alt or src}]")
            i += 1

    return rule


def _figure_html(
    md: MarkdownIt,
    image: Token,
    figures: Mapping[str, Figure],
    inline_figures: bool,
    env: dict[str, object],
) -> str:
    key = str(image.attrGet("src"))[len(FIGURE_SCHEME) :]
    if key not in figures:
        known = ", ".join(sorted(figures)) or "none"
        raise ValueError(f"the Markdown refers to figure `{key}`, but only these exist: {known}")
    # renderInline escapes the caption's text like any other Markdown text.
    caption = md.renderer.renderInline(image.children or [], md.options, env)
    if inline_figures:
        drawing = figures[key].markup
    else:
        alt = md.renderer.renderInlineAsText(image.children or [], md.options, env)
        drawing = f'<img src="{FIGURE_SCHEME}{_esc(key)}" alt="{_esc(alt)}">'
    return (
        f'<figure class="figure" id="figure-{_esc(key)}">\n'
        f"{drawing}\n"
        f"<figcaption>{caption}</figcaption>\n"
        "</figure>\n"
    )
