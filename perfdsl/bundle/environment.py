"""environment.json as a record: what the numbers of two runs depend on, so it can be compared.

The run writes environment.json whole (`runtime.environment.capture_environment`);
this module is the one reader of its keys. Comparing two runs, or a study's
history, must say what changed around the code before any number: a new
driver, clock limit, CPU or library version can move a time as much as the
change being measured. `facts` is that part of the file, flattened to
(name, value) pairs in a fixed order, so two runs differ exactly where their
facts differ. Readings that change on every run (the current clock and
temperature of an idle GPU, the time, the working directory) are left out:
they would mark every run as changed. The git commit of the study's repository
is kept apart, because a new commit is what a history is made of, not a
change of machine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

ENVIRONMENT = "environment.json"

_GPU_FACTS = (
    ("name", "name"),
    ("memory_total_bytes", "memory"),
    ("max_sm_clock_mhz", "max SM clock (MHz)"),
    ("max_mem_clock_mhz", "max memory clock (MHz)"),
    ("power_limit_w", "power limit (W)"),
    ("mig_mode", "MIG mode"),
)


@attrs.frozen
class EnvironmentRecord:
    """The facts of one run's machine and software, and the commit of the study's repository."""

    facts: tuple[tuple[str, str], ...]
    """(name, value) in a fixed order; a value the run could not read is "unknown"."""
    commit: str | None
    """The git commit of the repository holding the study, or None outside one."""
    dirty: bool | None
    """Whether that work tree had changes not in the commit (untracked files count)."""
    captured: str | None
    """When the environment was captured (UTC, ISO 8601)."""

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
        facts += _gpu_facts(data.get("gpu"))
        git = data.get("git") if isinstance(data.get("git"), Mapping) else {}
        commit = git.get("commit")
        dirty = git.get("dirty")
        captured = data.get("time_utc")
        return cls(
            facts=tuple(facts),
            commit=commit if isinstance(commit, str) else None,
            dirty=dirty if isinstance(dirty, bool) else None,
            captured=captured if isinstance(captured, str) else None,
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
