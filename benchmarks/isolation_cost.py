"""What running measured code in a worker process costs: on the samples, and in wall time.

Not a test: a script that prints ratios. For one operation of a study, made an
A/A comparison (the change replaced by the baseline), it samples every shape
twice, alternating which goes first over `--rounds` rounds:

* in-process: the sampler called here, as `perfdsl run` did before workers;
* in a worker: the same request through `perfdsl.runtime.isolation.Session`.

It prints, per shape, the median sample of each way and their ratio (worker /
in-process: 1.0 means the isolation leaves the timed region alone) and each
way's A/A ratio (change / baseline medians: 1.0 on identical arms). Then the
wall time of starting a worker until it is ready (spawn, imports, resolving
the references, the memory limit), and of its first request (which compiles).

    PYTHONPATH=. .venv/bin/python benchmarks/isolation_cost.py [--study studies/rmsnorm_fusion.perf]
        [--target cpu] [--rounds 3] [--full]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS, ROOF_ARMS
from perfdsl.bundle.plan import Plan
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime.isolation import Limits, Session, Worker
from perfdsl.runtime.resolve import resolve_operation, resolve_roof
from perfdsl.runtime.settings import kernel_settings
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import Sampled, prepare_arms, sample
from perfdsl.runtime.worker import Job
from perfdsl.source import Source


def aa_plan(study: Path, target: str, quick: bool) -> Plan:
    """The study's plan with its first operation's change replaced by its baseline."""
    parsed = parse(Source.read(study)).study
    assert parsed is not None, f"{study} does not parse"
    full = plan(parsed, target, quick)
    operation = attrs.evolve(full.operations[0], change=full.operations[0].baseline)
    return attrs.evolve(full, operations=(operation,))


def in_process(the_plan: Plan, target_name: str, shape_index: int) -> Sampled:
    """One shape's interleaved blocks, sampled in this process (the way before workers)."""
    target = make_target(target_name)
    operation = the_plan.operations[0]
    resolved = resolve_operation(the_plan, operation)
    shape = operation.shapes[shape_index]
    ready = prepare_arms(
        target,
        resolved.reference,
        [resolved.variants[a] for a in ARMS],
        shape.sizes,
        the_plan.dtype,
        the_plan.timing.rotate,
    )
    arms = [attrs.evolve(a, name=role) for a, role in zip(ready, ARMS, strict=True)]
    roofs = resolve_roof(the_plan)
    for name in ROOF_ARMS:
        if name in roofs:
            problem, kernel = roofs[name]
            (roof_arm,) = prepare_arms(
                target, problem, [kernel], shape.sizes, the_plan.dtype, the_plan.timing.rotate
            )
            arms.append(attrs.evolve(roof_arm, name=name))
    return sample(target, arms, kernel_settings(the_plan))


def medians(record: Sampled) -> dict[str, float]:
    """The median sample (ns) of each arm."""
    out = {}
    for arm in record.timing.arms:
        durations = [s.duration_ns for s in record.samples if s.arm == arm]
        out[arm] = float(np.median(durations))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default="studies/rmsnorm_fusion.perf")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="the study's own shapes and settings")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    the_plan = aa_plan(Path(args.study), args.target, quick=not args.full)
    job = Job(the_plan, args.target, the_plan.operations[0].name, 240.0)

    starts, firsts = [], []
    for _ in range(args.rounds):
        began = time.perf_counter()
        worker = Worker(job, Limits())
        ready = time.perf_counter()
        worker.call("time", (0, (*ARMS,)), ARMS)
        firsts.append(time.perf_counter() - ready)
        starts.append(ready - began)
        worker.close()

    session = Session(job, Limits())
    roofs = resolve_roof(the_plan)
    live = (*ARMS, *(name for name in ROOF_ARMS if name in roofs))
    print(f"{args.study} `{the_plan.operations[0].name}` A/A on {args.target}, {args.rounds} rounds")
    header = ("shape", "in-process ns", "worker ns", "worker/in", "A/A in", "A/A wkr")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (12, 14, 12, 10, 8, 8), strict=True)))
    try:
        for index, shape in enumerate(the_plan.operations[0].shapes):
            here, there = [], []
            for round_ in range(args.rounds):
                ways = [("in", lambda i=index: in_process(the_plan, args.target, i))]
                ways.append(("worker", lambda i=index: session.call("time", (i, live), live)))
                for way, measure in ways if round_ % 2 == 0 else reversed(ways):
                    (here if way == "in" else there).append(medians(measure()))
            base_here = statistics.median(m["baseline"] for m in here)
            base_there = statistics.median(m["baseline"] for m in there)
            aa_here = statistics.median(m["change"] / m["baseline"] for m in here)
            aa_there = statistics.median(m["change"] / m["baseline"] for m in there)
            print(
                f"{shape.label:>12} {base_here:>14.0f} {base_there:>12.0f} "
                f"{base_there / base_here:>10.3f} {aa_here:>8.3f} {aa_there:>8.3f}"
            )
    finally:
        session.close()
    print(f"worker start to ready: median {statistics.median(starts):.2f} s (of {len(starts)})")
    print(f"first request (compiles, first shape): median {statistics.median(firsts):.2f} s")


if __name__ == "__main__":
    main()
