"""The lines of a study file that differ in meaning from the study that ran.

A report takes its prose from the study file it is built from (objective, SLO, byte formulas,
limits) and its evidence from the run. An edit made after the run leaves the two disagreeing
on page 1 (an objective of 2 ms beside a goodput judged at 20 ms; a byte formula beside the
bytes the old one modelled), so page 1 names the edited lines. Comments and blank lines are
not meaning, and the `predict` sections and the decision are left to their own warnings (the
registered hash; the decision checked again).
"""

from __future__ import annotations

import difflib
import re

from perfdsl.nodes import Study

_COMMENT = re.compile(r'("(?:[^"\\\n]|\\.)*")|#.*')
"""A string (kept, so that a `#` inside one stays) or a comment (dropped)."""


def _meaning(line: str) -> str:
    """A line without its comment, its words separated by single spaces."""
    return " ".join(_COMMENT.sub(lambda m: m.group(1) or "", line).split())


def edited_lines(current: Study, ran_text: str) -> tuple[int, ...]:
    """The 1-based lines of `current`'s file whose meaning the study that ran does not have,
    outside its `predict` sections and its decision; a line removed counts at the line now in its
    place."""
    source = current.source
    now = [(number, _meaning(line)) for number, line in enumerate(source.text.splitlines(), 1)]
    now = [(number, meaning) for number, meaning in now if meaning]
    ran = [meaning for line in ran_text.splitlines() if (meaning := _meaning(line))]
    matcher = difflib.SequenceMatcher(None, ran, [meaning for _, meaning in now], autojunk=False)
    changed: set[int] = set()
    for tag, _, _, start, stop in matcher.get_opcodes():
        if tag != "equal" and now:
            at = range(start, stop) if stop > start else [min(start, len(now) - 1)]
            changed.update(now[j][0] for j in at)
    spans = [*current.predict_spans, *([current.decision.span] if current.decision else [])]
    lines_of = (range(source.position(s.start).line, source.position(s.end).line + 1) for s in spans)
    own_warning = {line for lines in lines_of for line in lines}
    return tuple(sorted(changed - own_warning))


def line_ranges(lines: tuple[int, ...]) -> str:
    """`12, 24-26`: consecutive lines as one range."""
    runs: list[list[int]] = []
    for line in lines:
        if runs and line == runs[-1][-1] + 1:
            runs[-1].append(line)
        else:
            runs.append([line])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)
