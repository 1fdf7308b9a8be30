#!/usr/bin/env bash
# Regenerate the CPU-made import fixtures in tests/fixtures/imports/ with the tools themselves.
# Needs: pip install pyperf pytest-benchmark google-benchmark (the `imports-tools` extra); apt install hyperfine.
# Each tool measures the batch-norm study's pair (benchmarks/imports/workload.py): NumPy baseline, Numba change.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python}
OUT=../../tests/fixtures/imports

"$PY" pyperf_bench.py --quiet --processes 6 --values 5 --warmups 1 -o "$OUT/pyperf_batchnorm.json"

"$PY" google_bench.py --benchmark_repetitions=5 --benchmark_min_time=0.05s \
    --benchmark_format=json >"$OUT/google_benchmark_batchnorm.json"
"$PY" google_bench.py --benchmark_repetitions=5 --benchmark_min_time=0.05s \
    --benchmark_report_aggregates_only=true --benchmark_format=json \
    >"$OUT/google_benchmark_batchnorm_aggregates.json"

"$PY" -m pytest -q -p no:cacheprovider test_pytest_benchmark.py --benchmark-min-rounds=20 \
    --benchmark-max-time=0.2 --benchmark-json="$OUT/pytest_benchmark_batchnorm.json"

hyperfine --warmup 1 --runs 4 --export-json "$OUT/hyperfine_batchnorm.json" \
    --command-name numpy_passes "$PY once.py numpy_passes 500" \
    --command-name fused "$PY once.py fused 500"

# The classifier head end to end, 100 requests per process (the bundled study's application times).
hyperfine --warmup 1 --runs 8 --export-json "$OUT/hyperfine_batchnorm_head.json" \
    --command-name head_numpy_passes "$PY head_once.py numpy_passes 100" \
    --command-name head_fused "$PY head_once.py fused 100"

# The bundled imported-evidence study reads its own copies (studies/batchnorm_imported.perf),
# so that the study directory is complete on its own; tests/test_imported_study.py keeps them equal.
# ncu_batchnorm_head.csv is hand-written (no GPU): it is copied, never regenerated.
cp "$OUT/pyperf_batchnorm.json" "$OUT/google_benchmark_batchnorm.json" "$OUT/hyperfine_batchnorm_head.json" \
    "$OUT/ncu_batchnorm_head.csv" ../../studies/imported/
