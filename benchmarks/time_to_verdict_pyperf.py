"""One pyperf benchmark of one arm of `time_to_verdict.py`'s kernels, with pyperf's default settings.

Not run by hand: `time_to_verdict.py` starts it once per arm, kernel, effect and
seed, writes each arm's values to a JSON file and asks `pyperf compare_to` for
its call. pyperf's Runner spawns its worker processes by running this script
again, passing `--kernel`, `--effect`, `--seed` and `--arm` on to them.

    python benchmarks/time_to_verdict_pyperf.py --kernel copy --effect 0.02 --seed 0 --arm change \
        -o change.json

pyperf's defaults are kept: 20 worker processes, 1 warm-up and 3 values each,
loops calibrated to 100 ms a value.
"""

from __future__ import annotations

import itertools

import pyperf
from verdict_kernels import calls, kernels


def add_arguments(cmd: list[str], args) -> None:
    """What each worker process needs to rebuild the same arm."""
    cmd.extend(("--kernel", args.kernel, "--effect", str(args.effect), "--seed", str(args.seed)))
    cmd.extend(("--arm", args.arm, "--scale", str(args.scale)))


def main() -> None:
    runner = pyperf.Runner(add_cmdline_args=add_arguments)
    runner.argparser.add_argument("--kernel", required=True, choices=[k.key for k in kernels()])
    runner.argparser.add_argument("--effect", type=float, required=True)
    runner.argparser.add_argument("--seed", type=int, required=True)
    runner.argparser.add_argument("--arm", required=True, choices=("baseline", "change"))
    runner.argparser.add_argument("--scale", type=float, default=1.0)
    args = runner.parse_args()
    (kernel,) = [k for k in kernels(args.scale) if k.key == args.kernel]
    sets = itertools.cycle(calls(kernel, args.effect, args.seed)[args.arm])

    def call() -> None:
        # The same rotation over buffer sets as perfdsl's sampler: each call the next set.
        next(sets)()

    call()  # compiled (or loaded from numba's cache) before pyperf's own warm-up
    runner.bench_func(kernel.key, call)  # one name for both arms: compare_to pairs them by name


if __name__ == "__main__":
    main()
