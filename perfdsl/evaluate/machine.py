"""The machine's own state as evidence: a CPU whose clock or cores were not the code's alone.

Two findings, from what the run recorded (`bundle.machine`), never from the
machine the evaluation runs on:

* PQ011, the clock was free to change: a governor that moves the frequency
  with the load (anything but `performance` or `userspace`, unless the range
  allows one frequency) on a core the measured code ran on, or boost/turbo on
  (the clock then follows temperature and the number of busy cores). It bears
  on every host-timed result: the kernels' on the cpu target, and the
  application's requests and load test on every target (a CUDA kernel's
  device time does not follow the host's clock).
* PQ012, the load generator shared cores with the code it loaded: its thread
  ran on a core the server's requests also ran on (nothing was pinned), or on
  an SMT sibling of one. It bears on the load test's goodputs only: the
  generator runs during the load test and nowhere else.

Unknown is never a finding: a field the run could not read (no cpufreq in a
container, a bundle from before the state was recorded) is left unjudged.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfdsl.bundle.evaluation.kernels import Finding
from perfdsl.bundle.evaluation.machine import MachineSummary
from perfdsl.bundle.machine import MachineState
from perfdsl.evaluate.quality import PQ
from perfdsl.ranges import format_ranges

SUBJECT = "machine"


def check_frequency(state: MachineState) -> tuple[Finding, ...]:
    """PQ011 (warning): the governor or boost let the measured cores' clock change."""
    watched = [c for c in state.cores if not state.measuring or c.core in state.measuring]
    scaling = [c for c in watched if c.scaling]
    causes = []
    for governor in sorted({c.governor for c in scaling if c.governor}):
        on = [c for c in scaling if c.governor == governor]
        ranges = sorted(
            {(c.min_khz, c.max_khz) for c in on if c.min_khz is not None and c.max_khz is not None}
        )
        shown = f", {ranges[0][0] / 1e6:.2f}-{ranges[0][1] / 1e6:.2f} GHz" if len(ranges) == 1 else ""
        causes.append(f"governor `{governor}` on CPU {format_ranges(c.core for c in on)}{shown}")
    if state.boost:
        causes.append(f"boost/turbo on ({state.boost_source})")
    if not causes:
        return ()
    return (
        Finding(
            PQ.FREQUENCY,
            "warning",
            "the CPU's clock was free to change while the measured code ran: " + "; ".join(causes),
            SUBJECT,
        ),
    )


def check_shared_cores(state: MachineState, has_load: bool) -> tuple[Finding, ...]:
    """PQ012 (warning): the load generator's thread shared a core, or a core's SMT unit, with the
    requests it timed. Only a run with a load test is judged, and only where both are known."""
    if not has_load or not state.measuring or not state.generator:
        return ()
    shared = sorted(set(state.measuring) & set(state.generator))
    if shared:
        why = f": {state.pinning_missing}" if state.pinning_missing else ""
        return (
            Finding(
                PQ.SHARED_CORES,
                "warning",
                f"the load generator ran on CPU {format_ranges(shared)}, which the requests it timed "
                f"also used: not pinned apart{why}",
                SUBJECT,
            ),
        )
    pairs = sorted(
        (g, m)
        for g in state.generator
        for m in state.measuring
        if (core := state.core(g)) is not None and m in core.siblings
    )
    if not pairs:
        return ()
    shown = ", ".join(f"CPU {g} and {m}" for g, m in pairs[:4])
    return (
        Finding(
            PQ.SHARED_CORES,
            "warning",
            f"the load generator's core is an SMT sibling of a core the requests ran on ({shown}): "
            "they share one physical core's execution units",
            SUBJECT,
        ),
    )


def summarize_machine(
    state: MachineState | None,
    *,
    kernel_verdicts: bool,
    end_to_end_verdict: bool,
    goodputs: bool,
) -> MachineSummary:
    """The machine-state findings, and which of the conclusions were timed in that state.

    `kernel_verdicts` is whether a kernel verdict was timed on the host clock
    (the cpu target), `end_to_end_verdict` whether the application's request
    time has a comparison, `goodputs` whether the load test has a goodput.
    """
    if state is None:
        return MachineSummary(
            (), (), "the run recorded no CPU state (a bundle before environment.json's cpu.state)"
        )
    frequency = check_frequency(state)
    shared = check_shared_cores(state, goodputs)
    rests: list[str] = []
    if frequency:
        rests += _named(
            (kernel_verdicts, "the kernel verdicts"), (end_to_end_verdict, "the end-to-end verdict")
        )
    if frequency or shared:
        rests += _named((goodputs, "the goodputs"))
    return MachineSummary(frequency + shared, tuple(rests), None)


def _named(*flags: tuple[bool, str]) -> Sequence[str]:
    return [name for flag, name in flags if flag]
