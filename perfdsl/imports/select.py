"""Picking the baseline and change entries of imported evidence by name: exact, else a regular expression."""

from __future__ import annotations

import math
import re

from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError

_LISTED = 12
"""Names listed in an error: enough to spot the intended one, few enough for one line."""


class EntryNotFound(ImportFormatError):
    """No entry, or more than one, matches a selector; the message lists the available names."""


def select_entry(evidence: ImportedEvidence, selector: str) -> Entry:
    """The entry named exactly `selector`, else the only one whose name `selector` fully matches as a regex.

    Exact names win so that a name full of regex characters (`BM_x/1024`,
    `test_a[numpy]`) selects itself; a pattern that matches several entries is
    an error rather than a silent first pick.
    """
    return _usable(evidence, _named(evidence, selector))


def _usable(evidence: ImportedEvidence, entry: Entry) -> Entry:
    """The entry, where every time it holds is one a clock measures: a file of zeros (or of
    1e300 s) passed check and run, and evaluate then refused the bundle without naming the file."""
    for index, value in enumerate(entry.samples):
        if not (math.isfinite(value) and value > 0):
            raise ImportFormatError(
                f"{evidence.label.path}: entry `{entry.name}` holds a time of {value:g} ns (sample "
                f"{index + 1}): a measured time is positive and finite; export the tool's results again"
            )
    return entry


def _named(evidence: ImportedEvidence, selector: str) -> Entry:
    """The entry `select_entry` describes, before its times are looked at."""
    exact = [entry for entry in evidence.entries if entry.name == selector]
    if len(exact) > 1:
        # A file with two benchmarks of one name (two runs appended to one pyperf file, say)
        # gave the first, silently, and the other was 10x slower.
        raise EntryNotFound(
            f"{evidence.label.path}: {len(exact)} entries are named `{selector}`: expected exactly one; "
            "keep one run's results in the file, or rename one entry"
        )
    if exact:
        return exact[0]
    try:
        pattern = re.compile(selector)
    except re.error as error:
        raise EntryNotFound(
            f"{evidence.label.path}: no entry named `{selector}`, and it is not a valid regular expression "
            f"({error}); available: {_available(evidence)}"
        ) from None
    matches = [entry for entry in evidence.entries if pattern.fullmatch(entry.name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise EntryNotFound(
            f"{evidence.label.path}: no entry matches `{selector}`; available: {_available(evidence)}"
        )
    names = ", ".join(f"`{entry.name}`" for entry in matches[:_LISTED])
    raise EntryNotFound(
        f"{evidence.label.path}: `{selector}` matches {len(matches)} entries ({names}): "
        "expected exactly one; give the full name"
    )


def select_pair(
    baseline: ImportedEvidence, baseline_selector: str, change: ImportedEvidence, change_selector: str
) -> tuple[Entry, Entry]:
    """The baseline and change entries, from one file or two; the same entry twice is an error."""
    first = select_entry(baseline, baseline_selector)
    second = select_entry(change, change_selector)
    if baseline is change and first is second:
        raise EntryNotFound(
            f"{baseline.label.path}: baseline `{baseline_selector}` and change `{change_selector}` select "
            f"the same entry `{first.name}`"
        )
    return first, second


def _available(evidence: ImportedEvidence) -> str:
    names = evidence.names
    if not names:
        return "none (the file has no entries)"
    listed = ", ".join(f"`{name}`" for name in names[:_LISTED])
    return listed + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")
