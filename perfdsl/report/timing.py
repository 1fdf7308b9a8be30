"""The report's kernel timing: per shape ratios with intervals and verdicts, and their quality.

Timings taken under the simulator, or in a smoke run, open with a warning.
One figure per operation shows each shape's block medians as distributions;
the measurement-quality findings close the section, one row per code.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import ArmContention, Comparison, Finding, OperationResult
from perfdsl.ranges import format_ranges
from perfdsl.report import figures, stopping
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext, shrunk_by


def render_timing(ctx: ReportContext, out: Blocks) -> None:
    """Per-shape medians, ratio, interval, verdict and MDE; distributions; quality findings."""
    ev = ctx.evaluation
    if not ctx.timings_valid:
        out.add(fmt.callout("WARNING", [f"**Timings are not evidence.** {fmt.sentence(ev.timings_note)}."]))
    if ctx.quick:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    f"**Smoke run.** {shrunk_by(ctx).capitalize()} times few blocks of few repeats on "
                    "scaled-down shapes: wide intervals and quality findings are expected."
                ],
            )
        )
    settings = ctx.plan.timing.to_json()
    # Each rule's own counts: the fixed count, or the sequential window.
    for key in ("blocks",) if ctx.plan.timing.stopping else ("min_blocks", "max_blocks"):
        settings.pop(key, None)
    # The stopping rule's sentence says what these do.
    settings.pop("family", None)
    settings.pop("winsorized", None)
    shown = ", ".join(f"{fmt.text(k)} {_setting(k, v)}" for k, v in sorted(settings.items()))
    out.add(f"Timing settings of this run: {shown}. {_estimator(ctx)}")
    out.add(stopping.rule_sentence(ctx.plan.timing, stopping.held_open(ctx.plan)))
    cores = _where_kernels_ran(ctx)
    if cores:
        out.add(cores)
    for op in ctx.operations:
        _timing_table(ctx, op, out)
        stops = stopping.stop_lines(op)
        if stops:
            out.add(f"When and why each shape of {fmt.code(op.name)} stopped: " + "; ".join(stops) + ".")
        _steady_state(ctx, op, out)
        panels = []
        for shape in op.shapes:
            arms = {a.arm: a.block_medians_ns for a in shape.arms if a.arm in ARMS and a.block_medians_ns}
            if arms:
                scale, unit = _time_unit(max(max(v) for v in arms.values()))
                scaled = {arm: [v / scale for v in values] for arm, values in arms.items()}
                panels.append((str(shape.label), scaled, unit))
        if panels:
            out.figure(
                f"timing-{op.name}",
                functools.partial(figures.timing_distributions, panels),
                f"Block medians of {fmt.code(op.name)} per shape: empirical distribution "
                "per arm, n blocks each (a curve further left is faster)",
            )
    _quality(ev.quality, out)


def _where_kernels_ran(ctx: ReportContext) -> str | None:
    """Which cores the kernels were timed on, where the run pinned them to fewer than it could use.

    The measuring workers keep the cores apart from the load generator's for the
    whole run, the kernels' timing included: on a two-core machine a kernel's
    parallel loops then have one core. That halved a `parallel=True` kernel's
    speed, and no page said so (the cores were in environment.json alone).
    """
    environment = ctx.environment
    machine = environment.machine if environment else None
    usable = environment.usable_cores if environment else None
    if machine is None or usable is None or not ctx.operations or not 0 < len(machine.measuring) < usable:
        return None
    n = len(machine.measuring)
    on = f"CPU {format_ranges(machine.measuring)}, {n} of the {usable} cores the run could use"
    generator = (
        f" (the load generator kept CPU {format_ranges(machine.generator)})" if machine.generator else ""
    )
    those = "that core" if n == 1 else f"those {n} cores"
    return (
        f"The kernels ran pinned to {on}{generator}: a kernel's parallel loops ran on {those} only, "
        "and its times, like the roofs measured beside them, are those of that many cores "
        "(`perfdsl run --no-pin` leaves every core to them). Pinning keeps the run's own work "
        "apart; other processes may still share the cores, which the steady-state table says."
    )


def _setting(name: str, value: object) -> str:
    if name in ("confidence", "threshold") and isinstance(value, int | float):
        return fmt.percent(float(value))
    return fmt.sig(value) if isinstance(value, int | float) else fmt.text(value)


def _mde(c: Comparison) -> str:
    """The MDE, tagged underpowered only beside a verdict its interval left open.

    A verdict of faster, slower or no meaningful change rests on where the whole
    interval lies, whatever the design's power: "8.91% (underpowered)" beside a
    shape decided twice as fast read as if that verdict were in doubt.
    """
    underpowered = c.underpowered and c.verdict == "inconclusive"
    return fmt.percent(c.mde) + (" (underpowered)" if underpowered else "")


def _estimator(ctx: ReportContext) -> str:
    """What a shape's ratio is, as the evaluation computes it: the paired blocks' geometric mean."""
    level = fmt.percent(ctx.interval_level, 4)
    timing = ctx.plan.timing
    if timing.stopping is None:
        return (
            "Each block's median is one observation; a shape's ratio is the geometric mean of its "
            "paired blocks' ratios (change / baseline, the ratio of the arms' geometric-mean block "
            f"medians), with {level} bootstrap intervals; an operation's total weighs the shapes "
            "by their share of the baseline's time."
        )
    clipped = " after clipping each look's outlying pairs" if timing.winsorized else ""
    return (
        "Each block's median is one observation; a shape's ratio is the geometric mean of its "
        f"paired blocks' ratios (change / baseline) up to where it stopped{clipped}, with {level} "
        "anytime-valid (confidence sequence) intervals; an operation's total mixes the shapes' "
        "ratios and intervals by their share of the baseline's time."
    )


def _timing_table(ctx: ReportContext, op: OperationResult, out: Blocks) -> None:
    rows, missing, excluded, unconfirmed = [], [], [], []
    for shape in op.shapes:
        arms = {a.arm: a for a in shape.arms}
        c = shape.comparison
        cells = [
            fmt.text(shape.label),
            fmt.sig(shape.weight, 2),
            fmt.duration(arms["baseline"].median_ns) if "baseline" in arms else fmt.MISSING,
            fmt.duration(arms["change"].median_ns) if "change" in arms else fmt.MISSING,
        ]
        if c is None:
            missing.append(f"{fmt.message(shape.label)}: {fmt.message(shape.missing)}")
            cells += [fmt.MISSING, fmt.MISSING, "not evidence", fmt.MISSING]
        else:
            invalid = shape.invalid
            if invalid:
                excluded.append(f"{fmt.message(shape.label)}: {fmt.message(invalid)}")
            disagreement = fmt.rank_disagreement(fmt.text(shape.label), c)
            if disagreement and not invalid:
                unconfirmed.append(disagreement)
            cells += [
                fmt.ratio(c.ratio),
                fmt.interval(c.ci_low, c.ci_high),
                "**invalid**" if invalid else _verdict(c.verdict),
                _mde(c),
            ]
        rows.append(cells)
    combined = op.combined
    if combined:
        rows.append(
            [
                "**weighted total time**",
                "1",
                fmt.MISSING,
                fmt.MISSING,
                f"**{fmt.ratio(combined.ratio)}**",
                fmt.interval(combined.ci_low, combined.ci_high),
                _verdict(combined.verdict),
                fmt.MISSING,
            ]
        )
    out.add(
        fmt.table(
            f"Kernel time of {fmt.code(op.name)} per shape "
            "(MDE: the smallest effect these blocks could detect)",
            ["Shape", "Weight", "Baseline", "Change", "Ratio", "Interval", "Verdict", "MDE"],
            rows,
            numeric=(1, 2, 3, 4, 5, 7),
        )
    )
    if missing:
        out.add("Not evidence: " + "; ".join(missing) + ".")
    if unconfirmed:
        out.add(fmt.RANK_CROSS_CHECK + "; ".join(unconfirmed) + ".")
    if excluded:
        out.add(
            "Invalid, and left out of the weighted ratio, Amdahl's s, the predictions, the mechanism, "
            "value and the decision: " + "; ".join(excluded) + "."
        )
    if not combined:
        out.add(f"No weighted effect: {fmt.message(op.combined_missing)}.")
    if op.regressions:
        out.add(
            fmt.callout(
                "WARNING",
                ["**Slower with the change** at " + ", ".join(fmt.text(s) for s in op.regressions) + "."],
            )
        )


def _steady_state(ctx: ReportContext, op: OperationResult, out: Blocks) -> None:
    """Per shape and arm: how long the warm-up ran and whether it settled, the cache regime,
    what the buffers cost, and how many blocks competed with other work."""
    record = ctx.results.operation(op.name)
    if record is None:
        return
    rows = []
    evaluated = {s.label: s for s in (*op.shapes, *op.limits)}
    for shape in record.shapes:
        warm = {w.arm: w for w in shape.warmups}
        result = evaluated.get(shape.label)
        busy = {c.arm: c for c in result.contention} if result is not None else {}
        for arm, regime in shape.regimes.items():
            w = warm.get(arm)
            settled = None if w is None else w.settled
            calls = None if w is None else w.calls
            note = " (settled)" if settled is True else " (**never settled**)" if settled is False else ""
            arm_busy = busy.get(arm)
            rows.append(
                [
                    # A limit's shape is timed like the workload's, and judged in the limitations.
                    fmt.text(shape.label) + (" (limit)" if shape.limit else ""),
                    arm,
                    f"{fmt.MISSING if calls is None else calls}{note}",
                    {"dram": "DRAM", "cache": "cache-resident", "mixed": "DRAM, scratch in cache"}.get(
                        regime, fmt.text(regime)
                    ),
                    fmt.data_size(shape.buffer_bytes.get(arm, 0)),
                    _contended_cell(arm_busy) if arm_busy else fmt.MISSING,
                ]
            )
    if not rows:
        return
    # Said only where the run did it (results/14), so that an older bundle's page is unchanged.
    turns = any(count > 1 for shape in record.shapes for count in shape.allocations.values())
    out.add(
        fmt.table(
            f"Steady state and machine of {fmt.code(op.name)}: warm-up calls until the medians of two "
            "consecutive windows of 5 calls agreed within 5% (or the cap), the cache regime of the rotated "
            "working set, the buffers' memory"
            + (" (each arm's own; baseline and change took turns on both, block by block)" if turns else "")
            + ", and the blocks that competed with other work",
            ["Shape", "Arm", "Warm-up calls", "Regime", "Buffers", "Contended blocks"],
            rows,
            numeric=(4,),
        )
    )
    contended = ctx.evaluation.contended
    if contended.verdicts_rest_on_contended:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    # Counted as page 1 counts them: "68 of 80" beside page 1's "68 of the 68 whose
                    # load could be read (12 more too short)" read as 12 quiet blocks.
                    f"**The machine was busy.** {contended.contended} of the "
                    f"{contended.blocks - contended.unresolved} blocks whose load could be read "
                    f"competed with other work (PQ009){unread_blocks(contended.unresolved)}, among them "
                    "baseline or change blocks of shapes with a verdict: "
                    + ", ".join(fmt.text(s) for s in contended.shapes)
                    + "."
                ],
            )
        )


def unread_blocks(unresolved: int) -> str:
    """The clause for blocks too short to read the machine's load across, as every count of busy
    blocks says it (page 1 and this section counted them two ways)."""
    return f" ({unresolved} more were too short for the clock's tick to tell)" if unresolved else ""


def _contended_cell(busy: ArmContention) -> str:
    """`1 of 6`, and how many of them were too short to read: a quick run's blocks last
    milliseconds, under the 10 ms tick, and "0 of 6" would call them quiet."""
    if busy.unresolved >= busy.read:
        return f"not read: {busy.read} blocks too short for the 10 ms tick"
    short = f" ({busy.unresolved} too short to read)" if busy.unresolved else ""
    return f"{busy.contended} of {busy.read}{short}"


def _verdict(verdict: str) -> str:
    return f"**{verdict}**" if verdict in ("slower", "inconclusive") else verdict


def _time_unit(largest_ns: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if largest_ns >= scale:
            return scale, unit
    return 1.0, "ns"


def _quality(findings: Sequence[Finding], out: Blocks) -> None:
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
        subjects = grouped.setdefault((f.code, f.severity), [])
        if f.subject not in subjects:
            subjects.append(f.subject)
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
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        out.add(
            "Invalid results (errors):",
            fmt.bullets(
                [f"{fmt.code(f.code)} {fmt.message(f.subject)}: {fmt.message(f.message)}." for f in errors]
            ),
        )
