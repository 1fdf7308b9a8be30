"""What an evaluated bundle's kernels measured, one row per shape and arm: the numbers issue reviews ask for.

For each operation, shape and arm: the cache regime the arm ran in, its achieved
bandwidth (modelled bytes over its median block time), the roof for its own
read/write mix in that regime (and how it was formed), the fraction of that roof,
whether the figure was declared impossible, and how many warm-up calls the arm
needed before its timings settled (or that it never settled). Then each
operation's combined verdict and every quality finding. Reads the bundle's typed
records only (`perfdsl evaluate` must have run); no timing of its own.

Usage: `.venv/bin/python benchmarks/evidence_table.py BUNDLE [BUNDLE ...]`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import OperationResult, ShapeResult
from perfdsl.bundle.results import Results
from perfdsl.bundle.sampling import Warmup

_GB = 1e9
_ROOF_ARMS = ("copy", "read", "write")


def _warmups(results: Results, operation: str, label: str) -> Mapping[str, Warmup]:
    """Per arm, the warm-up record `perfdsl run` kept for this shape."""
    record = next(op for op in results.operations if op.name == operation)
    shape = next((s for s in record.shapes if s.label == label), None)
    return {w.arm: w for w in shape.warmups} if shape is not None else {}


def _warmup_text(warmup: Warmup | None) -> str:
    if warmup is None:
        return "-"
    return f"{warmup.calls}" + ("" if warmup.settled is not False else " (never settled)")


def shape_rows(op: OperationResult, shape: ShapeResult, results: Results) -> list[list[str]]:
    """One row per arm of one shape: the kernels' arms with their bandwidth, then the roof kernels."""
    warmups = _warmups(results, op.name, shape.label)
    bandwidth = {bw.arm: bw for bw in shape.mechanism.bandwidth}
    rows = []
    for arm in [*bandwidth, *(a for a in warmups if a not in bandwidth)]:
        bw, warmup = bandwidth.get(arm), _warmup_text(warmups.get(arm))
        if bw is None:
            kind = "roof kernel" if arm in _ROOF_ARMS else "no byte model"
            rows.append([op.name, shape.label, arm, "", "", "", "", "", warmup, kind])
            continue
        roof = bw.roof
        rows.append(
            [
                op.name,
                shape.label,
                arm,
                bw.regime or "-",
                f"{bw.bytes_per_s / _GB:.2f}",
                f"{roof.bytes_per_s / _GB:.2f}" if roof else "-",
                f"{bw.roof_fraction:.0%}" if bw.roof_fraction is not None else "-",
                bw.invalid or "",
                warmup,
                roof.basis if roof else (bw.roof_missing or "-"),
            ]
        )
    return rows


def table(bundle: Path) -> str:
    evaluation, results = Evaluation.read(bundle), Results.read(bundle)
    header = [
        "operation",
        "shape",
        "arm",
        "regime",
        "GB/s",
        "roof GB/s",
        "of roof",
        "invalid",
        "warm-up",
        "roof",
    ]
    rows = [header]
    for op in evaluation.operations:
        for shape in op.shapes:
            rows.extend(shape_rows(op, shape, results))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"== {evaluation.study} ({bundle.name}, target {evaluation.target}, quick {evaluation.quick})"]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for op in evaluation.operations:
        c = op.combined
        lines.append(
            f"{op.name}: {c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}] {c.verdict}"
            if c
            else f"{op.name}: no combined ratio ({op.combined_missing})"
        )
    errors = [f"error {f.code} {f.subject}: {f.message}" for f in evaluation.quality if f.severity == "error"]
    codes = Counter(f"{f.severity} {f.code}" for f in evaluation.quality if f.severity != "error")
    lines += errors or ["no error-severity finding"]
    lines.append(
        "other findings: " + (", ".join(f"{code} x{n}" for code, n in sorted(codes.items())) or "none")
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for bundle in args.bundles:
        print(table(bundle))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
