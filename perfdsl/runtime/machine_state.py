"""The CPU's own state, read from sysfs, and where the run puts its measuring workers.

How fast the same code runs on a CPU depends on settings outside the code: the
frequency governor (`powersave`, `ondemand`, `schedutil` move the clock with the
load), boost or turbo (the clock then follows temperature and how many cores are
busy), SMT (a sibling hyperthread shares the core's execution units) and which
cores the measuring process may use (pyperf issues 120 and 158; faster-cpython's
tools issue 9 needed isolated CPUs for stable A/A results). `read_cpu_state`
records all of it; the evaluation judges it (`bundle.machine`, PQ011 and PQ012).

perfdsl only *reads* the machine: nothing here writes to /sys (a governor or
turbo setting outlives the run and is the machine owner's to choose; pyperf's
`system tune` left machines slow across reboots). The one thing it sets is the
affinity of its own processes: `choose_pinning` gives the measuring workers
cores of their own and the application's load generator another, so the
generator's thread never competes with the code it measures.

Every reader takes the sysfs root as a parameter, so tests plant a tree. A file
that is absent (a container, a VM without cpufreq, another OS) makes its field
None with the reason in `unavailable`, never an exception: unknown, not clean.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.ranges import parse_ranges

CPU_ROOT = Path("/sys/devices/system/cpu")


def _read(path: Path, unavailable: dict[str, str], field: str) -> str | None:
    """A sysfs file's text, or None with why under `field` (absent, unreadable)."""
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError as error:
        unavailable.setdefault(field, f"{path}: {error.strerror or error}")
        return None


def _cpus(root: Path) -> list[int]:
    """The cpuN directories under the root, by number."""
    try:
        names = [p.name for p in root.iterdir() if p.name.startswith("cpu") and p.name[3:].isdigit()]
    except OSError:
        return []
    return sorted(int(name[3:]) for name in names)


def _boost(root: Path, unavailable: dict[str, str]) -> tuple[bool | None, str | None]:
    """Whether boost/turbo may raise the clock, and which file said so.

    acpi-cpufreq and amd-pstate write `cpufreq/boost` (1: on); intel_pstate
    writes `intel_pstate/no_turbo` (0: turbo on); newer kernels also give each
    policy its own `boost`.
    """
    for relative, on in (("cpufreq/boost", "1"), ("intel_pstate/no_turbo", "0")):
        path = root / relative
        if path.exists():
            text = _read(path, unavailable, "boost")
            return (None if text is None else text == on), relative
    policies = sorted((root / "cpufreq").glob("policy*/boost")) if (root / "cpufreq").is_dir() else []
    if policies:
        values = [_read(p, unavailable, "boost") for p in policies]
        return any(v == "1" for v in values), "cpufreq/policy*/boost"
    unavailable["boost"] = "no cpufreq/boost, intel_pstate/no_turbo or policy boost file"
    return None, None


def read_cpu_state(root: Path = CPU_ROOT) -> dict[str, Any]:
    """The CPU's frequency, SMT and isolation state under `root`, as environment.json holds it.

    Per core (keys are the core's number as text): the governor, the scaling
    driver and the range the governor may move the clock in (`min_khz`,
    `max_khz`; equal means the clock is fixed whatever the governor), and the
    core's SMT siblings. Whole machine: boost, SMT control and whether it is
    active, and the online and isolated CPU lists.
    """
    unavailable: dict[str, str] = {}
    cores: dict[str, dict[str, Any]] = {}
    for cpu in _cpus(root):
        base = root / f"cpu{cpu}"
        frequency = base / "cpufreq"
        core: dict[str, Any] = {}
        for key, name in (
            ("governor", "scaling_governor"),
            ("driver", "scaling_driver"),
            ("min_khz", "scaling_min_freq"),
            ("max_khz", "scaling_max_freq"),
        ):
            text = _read(frequency / name, unavailable, key) if frequency.is_dir() else None
            core[key] = int(text) if text and key.endswith("_khz") and text.isdigit() else text
        siblings = _read(base / "topology" / "thread_siblings_list", unavailable, "siblings")
        core["siblings"] = _cpu_list(siblings)
        cores[str(cpu)] = core
    if cores and not any(c["governor"] for c in cores.values()):
        unavailable["governor"] = f"no {root}/cpu*/cpufreq: the kernel exposes no frequency scaling here"
    boost, boost_source = _boost(root, unavailable)
    smt_active = _read(root / "smt" / "active", unavailable, "smt_active")
    return {
        "root": str(root),
        "cores": cores,
        "boost": boost,
        "boost_source": boost_source,
        "smt_control": _read(root / "smt" / "control", unavailable, "smt_control"),
        "smt_active": None if smt_active is None else smt_active == "1",
        "online": _cpu_list(_read(root / "online", unavailable, "online")),
        "isolated": _cpu_list(_read(root / "isolated", unavailable, "isolated")),
        "unavailable": unavailable,
    }


def _cpu_list(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return list(parse_ranges(text))
    except ValueError:
        return None


def siblings_of(state: Mapping[str, Any]) -> dict[int, tuple[int, ...]]:
    """Core -> its SMT siblings (itself included) from `read_cpu_state`'s record; {} where unknown."""
    cores = state.get("cores")
    if not isinstance(cores, Mapping):
        return {}
    out: dict[int, tuple[int, ...]] = {}
    for name, core in cores.items():
        siblings = core.get("siblings") if isinstance(core, Mapping) else None
        if str(name).isdigit() and isinstance(siblings, list):
            out[int(name)] = tuple(int(s) for s in siblings)
    return out


@attrs.frozen
class Pinning:
    """The cores the measuring workers run on and the ones the load generator runs on."""

    measuring: tuple[int, ...]
    """The measuring workers' affinity (every operation's and the application's); () when not pinned."""
    generator: tuple[int, ...]
    """The load generator's thread (the application worker's dispatcher); () when not pinned."""
    missing: str | None
    """Why nothing was pinned (one usable core, no affinity on this OS), else None."""

    def to_json(self) -> dict[str, Any]:
        return {"measuring": list(self.measuring), "generator": list(self.generator), "missing": self.missing}


def usable_cores() -> tuple[int, ...] | None:
    """The cores this process may run on, or None where the OS has no affinity (macOS)."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except AttributeError:
        return None


def choose_pinning(
    usable: Collection[int] | None,
    siblings: Mapping[int, tuple[int, ...]],
    isolated: Collection[int] = (),
) -> Pinning:
    """Give the load generator one core and the measuring workers the rest of `usable`.

    The generator takes the highest usable core that is not isolated; the
    measuring workers take the usable isolated cores where there are any (the
    owner set them aside for this), else every other usable core that is not
    an SMT sibling of the generator's, else every other usable core. A set,
    not one core, because a `parallel=True` kernel needs every core it may
    use; on a two-core machine it is one core each.
    """
    if usable is None:
        return Pinning((), (), "this OS gives no processor affinity (os.sched_setaffinity)")
    cores = sorted(set(usable))
    if len(cores) < 2:
        return Pinning(
            (), (), f"{len(cores)} usable core: the measuring worker and the load generator share it"
        )
    spare = [c for c in cores if c not in isolated] or cores
    generator = spare[-1]
    rest = [c for c in cores if c != generator]
    apart = [c for c in rest if c not in siblings.get(generator, (generator,))]
    measuring = [c for c in rest if c in isolated] or apart or rest
    return Pinning(tuple(measuring), (generator,), None)


def pin_thread(cores: Collection[int]) -> frozenset[int] | None:
    """Restrict the calling thread (and the threads it starts later) to `cores`.

    Returns the affinity it had, to restore, or None when nothing was changed:
    no cores asked for, an OS without affinity, or cores outside this
    process's cpuset (EINVAL), which leaves the thread where it was.
    """
    if not cores:
        return None
    try:
        before = frozenset(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cores)
    except (AttributeError, OSError):
        return None
    return before


def thread_affinity() -> list[int] | None:
    """The calling thread's affinity, sorted, or None where the OS has none."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None
