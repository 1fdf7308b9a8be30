"""Sets of integers written as ranges, "0-3,8,10-11": how Linux writes CPU lists and Slurm job arrays."""

from __future__ import annotations

from collections.abc import Iterable


def format_ranges(values: Iterable[int]) -> str:
    """The values, sorted and without repeats, as comma-joined runs ("0-3,8"); "" for none."""
    runs: list[list[int]] = []
    for value in sorted(set(values)):
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def parse_ranges(text: str) -> tuple[int, ...]:
    """The values of "0-3,8,10-11" ("" is none), sorted (ValueError when a part is not N or N-M)."""
    values: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        values.update(range(int(low), int(high or low) + 1))
    return tuple(sorted(values))
