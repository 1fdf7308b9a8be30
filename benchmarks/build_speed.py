"""How fast `perfdsl build --pdf` is once the evaluation exists, and where the time goes.

Prints figures; it asserts nothing (timings belong in a report, not a test).
Target: under 5 s for a bundled study's PDF in a fresh process.

    .venv/bin/python benchmarks/build_speed.py [BUNDLE]

BUNDLE defaults to the latest evaluated bundle of rmsnorm_fusion under
artifacts/ (make one with `perfdsl run studies/rmsnorm_fusion.perf --target cpu
--quick` and `perfdsl evaluate`). The split is measured in one process after a
warm-up build (imports and font loading paid once): Markdown text, figures
(matplotlib), HTML, PDF layout and writing, run one after the other with the
collector paused as the command pauses it. The fresh-process figure is the
wall time of the command, imports included, with the figures drawn in a worker
while WeasyPrint loads, as the command does on Linux: the target is judged on
its median; the minimum shows what a quiet machine gives.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"
RUNS = 7
TARGET_S = 5.0


def _bundle(argv: list[str]) -> Path:
    from perfdsl.bundle.files import bundles

    if argv:
        return Path(argv[0])
    evaluated = [
        b for b in bundles(ROOT / "artifacts", "rmsnorm_fusion") if (b / "evaluation.json").is_file()
    ]
    if not evaluated:
        sys.exit(
            "no evaluated rmsnorm_fusion bundle under artifacts/: run "
            "`perfdsl run studies/rmsnorm_fusion.perf --target cpu --quick` and `perfdsl evaluate BUNDLE`"
        )
    return evaluated[-1]


def split(bundle: Path) -> dict[str, float]:
    """Seconds per stage of one in-process build, the collector paused as the command pauses it."""
    from perfdsl.collector import collector_paused

    with collector_paused():
        return _split(bundle)


def _split(bundle: Path) -> dict[str, float]:
    from perfdsl.bundle.evaluation.evaluation import Evaluation
    from perfdsl.bundle.opened import open_bundle
    from perfdsl.evaluate.registration import check_current
    from perfdsl.parse import parse
    from perfdsl.report.context import draw_figures
    from perfdsl.report.html import ReportMeta, render_html
    from perfdsl.report.markdown import render_markdown
    from perfdsl.report.pdf import write_pdf
    from perfdsl.source import Source

    study = parse(Source.read(STUDY)).study
    assert study is not None
    evaluation = Evaluation.read(bundle)
    start = time.perf_counter()
    markdown, drawings = render_markdown(
        study,
        evaluation,
        open_bundle(bundle),
        current=check_current(evaluation.registration.registered_hash, STUDY),
    )
    after_markdown = time.perf_counter()
    figures = draw_figures(drawings)
    after_figures = time.perf_counter()
    meta = ReportMeta(study.name.id, "benchmark", evaluation.run_id, "0" * 12, datetime.now(UTC))
    html = render_html(markdown, meta, figures, inline_figures=False)
    after_html = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        write_pdf(html, Path(scratch) / "report.pdf", figures)
    after_pdf = time.perf_counter()
    return {
        "markdown": after_markdown - start,
        "figures": after_figures - after_markdown,
        "html": after_html - after_figures,
        "pdf": after_pdf - after_html,
        "total": after_pdf - start,
    }


def fresh_process(bundle: Path) -> list[float]:
    """Wall seconds of `perfdsl build --pdf` in a fresh process, RUNS times."""
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(RUNS):
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "perfdsl",
                    "build",
                    "--pdf",
                    str(STUDY),
                    "--results",
                    str(bundle),
                    "-o",
                    str(Path(scratch) / "report.pdf"),
                ],
                check=True,
                capture_output=True,
                cwd=ROOT,
            )
            times.append(time.perf_counter() - start)
    return times


def import_seconds(module: str) -> float:
    """Seconds a fresh interpreter spends importing `module`: paid by every build, not in the split."""
    code = f"import time; start = time.perf_counter(); import {module}; print(time.perf_counter() - start)"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(done.stdout)


def main() -> None:
    bundle = _bundle(sys.argv[1:])
    print(f"bundle: {bundle}")
    split(bundle)  # warm-up: imports, fonts, matplotlib's caches
    runs = [split(bundle) for _ in range(RUNS)]
    print(f"in-process split, median of {RUNS} after a warm-up (seconds):")
    for stage in ("markdown", "figures", "html", "pdf", "total"):
        values = [run[stage] for run in runs]
        print(f"  {stage:<9} {statistics.median(values):6.2f}  (min {min(values):.2f})")
    for module in ("matplotlib.figure", "weasyprint"):
        seconds = [import_seconds(module) for _ in range(RUNS)]
        print(f"fresh import of {module}: median {statistics.median(seconds):.2f} s")
    times = fresh_process(bundle)
    verdict = "meets" if statistics.median(times) < TARGET_S else "misses"
    print(
        f"fresh process `perfdsl build --pdf`: median {statistics.median(times):.2f} s "
        f"({verdict} the {TARGET_S:.0f} s target), min {min(times):.2f} s, max {max(times):.2f} s"
    )


if __name__ == "__main__":
    main()
