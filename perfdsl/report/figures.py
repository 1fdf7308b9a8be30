"""The report's charts as SVG text, drawn with matplotlib from plain numbers.

Choices every builder shares, and why:

* Series differ by line style and marker shape as well as by colour
  (Okabe-Ito, safe for colour-blind readers), so a grey-scale printout still
  tells them apart.
* ``svg.fonttype`` is ``"none"``: text stays ``<text>`` in DejaVu Sans, the
  font matplotlib lays it out with and the report is set in. WeasyPrint draws
  it with that font, so figure text is crisp, searchable PDF text and the SVG
  is about half the size of glyph outlines (``"path"``).
* ``svg.hashsalt`` is fixed and the Date metadata dropped, so the same data
  gives byte-identical SVG: reports can be diffed and cached.
* Figures are the report's text width (A4 less its margins), so they are
  placed at scale 1 and their 8 pt labels match the captions.
* Lines are polylines; markers are drawn only where points are few (load
  curves, per-shape errors) or summarise a series (medians). WeasyPrint's
  time grows with the number of SVG elements.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_TEXT_WIDTH_IN = 166 / 25.4  # A4's 210 mm less the stylesheet's two 22 mm margins
_PANEL_COLUMNS = 3  # panels side by side before a figure wraps to another row

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "perfdsl",
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#d9d9d9",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.3,
    "lines.markersize": 5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
}

# One style per series: colour, dash pattern and marker all differ.
_SERIES: tuple[dict[str, Any], ...] = (
    {"color": "#0072B2", "linestyle": "-", "marker": "o"},
    {"color": "#D55E00", "linestyle": "--", "marker": "s"},
    {"color": "#009E73", "linestyle": ":", "marker": "^"},
    {"color": "#CC79A7", "linestyle": "-.", "marker": "D"},
    {"color": "#000000", "linestyle": (0, (6, 2, 1, 2, 1, 2)), "marker": "v"},
)
_INK = "#222222"
_FAIL = "#9a1b1b"


def timing_distributions(panels: Sequence[tuple[str, Mapping[str, Sequence[float]], str]]) -> str:
    """The empirical CDF of each arm's times, one panel per shape, side by side.

    `panels` are (title, {arm: samples}, unit), e.g. one per workload shape
    with its block medians. An ECDF shows every sample without binning
    choices, and a shift to the left is a speed-up at every quantile; each
    arm's median is marked on its curve. Shapes share one figure (and one
    legend) so they read together: each panel keeps its own time axis, since
    shapes differ by orders of magnitude.
    """
    import numpy as np

    _require(panels, "timing_distributions needs at least one panel")
    arm_names = list(dict.fromkeys(arm for _, arms, _ in panels for arm in arms))
    style_of = dict(zip(arm_names, _styles(len(arm_names)), strict=True))
    columns = min(len(panels), _PANEL_COLUMNS)
    rows = math.ceil(len(panels) / columns)

    def draw(figure: Figure) -> None:
        axes = list(figure.subplots(rows, columns, squeeze=False, sharey=True).flat)
        for ax, (title, arms, unit) in zip(axes, panels, strict=False):
            _require(arms, f"panel `{title}` has no arms")
            counts = set()
            for label, samples in arms.items():
                values = np.sort(np.asarray(samples, dtype=float))
                _require(values, f"arm `{label}` of `{title}` has no samples")
                counts.add(len(values))
                style = style_of[label]
                line = {key: value for key, value in style.items() if key != "marker"}
                steps = np.arange(len(values) + 1) / len(values)
                ax.step(np.concatenate(([values[0]], values)), steps, where="post", **line)
                ax.plot(
                    [float(np.median(values))],
                    [0.5],
                    linestyle="none",
                    marker=style["marker"],
                    color=style["color"],
                    markerfacecolor="white",
                    zorder=3,
                )
            n = "/".join(str(count) for count in sorted(counts))
            ax.set_title(f"{title} (n = {n})", fontsize=_RC["axes.labelsize"])
            ax.set_xlabel(f"time ({unit})")
            ax.set_ylim(0, 1.02)
        for ax in axes[len(panels) :]:  # the grid's empty cells
            ax.set_visible(False)
        for ax in axes[::columns]:
            ax.set_ylabel("fraction of samples ≤ time")
        figure.legend(
            handles=[_legend_line(style_of[arm], arm) for arm in arm_names]
            + [_legend_line({"color": _INK, "marker": "o", "linestyle": "none"}, "median (open marker)")],
            loc="outside upper left",
            ncols=len(arm_names) + 1,
        )

    return _render_figure(draw, height_in=0.55 + 1.85 * rows)


def roofline(points: Sequence[tuple[str, float]], roof_gbps: float) -> str:
    """Achieved bandwidth per kernel as bars against the measured copy roof.

    `points` are (label, achieved GB/s). For memory-bound kernels the classic
    log-log roofline puts every point on the slanted roof, where arithmetic
    intensity carries no information; what the report argues about is the
    fraction of the measured roof, so that fraction is printed on each bar.
    """
    _require(points, "roofline needs at least one point")
    if roof_gbps <= 0:
        raise ValueError(f"the roof must be positive, not {roof_gbps} GB/s")

    def draw(ax: Axes) -> None:
        labels = [label for label, _ in points]
        achieved = [gbps for _, gbps in points]
        rows = range(len(points))
        ax.barh(rows, achieved, height=0.55, color="#9ecae1", edgecolor=_INK, linewidth=0.6)
        ax.axvline(roof_gbps, color=_INK, linestyle="--", linewidth=1)
        # The figures sit in one column right of the roof, so they line up and never
        # cross a bar or the roof line.
        column = max(roof_gbps, *achieved) * 1.04
        for row, gbps in zip(rows, achieved, strict=True):
            ax.text(column, row, f"{gbps:.3g} GB/s = {gbps / roof_gbps:.2f} of roof", va="center")
        ax.annotate(
            f"measured copy roof {roof_gbps:.3g} GB/s",
            (roof_gbps, 1),
            xycoords=("data", "axes fraction"),
            xytext=(-3, -2),
            textcoords="offset points",
            ha="right",
            va="top",
        )
        ax.set_yticks(list(rows), labels)
        ax.set_ylim(len(points) - 0.4, -0.9)
        ax.set_xlim(0, max(roof_gbps, *achieved) * 1.6)
        ax.set_xlabel("achieved bandwidth (GB/s)")
        ax.grid(axis="y", visible=False)

    return _render(draw, height_in=0.9 + 0.32 * len(points))


def load_curve(
    series: Mapping[str, Sequence[tuple[float, float]]],
    slo_ms: float,
    goodputs: Mapping[str, float],
    percentile: str,
) -> str:
    """The SLO's percentile of latency (`percentile`, as the SLO names it) against offered
    load, with the SLO and each series' goodput.

    `series` maps a label to (offered requests/s, latency ms) points; `goodputs`
    maps some of those labels to the highest offered rate that met the SLO,
    drawn as a vertical line in the series' style and given in the legend.
    The latency axis is logarithmic when p99 spans more than a decade, since
    tails explode near saturation.
    """
    _require(series, "load_curve needs at least one series")
    unknown = set(goodputs) - set(series)
    if unknown:
        raise ValueError(f"goodputs for unknown series: {', '.join(sorted(unknown))}")

    def draw(ax: Axes) -> None:
        latencies = [slo_ms]
        for style, (label, points) in zip(_styles(len(series)), series.items(), strict=True):
            _require(points, f"series `{label}` has no points")
            ordered = sorted(points)
            latencies += [p99 for _, p99 in ordered]
            name = label
            if label in goodputs:
                name = f"{label} (goodput {goodputs[label]:,.0f} requests/s)"
                ax.axvline(
                    goodputs[label],
                    color=style["color"],
                    linestyle=style["linestyle"],
                    linewidth=0.8,
                )
            ax.plot(
                [rps for rps, _ in ordered],
                [p99 for _, p99 in ordered],
                label=name,
                markerfacecolor="white",
                **style,
            )
        ax.axhline(slo_ms, color=_INK, linewidth=1)
        ax.annotate(
            f"SLO: {percentile} ≤ {slo_ms:g} ms",
            (0, slo_ms),
            xycoords=("axes fraction", "data"),
            xytext=(3, 2),
            textcoords="offset points",
            va="bottom",
        )
        positive = [latency for latency in latencies if latency > 0]
        if positive and max(positive) / min(positive) > 10:
            _log_y(ax)
        ax.set_xlabel("offered load (requests/s)")
        ax.set_ylabel(f"{percentile} latency (ms)")
        _legend_above(ax)

    return _render(draw, height_in=2.8)


def error_per_shape(rows: Sequence[tuple[str, float, float, bool]]) -> str:
    """Relative L2 error per shape on a log axis, against each shape's tolerance.

    `rows` are (shape label, relative L2 error, tolerance, adversarial).
    Circles are regular shapes, triangles adversarial ones; a filled marker
    exceeds its tolerance. An error of exactly zero cannot sit on a log axis,
    so it is drawn at the axis floor and labelled "0"; a non-finite error is
    drawn at the top, labelled, and counts as exceeding the tolerance.
    """
    from matplotlib.lines import Line2D

    _require(rows, "error_per_shape needs at least one row")
    finite = [
        value for _, error, tol, _ in rows for value in (error, tol) if math.isfinite(value) and value > 0
    ]
    floor = 10 ** math.floor(math.log10(min(finite)) - 1) if finite else 1e-12
    ceiling = 10 ** math.ceil(math.log10(max(finite)) + 1) if finite else 1.0

    def draw(ax: Axes) -> None:
        for x, (_, error, tolerance, adversarial) in enumerate(rows):
            ax.hlines(tolerance, x - 0.38, x + 0.38, color=_INK, linewidth=1.2)
            failed = not (math.isfinite(error) and error <= tolerance)
            shown, note = error, None
            if not math.isfinite(error):
                shown, note = ceiling, str(error)
            elif error == 0:
                shown, note = floor, "0"
            ax.plot(
                [x],
                [shown],
                linestyle="none",
                marker="^" if adversarial else "o",
                markersize=6,
                color=_FAIL if failed else "#0072B2",
                markerfacecolor=_FAIL if failed else "white",
                markeredgewidth=1.1,
                zorder=3,
            )
            if note is not None:
                ax.annotate(
                    note,
                    (x, shown),
                    xytext=(0, 5),
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                )
        _log_y(ax)
        ax.set_ylim(floor / 2, ceiling * 3)
        ax.set_xticks(
            range(len(rows)),
            [label for label, *_ in rows],
            rotation=30 if len(rows) > 6 else 0,
            ha="right" if len(rows) > 6 else "center",
        )
        ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_xlabel("shape")
        ax.set_ylabel("relative L2 error (dimensionless)")
        ax.grid(axis="x", visible=False)
        legend = [
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                color="#0072B2",
                markerfacecolor="white",
                label="regular shape",
            ),
            Line2D(
                [],
                [],
                linestyle="none",
                marker="^",
                color="#0072B2",
                markerfacecolor="white",
                label="adversarial shape",
            ),
            Line2D([], [], linestyle="none", marker="o", color=_FAIL, label="exceeds tolerance"),
            Line2D([], [], color=_INK, linewidth=1.2, label="tolerance"),
        ]
        _legend_above(ax, handles=legend, ncols=4)

    return _render(draw, height_in=2.6)


def _render(draw: Callable[[Axes], None], height_in: float) -> str:
    """Draw one plot on a fresh text-width figure and return it as SVG text."""
    return _render_figure(lambda figure: draw(figure.add_subplot()), height_in)


def _render_figure(draw: Callable[[Figure], None], height_in: float) -> str:
    """Draw on a fresh text-width figure and return it as SVG text.

    Uses `matplotlib.figure.Figure` directly, not pyplot: no global figure
    registry, no backend selection, safe to call from any thread.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(_TEXT_WIDTH_IN, height_in), layout="constrained")
        draw(figure)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _legend_line(style: Mapping[str, Any], label: str) -> Any:
    """A legend entry in a series' style, for legends that span several panels."""
    from matplotlib.lines import Line2D

    return Line2D([], [], markerfacecolor="white", label=label, **style)


def _log_y(ax: Axes) -> None:
    """A logarithmic y axis with decade ticks only, labelled 10⁻⁷ in plain text.

    The decades and their grid lines carry the reading; the eight minor ticks
    a decade would add are clutter in print and, in SVG, most of the figure's
    elements (each is a group, a marker and a clip). Matplotlib's own decade
    labels are mathtext, whose parser costs more to build than the rest of
    the report's figures take to draw; Unicode superscripts in DejaVu Sans
    read the same and stay one text element each.
    """
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.set_yscale("log")
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_decade_label))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decade_label(value: float, _position: int) -> str:
    """`10⁻⁷` for an exact power of ten, else nothing (only decades are ticked)."""
    if value <= 0:
        return ""
    exponent = round(math.log10(value))
    if not math.isclose(value, 10.0**exponent, rel_tol=1e-9):
        return ""
    return "1" if exponent == 0 else "10" if exponent == 1 else f"10{str(exponent).translate(_SUPERSCRIPT)}"


def _legend_above(ax: Axes, **options: Any) -> None:
    """A legend over the plot area, where it can never hide data."""
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), borderaxespad=0, **options)


def _styles(count: int) -> list[dict[str, Any]]:
    return [_SERIES[i % len(_SERIES)] for i in range(count)]


def _require(values: Sized, message: str) -> None:
    if len(values) == 0:
        raise ValueError(message)
