"""pyperf's JSON (`python bench.py -o FILE`, `pyperf ... --output`), version 1.0.

Layout: `version`, `metadata` (common to every benchmark: `name`, `unit`,
`perf_version`, `python_version`, `cpu_model_name`, `hostname`, `platform` ...)
and `benchmarks`, each with its own `metadata` and its `runs`. A run is one
worker process: `warmups` as [loops, value] pairs, then `values` in seconds
per loop, each the mean of `loops` calls (`metadata.loops`, run or benchmark
or common). Calibration runs carry warmups only and are skipped. A run is a
block: pyperf runs each process's values back to back, the processes one
after another, and one benchmark after another, so nothing is interleaved.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError, Label, coarsest
from perfdsl.imports.reading import NS_PER_UNIT, Node, environment_of, load_json

FORMAT = "pyperf"
_ENVIRONMENT = (
    "hostname",
    "platform",
    "python_version",
    "cpu_model_name",
    "cpu_count",
    "cpu_affinity",
    "boot_time",
)


def parse_pyperf(path: Path) -> ImportedEvidence:
    """Read a pyperf JSON file: each worker process's values as one block, per benchmark name."""
    root, digest = load_json(path)
    version = root.key("version").string()
    if version != "1.0":
        raise root.key("version").fail("pyperf JSON format version `1.0`")
    common = root.optional("metadata")
    entries = []
    for benchmark in root.key("benchmarks").items():
        metadata = benchmark.optional("metadata")
        name = _meta(metadata, common, "name")
        if name is None:
            raise ImportFormatError(f"{path}: {benchmark.where}.metadata: missing field `name`")
        unit = _meta(metadata, common, "unit") or "second"
        if unit != "second":
            raise ImportFormatError(
                f"{path}: {benchmark.where}.metadata.unit: expected `second` (a timing), found {unit!r}"
            )
        blocks, loops = [], set()
        for run in benchmark.key("runs").items():
            values = run.optional("values")
            if values is None:
                continue
            blocks.append(tuple(v.duration() * NS_PER_UNIT["s"] for v in values.items()))
            loops.add(_loops(run.optional("metadata"), metadata, common))
        entries.append(
            Entry(
                name=name,
                blocks=tuple(blocks),
                calls_per_sample=loops.pop() if len(loops) == 1 else None,
            )
        )
    tool_version = _meta(None, common, "perf_version")
    label = Label(
        tool="pyperf",
        tool_version=tool_version,
        granularity=coarsest(tuple(entries)),
        interleaved="no",
        environment=environment_of(common, _ENVIRONMENT),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, tuple(entries), label)


def _meta(own: Node | None, common: Node | None, key: str) -> str | None:
    """A metadata string, the benchmark's own before the file's common one."""
    for node in (own, common):
        if node is not None and node.optional(key) is not None:
            return node.key(key).string()
    return None


def _loops(*levels: Node | None) -> int | None:
    """`loops` times `inner_loops` from the most specific metadata that states them."""
    for node in levels:
        if node is not None and node.optional("loops") is not None:
            inner = node.optional("inner_loops")
            return node.key("loops").integer() * (inner.integer() if inner else 1)
    return None
