"""environment.json as a record: what the numbers of two runs depend on, so it can be compared.

The run writes environment.json whole (`runtime.environment.capture_environment`);
this module is the one reader of its keys. Comparing two runs, or a study's
history, must say what changed around the code before any number: a new
driver, clock limit, CPU governor, boost setting or library version can move a time as much as the
change being measured. `facts` is that part of the file, flattened to
(name, value) pairs in a fixed order, so two runs differ exactly where their
facts differ. Readings that change on every run (the current clock and
temperature of an idle GPU, the time, the working directory) are left out:
they would mark every run as changed. The git commit of the study's repository
is kept apart, because a new commit is what a history is made of, not a
change of machine. The rest of the record is what a report's reproduction
section shows (the command line, the versions, the GPUs by name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.machine import MachineState

ENVIRONMENT = "environment.json"

_GPU_FACTS = (
    ("name", "name"),
    ("memory_total_bytes", "memory"),
    ("max_sm_clock_mhz", "max SM clock (MHz)"),
    ("max_mem_clock_mhz", "max memory clock (MHz)"),
    ("power_limit_w", "power limit (W)"),
    ("mig_mode", "MIG mode"),
    ("persistence_mode", "persistence mode"),
)


@attrs.frozen
class GpuSummary:
    """The GPUs a run saw, as a report names them: the driver and each device's name."""

    driver_version: str | None
    cuda_driver_version: str | None
    """The CUDA version the driver supports, "13.0" (NVML only)."""
    names: tuple[str, ...]

    @property
    def description(self) -> str:
        """One line: every device's name, then the driver and CUDA versions that were read."""
        shown = [
            *self.names,
            *([f"driver {self.driver_version}"] if self.driver_version else []),
            *([f"CUDA {self.cuda_driver_version}"] if self.cuda_driver_version else []),
        ]
        return ", ".join(shown) or "recorded"

    @classmethod
    def from_json(cls, gpu: Mapping[str, Any]) -> GpuSummary:
        devices = [d for d in gpu.get("devices") or () if isinstance(d, Mapping)]
        return cls(
            driver_version=_optional_text(gpu.get("driver_version")),
            cuda_driver_version=_optional_text(gpu.get("cuda_driver_version")),
            names=tuple(str(d["name"]) for d in devices if d.get("name")),
        )


@attrs.frozen
class EnvironmentRecord:
    """One run's machine and software: the facts compared across runs, and what a report shows."""

    facts: tuple[tuple[str, str], ...]
    """(name, value) in a fixed order; a value the run could not read is "unknown"."""
    commit: str | None
    """The git commit of the repository holding the study, or None outside one."""
    dirty: bool | None
    """Whether that work tree had changes not in the commit (untracked files count)."""
    captured: str | None
    """When the environment was captured (UTC, ISO 8601)."""
    perfdsl: str | None
    command_line: tuple[str, ...] | None
    python: str
    """Implementation and version, "CPython 3.11.7"; empty where neither was read."""
    system: str
    """OS name, release and machine, "Linux 6.8.0 x86_64"; empty where none was read."""
    cpu_model: str | None
    usable_cores: int | None
    """CPUs the run's process could use (affinity, cpusets), which can be fewer than exist."""
    gpu: GpuSummary | None
    gpu_missing: str | None
    """Why no GPU was read (no NVML, no nvidia-smi), as the run said it."""
    packages: tuple[tuple[str, str | None], ...]
    """(distribution, version) by name; None for one not installed."""
    variables: tuple[tuple[str, str], ...]
    """(name, value) by name: the environment variables that change the device or the compilation."""
    machine: MachineState | None = None
    """The CPU state and where the run put its workers (`bundle.machine`); None before it was recorded."""

    @property
    def short_commit(self) -> str:
        """The commit as people write it: 10 hex digits, `+` when the tree was dirty."""
        if self.commit is None:
            return "no commit"
        return self.commit[:10] + ("+" if self.dirty else "")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EnvironmentRecord:
        facts: list[tuple[str, str]] = [
            ("perfdsl", _text(data.get("perfdsl"))),
            ("Python", _text(_get(data, "python", "version"))),
            ("OS", " ".join(_text(_get(data, "os", k)) for k in ("system", "release", "machine"))),
            ("CPU", _text(_get(data, "cpu", "model"))),
            ("usable CPU cores", _text(_get(data, "cpu", "usable_cores"))),
        ]
        packages = data.get("packages") if isinstance(data.get("packages"), Mapping) else {}
        facts += [(f"package {name}", _text(version, "absent")) for name, version in sorted(packages.items())]
        variables = data.get("environment_variables")
        if isinstance(variables, Mapping):
            facts += [(f"variable {name}", _text(value)) for name, value in sorted(variables.items())]
        machine = MachineState.from_environment(data)
        facts += _cpu_state_facts(machine)
        facts += _gpu_facts(data.get("gpu"))
        facts += _source_facts(data.get("sources"))
        git = data.get("git") if isinstance(data.get("git"), Mapping) else {}
        commit = git.get("commit")
        dirty = git.get("dirty")
        captured = data.get("time_utc")
        command = data.get("command_line")
        gpu = data.get("gpu")
        cores = _get(data, "cpu", "usable_cores")
        named = variables if isinstance(variables, Mapping) else {}
        return cls(
            facts=tuple(facts),
            commit=commit if isinstance(commit, str) else None,
            dirty=dirty if isinstance(dirty, bool) else None,
            captured=captured if isinstance(captured, str) else None,
            perfdsl=_optional_text(data.get("perfdsl")),
            command_line=tuple(str(a) for a in command) if isinstance(command, list) and command else None,
            python=_joined(data, "python", ("implementation", "version")),
            system=_joined(data, "os", ("system", "release", "machine")),
            cpu_model=_optional_text(_get(data, "cpu", "model")),
            usable_cores=cores if isinstance(cores, int) else None,
            gpu=GpuSummary.from_json(gpu) if isinstance(gpu, Mapping) else None,
            gpu_missing=_optional_text(data.get("gpu_missing")),
            packages=tuple((str(name), _optional_text(v)) for name, v in sorted(packages.items())),
            variables=tuple((str(name), str(value)) for name, value in sorted(named.items())),
            machine=machine,
        )

    @classmethod
    def read(cls, bundle: Path) -> EnvironmentRecord:
        """Read a bundle's environment.json (OSError or ValueError)."""
        data = json.loads((Path(bundle) / ENVIRONMENT).read_text(encoding="utf-8"))
        if not isinstance(data, Mapping):
            raise ValueError(f"{Path(bundle) / ENVIRONMENT}: not a JSON object")
        return cls.from_json(data)


def differences(before: EnvironmentRecord, after: EnvironmentRecord) -> list[str]:
    """Every fact that differs, as `name: old -> new`, in the facts' order (a fact only one run has too)."""
    old, new = dict(before.facts), dict(after.facts)
    names = list(dict.fromkeys([name for name, _ in before.facts] + [name for name, _ in after.facts]))
    return [
        f"{name}: {old.get(name, 'absent')} -> {new.get(name, 'absent')}"
        for name in names
        if old.get(name, "absent") != new.get(name, "absent")
    ]


def _cpu_state_facts(state: MachineState | None) -> list[tuple[str, str]]:
    """The CPU state two runs may differ by (governor, boost, SMT); none for a bundle without it."""
    if state is None:
        return []
    governors = sorted({c.governor for c in state.cores if c.governor})
    return [
        ("CPU governor", ", ".join(governors) or "unknown"),
        ("CPU boost", _on_off(state.boost)),
        ("SMT", _on_off(state.smt_active)),
    ]


def _source_facts(sources: Any) -> list[tuple[str, str]]:
    """Each measured module's SHA-256, by module name: an edit between two runs is a difference
    `compare` names, inside a repository or not. None for a bundle before they were recorded."""
    if not isinstance(sources, Mapping):
        return []
    return [
        (f"source of {name} (SHA-256)", _text(entry.get("sha256"))[:12])
        for name, entry in sorted(sources.items())
        if isinstance(entry, Mapping)
    ]


def _on_off(flag: bool | None) -> str:
    return "unknown" if flag is None else ("on" if flag else "off")


def _gpu_facts(gpu: Any) -> list[tuple[str, str]]:
    if not isinstance(gpu, Mapping):
        return [("GPU", "none")]
    facts = [
        ("GPU driver", _text(gpu.get("driver_version"))),
        ("CUDA driver", _text(gpu.get("cuda_driver_version"))),
    ]
    for device in gpu.get("devices") or []:
        if isinstance(device, Mapping):
            index = device.get("index")
            facts += [(f"GPU {index} {label}", _text(device.get(key))) for key, label in _GPU_FACTS]
    return facts


def _get(data: Mapping[str, Any], section: str, key: str) -> Any:
    inner = data.get(section)
    return inner.get(key) if isinstance(inner, Mapping) else None


def _text(value: Any, absent: str = "unknown") -> str:
    return absent if value is None else str(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _joined(data: Mapping[str, Any], section: str, keys: tuple[str, ...]) -> str:
    """The section's values at `keys`, space-separated, those not read left out."""
    return " ".join(str(v) for v in (_get(data, section, k) for k in keys) if v is not None)
