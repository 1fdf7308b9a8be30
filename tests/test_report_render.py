"""The report's renderings: Markdown -> HTML (escaping, figures, tables, callouts),
HTML -> PDF (headings, version footer on every page, no fetching), and the SVG figures.

PDF builds cost seconds each, so the document PDF is built once per module.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import attrs
import pytest

from perfdsl.report import figures
from perfdsl.report.html import Figure, ReportMeta, render_html
from perfdsl.report.pdf import FetchRefused, write_pdf

ATTACK = """<script>alert(1)</script> "><img src=x onerror=alert(2)>"""

META = ReportMeta(
    study="rmsnorm_fusion",
    title="RMSNorm fusion",
    bundle_id="b-20260712-7f3a",
    study_hash="9c1e0d4b7a3f",
    generated_at=datetime(2026, 7, 12, 14, 3, tzinfo=UTC),
    perfdsl_version="0.1.0",
)

PARAGRAPH = "The fused kernel reads each row once where the baseline reads it twice. " * 12

MARKDOWN = f"""# RMSNorm fusion

**Decision: adopt the fused kernel.** It is 1.18x faster at 64x4096.

> [!WARNING]
> The prediction "0.9 of the copy roof" was **refuted**: it reaches 0.79.

## Kernel timing

{PARAGRAPH}

Table: Kernel time per shape

| Shape | Baseline (ms) | Change (ms) |
|:------|--------------:|------------:|
| 64 x 4096 | 45.5 | 38.6 |
| 3 x 4097 | 0.031 | 0.027 |

![Achieved bandwidth against the *measured* copy roof](figure:roof)

{PARAGRAPH}

## Correctness evidence

{PARAGRAPH}

{PARAGRAPH}

## Reproduction

{PARAGRAPH}
"""


@pytest.fixture(scope="module")
def roof_figure() -> Figure:
    return Figure(figures.roofline([("fused", 13.9), ("two-kernel", 11.8)], roof_gbps=17.1))


@pytest.fixture(scope="module")
def document(roof_figure: Figure) -> str:
    return render_html(MARKDOWN, META, {"roof": roof_figure})


@pytest.fixture(scope="module")
def pdf_pages(roof_figure: Figure, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The PDF as `perfdsl build` makes it: figures referenced, served by the PDF stage."""
    from pypdf import PdfReader

    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    linked = render_html(MARKDOWN, META, {"roof": roof_figure}, inline_figures=False)
    pages = write_pdf(linked, path, {"roof": roof_figure})
    texts = [page.extract_text() for page in PdfReader(path).pages]
    assert len(texts) == pages
    return texts


# --- HTML --------------------------------------------------------------------------


def test_html_is_a_standalone_document(document: str) -> None:
    assert document.startswith("<!DOCTYPE html>")
    assert "<title>RMSNorm fusion</title>" in document
    assert "@page" in document  # the stylesheet is inlined, not linked
    assert "<link" not in document


def test_table_has_caption_and_numeric_columns(document: str) -> None:
    table = document[document.index("<table>") : document.index("</table>")]
    assert "<caption>Kernel time per shape</caption>" in table
    assert '<th class="num">Baseline (ms)</th>' in table
    assert '<td class="num">0.031</td>' in table
    assert "style=" not in table  # alignment is a class the stylesheet sets in tabular figures
    assert "Table:" not in document


# The roof table as a CPU study's report has it: numbers with units, a verdict sentence
# in a numeric column (kept on one line, it ran 120 px into the right margin).
WIDE_TABLE = """| Shape | Arm | Regime | Bytes | Median | Achieved | Roof for mix | Of roof |
| :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: |
| 512x512 | baseline | DRAM, scratch in cache | 8.40 MB | 267 µs | 31.4 GB/s | 19.2 GB/s | — |
| 4096 | change | DRAM | 2.11 MB | 94.0 µs | impossible (PQ006) | 19.2 GB/s | above the roof: model wrong |

Table: Static counts of `reduce` read from the SASS

| Arm | Kernel | Instr. | Global ld | Global st | Shared ld | Regs | Spill B | Shared B |
| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| baseline | `reduce_one_chain_kernel` | 639 | 5 (160 bits) | 3 (128 bits) | 11 (544 bits) | 36 | 0 | 5,124 |
"""


def test_a_wide_table_stays_inside_the_margins_and_keeps_numbers_with_their_units() -> None:
    from pdf_layout import words_past_margin

    html = render_html(WIDE_TABLE, META, {})
    assert words_past_margin(html) == []
    assert "267\u00a0µs" in html and "4\u00a0GB/s" in html  # a unit never starts a line
    assert "5 (160\u00a0bits)" in html  # the parenthesis may wrap below its number


LONG = "kernels.rmsnorm_fused:rmsnorm_fused_reference"
HASH = "0123456789abcdef" * 4
PATH = "/home/user/projects/results/2026-01-01T00-00-00Z/cells/cpu.a.current.all/samples.jsonl"
UNBROKEN_TABLE = f"""| Study | Kernel | Shape | Path | Hash | Time |
| :--- | :--- | :--- | :--- | :--- | ---: |
| {"a_very_long_study_name_" * 5} | `{LONG}` | `{"4096x" * 20}4096` | `{PATH}` | `{HASH}` | 267 µs |
| plain | `{LONG}.{LONG}` | small | `x` | `y` | 1 ms |
"""


def test_long_unbroken_words_in_a_table_wrap_inside_the_margins() -> None:
    """A module path, a 21-part shape, a file path and a hash, none with a space: 22 words
    lay past the right margin (up to 1746 px) before such words got break opportunities."""
    from pdf_layout import words_past_margin

    html = render_html(UNBROKEN_TABLE, META, {})
    assert words_past_margin(html) == []
    assert "kernels.\u200brmsnorm_\u200bfused:\u200brmsnorm_" in html
    assert '<td class="left">plain</td>' in html and "1\u00a0ms" in html  # short words are left alone


def test_the_layout_check_sees_a_line_past_the_margin() -> None:
    from pdf_layout import words_past_margin

    (past,) = words_past_margin('<p style="white-space: nowrap">' + "unbroken " * 40 + "</p>")
    assert past.startswith("page 1: 'unbroken") and "px past the right margin" in past


def test_figure_is_inline_svg_with_rendered_caption(document: str) -> None:
    figure = document[document.index('<figure class="figure" id="figure-roof">') :]
    figure = figure[: figure.index("</figure>")]
    assert "<svg" in figure
    assert "<?xml" not in figure and "<!DOCTYPE" not in figure
    assert "<figcaption>Achieved bandwidth against the <em>measured</em> copy roof" in figure
    assert "figure:roof" not in document


def test_figure_for_the_pdf_is_a_reference_the_pdf_stage_serves(roof_figure: Figure) -> None:
    html = render_html(MARKDOWN, META, {"roof": roof_figure}, inline_figures=False)
    figure = html[html.index('<figure class="figure" id="figure-roof">') :]
    figure = figure[: figure.index("</figure>")]
    assert '<img src="figure:roof" alt="Achieved bandwidth against the measured copy roof">' in figure
    assert "<svg" not in html


def test_warning_callout(document: str) -> None:
    callout = document[document.index("<aside") : document.index("</aside>")]
    assert 'class="callout warning"' in callout
    assert '<p class="callout-title">Warning</p>' in callout
    assert "<strong>refuted</strong>" in callout
    assert "[!WARNING]" not in callout


def test_callout_marker_on_the_same_line_and_note_kind() -> None:
    html = render_html("> [!note] Timed under the simulator.", META, {})
    assert '<aside class="callout note" role="note">' in html
    assert "<p>Timed under the simulator.</p>" in html


def test_plain_blockquote_stays_a_blockquote() -> None:
    html = render_html("> quoted [!WARNING] text", META, {})
    assert "<blockquote>" in html and "callout" not in html.split("</style>")[1]


def test_unknown_or_inline_figure_is_a_producer_bug(roof_figure: Figure) -> None:
    with pytest.raises(ValueError, match="figure `missing`"):
        render_html("![x](figure:missing)", META, {"roof": roof_figure})
    with pytest.raises(ValueError, match="stand alone"):
        render_html("see ![x](figure:roof) here", META, {"roof": roof_figure})


def test_other_images_are_not_embedded() -> None:
    html = render_html("![a chart](http://example.com/x.png) and ![](file:///etc/passwd)", META, {})
    body = html.split("<main>")[1]
    assert "<img" not in body
    assert "[image not embedded: a chart]" in body


def _body(html: str) -> str:
    """The document after the stylesheet, where escaped study text lands."""
    return html.split("</style>", 1)[1]


def _assert_no_injected_markup(html: str) -> None:
    body = _body(html)
    assert "<script" not in body
    assert "<img" not in body


def test_study_text_is_escaped_everywhere(roof_figure: Figure) -> None:
    meta = ReportMeta(
        study=ATTACK,
        title=ATTACK,
        bundle_id=ATTACK,
        study_hash=ATTACK,
        generated_at=META.generated_at,
        perfdsl_version=ATTACK,
    )
    markdown = (
        f"# {ATTACK}\n\n{ATTACK}\n\n"
        f"> [!WARNING]\n> {ATTACK}\n\n"
        f"Table: {ATTACK}\n\n| a | b |\n|---|--:|\n| {ATTACK} | 1 |\n\n"
        f"![{ATTACK}](figure:roof)\n"
    )
    html = render_html(markdown, meta, {"roof": roof_figure})
    _assert_no_injected_markup(html)
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert f"<title>{escaped}" in html
    assert f'content="perfdsl {escaped}' in html  # attribute values too
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in html  # cannot close an attribute
    # Heading, paragraph, callout, caption, cell, figure caption, running head, footer.
    assert _body(html).count(escaped) >= 8


def test_figure_svg_is_checked_where_it_enters() -> None:
    with pytest.raises(ValueError, match="well-formed"):
        Figure("<svg")
    with pytest.raises(ValueError, match="not an SVG"):
        Figure("<html/>")
    with pytest.raises(ValueError, match="before"):
        Figure('<!-- <svg --><svg xmlns="http://www.w3.org/2000/svg"/>')
    svg = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink">{}</svg>'
    for inner in (
        "<script>alert(1)</script>",
        '<rect onload="alert(1)"/>',
        '<use x:href="http://example.com/a.svg#b"/>',
        "<foreignObject><p>hi</p></foreignObject>",
    ):
        with pytest.raises(ValueError, match="figure"):
            Figure(svg.format(inner))
    assert Figure(svg.format('<use x:href="#glyph"/>')).markup.startswith("<svg")


# --- PDF ---------------------------------------------------------------------------


@pytest.mark.slow
def test_pdf_has_headings_in_order(pdf_pages: list[str]) -> None:
    text = "\n".join(pdf_pages)
    headings = ["RMSNorm fusion", "Kernel timing", "Correctness evidence", "Reproduction"]
    positions = [text.index(heading) for heading in headings]
    assert positions == sorted(positions)
    assert "Table 1. Kernel time per shape" in text
    assert "Figure 1. Achieved bandwidth" in text
    assert "achieved bandwidth (GB/s)" in text  # the served SVG's axis label, drawn as text


@pytest.mark.slow
def test_pdf_carries_the_version_and_page_count_on_every_page(pdf_pages: list[str]) -> None:
    assert len(pdf_pages) >= 2
    for number, text in enumerate(pdf_pages, start=1):
        flat = " ".join(text.split())
        assert META.version_line in flat, f"page {number}"
        assert f"page {number} of {len(pdf_pages)}" in flat


@pytest.mark.slow
def test_pdf_running_head_names_the_study(pdf_pages: list[str]) -> None:
    assert "generated 2026-07-12 14:03 UTC" in pdf_pages[0]
    for text in pdf_pages[1:]:
        assert re.search(r"^rmsnorm_fusion", text, re.MULTILINE)


@pytest.mark.parametrize(
    "markup",
    [
        '<img src="http://127.0.0.1:9/x.png">',
        '<img src="file:///etc/passwd">',
        '<link rel="stylesheet" href="file:///etc/passwd">',
        '<p style="background: url(data:image/png;base64,iVBORw0KGgo=)">x</p>',
    ],
)
def test_pdf_refuses_every_fetch_and_writes_nothing(markup: str, tmp_path: Path) -> None:
    html = f"<!DOCTYPE html><html><head></head><body>{markup}</body></html>"
    target = tmp_path / "report.pdf"
    with pytest.raises(FetchRefused, match="reports fetch nothing"):
        write_pdf(html, target)
    assert list(tmp_path.iterdir()) == []


def test_pdf_serves_only_the_figures_it_was_given(roof_figure: Figure, tmp_path: Path) -> None:
    html = render_html("![x](figure:roof)", META, {"roof": roof_figure}, inline_figures=False)
    with pytest.raises(FetchRefused, match="`figure:roof`"):
        write_pdf(html, tmp_path / "report.pdf", {"other": roof_figure})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_pdf_replaces_the_previous_report_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")
    assert write_pdf("<p>one page</p>", target) == 1
    assert target.read_bytes().startswith(b"%PDF-")
    assert [path.name for path in tmp_path.iterdir()] == ["report.pdf"]


# --- figures -----------------------------------------------------------------------

BUILDERS = {
    "timing": lambda: figures.timing_distributions(
        [
            ("64x4096", {"baseline": [45.1, 45.6, 46.0, 44.9], "change": [38.2, 38.9, 38.5, 38.6]}, "ms"),
            ("1x1", {"baseline": [3.1, 3.3, 3.2], "change": [3.0, 3.2, 3.1, 3.1]}, "µs"),
            ("8x8", {"baseline": [5.0, 5.1], "change": [4.0, 4.2]}, "µs"),
            ("9x9", {"baseline": [6.0, 6.1], "change": [4.0, 4.2]}, "µs"),
        ]
    ),
    "roofline": lambda: figures.roofline([("copy", 16.4), ("fused", 13.9)], roof_gbps=17.1),
    "load": lambda: figures.load_curve(
        {"baseline": [(100, 5.0), (500, 12.0), (900, 400.0)], "change": [(100, 4.0), (900, 30.0)]},
        slo_ms=50,
        goodputs={"baseline": 500, "change": 900},
        percentile="p99",
    ),
    "errors": lambda: figures.error_per_shape(
        [
            ("(64, 4096)", 2e-7, 1e-5, False),
            ("(1, 1)", 0.0, 1e-5, True),
            ("(3, 4097)", 4e-5, 1e-5, True),
            ("(1, 65537)", float("nan"), 1e-5, True),
        ]
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_figures_are_valid_deterministic_svg(name: str) -> None:
    first, second = BUILDERS[name](), BUILDERS[name]()
    assert first == second
    root = ElementTree.fromstring(first)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = "".join(root.itertext())
    assert "(" in texts and ")" in texts  # every builder labels its axes with units
    assert "<image" not in first  # vectors only
    Figure(first)  # and it passes the checks for inlining


def test_figure_text_stays_text_and_labels_carry_units() -> None:
    svg = BUILDERS["load"]()
    assert "offered load (requests/s)" in svg
    assert "p99 latency (ms)" in svg
    assert "goodput 500 requests/s" in svg


def test_log_axes_label_decades_in_plain_text() -> None:
    svg = BUILDERS["errors"]()
    assert "10⁻⁵" in svg and "10⁻⁸" in svg  # Unicode superscripts, one text element each
    assert "mathdefault" not in svg and "<tspan" not in svg  # no mathtext


def test_timing_panels_each_keep_their_own_axis_and_sample_count() -> None:
    svg = BUILDERS["timing"]()
    assert "time (ms)" in svg and "time (µs)" in svg
    assert "64x4096 (n = 4)" in svg
    assert "1x1 (n = 3/4)" in svg  # arms with different counts say so
    assert "9x9 (n = 2)" in svg  # the fourth panel wraps to a second row


def test_figure_builders_reject_unusable_input() -> None:
    with pytest.raises(ValueError, match="no samples"):
        figures.timing_distributions([("64x4096", {"baseline": []}, "ms")])
    with pytest.raises(ValueError, match="at least one panel"):
        figures.timing_distributions([])
    with pytest.raises(ValueError, match="unknown series"):
        figures.load_curve({"a": [(1, 1)]}, slo_ms=5, goodputs={"b": 3}, percentile="p99")
    with pytest.raises(ValueError, match="positive"):
        figures.roofline([("x", 1.0)], roof_gbps=0)


@pytest.mark.parametrize(
    ("low", "high", "said"),
    [
        (0.02, 0.0769, "between 2% and 7.69% fewer machines"),
        (-0.00962, 0.0769, "from 0.962% more to 7.69% fewer machines (the bracket includes no change)"),
        (-0.05, -0.01, "between 1% and 5% more machines"),
    ],
)
def test_capacity_in_words_whose_direction_matches_the_signs(low: float, high: float, said: str) -> None:
    from perfdsl.report.value import machines

    assert machines(low, high) == said


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (
            ("/home/me/proj/.venv/bin/perfdsl", "run", "--quick", "studies/x.perf"),
            "perfdsl run --quick studies/x.perf",
        ),
        (("/opt/perfdsl/__main__.py", "run", "my studies/x.perf"), "perfdsl run 'my studies/x.perf'"),
        (("/usr/bin/pytest", "-k", "x"), "perfdsl run studies/x.perf"),
        (None, "perfdsl run studies/x.perf"),
    ],
)
def test_reproduction_shows_the_run_as_a_reader_types_it(argv: tuple[str, ...] | None, shown: str) -> None:
    """Never the absolute path of the executable as this machine invoked it."""
    from perfdsl.report.reproduction import rerun_command

    assert rerun_command(argv, "studies/x.perf") == shown


def test_a_smoke_run_s_report_says_so_on_every_page() -> None:
    """A smoke run said it only in a callout on page 1; its other pages read as evidence."""
    smoke = attrs.evolve(META, smoke=True)
    assert smoke.version_line.endswith(" · SMOKE RUN: not evidence")
    assert "SMOKE RUN" not in META.version_line
    document = render_html("# Smoke\n\nA paragraph.\n", smoke, {})
    assert "SMOKE RUN: not evidence</span>" in document


def test_page_one_s_warnings_start_on_page_one_when_they_run_past_it(tmp_path: Path) -> None:
    # A new user's page 1 held three paragraphs and six warnings: the callout, kept whole, went
    # to page 2 entire, and page 1 showed none of them.
    from pypdf import PdfReader

    warnings = "\n>\n".join(f"> **Warning {n}.** {PARAGRAPH[:400]}" for n in range(1, 9))
    markdown = f"# Study\n\n{PARAGRAPH}\n\n{PARAGRAPH}\n\n{PARAGRAPH}\n\n> [!WARNING]\n{warnings}\n"
    path = tmp_path / "report.pdf"
    write_pdf(render_html(markdown, META, {}, inline_figures=False), path, {})
    first, second = (page.extract_text() for page in PdfReader(path).pages[:2])
    assert "Warning 1." in first
    assert "Warning 8." in second
    # Each warning opens on one page, the first ones under the decision.
    assert all((f"Warning {n}." in first) != (f"Warning {n}." in second) for n in range(1, 9))
