"""Google Benchmark's `--benchmark_format=json` (or `--benchmark_out=... --benchmark_out_format=json`).

Layout: `context` (host, CPUs, caches, build type, library version) and
`benchmarks`, one object per reported run. A run with `run_type` `iteration`
is one repetition: `real_time` is the mean over its `iterations` calls, in
`time_unit`, so each repetition is one block holding one value (per_block).
Runs with `run_type` `aggregate` (`aggregate_name` mean, median, stddev, cv)
are the library's statistics over the repetitions; with
`--benchmark_report_aggregates_only` they are all there is. A run is grouped
under its `run_name`, which the aggregates share with their repetitions.

Google Benchmark runs each benchmark's repetitions back to back unless
`--benchmark_enable_random_interleaving` is given, and the JSON records
neither: its context has no such field, and the runs are reported grouped by
benchmark either way (checked with 1.9.5). So whether baseline and change were
interleaved is `unknown` from the file alone.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError, Label, Statistic, coarsest
from perfdsl.imports.reading import environment_of, load_json, to_ns

FORMAT = "google-benchmark"
_ENVIRONMENT = (
    "host_name",
    "executable",
    "num_cpus",
    "mhz_per_cpu",
    "cpu_scaling_enabled",
    "library_build_type",
    "date",
)
_TIME_STATISTICS = ("mean", "median")
"""Aggregates that are times; stddev is a spread and cv a ratio, neither a time of the operation."""


def parse_google_benchmark(path: Path) -> ImportedEvidence:
    """Read a Google Benchmark JSON file into per-repetition blocks (or its aggregates) per run name."""
    root, digest = load_json(path)
    context = root.key("context")
    order: list[str] = []
    repetitions: dict[str, list[tuple[float, int]]] = {}
    statistics: dict[str, list[Statistic]] = {}
    for run in root.key("benchmarks").items():
        name = (run.optional("run_name") or run.key("name")).string()
        if run.has("error_occurred") and run.key("error_occurred").value is True:
            message = run.optional("error_message")
            raise ImportFormatError(
                f"{path}: {run.where}: `{name}` reported an error "
                f"({message.value if message else 'no message'}): expected a completed run"
            )
        if name not in repetitions:
            order.append(name)
            repetitions[name], statistics[name] = [], []
        kind = run.optional("run_type")
        unit = run.key("time_unit").string()
        real_time = to_ns(run.key("real_time"), unit, f"{run.where}.time_unit")
        if kind is not None and kind.string() == "aggregate":
            aggregate = run.key("aggregate_name").string()
            if aggregate in _TIME_STATISTICS:
                statistics[name].append(Statistic(aggregate, real_time))
            continue
        if kind is not None and kind.string() != "iteration":
            raise kind.fail("`iteration` or `aggregate`")
        repetitions[name].append((real_time, run.key("iterations").integer()))
    entries = tuple(
        Entry(
            name=name,
            blocks=tuple((value,) for value, _ in repetitions[name]),
            statistics=tuple(statistics[name]),
            calls_per_sample=_common_iterations(repetitions[name]),
        )
        for name in order
    )
    version = context.optional("library_version")
    label = Label(
        tool="Google Benchmark",
        tool_version=version.string() if version else None,
        granularity=coarsest(entries),
        interleaved="unknown",
        environment=environment_of(context, _ENVIRONMENT),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, entries, label)


def _common_iterations(repetitions: list[tuple[float, int]]) -> int | None:
    counts = {iterations for _, iterations in repetitions}
    return counts.pop() if len(counts) == 1 else None
