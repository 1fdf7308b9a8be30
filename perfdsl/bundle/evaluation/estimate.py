"""A value with its interval: the one shape every estimate in evaluation.json takes."""

from __future__ import annotations

import attrs


@attrs.frozen
class Estimate:
    """A value with its interval at a confidence level (a point has low == value == high)."""

    value: float
    low: float
    high: float
    level: float

    def __attrs_post_init__(self) -> None:
        if not self.low <= self.value <= self.high:
            raise ValueError(f"{self.value} must lie in its interval [{self.low}, {self.high}]")

    @classmethod
    def point(cls, value: float) -> Estimate:
        """An exactly known value: an interval of one point."""
        return cls(float(value), float(value), float(value), 1.0)
