"""NVBench's `--json FILE`, and the raw samples of `--jsonbin FILE`.

Layout: `meta` (`argv`, `version.nvbench.string`), `devices` (name,
`sm_version`, clocks, memory) and `benchmarks`, each with `states`: one per
point of its axes, named like `Device=0 Elements=2^20`. A state's `summaries`
are tagged records whose `data` items hold typed values written as strings:
`nv/cold/time/gpu/mean` is the mean of the isolated ("cold", L2 flushed)
executions in seconds, `nv/cold/sample_size` their count. With `--jsonbin`,
the tag `nv/json/bin:nv/cold/sample_times` names a sidecar file (relative to
the JSON file, `FILE-bin/N.bin`; older NVBench wrote it relative to the
working directory) of `size` little-endian float32 seconds: every cold sample.

NVBench before 0.1.0 (2021, before `meta` was written) laid the same out as
objects: `states` keyed by the state's name, and a state's `summaries` keyed by
a long name (`Average GPU Time (Cold)`), each value under `value.value`;
it had no `--jsonbin`. Both layouts are read, told apart by the file itself.

A state's samples are one block; states run one after another, so nothing is
interleaved. Skipped states (`is_skipped`) are left out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError, Label, Statistic, coarsest
from perfdsl.imports.reading import NS_PER_UNIT, Node, load_json, read_bytes

FORMAT = "nvbench"
SAMPLE_TIMES = "nv/json/bin:nv/cold/sample_times"
_STATISTICS = {
    "nv/cold/time/gpu/mean": "mean",
    "nv/cold/time/gpu/median": "median",
    "nv/cold/time/gpu/min": "min",
    "nv/cold/time/gpu/max": "max",
}
"""Cold GPU-time summaries (CUDA events around each isolated execution) and the statistic each is."""
_BEFORE_0_1 = {"Average GPU Time (Cold)": "nv/cold/time/gpu/mean"}
"""The same summaries under the long names NVBench keyed them by before 0.1.0."""


def parse_nvbench(path: Path) -> ImportedEvidence:
    """Read an NVBench JSON file: per state, the cold GPU samples from `--jsonbin`, else its statistics."""
    root, digest = load_json(path)
    entries = []
    for benchmark in root.key("benchmarks").items():
        bench_name = benchmark.key("name").string()
        for state_name, state in _states(benchmark.key("states")):
            if state.has("is_skipped") and state.key("is_skipped").value is True:
                continue
            samples, values = _measured(path, state)
            entries.append(
                Entry(
                    name=f"{bench_name} [{state_name}]",
                    blocks=(samples,) if samples else (),
                    statistics=tuple(
                        Statistic(name, values[tag].duration() * NS_PER_UNIT["s"])
                        for tag, name in _STATISTICS.items()
                        if tag in values
                    ),
                    calls_per_sample=1,
                )
            )
    meta = root.optional("meta")
    version = meta.key("version").key("nvbench").optional("string") if meta else None
    label = Label(
        tool="NVBench",
        tool_version=version.string() if version else None,
        granularity=coarsest(tuple(entries)),
        interleaved="no",
        environment=_environment(root),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, tuple(entries), label)


def _states(states: Node) -> Iterator[tuple[str, Node]]:
    """Each state with its name: an array of named states, or (before 0.1.0) an object of them."""
    if isinstance(states.value, dict):
        yield from states.members()
        return
    for state in states.items():
        yield state.key("name").string(), state


def _measured(path: Path, state: Node) -> tuple[tuple[float, ...], dict[str, Node]]:
    """A state's cold samples (from `--jsonbin`; none without it) and its summaries' values by tag."""
    summaries = state.optional("summaries")
    if summaries is None:
        return (), {}
    if isinstance(summaries.value, dict):
        values = {
            _BEFORE_0_1[name]: summary.key("value").key("value")
            for name, summary in summaries.members()
            if name in _BEFORE_0_1
        }
        return (), values
    tagged = {summary.key("tag").string(): summary for summary in summaries.items()}
    samples = _sample_times(path, tagged[SAMPLE_TIMES]) if SAMPLE_TIMES in tagged else ()
    return samples, {tag: _datum(tagged[tag], "value") for tag in _STATISTICS if tag in tagged}


def _datum(summary: Node, name: str) -> Node:
    """The `data` item called `name` of a summary, as a node for its `value`."""
    for item in summary.key("data").items():
        if item.key("name").value == name:
            return item.key("value")
    raise ImportFormatError(f"{summary.path}: {summary.where}.data: missing the item named `{name}`")


def _sample_times(path: Path, summary: Node) -> tuple[float, ...]:
    """The sidecar's float32 seconds, in ns; its byte count must match the summary's `size`."""
    filename = _datum(summary, "filename").string()
    size = _datum(summary, "size").integer()
    sidecar = Path(filename) if Path(filename).is_absolute() else path.parent / filename
    if not sidecar.exists() and Path(filename).exists():
        sidecar = Path(filename)
    data, _ = read_bytes(sidecar)
    if len(data) != 4 * size:
        raise ImportFormatError(
            f"{sidecar}: expected {size} float32 samples ({4 * size} bytes), as `size` in {path} says; "
            f"found {len(data)} bytes"
        )
    return tuple(value * NS_PER_UNIT["s"] for value in struct.unpack(f"<{size}f", data))


def _environment(root: Node) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    devices = root.optional("devices")
    for device in devices.items() if devices else ():
        prefix = f"device{device.key('id').integer()}"
        found.append((f"{prefix}.name", device.key("name").string()))
        if device.has("sm_version"):
            found.append((f"{prefix}.sm_version", str(device.key("sm_version").integer())))
    meta = root.optional("meta")
    argv = meta.optional("argv") if meta else None
    if argv is not None:
        found.append(("argv", " ".join(item.string() for item in argv.items())))
    return tuple(found)
