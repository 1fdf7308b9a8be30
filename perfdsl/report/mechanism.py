"""The report's mechanism evidence: did the physical work change as predicted?

Modelled and counted quantities per shape (labelled which), achieved
bandwidth against the copy roof measured in the same run, whether the time
followed the bytes, and the static counts read from the compiled code. A
figure that only the study's own formulas back opens with a warning: it says
what the change should do, not what the hardware did. The warning
(`modelled_warning`) and the way a quantity is written (`quantity_value`) are
the imported study's report's too: its modelled quantities are one per
operation, not per shape, beside the counts of an imported profile.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import OperationResult, ShapeResult
from perfdsl.report import figures
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

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


def render_mechanism(ctx: ReportContext, out: Blocks) -> None:
    """Modelled and counted quantities, bandwidth against the roof, static code counts."""
    for op in ctx.operations:
        shapes = op.shapes
        quantities = [q for s in shapes for q in s.mechanism.quantities]
        if quantities and not any(q.label == "counted" for q in quantities):
            out.add(modelled_warning(op.name))
        rows = [
            [
                fmt.text(s.label),
                fmt.text(q.name),
                q.label,
                quantity_value(q.name, q.baseline),
                quantity_value(q.name, q.change),
                fmt.ratio(q.ratio),
            ]
            for s in shapes
            for q in s.mechanism.quantities
        ]
        if rows:
            out.add(
                fmt.table(
                    f"Mechanism quantities of {fmt.code(op.name)} per call",
                    ["Shape", "Quantity", "Source", "Baseline", "Change", "Ratio"],
                    rows,
                    numeric=(3, 4, 5),
                )
            )
        else:
            out.add(f"No mechanism quantity of {fmt.code(op.name)} was modelled or counted.")
        _bandwidth(op, shapes, out)
        _explanations(op, shapes, out)
        _static(op, out)


def modelled_warning(operation: str) -> str:
    """The warning over mechanism figures that only the study's formulas back."""
    return fmt.callout(
        "WARNING",
        [
            f"**Modelled, not counted.** Every mechanism figure of {fmt.code(operation)} below "
            "comes from the study's own formulas; no hardware counter measured it on this "
            "run, so these numbers say what the change should do, not what the hardware did."
        ],
    )


def quantity_value(name: str, value: float) -> str:
    """A mechanism quantity per call: bytes as a data size, any other count to four figures."""
    return fmt.data_size(value) if name == "bytes" else fmt.sig(value, 4)


def _bandwidth(op: OperationResult, shapes: Sequence[ShapeResult], out: Blocks) -> None:
    """Achieved bandwidth per shape and arm; one the measurement shows impossible is no bandwidth.

    Modelled bytes over the time that land above the measured roof mean the byte
    model is wrong: the row says so instead of printing the figure as a measured
    bandwidth, and the roofline figure leaves it out.
    """
    rows, missing, impossible, roof_rows, mixes = [], [], [], [], {}
    for shape in shapes:
        mech = shape.mechanism
        if mech.roof_missing:
            missing.append(f"{fmt.message(shape.label)}: {fmt.message(mech.roof_missing)}")
        for r in mech.roofs:
            roof_rows.append(
                [
                    fmt.text(shape.label),
                    r.arm,
                    fmt.bandwidth(r.bytes_per_s),
                    fmt.bandwidth(r.median_bytes_per_s),
                    fmt.percent(r.spread),
                    _regime(r.regime),
                ]
            )
        for b in mech.bandwidth:
            invalid = b.invalid
            if invalid:
                impossible.append(f"{fmt.message(shape.label)} {b.arm}: {fmt.message(invalid)}")
            if b.read_share is not None:
                mixes[b.arm] = (
                    f"{b.arm} {fmt.percent(b.read_share)} reads "
                    f"({fmt.message(b.read_share_source or 'not recorded')})"
                )
            if b.roof_missing:
                missing.append(f"{fmt.message(shape.label)} {b.arm}: {fmt.message(b.roof_missing)}")
            rows.append(
                [
                    fmt.text(shape.label),
                    b.arm,
                    _regime(b.regime),
                    fmt.data_size(b.bytes),
                    fmt.duration(b.median_ns),
                    "impossible (PQ006)" if invalid else fmt.bandwidth(b.bytes_per_s),
                    fmt.bandwidth(b.roof.bytes_per_s if b.roof else None),
                    "above the roof: the byte model is wrong" if invalid else fmt.percent(b.roof_fraction),
                ]
            )
    if roof_rows:
        out.add(
            fmt.table(
                f"Roofs measured with {fmt.code(op.name)}, per shape: bytes as a byte model counts "
                "them over the fastest block's median (interference only slows a block; on a CPU the "
                "write-allocate read is inside the write and copy roofs' time, as it is inside a "
                "kernel's), the median block beside it; spread: the second-fastest block against the fastest",
                ["Shape", "Roof", "Roof (fastest)", "Median", "Spread", "Regime"],
                roof_rows,
                numeric=(2, 3, 4),
            )
        )
    if rows:
        out.add(
            fmt.table(
                f"Achieved bandwidth of {fmt.code(op.name)} (modelled bytes over median time) against the "
                "roof for each arm's read/write mix, measured in the same run and in the same cache regime",
                ["Shape", "Arm", "Regime", "Bytes", "Median", "Achieved", "Roof for mix", "Of roof"],
                rows,
                numeric=(3, 4, 5, 6, 7),
            )
        )
        out.add(
            "Read/write mix: "
            + "; ".join(mixes.values())
            + ". A 1:1 mix is held to the measured copy roof; any other to the copy roof for its 1:1 "
            "part and the read or write roof for the rest, the times adding by bytes."
        )
    if missing:
        out.add("Not compared with a roof: " + "; ".join(missing) + ".")
    if impossible:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**Byte model not the traffic timed**: modelled bytes over the measured time exceed the "
                    "roof measured in the same run, so a cache served some of them or the model is wrong; "
                    "these are no bandwidths and every prediction built on the byte model is invalid: "
                    + "; ".join(impossible)
                ],
            )
        )
    points = [
        (f"{shape.label} {b.arm}", b.bytes_per_s / 1e9)
        for shape in shapes
        for b in shape.mechanism.bandwidth
        if not b.invalid
    ]
    roofs = [s.mechanism.roof_bytes_per_s for s in shapes if s.mechanism.roof_bytes_per_s]
    if points and roofs:
        roof = max(roofs)
        out.figure(
            f"roof-{op.name}",
            functools.partial(figures.roofline, points, roof / 1e9),
            f"Achieved bandwidth of {fmt.code(op.name)} per shape and arm against the highest copy roof "
            f"measured, {fmt.bandwidth(roof)} (bytes are modelled)",
        )


def _regime(regime: object) -> str:
    """The cache regime in words: where the arm's rotated working set ran."""
    return {"dram": "DRAM", "cache": "cache-resident", "mixed": "DRAM, scratch in cache"}.get(
        str(regime), "not recorded"
    )


def _explanations(op: OperationResult, shapes: Sequence[ShapeResult], out: Blocks) -> None:
    items, flagged = [], []
    for shape in shapes:
        e = shape.mechanism.explanation
        line = f"{fmt.message(shape.label)}: **{fmt.message(e.status)}**: {fmt.message(e.message)}"
        items.append(line)
        if e.flagged:
            flagged.append(line)
    if items:
        out.add(f"Does the time change follow the mechanism of {fmt.code(op.name)}?", fmt.bullets(items))
    if flagged:
        out.add(
            fmt.callout(
                "WARNING", ["**The mechanism does not explain the time change** at: " + "; ".join(flagged)]
            )
        )


def _static(op: OperationResult, out: Blocks) -> None:
    kernels = [(arm, k) for arm in ARMS for k in op.static.get(arm, ())]
    if not kernels:
        out.add(f"Static code counts of {fmt.code(op.name)}: none recorded.")
        return
    for kind, columns, what in (
        (
            "cuda",
            _STATIC_COLUMNS,
            "SASS (or PTX) of the CUDA kernels; shared bytes per block as the cubin allocates "
            "them, including the 1 KiB sm_90 reserves in a kernel that uses any",
        ),
        ("cpu", _STATIC_CPU_COLUMNS, "assembly of the CPU functions"),
    ):
        chosen = [(arm, k) for arm, k in kernels if k.kind == kind]
        if not chosen:
            continue
        rows = [
            [arm, fmt.code(k.kernel), *(_static_cell(k.counts, key) for key, _ in columns)]
            for arm, k in chosen
        ]
        out.add(
            fmt.table(
                f"Static counts of {fmt.code(op.name)} read from the {what} "
                "(labelled static: compiled, not run)",
                ["Arm", "Kernel", *(title for _, title in columns)],
                rows,
                numeric=tuple(range(2, 2 + len(columns))),
            )
        )
    for arm, k in kernels:
        if k.missing:
            out.add(f"No static counts for the {arm}'s {fmt.code(k.kernel)}: {fmt.message(k.missing)}.")


def _static_cell(counts: Mapping[str, int], key: str) -> str:
    if key not in counts:
        return fmt.MISSING
    bits = counts.get(f"{key}_bits")
    return (
        f"{fmt.count(counts[key])} ({fmt.count(bits)} bits)" if bits is not None else fmt.count(counts[key])
    )
