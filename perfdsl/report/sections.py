"""The report's framing sections: what was measured and why, what it is worth, where it
stops, and how to reproduce it.

Each `render_<section>(ctx, out)` appends Markdown blocks to `out`; the
evidence sections and the investigation record have modules of their own (see
`perfdsl.report`). Study text goes through `formatting.text` or `code`, never
straight into the Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from perfdsl.nodes import Expr, ShapeSet, Study
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

_MANIFEST_HASH_CHARS = 16
"""SHA-256 prefix printed per file: 64 bits, enough to tell files apart by eye and by grep."""


def render_workload(ctx: ReportContext, out: Blocks) -> None:
    """The workload as declared, and the baseline's latency and throughput side by side."""
    workload = ctx.study.workload
    if workload is None:
        out.add("The study declares no workload.")
        return
    facts = []
    if workload.summary:
        facts.append(fmt.text(workload.summary.value))
    if workload.dtype:
        facts.append(f"element type {fmt.code(workload.dtype.id)}")
    if workload.targets:
        facts.append("targets " + ", ".join(fmt.code(t.id) for t in workload.targets))
    if workload.objective:
        facts.append(f"objective {fmt.code(fmt.condition(_snippet(ctx.study, workload.objective.span)))}")
    facts += [
        f"correct when {fmt.code(fmt.condition(_snippet(ctx.study, c.span)))}" for c in workload.correct
    ]
    out.add("; ".join(facts) + ".")
    out.add(
        f"This run was on {fmt.code(ctx.evaluation.get('target'))}"
        + (", with shapes scaled down by `--quick`." if ctx.quick else ".")
        + " Each operation's shapes carry the production weights below."
    )
    for op in ctx.operations:
        rows = []
        for shape in op.get("shapes") or []:
            arms = {a["arm"]: a for a in shape.get("arms") or []}
            base = arms.get("baseline")
            rows.append(
                [
                    fmt.text(shape["label"]),
                    fmt.sig(shape.get("weight", 0.0), 2),
                    fmt.duration(base["median_ns"]) if base else fmt.MISSING,
                    fmt.count(base["blocks"]) if base else fmt.MISSING,
                ]
            )
        out.add(
            fmt.table(
                f"Shapes of {fmt.code(op['name'])} as run, with the baseline's kernel time",
                ["Shape", "Weight", "Baseline median", "Blocks"],
                rows,
                numeric=(1, 2, 3),
            )
        )
    out.add(*_baseline_operating_point(ctx))


def _baseline_operating_point(ctx: ReportContext) -> list[str]:
    """Latency distribution and throughput of the baseline application, together."""
    end = ctx.end_to_end
    parts = []
    if end is None:
        parts.append(
            f"Baseline operating point: no application result "
            f"({fmt.message(ctx.evaluation.get('end_to_end_missing'))})."
        )
    elif end.get("comparison"):
        d = end["comparison"]["baseline_dispersion"]
        parts.append(
            f"Baseline operating point of {fmt.code(end['application'])} at shape "
            f"{fmt.text(_sizes(end.get('shape')))}: median request time {fmt.duration(d['median'])} "
            f"(interquartile range {fmt.percent(d['iqr_rel'])} of the median) over "
            f"{end['comparison']['n_baseline']} blocks, one request at a time."
        )
    else:
        parts.append(f"Baseline request time: not evidence ({fmt.message(end.get('comparison_missing'))}).")
    load = ctx.load
    if load is None:
        parts.append(
            f"Baseline under load: not measured ({fmt.message(ctx.evaluation.get('load_missing'))})."
        )
        return parts
    baseline = next((g for g in load.get("arms") or [] if g["arm"] == "baseline"), None)
    if baseline is None:
        return parts
    rows = []
    for point in baseline.get("curve") or []:
        r = point.get("result")
        if r is None:
            rows.append(
                [
                    fmt.sig(point["rate"]),
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.message(point.get("missing")),
                ]
            )
            continue
        rows.append(
            [
                fmt.sig(point["rate"]),
                fmt.sig(r["achieved_rate"]),
                fmt.seconds(r["p50"]),
                fmt.seconds(r["p99"]),
                fmt.count(r["n"]),
                _verdict(r),
            ]
        )
    parts.append(
        fmt.table(
            f"The baseline under open-loop load: throughput and latency at each offered rate "
            f"(SLO p99 ≤ {fmt.seconds(load.get('slo_seconds'))}; goodput {fmt.rate(baseline['goodput'])}"
            f"{' or more' if baseline.get('lower_bound') else ''}"
            f"{'' if baseline.get('confirmed') else ', unconfirmed'})",
            ["Offered (rps)", "Achieved (rps)", "p50", "p99", "Requests", "SLO"],
            rows,
            numeric=(0, 1, 2, 3, 4),
        )
    )
    return parts


def render_operation(ctx: ReportContext, out: Blocks) -> None:
    """The named operation, the predicted physical mechanism and the change in physical terms."""
    study = ctx.study
    for op in study.operations:
        lines = [
            f"baseline {fmt.code(op.baseline) if op.baseline else fmt.MISSING}",
            f"change {fmt.code(op.change) if op.change else fmt.MISSING}",
            f"reference {fmt.code(op.reference) if op.reference else fmt.MISSING}",
        ]
        out.add(f"Operation {fmt.code(op.name.id)}: " + "; ".join(lines) + ".")
        if op.models:
            rows = [
                [
                    fmt.code(m.quantity.id),
                    fmt.code(_expr(study, m.baseline)),
                    fmt.code(_expr(study, m.change)),
                ]
                for m in op.models
            ]
            out.add(
                fmt.table(
                    f"What {fmt.code(op.name.id)} moves, as the study models it per call",
                    ["Quantity", "Baseline", "Change"],
                    rows,
                )
            )
    share = _share_sentence(ctx)
    if share:
        out.add(share)
    change = study.change
    if change is None:
        out.add("The study states no mechanism.")
        return
    mechanism = fmt.code(change.mechanism.id) if change.mechanism else "no category"
    summary = fmt.text(change.summary.value) if change.summary else "no summary"
    out.add(f"Predicted mechanism: {mechanism}. {summary}")
    for op in ctx.operations:
        physical = _physical_change(op)
        if physical:
            out.add(physical)


def _share_sentence(ctx: ReportContext) -> str:
    end = ctx.end_to_end
    if end is None:
        return ""
    shares = {s["arm"]: s for s in end.get("shares") or []}
    base = shares.get("baseline")
    if base is None:
        return f"Share of critical time: not measured ({fmt.message(end.get('share_missing'))})."
    return (
        f"The operation {fmt.code(end.get('operation'))} holds {fmt.percent(base['f'])} of "
        f"{fmt.code(end['application'])}'s baseline request time (f, measured over "
        f"{fmt.count(base['requests'])} instrumented requests)."
    )


def _physical_change(op: Mapping[str, Any]) -> str:
    """At the heaviest-weighted shape: each modelled quantity before and after."""
    shapes = op.get("shapes") or []
    if not shapes:
        return ""
    heaviest = max(shapes, key=lambda s: s.get("weight", 0.0))
    quantities = (heaviest.get("mechanism") or {}).get("quantities") or []
    if not quantities:
        return ""
    said = []
    for q in quantities:
        show = fmt.data_size if q["name"] == "bytes" else fmt.sig
        said.append(
            f"{fmt.text(q['name'])} from {show(q['baseline'])} to {show(q['change'])} "
            f"(ratio {fmt.ratio(q.get('ratio'))}, {q['label']})"
        )
    return (
        f"In physical terms, at the heaviest shape {fmt.text(heaviest['label'])} as run, one call of "
        f"{fmt.code(op['name'])} goes " + "; ".join(said) + "."
    )


def render_value(ctx: ReportContext, out: Blocks) -> None:
    """Value = frequency x saved time x scale, with the study's numbers filled in."""
    value = ctx.evaluation.get("value")
    if value is None:
        out.add(f"Value: not computed ({fmt.message(ctx.evaluation.get('value_missing'))}).")
        return
    per, fleet = value["per_unit"], value["fleet"]
    level = fmt.percent(per.get("level", ctx.level), 2)
    basis = fmt.code(value["basis"])
    saved = fmt.seconds(per["saved_time_per_unit"])
    saved_ci = per["saved_time_per_unit_ci"]
    freq_unit, x = fmt.text(value["frequency_unit"]), fmt.TIMES
    out.add(
        f"Value = frequency {x} saved time {x} scale, where the saved time is the measured end-to-end "
        f"saving of {basis} per run (baseline time {x} (1 {fmt.MINUS} end-to-end ratio)), never the kernel's."
    )
    scale_unit = fmt.text(value["scale_unit"])
    out.add(
        fmt.bullets(
            [
                f"Per unit of work: {fmt.sig(value['frequency'])} runs {freq_unit} {x} {saved} saved a run = "
                f"**{fmt.seconds(per['value'])} {freq_unit}** ({level} interval of the saving "
                f"[{fmt.seconds(saved_ci[0])}, {fmt.seconds(saved_ci[1])}]).",
                f"At scale: {fmt.sig(value['scale'])} {scale_unit} {x} (1 {fmt.MINUS} end-to-end ratio) = "
                f"**{fmt.sig(fleet['value'])} {scale_unit}** ({level} interval "
                f"[{fmt.sig(fleet['value_ci'][0])}, {fmt.sig(fleet['value_ci'][1])}]).",
            ]
        )
    )
    if fleet["value_ci"][0] <= 0:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**The value is not established.** Its interval reaches zero or below: at this "
                    "confidence the change may save nothing, or cost."
                ],
            )
        )
    capacity = value.get("capacity")
    if capacity:
        load = ctx.load or {}
        bound = load.get("capacity_bound") or "exact"
        fewer = fmt.percent(capacity["fleet_fraction_freed"])
        out.add(
            f"Capacity at the same SLO: goodput ratio {fmt.capacity_ratio(load)}; serving the same "
            f"demand needs {fewer if bound == 'exact' else f'{bound} {fewer}'} fewer machines"
            + (f" ({fmt.capacity_caveat(load)})." if bound != "exact" else ".")
        )
    else:
        reason = (ctx.load or {}).get("capacity_missing") or ctx.evaluation.get("load_missing")
        out.add(f"Capacity: not computed ({fmt.text(reason)}).")


def render_limitations(ctx: ReportContext, out: Blocks) -> None:
    """The study's declared limits, the shapes measured to regress, and the fallback."""
    study = ctx.study
    items = []
    for limit in study.limits:
        item = f"**{fmt.text(limit.kind.id)}**: {fmt.text(limit.text.value) if limit.text else fmt.MISSING}"
        if limit.shapes:
            item += f" (shapes {fmt.text(_shape_set(limit.shapes))})"
        items.append(item)
    out.add(fmt.bullets(items) if items else "The study declares no limitations.")
    for op in ctx.operations:
        if op.get("regressions"):
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Measured regression.** {fmt.code(op['name'])} is slower with the change at "
                        + ", ".join(fmt.text(s) for s in op["regressions"])
                        + "."
                    ],
                )
            )
    fallback = fmt.text(study.fallback.value) if study.fallback else "none stated"
    out.add(f"Fallback: {fallback}.")


def render_reproduction(ctx: ReportContext, out: Blocks) -> None:
    """The exact commands, the environment, the bundle and its manifest hashes."""
    env = ctx.environment or {}
    study_path = str(ctx.plan.get("study_path") or f"{ctx.study.name.id}.perf")
    command = env.get("command_line")
    ran = " ".join(command) if command else f"perfdsl run {study_path}"
    commands = [
        ran,
        f"perfdsl evaluate {ctx.bundle_label}",
        f"perfdsl build --pdf {study_path} --results {ctx.bundle_label}",
    ]
    out.add("The run, its evaluation and this report:", _fenced(commands))
    out.add(f"Bundle: {fmt.code(ctx.bundle_label)} (run {fmt.code(ctx.run_id)}).")
    out.add(_registration_paragraph(ctx))
    if ctx.environment is None:
        out.add(f"Environment: not recorded ({fmt.message(ctx.environment_missing)}).")
    else:
        out.add(fmt.table("Environment of the run", ["Item", "Value"], _environment_rows(env)))
    files = sorted((ctx.manifest.get("files") or {}).items())
    # A fixed-width listing, not a table: it reads like `sha256sum` output, and a
    # bundle has dozens of files, which as table rows would triple the PDF's layout time.
    width = max((len(fmt.count(entry.get("size"))) for _, entry in files), default=1)
    listing = [
        f"{str(entry.get('sha256', ''))[:_MANIFEST_HASH_CHARS]:<{_MANIFEST_HASH_CHARS}}  "
        f"{fmt.count(entry.get('size')):>{width}}  {' '.join(name.split())}"
        for name, entry in files
    ]
    out.add(
        f"Manifest: every file of the bundle, with the first {_MANIFEST_HASH_CHARS} hex digits of its "
        "SHA-256 and its size in bytes (`perfdsl verify` rechecks them all):",
        _fenced(listing),
    )


def _fenced(lines: list[str]) -> str:
    """A fenced code block holding `lines` literally, whatever backticks they contain."""
    fence = "`" * max([3, *(len(run) + 1 for line in lines for run in re.findall(r"`+", line))])
    return "\n".join([fence, *lines, fence])


def _registration_paragraph(ctx: ReportContext) -> str:
    reg = ctx.registration
    registered = str(reg.get("predict_hash") or "")
    parts = [
        f"Predictions registered at {fmt.text(reg.get('registered') or 'an unrecorded time')} "
        f"with hash {fmt.code(registered[:_MANIFEST_HASH_CHARS] or fmt.MISSING)}"
    ]
    if ctx.current is None:
        parts.append("the study file was not checked against it")
    else:
        parts.append(fmt.message(ctx.current.message))
    study_hash = str(reg.get("study_hash") or "")
    if study_hash:
        parts.append(f"study hash at the run {fmt.code(study_hash[:_MANIFEST_HASH_CHARS])}")
    if ctx.study.source.text != ctx.bundle_study_text:
        parts.append(
            "the study file differs from the study that ran (the report's prose is the file's, "
            "its evidence the run's)"
        )
    return "; ".join(parts) + "."


def _environment_rows(env: Mapping[str, Any]) -> list[list[str]]:
    python = env.get("python") or {}
    system = env.get("os") or {}
    cpu = env.get("cpu") or {}
    gpu = env.get("gpu")
    git = env.get("git") or {}
    rows = [
        ["perfdsl", fmt.text(env.get("perfdsl", fmt.MISSING))],
        [
            "Python",
            fmt.text(
                f"{python.get('implementation', '')} {python.get('version', '')}".strip() or fmt.MISSING
            ),
        ],
        [
            "OS",
            fmt.text(
                f"{system.get('system', '')} {system.get('release', '')} {system.get('machine', '')}".strip()
                or fmt.MISSING
            ),
        ],
        ["CPU", fmt.text(f"{cpu.get('model', '?')}, {cpu.get('usable_cores', '?')} usable cores")],
        ["GPU", fmt.message(_gpu(gpu) if gpu else f"none ({env.get('gpu_missing', 'not recorded')})")],
        [
            "git",
            fmt.text(
                f"{str(git.get('commit', ''))[:12] or fmt.MISSING}"
                f"{' (uncommitted changes)' if git.get('dirty') else ''}"
            ),
        ],
        ["Run started", fmt.text(env.get("time_utc", fmt.MISSING))],
    ]
    rows += [
        [fmt.text(name), fmt.text(version)] for name, version in sorted((env.get("packages") or {}).items())
    ]
    rows += [
        [fmt.code(name), fmt.code(value)]
        for name, value in sorted((env.get("environment_variables") or {}).items())
    ]
    return rows


def _gpu(gpu: Any) -> str:
    if isinstance(gpu, Mapping):
        shown = [str(gpu.get(k)) for k in ("name", "driver", "compute_capability") if gpu.get(k)]
        return ", ".join(shown) or "recorded"
    return str(gpu)


def _snippet(study: Study, span: Any) -> str:
    return " ".join(study.source.snippet(span).split())


def _expr(study: Study, expr: Expr) -> str:
    return _snippet(study, expr.span)


def _shape_set(shapes: ShapeSet) -> str:
    symbols = ", ".join(s.id for s in shapes.symbols)
    listed = ", ".join("(" + ", ".join(str(v) for v in shape.sizes) + ")" for shape in shapes.shapes)
    return f"({symbols}) in [{listed}]"


def _sizes(sizes: Mapping[str, int] | None) -> str:
    return f" {fmt.TIMES} ".join(f"{k} = {v}" for k, v in (sizes or {}).items()) or "as planned"


def _verdict(result: dict) -> str:
    """`passes`, or `fails` with the criteria that failed, so a reader can tell a
    latency miss from a generator that fell behind."""
    if result.get("passed"):
        return "passes"
    failed = [
        name
        for key, name in (("p99_ok", "p99"), ("throughput_ok", "throughput"), ("lag_ok", "generator lag"))
        if result.get(key) is False
    ]
    return f"fails ({', '.join(failed)})" if failed else "fails"
