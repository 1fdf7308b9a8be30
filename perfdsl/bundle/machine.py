"""environment.json's CPU state and affinity as a record the evaluation can judge.

The run records the CPU's frequency governor, boost, SMT and isolation
(`cpu.state`, from `runtime.machine_state.read_cpu_state`) and where it put its
workers (`cpu.affinity`: the pinning it chose and the affinity each worker
reported). This module is the one reader of those keys; `evaluate.quality`
judges what it reads. A bundle from before they were recorded, or a machine
whose sysfs showed nothing, reads as unknown: no field is guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

FIXED_GOVERNORS = ("performance", "userspace")
"""Governors that hold the clock where it is set: `performance` at the top of the range, `userspace`
at the frequency the owner wrote. Every other one (`powersave`, `ondemand`, `schedutil`,
`conservative`) moves it with the load."""


@attrs.frozen
class CoreState:
    """One core's frequency scaling as the run read it (None where sysfs had no file)."""

    core: int
    governor: str | None
    min_khz: int | None
    max_khz: int | None
    siblings: tuple[int, ...]
    """Its SMT siblings, itself included; () where unknown."""

    @property
    def scaling(self) -> bool | None:
        """Whether the governor may move this core's clock; None where no governor was read."""
        if self.governor is None:
            return None
        if self.min_khz is not None and self.min_khz == self.max_khz:
            return False  # one frequency allowed: no governor can move it
        return self.governor not in FIXED_GOVERNORS


@attrs.frozen
class MachineState:
    """The CPU state and affinity of one run (`cpu.state`, `cpu.affinity` of environment.json)."""

    cores: tuple[CoreState, ...]
    boost: bool | None
    boost_source: str | None
    smt_active: bool | None
    measuring: tuple[int, ...]
    """The cores the measured code ran on: what the workers reported, else what was planned."""
    generator: tuple[int, ...]
    """The cores the load generator's thread ran on; where nothing was pinned, the application
    worker's own (its dispatcher thread then shares them)."""
    pinning_missing: str | None
    """Why the run did not pin (one usable core), as it said."""

    def core(self, number: int) -> CoreState | None:
        return next((c for c in self.cores if c.core == number), None)

    @classmethod
    def from_environment(cls, data: Mapping[str, Any]) -> MachineState | None:
        """The state in environment.json's content, or None when it records none (older bundles)."""
        cpu = data.get("cpu")
        if not isinstance(cpu, Mapping):
            return None
        state, affinity = cpu.get("state"), cpu.get("affinity")
        if not isinstance(state, Mapping) and not isinstance(affinity, Mapping):
            return None
        state = state if isinstance(state, Mapping) else {}
        affinity = affinity if isinstance(affinity, Mapping) else {}
        raw = state.get("cores") if isinstance(state.get("cores"), Mapping) else {}
        cores = tuple(
            CoreState(
                int(name),
                _text(core.get("governor")),
                _int(core.get("min_khz")),
                _int(core.get("max_khz")),
                _cores(core.get("siblings")),
            )
            for name, core in sorted(raw.items(), key=lambda item: _int(item[0]) or 0)
            if str(name).isdigit() and isinstance(core, Mapping)
        )
        workers = affinity.get("workers") if isinstance(affinity.get("workers"), Mapping) else {}
        reported = sorted({c for name, cs in workers.items() if name != "application" for c in _cores(cs)})
        application = _cores(workers.get("application"))
        measuring = tuple(reported) or application or _cores(affinity.get("measuring"))
        generator = _cores(affinity.get("generator")) or application
        missing = _text(affinity.get("missing"))
        return cls(
            cores=cores,
            boost=state.get("boost") if isinstance(state.get("boost"), bool) else None,
            boost_source=_text(state.get("boost_source")),
            smt_active=state.get("smt_active") if isinstance(state.get("smt_active"), bool) else None,
            measuring=measuring,
            generator=generator,
            pinning_missing=missing,
        )


def read_machine_state(bundle: Path) -> MachineState | None:
    """The state in a bundle's environment.json; None where the file is absent, unreadable or
    records none (an environment is context, not evidence: its absence refuses nothing)."""
    try:
        data = json.loads((Path(bundle) / "environment.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return MachineState.from_environment(data) if isinstance(data, Mapping) else None


def _cores(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(sorted({v for v in value if isinstance(v, int) and not isinstance(v, bool)}))


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
