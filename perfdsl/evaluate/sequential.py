"""A sequential comparison, judged again from the raw samples: the stop the rule makes, and the verdict.

The run stopped a shape's blocks by the rule registered with the predictions
and recorded when and why. Here the rule is replayed over the samples in the
bundle (the block medians `inputs.read_samples` gives, paired as the run
paired them), look by look, and must reach the recorded stop bit for bit: a
stop that differs means the samples or the record were changed, or the run
did not follow its rule. Under the rule the comparison's interval is the
confidence sequence's at the stop, the one interval valid after looking at
every pair; the fixed-n bootstrap interval over the same pairs is not (it
would be the naive peeking the rule exists to avoid).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import Comparison, Finding
from perfdsl.bundle.stopping import CAP, StoppingRule, StopRecord
from perfdsl.evaluate import quality
from perfdsl.evaluate.inputs import ArmSamples
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.boundary import fewest_pairs, pairs_to_fit
from perfdsl.stats.sequential.power import detectable
from perfdsl.stats.sequential.rule import pair_log_ratios, replay


def recompute(samples: Mapping[str, ArmSamples], rule: StoppingRule) -> StopRecord | None:
    """The rule's stop over the baseline and change blocks in `samples`; None without both arms,
    or where a block median is not positive (calls the clock did not resolve: `why_not_evidence`
    says so, and no ratio of them exists to replay)."""
    baseline, change = samples.get("baseline"), samples.get("change")
    if baseline is None or change is None:
        return None
    if np.any(baseline.block_medians_ns <= 0) or np.any(change.block_medians_ns <= 0):
        return None
    d = pair_log_ratios(
        baseline.block_medians_ns,
        np.asarray(baseline.block_indices),
        change.block_medians_ns,
        np.asarray(change.block_indices),
    )
    return replay(d, rule)


def agrees(replayed: StopRecord | None, recorded: StopRecord | None) -> bool:
    """Whether the replayed stop is the recorded one, every number equal."""
    return replayed is not None and recorded is not None and replayed.to_json() == recorded.to_json()


def judged(comparison: Comparison, stop: StopRecord) -> Comparison:
    """The comparison with the confidence sequence's ratio, interval and verdict at the stop.

    Its p-value is the sequence's anytime-valid one, the one Holm's adjustment
    over the family may use after optional stopping. The rank test's
    disagreement follows the new verdict; and a "no meaningful
    change" whose interval lies inside the band rests on that interval, not on
    the fixed design's power, so it is not underpowered. Its MDE is the sequence's at
    the cap (`stats.sequential.power`): the fixed design's t formula claimed a reach
    the sequence, wider at every pair count, does not have.
    """
    decided = stop.verdict in ("faster", "slower")
    return attrs.evolve(
        comparison,
        # The sequence's own level, the study's shared over its family (98.75 % of a 95 % family
        # of 4): recorded as the study's 95 %, every reader but the report labelled it so.
        level=stop.rule.confidence,
        mde=detectable([(stop.rule, stop.sd_log, 1.0)]),
        ratio=stop.ratio,
        ci_low=stop.low,
        ci_high=stop.high,
        verdict=stop.verdict,
        interval_missing=None,
        p_value=stop.p_value,
        rank_disagrees=decided and comparison.rank_p_value >= 1.0 - comparison.level,
        underpowered=comparison.underpowered and stop.verdict != "no meaningful change",
    )


def pairs_the_cap_lacked(stop: StopRecord) -> int | None:
    """For a stop at the cap: the pairs whose interval, at the spread and ratio measured, would lie
    wholly inside or wholly beyond the band and clear of every prediction bound it straddled
    (None when the ratio sits on such an edge).

    Under planned looks, at the final look's boundary: what a cap planned that large would
    about have needed (its boundaries would be recomputed, not much lower)."""
    if stop.reason != CAP:
        return None
    centre = math.log(stop.ratio)
    rooms = [abs(centre - math.log(edge)) for edge in stop.rule.straddled(stop.low, stop.high)]
    if stop.verdict == "inconclusive":
        rooms.append(abs(math.log1p(stop.rule.threshold) - abs(centre)))
    room = min(rooms, default=0.0)
    if not math.isfinite(stop.sd_log) or stop.sd_log <= 0 or room == 0:
        return None
    if stop.rule.planned:
        variance, final = stop.sd_log * stop.sd_log, stop.rule.boundaries[-1]
        return fewest_pairs(lambda t: planned.half_width(variance, t, final) <= room, 100_000)
    return pairs_to_fit(stop.sd_log, room, stop.rule.confidence)


def decided_early(findings: tuple[Finding, ...], subject: str) -> tuple[Finding, ...]:
    """The findings without PQ007 (few blocks) on the compared arms of a comparison the rule decided:
    the rule stopped them on purpose, and the confidence sequence is valid at any count."""
    compared = {f"{subject} {arm}" for arm in ARMS}
    return tuple(f for f in findings if not (f.code == quality.PQ.FEW_BLOCKS and f.subject in compared))
