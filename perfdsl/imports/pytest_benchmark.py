"""pytest-benchmark's `--benchmark-json=FILE` output.

Layout: `machine_info` (node, processor, Python, `cpu`), `commit_info`,
`benchmarks` (one per test: `name`, `fullname`, `group`, `params`, `options`
and `stats`) and `version`. `stats` holds the statistics in seconds (min, max,
mean, stddev, median, iqr, q1, q3, ...), `rounds` and `iterations`; its
`data` list holds every round's time per iteration, in seconds, in the order
run. `--benchmark-json` always writes `data`; the files of `--benchmark-save`
have it only with `--benchmark-save-data` (pytest-benchmark 5.x), and without
it only the statistics remain. A test's rounds run back to back, and the tests
one after another: nothing is interleaved, and the rounds are one block.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Entry, ImportedEvidence, Label, Statistic, coarsest
from perfdsl.imports.reading import NS_PER_UNIT, environment_of, load_json

FORMAT = "pytest-benchmark"
_STATISTICS = ("min", "max", "mean", "median", "q1", "q3")
_ENVIRONMENT = (
    "node",
    "processor",
    "machine",
    "system",
    "release",
    "python_implementation",
    "python_version",
)


def parse_pytest_benchmark(path: Path) -> ImportedEvidence:
    """Read a pytest-benchmark JSON file: each test's rounds as one block of samples, or its statistics."""
    root, digest = load_json(path)
    machine = root.key("machine_info")
    entries = []
    for benchmark in root.key("benchmarks").items():
        stats = benchmark.key("stats")
        data = stats.optional("data")
        samples = tuple(item.duration() * NS_PER_UNIT["s"] for item in data.items()) if data else ()
        entries.append(
            Entry(
                name=(benchmark.optional("fullname") or benchmark.key("name")).string(),
                blocks=(samples,) if samples else (),
                statistics=tuple(
                    Statistic(name, stats.key(name).duration() * NS_PER_UNIT["s"]) for name in _STATISTICS
                ),
                calls_per_sample=stats.key("iterations").integer(),
            )
        )
    cpu = machine.optional("cpu")
    environment = environment_of(machine, _ENVIRONMENT) + environment_of(
        cpu, ("brand_raw", "count", "hz_actual_friendly")
    )
    version = root.optional("version")
    label = Label(
        tool="pytest-benchmark",
        tool_version=version.string() if version else None,
        granularity=coarsest(tuple(entries)),
        interleaved="no",
        environment=environment + environment_of(root, ("datetime",)),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, tuple(entries), label)
