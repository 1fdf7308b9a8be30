"""Measurement-quality findings: is a timing good enough to be evidence?

Each check takes plain arrays or numbers and returns a tuple of `Finding`s
(empty when the measurement is clean). Findings are values, never exceptions
(STYLE habit 5), so the evaluation collects all of them and the report renders
them like the checker's diagnostics. Codes are stable: a released code never
changes meaning, and the registry in `perfdsl.codes` says what each one means,
why it matters and what to do, for `perfdsl explain`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import Finding
from perfdsl.bundle.evaluation.verdicts import ContendedSummary
from perfdsl.bundle.sampling import Block, LoadReading, Warmup
from perfdsl.codes import CODES, Code
from perfdsl.evaluate.contention import Contention, contended_blocks, contention, unresolved_blocks
from perfdsl.numbers import bandwidth, duration


class PQ(StrEnum):
    """Measurement-quality codes."""

    SPREAD = "PQ001"
    OUTLIERS = "PQ002"
    RESOLUTION = "PQ003"
    CLOCKS = "PQ004"
    THROTTLED = "PQ005"
    ABOVE_ROOF = "PQ006"
    FEW_BLOCKS = "PQ007"
    UNSETTLED = "PQ008"
    CONTENDED = "PQ009"
    UNDER_BUFFERS = "PQ010"
    FREQUENCY = "PQ011"
    SHARED_CORES = "PQ012"


ROOF_MARGIN = 0.05
"""The least margin above a roof that is an error: the roof is measured, so noisy."""


# What each code means, why it matters and what to do lives in the one registry of
# codes, beside the checker's, so that `perfdsl explain` answers for every code.
EXPLANATIONS: dict[str, Code] = {code: CODES[code] for code in PQ}


def explain(code: str) -> str:
    """The explanation of a code as text, for `perfdsl explain`."""
    e = EXPLANATIONS[PQ(code)]
    return f"{code}: {e.title}\n\nWhat: {e.what}\n\nWhy: {e.why}\n\nWhat to do: {e.example}\n"


def check_spread(samples: np.ndarray, subject: str, limit: float = 0.10) -> tuple[Finding, ...]:
    """PQ001: standard deviation >= `limit` of the mean (pyperf's rule, ddof=1)."""
    x = np.asarray(samples, dtype=float)
    if x.size < 2:
        return ()
    mean = float(np.mean(x))
    if mean <= 0:
        return ()  # no spread relative to nothing: samples the clock could not resolve are PQ003's
    rel = float(np.std(x, ddof=1)) / mean
    if rel < limit:
        return ()
    return (Finding(PQ.SPREAD, "warning", f"relative standard deviation is {rel:.1%}", subject),)


def check_outliers(samples: np.ndarray, subject: str, limit: float = 3.5) -> tuple[Finding, ...]:
    """PQ002: samples (durations in ns) with modified z-score 0.6745 (x - median) / MAD above `limit`.

    Iglewicz and Hoaglin's rule. Where MAD is zero (more than half the samples
    equal), the mean absolute deviation scaled by 1.2533 stands in for it; where
    that is zero too, every sample equals the median and there is no outlier.
    """
    x = np.asarray(samples, dtype=float)
    if x.size < 3:
        return ()
    med = float(np.median(x))
    dev = np.abs(x - med)
    mad = float(np.median(dev))
    if mad > 0:
        scores = 0.6745 * dev / mad
    elif dev.any():
        scores = dev / (1.2533 * dev.mean())
    else:
        return ()
    count = int(np.sum(scores > limit))
    if count == 0:
        return ()
    worst = float(x[np.argmax(scores)])
    return (
        Finding(
            PQ.OUTLIERS,
            "warning",
            f"{count} of {x.size} samples have a modified z-score above {limit} "
            f"(furthest {duration(worst)} against median {duration(med)})",
            subject,
        ),
    )


def check_resolution(
    samples: np.ndarray,
    subject: str,
    timer_resolution: float,
    launch_overhead: float | None = None,
) -> tuple[Finding, ...]:
    """PQ003: samples shorter than the timer resolution (error) or launch-bound (warning).

    Launch-bound means the median sample is no longer than the launch overhead
    (research notes, section 4). All quantities in the same time unit.
    """
    x = np.asarray(samples, dtype=float)
    findings: list[Finding] = []
    short = int(np.sum(x < timer_resolution))
    if short:
        findings.append(
            Finding(
                PQ.RESOLUTION,
                "error",
                f"{short} of {x.size} samples are shorter than the timer resolution {timer_resolution:.3g}",
                subject,
            )
        )
    if launch_overhead is not None and x.size and float(np.median(x)) <= launch_overhead:
        findings.append(
            Finding(
                PQ.RESOLUTION,
                "warning",
                f"launch-bound: median sample {float(np.median(x)):.3g} is no longer than "
                f"the launch overhead {launch_overhead:.3g}",
                subject,
            )
        )
    return tuple(findings)


def cycle_normalised_ratio(
    baseline_times: np.ndarray,
    baseline_clocks: np.ndarray,
    change_times: np.ndarray,
    change_clocks: np.ndarray,
) -> float:
    """median(change time x clock) / median(baseline time x clock), per block (nvbench).

    Time x clock is cycles: a ratio of cycles does not move when the clock does.
    """
    base = np.asarray(baseline_times, float) * np.asarray(baseline_clocks, float)
    chg = np.asarray(change_times, float) * np.asarray(change_clocks, float)
    return float(np.median(chg) / np.median(base))


def check_clocks(
    baseline_times: np.ndarray,
    baseline_clocks: np.ndarray,
    change_times: np.ndarray,
    change_clocks: np.ndarray,
    subject: str,
    limit: float = 0.02,
) -> tuple[Finding, ...]:
    """PQ004: the arms' median SM clocks differ by more than `limit` (relative).

    The message carries both the time ratio and the cycle-normalised ratio, so
    the reader sees how much of the change the clock alone explains.
    """
    cb = float(np.median(baseline_clocks))
    cc = float(np.median(change_clocks))
    diff = cc / cb - 1.0
    if abs(diff) <= limit:
        return ()
    time_ratio = float(np.median(change_times) / np.median(baseline_times))
    cycles = cycle_normalised_ratio(baseline_times, baseline_clocks, change_times, change_clocks)
    return (
        Finding(
            PQ.CLOCKS,
            "warning",
            f"median SM clock differs by {diff:+.1%} ({cb:.0f} vs {cc:.0f} MHz): "
            f"time ratio {time_ratio:.4f}, cycle-normalised ratio {cycles:.4f}",
            subject,
        ),
    )


CLOCK_EVENT_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
"""NVML's clock-event reason bits (nvmlClocksEventReason*, formerly ThrottleReason)."""

_NOT_THROTTLING = 0x1 | 0x2 | 0x10 | 0x100
"""Idle, and the clock settings (application clocks, sync boost, display clock): a locked
application clock sets 0x2 in every block of both arms, which is the setup a benchmark wants;
clocks that still differ between the arms are PQ004's to catch, from the clocks themselves."""


def check_throttling(reasons: Sequence[int], subject: str) -> tuple[Finding, ...]:
    """PQ005 (error): blocks during which NVML reported throttling (power cap, thermal, hardware
    slowdown, power brake). A throttled block ran at a clock its neighbour of the other arm may
    not have had, so the pair compares the clock, not the code: the result is invalid."""
    masks = [int(r) for r in reasons]
    throttled = [m & ~_NOT_THROTTLING for m in masks if m & ~_NOT_THROTTLING]
    if not throttled:
        return ()
    union = 0
    for m in throttled:
        union |= m
    names = [n for bit, n in CLOCK_EVENT_REASONS.items() if union & bit]
    unknown = union & ~sum(CLOCK_EVENT_REASONS)
    if unknown:
        names.append(f"unknown {unknown:#x}")
    return (
        Finding(
            PQ.THROTTLED,
            "error",
            f"{len(throttled)} of {len(masks)} blocks throttled ({', '.join(names)})",
            subject,
        ),
    )


def check_bandwidth(
    achieved: float, roof: float, subject: str, margin: float = ROOF_MARGIN
) -> tuple[Finding, ...]:
    """PQ006: achieved bandwidth above the measured roof by more than `margin` (error).

    `roof` is the roof for the kernel's own read/write mix in its own cache
    regime (`perfdsl.evaluate.roofs`), and `margin` at least the roof's own
    measured spread: a kernel can land a little above a noisy roof; more than
    that means the byte model or the cache handling is wrong and the result is invalid.
    """
    if achieved <= roof * (1.0 + margin):
        return ()
    return (
        Finding(
            PQ.ABOVE_ROOF,
            "error",
            f"achieved bandwidth {bandwidth(achieved)} is {achieved / roof - 1.0:.1%} above the "
            f"measured roof for its mix, {bandwidth(roof)} (margin {margin:.1%}): invalid result",
            subject,
        ),
    )


def check_compulsory_bytes(
    modelled: float, buffers: int, subject: str, element: tuple[str, int] | None = None, where: str = ""
) -> tuple[Finding, ...]:
    """PQ010 (error): a byte model below the bytes of the buffers the kernel is handed.

    `buffers` is one buffer set's inputs and outputs as the run allocated them,
    less the inputs the variant declares it reads only in part
    (`ShapeRecord.unavoidable_bytes`): the traffic no kernel that reads each
    input and writes each output can avoid. A model under it counts elements,
    or leaves a buffer out; where the model times the element size (`element`:
    the dtype and its bytes) would cover the buffers, it is almost surely the
    first, and the message says so. Either way it names the way out for a
    kernel that does read an input only in part (a gather's table), which the
    rule cannot tell from the buffers: a new user's correct gather model was
    told only to multiply by the element size. `where` names the model's line
    ("studies/x.perf:27"), since `check` cannot see the buffers and the error is
    found only here.
    """
    if buffers <= 0 or modelled >= buffers:
        return ()
    dtype, size = element or ("", 0)
    if size > 1 and modelled * size >= buffers:
        fix = f"it looks like a count of elements: multiply it by the {size} bytes of one {dtype} element"
    else:
        fix = "it leaves out a buffer, or counts elements for part of it"
    fix += (
        "; or, where the kernel reads an input only in part (a gather's table), name that input in "
        "the variant's `sparse_inputs`"
    )
    at = f" (`bytes` at {where})" if where else ""
    return (
        Finding(
            PQ.UNDER_BUFFERS,
            "error",
            f"modelled {modelled:,.0f} bytes{at}, below the {buffers:,} bytes of the inputs and outputs "
            f"the kernel is handed ({buffers / max(modelled, 1.0):.3g}x): {fix}; invalid result",
            subject,
        ),
    )


def check_block_count(n_blocks: int, subject: str, floor: int = 10) -> tuple[Finding, ...]:
    """PQ007: fewer than `floor` block medians in an arm (research notes, section 5.1)."""
    if n_blocks >= floor:
        return ()
    return (Finding(PQ.FEW_BLOCKS, "warning", f"{n_blocks} blocks, fewer than {floor}", subject),)


def check_warmup(warmups: Sequence[Warmup], subject: str) -> tuple[Finding, ...]:
    """PQ008: an arm whose warm-up reached its cap before its timing settled (`runtime.warmup`).

    A record without `settled` (a bundle from before the rule) is not judged.
    """
    out = []
    for warm in warmups:
        if warm.settled is False:
            out.append(
                Finding(
                    PQ.UNSETTLED,
                    "warning",
                    f"warm-up never settled: {warm.calls} calls without two consecutive "
                    "windows agreeing, so the first blocks may still be warming up",
                    f"{subject} {warm.arm}",
                )
            )
    return tuple(out)


def block_contention(blocks: Sequence[Block]) -> dict[str, list[tuple[Contention, bool]]]:
    """Arm -> each of its blocks that recorded the machine's load: its reading, and whether it
    competed with other work (`evaluate.contention.contended_blocks`)."""
    readings: dict[str, list[Contention]] = {}
    for block in blocks:
        start, end = block.start.load, block.end.load
        if start is None or end is None:
            continue
        found = contention(start, end)
        if found is not None:
            readings.setdefault(block.arm, []).append(found)
    return {arm: list(zip(r, contended_blocks(r), strict=True)) for arm, r in readings.items()}


def span_contended(start: LoadReading | None, end: LoadReading | None) -> bool | None:
    """Whether other work competed with a span of the run read at both ends (a load probe);
    None where a reading is missing. Judged alone: a probe lasts long enough to resolve it."""
    if start is None or end is None:
        return None
    found = contention(start, end)
    return None if found is None else found.contended


def check_contention(blocks: Sequence[Block], subject: str) -> tuple[Finding, ...]:
    """PQ009: blocks of an arm that competed with other work (`evaluate.contention`)."""
    out = []
    for arm, judged in block_contention(blocks).items():
        busy = [c for c, contended in judged if contended]
        if not busy:
            continue
        total = sum(busy[1:], busy[0])
        out.append(
            Finding(
                PQ.CONTENDED,
                "warning",
                f"{len(busy)} of {len(judged)} blocks competed with other work "
                f"({total.other_cores:.2f} cores of other processes on average, "
                f"{total.steal_share:.1%} stolen, load average up to {total.load1:.2f})",
                f"{subject} {arm}",
            )
        )
    return tuple(out)


def summarize_contention(
    shapes: Sequence[tuple[str, Sequence[Block], bool]],
    compared_arms: Sequence[str] = ARMS,
) -> ContendedSummary:
    """From (subject, block log, has a comparison) per shape: the run's contention summary."""
    blocks = contended = unresolved = 0
    where: list[str] = []
    rests = False
    for subject, log, compared in shapes:
        by_arm = block_contention(log)
        blocks += sum(len(r) for r in by_arm.values())
        contended += sum(flag for r in by_arm.values() for _, flag in r)
        unresolved += sum(unresolved_blocks([reading for reading, _ in r]) for r in by_arm.values())
        if any(flag for arm in compared_arms for _, flag in by_arm.get(arm, ())):
            where.append(subject)
            rests = rests or compared
    return ContendedSummary(
        blocks=blocks,
        contended=contended,
        shapes=tuple(where),
        verdicts_rest_on_contended=rests,
        missing=None if blocks else "the run recorded no machine load (a bundle before results/4)",
        unresolved=unresolved,
    )
