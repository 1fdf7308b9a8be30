"""Numbers with units, normalised to one base unit per dimension.

A study writes `25 ms`, `4 GiB`, `3.2 TB/s`, `95%`, `400 rps`, `80 per token` or
`12000 gpu_hours per day`. Each unit belongs to a dimension; comparing or
adding quantities of different dimensions is the unit mismatch `check` reports
(`ms` against `GB`), so dimensions are kept as plain names rather than a full
algebra: studies only ever compare like with like.
"""

from __future__ import annotations

import attrs

# dimension -> unit -> factor to the dimension's base unit
_UNITS: dict[str, dict[str, float]] = {
    "time": {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0},
    "bytes": {
        "B": 1.0,
        "KB": 1e3,
        "MB": 1e6,
        "GB": 1e9,
        "TB": 1e12,
        "KiB": 2.0**10,
        "MiB": 2.0**20,
        "GiB": 2.0**30,
        "TiB": 2.0**40,
    },
    "bandwidth": {
        "KB/s": 1e3,
        "MB/s": 1e6,
        "GB/s": 1e9,
        "TB/s": 1e12,
        "KiB/s": 2.0**10,
        "MiB/s": 2.0**20,
        "GiB/s": 2.0**30,
        "TiB/s": 2.0**40,
    },
    "rate": {"rps": 1.0, "qps": 1.0, "per second": 1.0},
    "fraction": {"%": 0.01},
}

BASE_UNITS = {"time": "s", "bytes": "B", "bandwidth": "B/s", "rate": "rps", "fraction": "1"}

# `80 per token`: how often something happens for each unit of work.
FREQUENCY_SUBJECTS = ("token", "request", "step", "call", "batch", "sample", "query")
# `12000 gpu_hours per day`: how much of a resource is spent per period.
SCALE_RESOURCES = ("gpu_hours", "cpu_hours", "node_hours", "requests", "tokens", "steps", "dollars")
SCALE_PERIODS = ("hour", "day", "week", "month", "year")

DIMENSIONLESS = "number"


@attrs.frozen
class Unit:
    """A unit as written, its dimension and its factor to the base unit."""

    text: str
    dimension: str
    factor: float


class UnknownUnit(ValueError):
    """A unit word no dimension knows; carries close matches for "did you mean"."""

    def __init__(self, text: str, suggestions: list[str]) -> None:
        super().__init__(text)
        self.text = text
        self.suggestions = suggestions


def known_units() -> list[str]:
    """Every unit a study may write, for suggestions and documentation."""
    words = [unit for table in _UNITS.values() for unit in table]
    words += [f"per {subject}" for subject in FREQUENCY_SUBJECTS]
    words += [f"{r} per {p}" for r in SCALE_RESOURCES for p in SCALE_PERIODS]
    return words


def lookup_unit(text: str) -> Unit:
    """The unit for a written unit; raises UnknownUnit with suggestions."""
    for dimension, table in _UNITS.items():
        if text in table:
            return Unit(text, dimension, table[text])
    if text.startswith("per ") and text[4:] in FREQUENCY_SUBJECTS:
        return Unit(text, "frequency", 1.0)
    resource, _, period = text.partition(" per ")
    if resource in SCALE_RESOURCES and period in SCALE_PERIODS:
        return Unit(text, "scale", 1.0)
    import difflib  # here: only an unknown unit needs it

    raise UnknownUnit(text, difflib.get_close_matches(text, known_units(), n=4, cutoff=0.5))


@attrs.frozen
class Quantity:
    """A number and its unit; `base` is the value in the dimension's base unit."""

    value: float
    unit: Unit | None = None

    @property
    def dimension(self) -> str:
        return self.unit.dimension if self.unit else DIMENSIONLESS

    @property
    def base(self) -> float:
        return self.value * self.unit.factor if self.unit else self.value

    def __str__(self) -> str:
        number = f"{self.value:g}"
        if self.unit is None:
            return number
        return f"{number}{self.unit.text}" if self.unit.text == "%" else f"{number} {self.unit.text}"
