"""Evidence from the tools teams already use: result files of other harnesses and profilers, read as records.

One module per format, each a pure parser `parse_<format>(path) -> ImportedEvidence`:

    google_benchmark   Google Benchmark JSON: repetitions as blocks, or aggregates
    pytest_benchmark   pytest-benchmark JSON: `stats.data` rounds, or its statistics
    pyperf_json        pyperf JSON: worker processes (runs) as blocks
    hyperfine          hyperfine `--export-json`: `times` of each command
    nvbench            NVBench `--json`, with `--jsonbin` raw cold samples where written
    nsys               Nsight Systems `nsys stats` CSV: `cuda_gpu_trace`, `cuda_gpu_kern_sum`
    ncu                Nsight Compute `--csv`, raw or details page: counters per launch

    evidence   the records (Entry, Label, ImportedEvidence) and ImportFormatError
    reading    JSON and CSV access whose errors name the file, the field and what was expected
    registry   the formats by name
    select     the baseline and change entries by name or pattern

Nothing here imports a harness: the files are read as the tools write them, so
the default install needs none of those tools.
"""
