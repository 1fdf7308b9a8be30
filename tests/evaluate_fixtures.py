"""Synthetic bundles with planted answers, for the evaluation tests.

`make_bundle` writes a real bundle (through BundleWriter, so it verifies) whose
samples are drawn from known distributions: the change's kernel time is
`kernel_ratio` x the baseline's, the application's `app_ratio` x, the
operation's share of the baseline application is `share`, and the load probes'
latencies pass below a known rate per arm. Everything is seeded.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.load import PROBE_COLUMNS
from perfdsl.bundle.sampling import SAMPLE_COLUMNS
from perfdsl.parse import parse
from perfdsl.plan import plan, predict_section_hash
from perfdsl.source import Source

STUDY = """study planted {{
  title    "A planted effect"
  decision {decision}
  workload {{
    summary   "two shapes"
    shapes    (M, N) in [(64, 4096), (256, 1024)]
    weights   [0.75, 0.25]
    dtype     float32
    targets   cpu
    objective p99 latency <= 25 ms at 400 rps
    correct   rel_l2 <= 1e-5 vs float64
  }}
  operation op {{
    baseline  kernels.rmsnorm:unfused
    change    kernels.rmsnorm:fused
    reference kernels.rmsnorm:reference
    bytes     baseline 4*(5*M*N), change 4*(2*M*N)
    launches  baseline 3, change 1
  }}
  application app {{
    entry kernels.apps:decoder_step
    uses  op
    share {declared_share}
  }}
  change {{
    mechanism bytes_removed
    summary   "fewer bytes"
  }}
  predict {{
{predictions}
  }}
{sections}  evidence timing      {{ warmup 10; repeats 5; blocks 20; rotate 4; confidence 95%; threshold 2% }}
  evidence end_to_end  {{ requests 500; load poisson 100..800 step 100 rps; slo p99 <= 25 ms }}
  value {{ frequency 2 per request; scale 1000 gpu_hours per day; from app }}
  artifacts "artifacts/"
}}
"""

CHECKED = {
    "sections": """  evidence correctness { seeds 2; adversarial (M, N) in [(3, 31)]; poison nan }
  evidence mechanism   { measure bytes, launches }
  limit regression  "Short rows" { shapes (M, N) in [(64, 4096)] }
  limit unsupported "float16"
  limit sensitivity "Tuned on one machine"
  limit memory      "No extra memory"
  fallback          "the unfused path"
  rejected "Occupancy" { because "both run at the roof" }
""",
    "predictions": ("op.time ratio <= 0.9", "op.bytes ratio <= 0.5"),
}
"""`make_bundle`'s arguments for a planted study that checks, so that `perfdsl build` reports its bundle."""

SHAPES = ({"M": 64, "N": 4096}, {"M": 256, "N": 1024})
WEIGHTS = (0.75, 0.25)
SLO = 0.025


def study_text(
    predictions: list[str], decision: str = "adopt", declared_share: str = "50%", sections: str = ""
) -> str:
    """The planted study with these `predict` lines, and `sections` (per-target ones) after them."""
    return STUDY.format(
        predictions="\n".join(f"    {p}" for p in predictions),
        decision=decision,
        declared_share=declared_share,
        sections=sections,
    )


def _rows(
    rng: np.random.Generator,
    levels: dict[str, float],
    blocks: int,
    noise: float,
    valid: bool,
    repeats: int = 5,
) -> list[tuple]:
    """Interleaved blocks (ABBA) of every arm, `repeats` samples each, then the overhead."""
    rows = []
    names = list(levels)
    index = 0
    for round_ in range(blocks):
        for arm in names if round_ % 2 == 0 else reversed(names):
            level = levels[arm] * np.exp(noise * rng.standard_normal())
            # One draw of `repeats` normals is the same stream as `repeats` draws of one.
            durations = (level * (1 + 0.002 * rng.standard_normal(repeats))).astype(np.int64).tolist()
            rows += [(arm, index, p, p % 4, d, int(valid)) for p, d in enumerate(durations)]
            index += 1
    rows += [("(empty)", 0, p, 0, 80 + p % 3, int(valid)) for p in range(repeats)]
    return rows


def _clock_readings(reasons: int | None, count: int) -> list[dict[str, object]]:
    """The block hook's NVML readings: `reasons` (a clock-event bit mask) at both edges of every block."""
    if reasons is None:
        return []
    edge = {"clock_event_reasons": reasons, "sm_clock_mhz": 1980}
    return [{"index": i, "start": edge, "end": edge} for i in range(count)]


def _machine(busy: bool, wall_s: float = 1.0) -> dict[str, dict[str, float]]:
    """A load probe's machine readings at both ends: idle, or another process on one core."""
    start = {"wall_s": 100.0, "busy_s": 50.0, "steal_s": 0.0, "total_s": 200.0, "self_s": 10.0, "load1": 1.0}
    other = 1.0 if busy else 0.0
    end = {
        "wall_s": 100.0 + wall_s,
        "busy_s": 50.0 + wall_s * (1.0 + other),
        "steal_s": 0.0,
        "total_s": 200.0 + 2 * wall_s,
        "self_s": 10.0 + wall_s,
        "load1": 1.0 + other,
    }
    return {"machine_start": start, "machine_end": end}


def _app_blocks(blocks: int, busy: bool) -> list[dict[str, object]]:
    """The application's block log (ABBA), each block's machine readings idle or busy."""
    out = []
    for index in range(2 * blocks):
        arm = ("baseline", "change")[(index + index // 2) % 2]
        readings = _machine(busy, wall_s=0.5)
        out.append(
            {
                "index": index,
                "arm": arm,
                "arm_block": index // 2,
                "start": readings["machine_start"],
                "end": readings["machine_end"],
                "samples": 5,
                "failed": False,
            }
        )
    return out


def _load_rows(
    rng: np.random.Generator, rate: float, capacity: float, behind: bool, n: int = 500, fails: bool = False
) -> list[tuple]:
    """A probe at `rate`: 1 ms latency below `capacity`, 50 ms (over the SLO) at or above it, or
    wherever it `fails`.

    `behind`: the generator falls behind its schedule, its issue lag growing to 20 ms
    by the last request (the service time after issue is unchanged)."""
    gaps = rng.exponential(1e9 / rate, n)
    scheduled = np.cumsum(gaps).astype(np.int64)
    issued = scheduled + np.linspace(0, 20e6 if behind else 0, n).astype(np.int64)
    latency = int(1e6 if rate < capacity and not fails else 50e6)
    return np.column_stack([scheduled, issued, issued, issued + latency, np.ones(n, np.int64)]).tolist()


def planted_environment(numba: str, commit: str, driver: str | None = None) -> dict:
    """environment.json's content for a planted bundle: numba, commit and GPU driver vary."""
    gpu = None if driver is None else {"driver_version": driver, "devices": []}
    return {
        "perfdsl": "0.1.0",
        "python": {"version": "3.11.7"},
        "os": {"system": "Linux", "release": "6.1", "machine": "x86_64"},
        "cpu": {"model": "AMD EPYC", "usable_cores": 2},
        "packages": {"numba": numba, "numpy": "2.4.6"},
        "git": {"commit": commit * 40, "dirty": False, "root": "/repo"},
        "gpu": gpu,
        "time_utc": "2026-12-01T00:00:00+00:00",
    }


def _sparse_rotation(unavoidable: float | None, mn: int) -> dict:
    """A shape's `rotation` with the change arm's unavoidable bytes, or nothing."""
    if unavoidable is None:
        return {}
    change = {"arm": "change", "sets": 4, "set_bytes": 8 * mn, "cache_target_bytes": 1}
    return {"rotation": [{**change, "compulsory_bytes": int(unavoidable * mn)}]}


def make_bundle(
    tmp: Path,
    *,
    predictions: tuple[str, ...] = ("op.time ratio <= 0.9",),
    sections: str = "",
    decision: str = "adopt",
    kernel_ratio: float | tuple[float, float] = 0.8,
    app_ratio: float = 0.9,
    share: float = 0.5,
    in_app_ratio: float | None = None,
    rest_ratio: float = 1.0,
    share_requests: int = 40,
    change_share: bool = True,
    declared_share: str = "50%",
    app_shape: dict[str, int] | None = None,
    copy_level: float = 0.3,
    failing: dict[str, object] | None = None,
    noise: float = 0.01,
    blocks: int = 20,
    clock_reasons: int | None = None,
    valid: bool = True,
    target: str = "cpu",
    correct: bool = True,
    capacities: dict[str, float] | None = None,
    probes: dict[str, tuple[float, ...]] | None = None,
    behind: dict[str, tuple[float, ...]] | None = None,
    counters: dict[str, dict[str, float]] | None = None,
    seed: int = 0,
    environment: dict | None = None,
    run_id: str | None = None,
    busy: dict[str, tuple[float, ...]] | None = None,
    modelled_bytes: tuple[float, float] = (20.0, 8.0),
    limits: dict[tuple[int, int], float] | None = None,
    change_unavoidable: float | None = None,
    app_level_ns: float = 4e6,
    timer_resolution_ns: float | None = None,
    fails_at: dict[str, tuple[float, ...]] | None = None,
) -> Path:
    """Write a synthetic bundle with planted effects; returns its path.

    `counters` is recorded as counted at the first shape (as ncu counts one).
    `environment` is written as environment.json when given; `run_id` fixes
    the bundle's id (ids sort by time, so it orders bundles of a history).
    `behind` names, per arm, the probe rates at which the load generator fell behind; `busy`,
    per arm, the probe rates at which another process took a core (and, under the key
    "application", that it did so during every request block).
    `valid=False` marks every sample invalid; `target="cudasim"` also makes the
    run's timings not evidence (`timings_valid` false), as the simulator does.
    `change_unavoidable` (bytes per element of M x N) plants the change's rotation entry
    with that `compulsory_bytes`, as a variant with `sparse_inputs` records it.
    `app_level_ns` is the baseline's request time; `timer_resolution_ns`, when given, the
    clock's resolution the run records (else the target's). `fails_at` names, per arm, probe
    rates that fail below its capacity too (the first probe at each): a curve that is not monotone.
    `kernel_ratio` may be one ratio per shape. The share pass times `share_requests`
    requests per arm with 2 % noise: the operation holds `share` of the baseline's
    time and runs `in_app_ratio` (default `kernel_ratio`) times as long in the
    change's, while the rest of its request runs `rest_ratio` times as long
    (`change_share=False` leaves the change arm untimed), in 10 rounds. The copy roof
    runs at `copy_level` of the baseline's time (below 0.4 the modelled bytes sit
    under the roof; 1.0 puts them 2.5x above it). `failing` overrides fields of the
    change arm's correctness case (and fails it). `limits` maps each (M, N) of one
    `limit regression` to the change's planted ratio there: the run plan decides which
    are timed as limit shapes (one that is a workload shape is timed as the workload's),
    and their samples come from a generator of their own, so the workload's are the
    same with and without them.
    """
    rng = np.random.default_rng(seed)
    if limits:
        listed = ", ".join(f"({m}, {n})" for m, n in limits)
        sections += f'  limit regression "planted limit" {{ shapes (M, N) in [{listed}] }}\n'
    text = study_text(list(predictions), decision, declared_share, sections)
    ratios = kernel_ratio if isinstance(kernel_ratio, tuple) else (kernel_ratio,) * len(SHAPES)
    study = parse(Source("study.perf", text)).study
    assert study is not None
    capacities = capacities or {"baseline": 400.0, "change": 800.0}
    probes = (
        probes
        if probes is not None
        else {
            # A full run's search: the second pass repeats the goodput and the failing rate.
            "baseline": (100.0, 200.0, 300.0, 450.0, 300.0, 450.0),
            "change": (200.0, 400.0, 600.0, 900.0, 600.0, 900.0),
        }
    )
    with BundleWriter(tmp / "artifacts", "planted", run_id) as bundle:
        bundle.write_text("study.perf", text)
        if environment is not None:
            bundle.write_json("environment.json", environment)
        planned = plan(study, target, quick=False)
        planned = attrs.evolve(planned, timing=attrs.evolve(planned.timing, confidence=0.95, threshold=0.02))
        bundle.write_json("plan.json", planned.to_json())
        bundle.write_json(
            "registration.json",
            {
                "predict_hash": predict_section_hash(study),
                "registered": "2026-11-29T00:00:00Z",
            },
        )
        shapes = []
        for sizes, weight, ratio in zip(SHAPES, WEIGHTS, ratios, strict=True):
            label = f"{sizes['M']}x{sizes['N']}"
            base = 1e6 * sizes["M"] * sizes["N"] / 262144
            levels = {"baseline": base, "change": base * ratio, "copy": base * copy_level}
            path = f"samples/op/{label}.csv"
            bundle.write_csv(
                path,
                SAMPLE_COLUMNS,
                _rows(rng, levels, blocks, noise, valid),
            )
            mn = sizes["M"] * sizes["N"]
            shapes.append(
                {
                    "label": label,
                    "sizes": sizes,
                    "weight": weight,
                    "samples": path,
                    "models": {
                        "bytes": {"baseline": modelled_bytes[0] * mn, "change": modelled_bytes[1] * mn},
                        "launches": {"baseline": 3.0, "change": 1.0},
                    },
                    "timing": {
                        "blocks": _clock_readings(clock_reasons, blocks * len(levels)),
                        "set_bytes": {"baseline": 8 * mn, "change": 8 * mn, "copy": 8 * mn},
                        **_sparse_rotation(change_unavoidable, mn),
                    },
                    "counters": counters if not shapes else None,
                }
            )
        limit_rng = np.random.default_rng(seed + 1)
        for planned_shape in (s for s in planned.operations[0].shapes if s.limit):
            sizes, label = planned_shape.sizes, planned_shape.label
            base = 1e6 * sizes["M"] * sizes["N"] / 262144
            ratio = (limits or {})[(sizes["M"], sizes["N"])]
            levels = {"baseline": base, "change": base * ratio, "copy": base * copy_level}
            path = f"samples/op/{label}.csv"
            bundle.write_csv(path, SAMPLE_COLUMNS, _rows(limit_rng, levels, blocks, noise, valid))
            mn = sizes["M"] * sizes["N"]
            shapes.append(
                {
                    "label": label,
                    "sizes": sizes,
                    "weight": 0.0,
                    "limit": True,
                    "samples": path,
                    "models": {"bytes": {"baseline": 20.0 * mn, "change": 8.0 * mn}},
                    "timing": {"set_bytes": {"baseline": 8 * mn, "change": 8 * mn, "copy": 8 * mn}},
                }
            )
        bundle.write_csv(
            "samples/application.csv",
            SAMPLE_COLUMNS,
            _rows(rng, {"baseline": app_level_ns, "change": app_level_ns * app_ratio}, blocks, noise, valid),
        )
        load = None
        load_missing = f"no load test on {target}: its timings are not evidence"
        if valid:
            written = []
            for arm, rates in probes.items():
                for index_in_arm, rate in enumerate(rates):
                    index = len(written)
                    path = f"load/{arm}-{index:03d}.csv"
                    bundle.write_csv(
                        path,
                        PROBE_COLUMNS,
                        _load_rows(
                            rng,
                            rate,
                            capacities[arm],
                            rate in (behind or {}).get(arm, ()),
                            fails=rate in (fails_at or {}).get(arm, ()) and rate not in rates[:index_in_arm],
                        ),
                    )
                    written.append(
                        {
                            "arm": arm,
                            "index": index,
                            "rate": rate,
                            "phase": "search",
                            "records": path,
                            "warmup": 10,
                            **_machine(busy and rate in busy.get(arm, ())),
                        }
                    )
            load = {
                "arrivals": "poisson",
                "seed": 1,
                "slo_seconds": SLO,
                "percentile": 0.99,
                "probes": written,
            }
            load_missing = None
        cases = [
            {
                "arm": arm,
                "variant": arm,
                "shape": {"M": 3, "N": 31},
                "adversarial": True,
                "seed": 1,
                "passed": correct or arm == "baseline",
                "rel_l2": 1e-8 if correct or arm == "baseline" else 0.5,
                "max_abs": 1e-7,
                "unwritten": 0,
                "nonfinite": 0,
                "deterministic": True,
                "message": "" if correct or arm == "baseline" else "rel_l2 0.5 > 1e-05",
            }
            for arm in ("baseline", "change")
        ]
        total = [int(t) for t in 10_000_000 * np.exp(0.02 * rng.standard_normal(share_requests))]
        in_app = ratios[0] if in_app_ratio is None else in_app_ratio
        change_scale = 10_000_000 * np.exp(0.02 * rng.standard_normal(share_requests))
        change_op = [int(t * share * in_app * np.exp(0.02 * rng.standard_normal())) for t in change_scale]
        change_total = [
            op + int(t * (1 - share) * rest_ratio) for op, t in zip(change_op, change_scale, strict=True)
        ]
        rounds = [k * 10 // share_requests for k in range(share_requests)]
        share_record = {
            "baseline": {
                "op_ns": [min(t, int(t * share * np.exp(0.02 * rng.standard_normal()))) for t in total],
                "total_ns": total,
                "rounds": rounds,
            },
            "change": {"op_ns": change_op, "total_ns": change_total, "rounds": rounds},
        }
        if not change_share:
            del share_record["change"]
        if failing:
            cases[1].update({"passed": False, **failing})
        bundle.write_json(
            "results.json",
            {
                "schema": "perfdsl.results/1",
                "study": "planted",
                "run_id": bundle.run_id,
                "target": target,
                "timings_valid": target != "cudasim",
                **({"timer_resolution_ns": timer_resolution_ns} if timer_resolution_ns else {}),
                "quick": False,
                "dtype": "float32",
                "operations": [
                    {
                        "name": "op",
                        "baseline": "kernels.rmsnorm:unfused",
                        "change": "kernels.rmsnorm:fused",
                        "variants": {"baseline": "unfused", "change": "fused"},
                        "shapes": shapes,
                        "correctness": {
                            "passed": correct and not failing,
                            "tolerances": {"rel_l2": 1e-5},
                            "seeds": 2,
                            "cases": cases,
                        },
                    }
                ],
                "static": None,
                "application": {
                    "name": "app",
                    "shape": dict(app_shape or SHAPES[0]),
                    "uses": ["op"],
                    "samples": "samples/application.csv",
                    "model_level": {"passed": True, "arms": {}},
                    "share": share_record,
                    "timing": {"blocks": _app_blocks(blocks, "application" in (busy or {}))},
                    "load": load,
                    "load_missing": load_missing,
                },
            },
        )
    return bundle.path


def rendered_markdown(bundle: Path) -> str:
    """The report's Markdown for a bundle, rendered from the evaluation.json written for it."""
    from perfdsl.bundle.evaluation.evaluation import Evaluation
    from perfdsl.evaluate.evaluation import evaluate, write_evaluation
    from perfdsl.evaluate.inputs import open_evaluated
    from perfdsl.report.markdown import render_markdown

    opened = open_evaluated(bundle)
    write_evaluation(opened, evaluate(opened))
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    return markdown
