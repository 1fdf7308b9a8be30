"""evaluation.json's judgement of the machine's own state (PQ011, PQ012)."""

from __future__ import annotations

import attrs

from perfdsl.bundle.evaluation.kernels import Finding


@attrs.frozen
class MachineSummary:
    """Whether the CPU's recorded state made host-timed results unstable (PQ011, PQ012), and
    which of the evaluation's conclusions rest on timings taken in that state."""

    findings: tuple[Finding, ...]
    """The machine-state findings (also among the evaluation's `quality`)."""
    rests_on: tuple[str, ...]
    """The conclusions timed in that state: "the kernel verdicts", "the end-to-end verdict",
    "the goodputs"; empty when there is no finding, or none of them was timed in it."""
    missing: str | None
    """Why nothing was judged (a bundle from before the state was recorded), else None."""
