"""The GPU check's helper: one table from the bundles of one call, a PyTorch peer, an ncu driver.

Three subcommands, all run by benchmarks/gpu_check.sh:

* `table BUNDLE... [--ncu CSV] [--peer JSON]`: per operation, shape and arm,
  the median time (median of block medians), the achieved bandwidth from the
  study's modelled bytes, its fraction of the copy roof measured in the same
  sampler call (same shape, interleaved), correctness, baseline/change, and the
  launch overhead (the `(empty)` arm); then the ncu counters and the PyTorch
  peer, if given. It reads only bundle files, so it runs on any machine.
* `peer --rows M --cols N`: the fused RMSNorm kernel against PyTorch's
  `torch.nn.functional.rms_norm` on the same shape, in interleaved blocks, each
  call between CUDA events after an L2 flush; writes JSON.
* `launch-once`: launches every bundled CUDA kernel once at a GPU-sized shape,
  for ncu to profile one launch per kernel.
* `gpu-studies --out DIR`: the bundled studies resized for one GPU call.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
LAUNCH_BOUND_S = 100e-6
"""Below this a kernel's time is mostly its launch (Numba's costs 5-10 us): flagged, not judged."""
NCU_METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
)


# table


def block_medians(rows: Sequence[dict[str, str]]) -> dict[str, float]:
    """Each arm's median of block medians, in seconds, over valid samples."""
    blocks: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        if row["valid"] == "1":
            blocks.setdefault((row["arm"], row["block"]), []).append(int(row["duration_ns"]))
    per_arm: dict[str, list[float]] = {}
    for (arm, _), durations in blocks.items():
        per_arm.setdefault(arm, []).append(statistics.median(durations))
    return {arm: statistics.median(values) / 1e9 for arm, values in per_arm.items()}


def _arm_passed(operation: dict[str, Any], arm: str) -> str:
    cases = [c for c in operation["correctness"]["cases"] if c["arm"] == arm]
    failed = [c for c in cases if not c["passed"]]
    if not cases:
        return "-"
    return "ok" if not failed else f"FAIL {failed[0]['shape']} seed {failed[0]['seed']}"


def bundle_rows(bundle: Path) -> list[dict[str, Any]]:
    """One row per operation, shape and arm of a bundle (and one per shape for the copy roof)."""
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    itemsize = ITEMSIZE.get(results["dtype"], 4)
    rows = []
    for operation in results["operations"]:
        for shape in operation["shapes"]:
            base = {
                "study": results["study"],
                "op": operation["name"],
                "shape": shape["label"],
                "valid": results["timings_valid"],
            }
            if shape.get("samples") is None:
                rows.append({**base, "arm": "-", "note": shape.get("samples_missing", "not timed")})
                continue
            with open(bundle / shape["samples"], newline="", encoding="utf-8") as handle:
                medians = block_medians(list(csv.DictReader(handle)))
            roof_bytes = 2 * itemsize * math.prod(shape["sizes"].values())
            roof_bw = roof_bytes / medians["copy"] if "copy" in medians else None
            modelled = shape.get("models", {}).get("bytes", {})
            for arm in ("baseline", "change"):
                seconds = medians.get(arm)
                bandwidth = modelled[arm] / seconds if seconds and arm in modelled else None
                rows.append(
                    {
                        **base,
                        "arm": f"{arm}:{operation['variants'][arm]}",
                        "seconds": seconds,
                        "gbps": bandwidth / 1e9 if bandwidth else None,
                        "roof": bandwidth / roof_bw if bandwidth and roof_bw else None,
                        "correct": _arm_passed(operation, arm),
                        "speedup": (
                            medians["baseline"] / medians["change"]
                            if arm == "change" and {"baseline", "change"} <= set(medians)
                            else None
                        ),
                        "note": "launch-bound" if seconds and seconds < LAUNCH_BOUND_S else "",
                    }
                )
            empty = medians.get("(empty)")
            rows.append(
                {
                    **base,
                    "arm": "copy (roof)",
                    "seconds": medians.get("copy"),
                    "gbps": roof_bw / 1e9 if roof_bw else None,
                    "roof": 1.0 if roof_bw else None,
                    "correct": "",
                    "speedup": None,
                    "note": f"launch overhead (empty) {empty * 1e6:.1f} us" if empty else "",
                }
            )
    return rows


def _fmt(value: Any, spec: str) -> str:
    """`value` formatted to `spec` (width first), or a dash of the same width."""
    return format(value, spec) if value is not None else "-".rjust(int(spec.split(".")[0]))


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    header = (
        f"{'study':<26}{'op':<11}{'shape':<13}{'arm':<28}{'time us':>10}{'GB/s':>9}"
        f"{'of roof':>9}{'base/chg':>9}  {'correct':<8}note"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['study']:<26}{r['op']:<11}{r['shape']:<13}{r['arm']:<28}"
            f"{_fmt(r.get('seconds') and r['seconds'] * 1e6, '10.1f')}{_fmt(r.get('gbps'), '9.1f')}"
            f"{_fmt(r.get('roof'), '9.3f')}{_fmt(r.get('speedup'), '9.3f')}  "
            f"{r.get('correct') or '-':<8}{r.get('note', '')}"
        )


def kernel_name(demangled: str) -> str:
    """The Python function name inside Numba's mangled or demangled kernel name."""
    match = re.search(r"(\w+)\[abi", demangled) or re.search(r"::(\w+)\(", demangled)
    if match:
        return match.group(1)
    match = re.search(r"\d+(\w+?_kernel)", demangled)
    return match.group(1) if match else demangled[:40]


def print_ncu(path: Path) -> None:
    """ncu's `--csv --page raw` log: one row per profiled launch (header, units, then rows)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    start = text.find('"ID"')
    if start < 0:
        print(f"ncu: no counter rows in {path} (see its log above)")
        return
    rows = list(csv.DictReader(text[start:].splitlines()))[1:]  # the first row is units
    metrics = [m for m in NCU_METRICS if rows and m in rows[0]]
    print(f"\nncu counters (counted, --clock-control none, one launch per kernel): {len(rows)} launches")
    print(f"{'kernel':<34}" + "".join(f"{m.split('__')[1][:26]:>28}" for m in metrics))
    for row in rows:
        print(
            f"{kernel_name(row.get('Kernel Name', '?')):<34}"
            + "".join(f"{row.get(m, '-'):>28}" for m in metrics)
        )


def print_peer(path: Path) -> None:
    peer = json.loads(path.read_text(encoding="utf-8"))
    if "skipped" in peer:
        print(f"\nPyTorch peer: skipped: {peer['skipped']}")
        return
    ratio = peer["numba_s"] / peer["torch_s"]
    print(
        f"\nPyTorch peer at {peer['shape']}: numba fused {peer['numba_s'] * 1e6:.1f} us, "
        f"torch.nn.functional.rms_norm {peer['torch_s'] * 1e6:.1f} us (torch {peer['torch']}): "
        f"numba/torch {ratio:.3f} (goal <= 1.25); max |diff| {peer['max_abs_diff']:.3g}"
    )


def table(args: argparse.Namespace) -> int:
    rows = [row for bundle in args.bundles for row in bundle_rows(Path(bundle))]
    print_table(rows)
    if args.ncu and Path(args.ncu).is_file():
        print_ncu(Path(args.ncu))
    if args.peer and Path(args.peer).is_file():
        print_peer(Path(args.peer))
    return 0


# peer


def peer(args: argparse.Namespace) -> int:
    """Fused RMSNorm (Numba) against torch's rms_norm on one shape, interleaved, events, L2 flushed."""
    out = Path(args.out)
    try:
        import torch
        import torch.nn.functional as functional
    except ImportError as error:
        out.write_text(json.dumps({"skipped": f"no torch: {error}"}))
        return 0
    if not hasattr(functional, "rms_norm"):
        out.write_text(json.dumps({"skipped": f"torch {torch.__version__} has no rms_norm"}))
        return 0
    import numpy as np
    from numba import cuda

    from kernels import rmsnorm

    m, n = args.rows, args.cols
    rng = np.random.default_rng(0)
    x_host = rng.standard_normal((m, n), dtype=np.float32)
    w_host = rng.uniform(0.5, 1.5, n).astype(np.float32)
    device = torch.device("cuda")
    x_t, w_t = torch.from_numpy(x_host).to(device), torch.from_numpy(w_host).to(device)
    stream = torch.cuda.current_stream()
    nb_stream = cuda.external_stream(stream.cuda_stream)
    x_nb, w_nb = cuda.to_device(x_host, stream=nb_stream), cuda.to_device(w_host, stream=nb_stream)
    y_nb = cuda.device_array((m, n), np.float32, stream=nb_stream)
    flush = torch.empty(
        2 * torch.cuda.get_device_properties(device).L2_cache_size, dtype=torch.uint8, device=device
    )
    eps = float(rmsnorm.EPS)
    arms = {
        "numba": lambda: rmsnorm.fused.cuda(nb_stream, x=x_nb, w=w_nb, y=y_nb),
        "torch": lambda: functional.rms_norm(x_t, (n,), w_t, eps),
    }

    def timed(call: Any) -> float:
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        call()
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    for call in arms.values():
        for _ in range(10):
            timed(call)
    blocks: dict[str, list[float]] = {name: [] for name in arms}
    order = list(arms)
    for round_ in range(args.blocks):
        for name in order if round_ % 2 == 0 else reversed(order):
            blocks[name].append(statistics.median(timed(arms[name]) for _ in range(args.repeats)))
    torch.cuda.synchronize()
    diff = float((torch.from_numpy(y_nb.copy_to_host()).to(device) - arms["torch"]()).abs().max())
    result = {
        "shape": f"{m}x{n}",
        "torch": torch.__version__,
        "max_abs_diff": diff,
        "numba_s": statistics.median(blocks["numba"]),
        "torch_s": statistics.median(blocks["torch"]),
        "blocks": blocks,
    }
    out.write_text(json.dumps(result, indent=1))
    print_peer(out)
    return 0


# gpu-studies

LOAD = r"requests \d+; load \w+ \S+ step \d+ rps"
GPU_STUDIES: dict[str, dict[str, str]] = {
    # study -> {regex of a line: its replacement}. One large shape per study, sized so
    # each kernel moves at least 0.5 GB (>= 100 us on an H200), and the study's
    # smallest shape, weighted heaviest, so the application runs at a small
    # operating point and the whole check fits in one call; two seeds; two buffer
    # sets (the L2 is flushed before every call anyway); a load sweep of two rates.
    "rmsnorm_fusion": {
        r"shapes +\(M, N\) in .*": "shapes    (M, N) in [(64, 4096), (16384, 8192)]",
        r"weights +\[.*": "weights   [0.6, 0.4]",
        r"rotate 4": "rotate 2",
        LOAD: "requests 500; load poisson 400..800 step 400 rps",
    },
    # The same operation with the change written in Triton (kernels/triton_rmsnorm.py).
    "rmsnorm_triton": {
        r"shapes +\(M, N\) in .*": "shapes    (M, N) in [(64, 4096), (16384, 8192)]",
        r"weights +\[.*": "weights   [0.6, 0.4]",
        r"rotate 4": "rotate 2",
        LOAD: "requests 500; load poisson 400..800 step 400 rps",
    },
    "transpose_bank_conflicts": {
        r"shapes +\(R, C\) in .*": "shapes    (R, C) in [(1024, 1024), (8192, 8192)]",
        r"weights +\[.*": "weights   [0.6, 0.4]",
        r"rotate 8": "rotate 2",
        LOAD: "requests 500; load uniform 1000..2000 step 1000 rps",
    },
    "reduction_chains": {
        r"shapes +N in .*": "shapes    N in [65536, 134217728]",
        r"weights +\[.*": "weights   [0.6, 0.4]",
        r"rotate 4": "rotate 2",
        LOAD: "requests 500; load poisson 2000..4000 step 2000 rps",
    },
    "reduction_launches": {
        r"shapes +N in .*": "shapes    N in [4096, 134217728]",
        r"weights +\[.*": "weights   [0.6, 0.4]",
        r"rotate 4": "rotate 2",
        LOAD: "requests 500; load poisson 2000..4000 step 2000 rps",
    },
}
GPU_SEEDS = "seeds 2"


def gpu_studies(args: argparse.Namespace) -> int:
    """Write the bundled studies, resized for one GPU call, into `args.out`."""
    studies, out = Path(args.studies), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, edits in GPU_STUDIES.items():
        text = (studies / f"{name}.perf").read_text(encoding="utf-8")
        for pattern, replacement in {**edits, r"seeds \d+": GPU_SEEDS}.items():
            text, count = re.subn(pattern, replacement, text, count=1)
            if count != 1:
                raise SystemExit(f"{name}.perf: no line matches `{pattern}`: update GPU_STUDIES")
        (out / f"{name}.perf").write_text(text, encoding="utf-8")
        print(out / f"{name}.perf")
    return 0


# launch-once


def launch_once(args: argparse.Namespace) -> int:
    """Every bundled CUDA variant once, for ncu: GPU-sized shapes, inputs drawn by each reference."""
    import numpy as np
    from numba import cuda

    from kernels import copy, reduction, rmsnorm, transpose

    cases = (
        (rmsnorm, (rmsnorm.unfused, rmsnorm.fused), {"M": 16384, "N": 8192}),
        (transpose, (transpose.naive, transpose.tiled, transpose.padded), {"R": 8192, "C": 8192}),
        (
            reduction,
            (reduction.multi_launch, reduction.single_launch, reduction.one_accumulator),
            {"N": 1 << 27},
        ),
        (copy, (copy.copy,), {"N": 1 << 27}),
    )
    stream = cuda.stream()
    for module, variants, shape in cases:
        host = module.reference.inputs(shape, np.random.default_rng(0), np.float32)
        inputs = {k: cuda.to_device(v, stream=stream) for k, v in host.items()}
        for variant in variants:
            outputs = {
                k: cuda.device_array(s, np.float32, stream=stream)
                for k, s in module.reference.outputs(shape).items()
            }
            variant.cuda(stream, **inputs, **outputs)
            stream.synchronize()
            print(f"launched {variant.name} at {shape}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    t = commands.add_parser("table", help="print the table from bundles")
    t.add_argument("bundles", nargs="+")
    t.add_argument("--ncu", help="ncu --csv --page raw log")
    t.add_argument("--peer", help="JSON written by `peer`")
    p = commands.add_parser("peer", help="fused RMSNorm against torch rms_norm")
    p.add_argument("--rows", type=int, default=16384)
    p.add_argument("--cols", type=int, default=8192)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--out", default="peer.json")
    commands.add_parser("launch-once", help="launch every bundled CUDA kernel once (for ncu)")
    g = commands.add_parser("gpu-studies", help="write the bundled studies resized for one GPU call")
    g.add_argument("--studies", default=str(Path(__file__).resolve().parent.parent / "studies"))
    g.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    handlers = {"table": table, "peer": peer, "launch-once": launch_once, "gpu-studies": gpu_studies}
    return handlers[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
