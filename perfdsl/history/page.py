"""`perfdsl history`'s page: one static HTML file of every run of a study, over time and commit.

Self-contained on purpose: the CSS is inline, the figures are inline SVG, and
there is no script and no link to fetch, so the page reads the same from a CI
artifact, an e-mail or a laptop offline. Every piece of study or run text is
escaped (a study is source code from a pull request and may hold anything).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from html import escape

from perfdsl.bundle.evaluation.kernels import Combined
from perfdsl.history.across import NOT_INTERLEAVED
from perfdsl.history.across import Combined as AcrossCombined
from perfdsl.history.figure import VERDICT_COLOURS, ratio_figure
from perfdsl.history.steps import OperationSteps, describe
from perfdsl.history.timeline import Entry, Timeline
from perfdsl.numbers import intervals_at

_PREDICTION_COLOURS = {
    "confirmed": "#1a7f37",
    "refuted": "#cf222e",
    "inconclusive": "#bf8700",
    "not evidence": "#57606a",
}

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #1f2328; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.verdict { font-weight: 600; } .note { color: #57606a; } .changed { color: #8250df; }
.entered { color: #cf222e; font-weight: 700; } code { font-size: 12px; }
.step { color: #bc4c00; font-weight: 600; }
"""


def render_page(timeline: Timeline, title: str, generated: datetime, left_out: Sequence[str] = ()) -> str:
    """The whole page, as one HTML document; `left_out` says why each bundle that could not be
    read as a run (it fails verification, say) is not on it."""
    t = timeline
    first, last = (t.entries[0], t.entries[-1]) if t.entries else (None, None)
    threshold = last.run.evaluation.threshold if last else 0.01
    said = (
        "intervals"
        if last is None
        else intervals_at(last.run.evaluation.interval_level, last.run.evaluation.level)
    )
    span = f"{len(t.entries)} runs" + (
        f", {escape(first.run.evaluation.run_id)} to {escape(last.run.evaluation.run_id)}"
        if first and last
        else ""
    )
    body = [
        f"<h1>History of {escape(title)}</h1>",
        f'<p class="note">Study <code>{escape(t.study)}</code>: {span}. Written '
        f"{escape(generated.strftime('%Y-%m-%d %H:%M UTC'))}.</p>",
        f"<p>Ratios are change / baseline times (below 1 the change is faster), with "
        f"{escape(said)}; the shaded band is the practical threshold ({threshold:.1%}). "
        f'A regression <span class="entered">entered</span> at the first run whose verdict turned '
        f"<em>slower</em> after a run that was not. The change's time against the previous run: "
        f"{escape(NOT_INTERLEAVED)}.</p>",
    ]
    if left_out:
        body.append(
            f'<p class="entered">{len(left_out)} bundle{"s" if len(left_out) != 1 else ""} left out, '
            "not read as runs:</p><ul>" + "".join(f"<li>{escape(why)}</li>" for why in left_out) + "</ul>"
        )
    regressions = t.regressions()
    if regressions:
        body.append(
            '<p class="entered">Regressions entered: '
            + "; ".join(f"<code>{escape(op)}</code> at {escape(label)}" for op, label in regressions)
            + ".</p>"
        )
    labels = [entry.run.label for entry in t.entries]
    for operation in t.operations:
        body.append(f"<h2>Operation <code>{escape(operation)}</code></h2>")
        body.append(ratio_figure(t, operation, threshold))
        steps = t.steps_of(operation)
        if steps is not None:
            body.append(_steps_note(steps, labels, t.missing_of(operation)))
        body.append(_operation_table(t.entries, operation, steps))
    body.append(_predictions_table(t))
    body.append(_runs_table(t.entries))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>History of {escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _interval(c: Combined | AcrossCombined | None) -> str:
    return "-" if c is None else f"{c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}]"


def _verdict(verdict: str, colours: dict[str, str]) -> str:
    return f'<span class="verdict" style="color:{colours.get(verdict, "#57606a")}">{escape(verdict)}</span>'


def _steps_note(steps: OperationSteps, labels: list[str], missing: list[str | None]) -> str:
    """What the change-point search found, and the rate it was held to."""
    method = (
        f"Steps are found by binary segmentation of the log ratios, each run weighted by its own "
        f"interval and a spread between runs estimated from the series (tau = {steps.tau:.4f}), the "
        f"threshold simulated ({steps.simulations} series) so that a series with no step shows one "
        f"with probability {steps.false_alarm:.0%}."
    )
    if steps.left_out:
        why = [f"run {i + 1} ({missing[i] or 'no finite interval'})" for i in steps.left_out]
        method += f" Left out: {'; '.join(why)}."
    found = "".join(f'<li class="step">{escape(line)}</li>' for line in describe(steps, labels, missing))
    return f'<p class="note">{escape(method)}</p><ul>{found}</ul>'


def _operation_table(entries: Iterable[Entry], operation: str, steps: OperationSteps | None) -> str:
    rows = [
        "<table><tr><th>#</th><th>run</th><th>commit</th><th>ratio [interval]</th><th>verdict</th>"
        "<th>change's time / previous run</th><th>notes</th></tr>"
    ]
    for i, entry in enumerate(entries, 1):
        point = entry.point(operation)
        if point is None or point.combined is None:
            ratio, verdict = "-", escape(f"not evidence: {point.missing if point else 'not in this run'}")
        else:
            ratio, verdict = _interval(point.combined), _verdict(point.combined.verdict, VERDICT_COLOURS)
        before = point.change_vs_previous if point else None
        previous = (
            "-" if before is None else f"{_interval(before)} {_verdict(before.verdict, VERDICT_COLOURS)}"
        )
        notes = []
        if point is not None and point.entered:
            notes.append('<span class="entered">regression entered</span>')
        for step in steps.steps if steps is not None else ():
            if step.run == i - 1:
                notes.append(
                    f'<span class="step">step {step.relative:+.1%} since run {step.previous + 1} '
                    f"(p = {step.p_value:.4f})</span>"
                )
        if entry.changes:
            notes.append(
                f'<span class="changed">environment changed: {escape("; ".join(entry.changes))}</span>'
            )
        rows.append(
            f'<tr><td class="num">{i}</td><td><code>{escape(entry.run.evaluation.run_id)}</code></td>'
            f'<td><code>{escape(_commit(entry))}</code></td><td class="num">{ratio}</td><td>{verdict}</td>'
            f"<td>{previous}</td><td>{'<br>'.join(notes)}</td></tr>"
        )
    rows.append("</table>")
    return "\n".join(rows)


def _predictions_table(t: Timeline) -> str:
    if not t.predictions:
        return '<h2>Predictions</h2><p class="note">The study makes no prediction.</p>'
    head = "".join(f"<th>{i}</th>" for i in range(1, len(t.entries) + 1))
    rows = [f"<h2>Predictions</h2><table><tr><th>line</th><th>prediction</th>{head}</tr>"]
    for line, text in t.predictions:
        cells = []
        for entry in t.entries:
            found = next(
                (p for p in entry.run.evaluation.predictions if (p.line, p.text) == (line, text)), None
            )
            if found is None:
                cells.append("<td>-</td>")
            else:
                shown = _verdict(found.verdict, _PREDICTION_COLOURS)
                cells.append(f'<td title="{escape(found.message)}">{shown}</td>')
        rows.append(
            f'<tr><td class="num">{line}</td><td><code>{escape(text)}</code></td>{"".join(cells)}</tr>'
        )
    rows.append("</table>")
    return "\n".join(rows)


def _runs_table(entries: Iterable[Entry]) -> str:
    rows = [
        "<h2>Runs</h2><table><tr><th>#</th><th>run</th><th>commit</th><th>target</th><th>settings</th>"
        "<th>environment against the previous run</th></tr>"
    ]
    for i, entry in enumerate(entries, 1):
        e = entry.run.evaluation
        changes = (
            "first run"
            if i == 1
            else (escape("; ".join(entry.changes)) if entry.changes else "no difference recorded")
        )
        rows.append(
            f'<tr><td class="num">{i}</td><td><code>{escape(e.run_id)}</code></td>'
            f"<td><code>{escape(_commit(entry))}</code></td><td>{escape(e.target)}</td>"
            f'<td>{"quick" if e.quick else "full"}</td><td class="{"changed" if entry.changes else ""}">'
            f"{changes}</td></tr>"
        )
    rows.append("</table>")
    return "\n".join(rows)


def _commit(entry: Entry) -> str:
    env = entry.run.environment
    return env.short_commit if env else "unknown"
