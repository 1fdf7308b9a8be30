"""The report's evidence sections: correctness, mechanism, kernel timing, end to end.

Each `render_<section>(ctx, out)` appends Markdown blocks and figures to `out`.
Where a piece of evidence is weaker than it looks (timings that are not
evidence, figures modelled rather than counted, a failed check, a refuted
prediction) the section opens that piece with a `> [!WARNING]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perfdsl.report import figures
from perfdsl.report import formatting as fmt
from perfdsl.report.context import ARMS, Blocks, ReportContext

# Static counts shown per kernel, in this order, when the compiled code has them.
# Short headings: seven numeric columns and the kernel name must fit an A4 text width.
_STATIC_COLUMNS = (
    ("instructions", "Instr."),
    ("global_loads", "Global ld"),
    ("global_stores", "Global st"),
    ("shared_loads", "Shared ld"),
    ("registers", "Regs"),
    ("spill_store_bytes", "Spill B"),
    ("shared_bytes", "Shared B"),
)
_STATIC_CPU_COLUMNS = (("instructions", "Instructions"),)


def render_correctness(ctx: ReportContext, out: Blocks) -> None:
    """Per arm and shape, the worst errors over seeds against the tolerance; failing cases."""
    for op in ctx.operations:
        correctness = op.get("correctness") or {}
        tolerances = correctness.get("tolerances") or {}
        stated = (
            ", ".join(f"{fmt.text(k)} ≤ {fmt.sci(v)}" for k, v in sorted(tolerances.items())) or "none stated"
        )
        out.add(
            f"{fmt.code(op['name'])} against its float64 reference: tolerance {stated}; "
            f"{fmt.count(correctness.get('seeds'))} seeds of fresh random inputs per shape, output poisoned "
            "before each run."
        )
        failing = correctness.get("failing") or []
        if not correctness.get("passed"):
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Correctness failed** for {fmt.code(op['name'])}: {len(failing)} failing cases. "
                        "A failure is evidence: each case below reruns with its shape and seed."
                    ],
                )
            )
        cases = list((ctx.result_operation(op["name"]).get("correctness") or {}).get("cases") or [])
        out.add(_case_table(op["name"], cases, tolerances))
        if "rel_l2" not in tolerances:
            # The figure plots relative L2 against its tolerance; another metric is in the table.
            out.add("No error figure: the tolerance is not on relative L2 error; the table has every error.")
            plotted = []
        else:
            rows = [(_shape_label(c["shape"]), c) for c in _worst_per_shape(cases, "change")]
            plotted = [
                (label, float(c["rel_l2"]), float(tolerances["rel_l2"]), bool(c.get("adversarial")))
                for label, c in rows
                if isinstance(c.get("rel_l2"), int | float)
            ]
        if plotted:
            out.figure(
                f"error-{op['name']}",
                figures.error_per_shape(plotted),
                f"Relative L2 error of the change {fmt.code(op['name'])} per shape (worst over seeds) "
                "against the tolerance; triangles are adversarial shapes, filled markers fail",
            )
        if failing:
            out.add(
                fmt.table(
                    f"Failing cases of {fmt.code(op['name'])}",
                    ["Arm", "Shape", "Seed", "Adversarial", "Rel. L2", "Max abs", "Why"],
                    [
                        [
                            f["arm"],
                            fmt.text(_shape_label(f["shape"])),
                            str(f.get("seed")),
                            "yes" if f.get("adversarial") else "no",
                            fmt.sci(f.get("rel_l2")),
                            fmt.sci(f.get("max_abs")),
                            fmt.message(f.get("message") or ""),
                        ]
                        for f in failing
                    ],
                    numeric=(2, 4, 5),
                )
            )
    out.add(_model_level(ctx))


def _case_table(name: str, cases: list[Mapping[str, Any]], tolerances: Mapping[str, float]) -> str:
    if not cases:
        return "No correctness cases were recorded."
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for case in cases:
        groups.setdefault((case.get("arm", "?"), _shape_label(case.get("shape") or {})), []).append(case)
    rows = []
    for (arm, label), group in groups.items():
        adversarial = any(c.get("adversarial") for c in group)
        failed = sum(not c.get("passed") for c in group)
        rows.append(
            [
                fmt.text(arm),
                fmt.text(label) + (" †" if adversarial else ""),
                str(len(group)),
                fmt.sci(_worst(group, "max_abs")),
                fmt.sci(_worst(group, "rel_l2")),
                "pass" if not failed else f"**FAIL ({failed})**",
            ]
        )
    tolerance = ", ".join(f"{k} ≤ {fmt.sci(v)}" for k, v in sorted(tolerances.items()))
    return fmt.table(
        f"Worst error over seeds per arm and shape of {fmt.code(name)} (tolerance {fmt.text(tolerance)}; "
        "† adversarial shape)",
        ["Arm", "Shape", "Seeds", "Max abs error", "Rel. L2 error", "Result"],
        rows,
        numeric=(2, 3, 4),
    )


def _worst(cases: Sequence[Mapping[str, Any]], metric: str) -> float | None:
    values = [float(c[metric]) for c in cases if isinstance(c.get(metric), int | float)]
    return max(values) if values else None


def _worst_per_shape(cases: list[Mapping[str, Any]], arm: str) -> list[Mapping[str, Any]]:
    """The worst case (by relative L2) of each shape for one arm, in first-seen order."""
    worst: dict[str, Mapping[str, Any]] = {}
    for case in cases:
        if case.get("arm") != arm:
            continue
        label = _shape_label(case.get("shape") or {})
        error = case.get("rel_l2")
        error = float(error) if isinstance(error, int | float) else float("inf")
        kept = worst.get(label)
        kept_error = kept.get("rel_l2") if kept else None
        if kept is None or error > (kept_error if isinstance(kept_error, int | float) else float("inf")):
            worst[label] = {**case, "rel_l2": error}
    return list(worst.values())


def _model_level(ctx: ReportContext) -> str:
    model = ctx.evaluation.get("model_level") or {}
    if model.get("missing"):
        return f"Model-level check of the application's output: not run ({fmt.message(model['missing'])})."
    arms = model.get("arms") or {}
    if not arms:
        return "Model-level check of the application's output: no per-arm result was recorded."
    rows = [
        [
            fmt.text(arm),
            fmt.sci(r.get("rel_l2")),
            fmt.sci(r.get("max_abs")),
            "pass" if r.get("passed") else f"**FAIL** {fmt.message(r.get('message') or '')}",
        ]
        for arm, r in sorted(arms.items())
    ]
    table = fmt.table(
        "The application's output against its float64 run (model-level check)",
        ["Arm", "Rel. L2 error", "Max abs error", "Result"],
        rows,
        numeric=(1, 2),
    )
    if model.get("passed") is False:
        return (
            fmt.callout("WARNING", ["**The application's output fails its model-level check.**"])
            + "\n\n"
            + table
        )
    return table


def render_mechanism(ctx: ReportContext, out: Blocks) -> None:
    """Modelled and counted quantities, bandwidth against the roof, static code counts."""
    for op in ctx.operations:
        shapes = op.get("shapes") or []
        quantities = [q for s in shapes for q in (s.get("mechanism") or {}).get("quantities") or []]
        if quantities and not any(q["label"] == "counted" for q in quantities):
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Modelled, not counted.** Every mechanism figure of {fmt.code(op['name'])} below "
                        "comes from the study's own formulas; no hardware counter measured it on this "
                        "run, so these numbers say what the change should do, not what the hardware did."
                    ],
                )
            )
        rows = [
            [
                fmt.text(s["label"]),
                fmt.text(q["name"]),
                q["label"],
                _quantity(q["name"], q["baseline"]),
                _quantity(q["name"], q["change"]),
                fmt.ratio(q.get("ratio")),
            ]
            for s in shapes
            for q in (s.get("mechanism") or {}).get("quantities") or []
        ]
        if rows:
            out.add(
                fmt.table(
                    f"Mechanism quantities of {fmt.code(op['name'])} per call",
                    ["Shape", "Quantity", "Source", "Baseline", "Change", "Ratio"],
                    rows,
                    numeric=(3, 4, 5),
                )
            )
        else:
            out.add(f"No mechanism quantity of {fmt.code(op['name'])} was modelled or counted.")
        _bandwidth(op, shapes, out)
        _explanations(op, shapes, out)
        _static(op, out)


def _quantity(name: str, value: float) -> str:
    return fmt.data_size(value) if name == "bytes" else fmt.sig(value, 4)


def _bandwidth(op: Mapping[str, Any], shapes: list[Mapping[str, Any]], out: Blocks) -> None:
    rows, missing = [], []
    for shape in shapes:
        mech = shape.get("mechanism") or {}
        if mech.get("roof_missing"):
            missing.append(f"{fmt.message(shape['label'])}: {fmt.message(mech['roof_missing'])}")
        for b in mech.get("bandwidth") or []:
            rows.append(
                [
                    fmt.text(shape["label"]),
                    b["arm"],
                    fmt.data_size(b["bytes"]),
                    fmt.duration(b["median_ns"]),
                    fmt.bandwidth(b["bytes_per_s"]),
                    fmt.bandwidth(mech.get("roof_bytes_per_s")),
                    fmt.percent(b.get("roof_fraction")),
                ]
            )
    if rows:
        out.add(
            fmt.table(
                f"Achieved bandwidth of {fmt.code(op['name'])} (modelled bytes over median time) against the "
                "copy roof measured in the same run",
                ["Shape", "Arm", "Bytes", "Median", "Achieved", "Roof", "Of roof"],
                rows,
                numeric=(2, 3, 4, 5, 6),
            )
        )
    if missing:
        out.add("No roof: " + "; ".join(missing) + ".")
    points = [
        (f"{shape['label']} {b['arm']}", b["bytes_per_s"] / 1e9)
        for shape in shapes
        for b in (shape.get("mechanism") or {}).get("bandwidth") or []
    ]
    roofs = [
        s["mechanism"]["roof_bytes_per_s"]
        for s in shapes
        if (s.get("mechanism") or {}).get("roof_bytes_per_s")
    ]
    if points and roofs:
        roof = max(roofs)
        out.figure(
            f"roof-{op['name']}",
            figures.roofline(points, roof / 1e9),
            f"Achieved bandwidth of {fmt.code(op['name'])} per shape and arm against the highest copy roof "
            f"measured, {fmt.bandwidth(roof)} (bytes are modelled)",
        )


def _explanations(op: Mapping[str, Any], shapes: list[Mapping[str, Any]], out: Blocks) -> None:
    items, flagged = [], []
    for shape in shapes:
        e = (shape.get("mechanism") or {}).get("explanation") or {}
        if not e:
            continue
        line = f"{fmt.message(shape['label'])}: *{fmt.message(e['status'])}*: {fmt.message(e['message'])}"
        items.append(line)
        if e.get("flagged"):
            flagged.append(line)
    if items:
        out.add(f"Does the time change follow the mechanism of {fmt.code(op['name'])}?", fmt.bullets(items))
    if flagged:
        out.add(
            fmt.callout(
                "WARNING", ["**The mechanism does not explain the time change** at: " + "; ".join(flagged)]
            )
        )


def _static(op: Mapping[str, Any], out: Blocks) -> None:
    static = op.get("static") or {}
    kernels = [(arm, k) for arm in ARMS for k in static.get(arm) or []]
    if not kernels:
        out.add(f"Static code counts of {fmt.code(op['name'])}: none recorded.")
        return
    for kind, columns, what in (
        ("cuda", _STATIC_COLUMNS, "SASS (or PTX) of the CUDA kernels"),
        ("cpu", _STATIC_CPU_COLUMNS, "assembly of the CPU functions"),
    ):
        chosen = [(arm, k) for arm, k in kernels if k.get("kind") == kind]
        if not chosen:
            continue
        rows = [
            [arm, fmt.code(k["kernel"]), *(_static_cell(k["counts"], key) for key, _ in columns)]
            for arm, k in chosen
        ]
        out.add(
            fmt.table(
                f"Static counts of {fmt.code(op['name'])} read from the {what} "
                "(labelled static: compiled, not run)",
                ["Arm", "Kernel", *(title for _, title in columns)],
                rows,
                numeric=tuple(range(2, 2 + len(columns))),
            )
        )


def _static_cell(counts: Mapping[str, int], key: str) -> str:
    if key not in counts:
        return fmt.MISSING
    bits = counts.get(f"{key}_bits")
    return (
        f"{fmt.count(counts[key])} ({fmt.count(bits)} bits)" if bits is not None else fmt.count(counts[key])
    )


def render_timing(ctx: ReportContext, out: Blocks) -> None:
    """Per-shape medians, ratio, interval, verdict and MDE; distributions; quality findings."""
    ev = ctx.evaluation
    if not ctx.timings_valid:
        out.add(
            fmt.callout("WARNING", [f"**Timings are not evidence.** {fmt.message(ev.get('timings_note'))}."])
        )
    if ctx.quick:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**Smoke run.** `--quick` times few blocks of few repeats on "
                    "scaled-down shapes: wide intervals and quality findings are expected."
                ],
            )
        )
    settings = ctx.plan.get("timing") or {}
    if settings:
        shown = ", ".join(f"{fmt.text(k)} {_setting(k, v)}" for k, v in sorted(settings.items()))
        out.add(
            f"Timing settings of this run: {shown}. Each block's median is one observation; ratios are "
            f"medians of block medians (change / baseline) with {fmt.percent(ctx.level, 2)} bootstrap "
            "intervals."
        )
    for op in ctx.operations:
        _timing_table(ctx, op, out)
        panels = []
        for shape in op.get("shapes") or []:
            arms = {
                a["arm"]: a["block_medians_ns"]
                for a in shape.get("arms") or []
                if a["arm"] in ARMS and a.get("block_medians_ns")
            }
            if arms:
                scale, unit = _time_unit(max(max(v) for v in arms.values()))
                scaled = {arm: [v / scale for v in values] for arm, values in arms.items()}
                panels.append((str(shape["label"]), scaled, unit))
        if panels:
            out.figure(
                f"timing-{op['name']}",
                figures.timing_distributions(panels),
                f"Block medians of {fmt.code(op['name'])} per shape: empirical distribution "
                "per arm, n blocks each (a curve further left is faster)",
            )
    _quality(ev.get("quality") or [], out)


def _setting(name: str, value: object) -> str:
    if name in ("confidence", "threshold") and isinstance(value, int | float):
        return fmt.percent(float(value))
    return fmt.sig(value) if isinstance(value, int | float) else fmt.text(value)


def _timing_table(ctx: ReportContext, op: Mapping[str, Any], out: Blocks) -> None:
    rows, missing = [], []
    for shape in op.get("shapes") or []:
        arms = {a["arm"]: a for a in shape.get("arms") or []}
        c = shape.get("comparison")
        cells = [
            fmt.text(shape["label"]),
            fmt.sig(shape.get("weight", 0.0), 2),
            fmt.duration(arms["baseline"]["median_ns"]) if "baseline" in arms else fmt.MISSING,
            fmt.duration(arms["change"]["median_ns"]) if "change" in arms else fmt.MISSING,
        ]
        if c is None:
            missing.append(f"{fmt.message(shape['label'])}: {fmt.message(shape.get('missing'))}")
            cells += [fmt.MISSING, fmt.MISSING, "not evidence", fmt.MISSING]
        else:
            cells += [
                fmt.ratio(c["ratio"]),
                fmt.interval(c["ci_low"], c["ci_high"]),
                _verdict(c["verdict"]),
                fmt.percent(c["mde"]) + (" (underpowered)" if c.get("underpowered") else ""),
            ]
        rows.append(cells)
    combined = op.get("combined")
    if combined:
        rows.append(
            [
                "**weighted**",
                "1",
                fmt.MISSING,
                fmt.MISSING,
                f"**{fmt.ratio(combined['ratio'])}**",
                fmt.interval(combined["ci_low"], combined["ci_high"]),
                _verdict(combined["verdict"]),
                fmt.MISSING,
            ]
        )
    out.add(
        fmt.table(
            f"Kernel time of {fmt.code(op['name'])} per shape "
            "(MDE: the smallest effect these blocks could detect)",
            ["Shape", "Weight", "Baseline", "Change", "Ratio", "Interval", "Verdict", "MDE"],
            rows,
            numeric=(1, 2, 3, 4, 5, 7),
        )
    )
    if missing:
        out.add("Not evidence: " + "; ".join(missing) + ".")
    if not combined:
        out.add(f"No weighted effect: {fmt.message(op.get('combined_missing'))}.")
    if op.get("regressions"):
        out.add(
            fmt.callout(
                "WARNING",
                ["**Slower with the change** at " + ", ".join(fmt.text(s) for s in op["regressions"]) + "."],
            )
        )


def _verdict(verdict: str) -> str:
    return f"**{verdict}**" if verdict in ("slower", "inconclusive") else verdict


def _time_unit(largest_ns: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if largest_ns >= scale:
            return scale, unit
    return 1.0, "ns"


def _quality(findings: list[Mapping[str, Any]], out: Blocks) -> None:
    """Measurement-quality findings: one row per code with every subject it hit, then each error.

    A quick or noisy run raises the same warning on most arms; one row per
    code keeps that to a line a reader can take in. Errors mark a result as
    invalid, so each is also listed with its numbers. Every finding's numbers
    stay in evaluation.json.
    """
    from perfdsl.evaluate.quality import EXPLANATIONS

    if not findings:
        out.add("Measurement quality: no findings.")
        return
    grouped: dict[tuple[str, str], list[str]] = {}
    for f in findings:
        subjects = grouped.setdefault((f["code"], f["severity"]), [])
        if f["subject"] not in subjects:
            subjects.append(f["subject"])
    order = sorted(grouped, key=lambda key: (key[1] != "error", key[0]))
    rows = [
        [
            fmt.code(code),
            severity,
            fmt.text(EXPLANATIONS[code].title) if code in EXPLANATIONS else fmt.MISSING,
            fmt.message(", ".join(grouped[code, severity])),
        ]
        for code, severity in order
    ]
    out.add(
        fmt.table(
            "Measurement-quality findings, one row per code (`perfdsl explain CODE` says what each "
            "means; evaluation.json holds every finding's numbers)",
            ["Code", "Severity", "Finding", "Where"],
            rows,
        )
    )
    errors = [f for f in findings if f["severity"] == "error"]
    if errors:
        out.add(
            "Invalid results (errors):",
            fmt.bullets(
                [
                    f"{fmt.code(f['code'])} {fmt.message(f['subject'])}: {fmt.message(f['message'])}."
                    for f in errors
                ]
            ),
        )


def render_end_to_end(ctx: ReportContext, out: Blocks) -> None:
    """Request time, f, s, Amdahl's bound against measured, and the offered-load curves."""
    end = ctx.end_to_end
    if end is None:
        out.add(f"No end-to-end result: {fmt.message(ctx.evaluation.get('end_to_end_missing'))}.")
        return
    if not ctx.timings_valid:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**Timings are not evidence** on this target: the end-to-end "
                    "comparison and the load test have no verdict."
                ],
            )
        )
    app = fmt.code(end["application"])
    c = end.get("comparison")
    if c is None:
        out.add(f"Request time of {app}: not evidence ({fmt.message(end.get('comparison_missing'))}).")
    else:
        out.add(
            f"Request time of {app} at shape {fmt.text(_sizes(end.get('shape')))}: baseline median "
            f"{fmt.duration(c['baseline_dispersion']['median'])}, "
            f"change {fmt.duration(c['change_dispersion']['median'])}; "
            f"ratio {fmt.ratio(c['ratio'])} {fmt.interval(c['ci_low'], c['ci_high'])}, **{c['verdict']}** "
            f"({c['n_baseline']} and {c['n_change']} blocks; rank test p = {fmt.sig(c['rank_p_value'], 2)})."
        )
    out.add(_amdahl(end))
    _load(ctx, out)


def _amdahl(end: Mapping[str, Any]) -> str:
    a = end.get("amdahl")
    if a is None:
        return f"Amdahl's bound: not computed ({fmt.message(end.get('amdahl_missing'))})."
    rows = [
        ["f, the operation's share of baseline time", fmt.percent(a["f"]), "measured"],
        [
            "s, the operation's speedup",
            fmt.ratio(a["s"]),
            f"{fmt.interval(*a['s_ci'])}, from {fmt.text(a['s_source'])}",
        ],
        [
            "Amdahl's bound 1 / ((1 \N{MINUS SIGN} f) + f / s)",
            fmt.ratio(a["bound"]),
            "the most the application can gain",
        ],
    ]
    r = a.get("reconciliation")
    if r:
        rows.append(
            [
                "Measured end-to-end speedup",
                fmt.ratio(r["measured"]),
                f"{fmt.interval(r['measured_low'], r['measured_high'])}: {fmt.message(r['status'])}",
            ]
        )
    table = fmt.table(
        "Amdahl's bound from the measured f and s, against the measured end-to-end speedup",
        ["Quantity", "Value", "Note"],
        rows,
        numeric=(1,),
    )
    if r is None:
        return table + f"\n\nReconciliation: not possible ({fmt.message(a.get('reconciliation_missing'))})."
    note = fmt.message(r["message"]) + "."
    if r.get("flagged"):
        return table + "\n\n" + fmt.callout("WARNING", [f"**Beyond Amdahl's bound.** {note}"])
    return table + f"\n\n{note[0].upper()}{note[1:]}"


def _load(ctx: ReportContext, out: Blocks) -> None:
    load = ctx.load
    if load is None:
        out.add(f"Offered-load test: no result ({fmt.message(ctx.evaluation.get('load_missing'))}).")
        return
    slo_ms = load["slo_seconds"] * 1e3
    series: dict[str, list[tuple[float, float]]] = {}
    goodputs: dict[str, float] = {}
    rows = []
    for g in load.get("arms") or []:
        points = [(p["rate"], p["result"]["p99"] * 1e3) for p in g.get("curve") or [] if p.get("result")]
        if points:
            series[g["arm"]] = points
            if g["goodput"] > 0:
                goodputs[g["arm"]] = g["goodput"]
        rows.append(
            [
                g["arm"],
                fmt.rate(g["goodput"]),
                "yes" if g.get("confirmed") else "no (one pass)",
                str(len(g.get("curve") or [])),
            ]
        )
    out.add(
        fmt.table(
            f"Goodput: the highest offered rate whose p99 met the SLO (p99 ≤ {fmt.sig(slo_ms)} ms)",
            ["Arm", "Goodput", "Confirmed", "Probes"],
            rows,
            numeric=(1, 3),
        )
    )
    capacity = load.get("capacity")
    out.add(
        f"Capacity change at the same SLO: goodput ratio {fmt.ratio(capacity['change'])}."
        if capacity
        else f"Capacity change: not computed ({fmt.message(load.get('capacity_missing'))})."
    )
    if series:
        out.figure(
            "load",
            figures.load_curve(series, slo_ms, goodputs),
            "p99 latency against offered load (open loop, latency from the scheduled arrival), "
            "with the SLO and each arm's goodput",
        )


def _shape_label(sizes: Mapping[str, Any]) -> str:
    return "x".join(str(v) for v in sizes.values()) if sizes else "?"


def _sizes(sizes: Mapping[str, int] | None) -> str:
    return f" {fmt.TIMES} ".join(f"{k} = {v}" for k, v in (sizes or {}).items()) or "as planned"
