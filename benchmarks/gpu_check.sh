#!/usr/bin/env bash
# The GPU check, in one call of the device tool (see docs/gpu-results.md):
#
#   run(command="bash benchmarks/gpu_check.sh", carry=[".whl"], timeout_s=600)
#
# 1. every bundled study, resized for one call (benchmarks/gpu_table.py gpu-studies:
#    one large shape per study, each kernel >= 0.5 GB of traffic, full timing
#    settings otherwise), through `perfdsl run --target cuda`;
# 2. the fused RMSNorm against torch.nn.functional.rms_norm on the same shape;
# 3. if ncu works, one launch of every bundled kernel under ncu --clock-control none;
# 4. one table: bandwidth as a fraction of the copy roof measured in the same call,
#    correctness, launch overhead, base/change ratios, the peer and the counters;
# 5. after the table, the RMSNorm study whose change is a Triton kernel, if Triton
#    is there (the image lists triton 3.6.0), with whatever time the call has left.
#
# Each step has its own time limit, so the table still prints (from whatever
# finished) inside the tool's 10 minutes. Uses the image's python3, numba,
# numba-cuda and numpy; lark and any other pure-Python wheel travel in .whl/.
# Never changes a GPU setting. What comes back: $OUT/table.txt and the logs.
set -u
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-/tmp/gpu_check_out}"
WORK="$(mktemp -d /tmp/gpu_check.XXXXXX)"
mkdir -p "$OUT"
cd "$REPO" || exit 2
export PYTHONUNBUFFERED=1 OPENBLAS_NUM_THREADS=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 2
  export PYTHONPATH="/tmp/site:$REPO${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
fi

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,power.draw,power.limit \
    --format=csv,noheader 2>&1
  python3 -c 'import numba, numba.cuda, numpy, lark; from importlib.metadata import version as v;
print("python", __import__("sys").version.split()[0], "numba", numba.__version__,
      "numba-cuda", v("numba-cuda"), "numpy", numpy.__version__, "lark", lark.__version__)' 2>&1
  command -v ncu >/dev/null && ncu --version | tail -1
} | tee "$OUT/environment.txt"

python3 benchmarks/gpu_table.py gpu-studies --out "$WORK/studies" >/dev/null || exit 2
# Seconds per study: the two large RMSNorm and transpose shapes draw more inputs.
declare -A LIMIT=([rmsnorm_fusion]=110 [transpose_bank_conflicts]=100 \
                  [reduction_chains]=80 [reduction_launches]=80)
for study in rmsnorm_fusion transpose_bank_conflicts reduction_chains reduction_launches; do
  echo "== perfdsl run $study --target cuda (limit ${LIMIT[$study]} s)"
  timeout --signal=INT --kill-after=15 "${LIMIT[$study]}" python3 -m perfdsl run "$WORK/studies/$study.perf" \
    --target cuda --artifacts "$WORK/artifacts" 2>&1 | grep -v "  load: " | tail -n 25
done 2>&1 | tee "$OUT/runs.log"

echo "== PyTorch peer" | tee "$OUT/peer.log"
timeout 60 python3 benchmarks/gpu_table.py peer --rows 16384 --cols 8192 --out "$OUT/peer.json" \
  >>"$OUT/peer.log" 2>&1 || echo "peer failed or timed out: see peer.log" | tee -a "$OUT/peer.log"

NCU_CSV="$OUT/ncu.csv"
if command -v ncu >/dev/null; then
  echo "== ncu" | tee "$OUT/ncu.log"
  timeout 120 ncu --clock-control none --cache-control all \
    --kernel-name "regex:rmsnorm|transpose|reduce|copy_kernel" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_global_ld.sum \
    --csv --page raw --print-units base --log-file "$NCU_CSV" \
    python3 benchmarks/gpu_table.py launch-once >>"$OUT/ncu.log" 2>&1 \
    || echo "ncu failed or timed out: see ncu.log" | tee -a "$OUT/ncu.log"
else
  echo "ncu is not on the PATH: no counted evidence" | tee "$OUT/ncu.log"
fi

shopt -s nullglob
bundles=("$WORK"/artifacts/*/2*/)
tar -czf "$OUT/bundles.tar.gz" -C "$WORK" artifacts 2>/dev/null
if ((${#bundles[@]} == 0)); then
  echo "no bundle was written: see runs.log" | tee "$OUT/table.txt"
  exit 1
fi
python3 benchmarks/gpu_table.py table "${bundles[@]}" --ncu "$NCU_CSV" --peer "$OUT/peer.json" \
  2>&1 | tee "$OUT/table.txt"

# 5. After the table, so the table never waits for it: the RMSNorm study whose change
#    is a Triton kernel (kernels/triton_rmsnorm.py, bound through Variant.cuda_bind),
#    if the image's python3 has Triton; its bundle's code/ holds Triton's PTX, cubin
#    and SASS. What comes back: $OUT/foreign.log and $OUT/foreign.tar.gz.
if python3 -c "import triton, numba.cuda" >/dev/null 2>&1; then
  echo "== perfdsl run rmsnorm_triton --target cuda (limit 90 s), triton $(python3 -c 'import triton; print(triton.__version__)')" \
    | tee "$OUT/foreign.log"
  timeout --signal=INT --kill-after=15 90 python3 -m perfdsl run "$WORK/studies/rmsnorm_triton.perf" \
    --target cuda --artifacts "$WORK/foreign" 2>&1 | grep -v "  load: " | tail -n 25 | tee -a "$OUT/foreign.log"
  tar -czf "$OUT/foreign.tar.gz" -C "$WORK" foreign 2>/dev/null
else
  echo "python3 here has no Triton: the Triton study was not run" | tee "$OUT/foreign.log"
fi
