"""A matrix file: one study, the axes its cells vary, and how a scheduler should place them.

The file is TOML beside the study (`rmsnorm.matrix.toml`), read with the
standard library's tomllib:

    name    = "rmsnorm-fleet"
    study   = "rmsnorm.perf"          # relative to this file
    quick   = true
    targets = ["cuda"]

    [slurm]                           # every key optional
    partition     = "gpu"
    time          = "00:30:00"
    throttle      = 4                 # at most 4 cells at once (the array's %4)
    gpus_per_cell = 1                 # --gres=gpu:1; or cpus_per_cell = 8; exclusive = true

    [[machines]]                      # one job array per machine
    name       = "h100"
    constraint = "h100&driver550"     # a node feature expression
    [[environments]]                  # another perfdsl install, e.g. another Numba
    name   = "numba-0.60"
    python = "/shared/envs/numba060/bin/python"
    [[shapes]]                        # a subset of the workload's declared shapes
    name   = "small"
    select = [{M = 64, N = 4096}]

Every name becomes part of a directory and a cell id, and partitions,
constraints, times and the matrix name go into `#SBATCH` lines: each is matched
against a strict pattern here and refused with one line naming the file and the
key. Paths (the study, an environment's python) never go into a script; they
reach the task through the JSON cell file, as arguments.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.targets import CHOICES as TARGETS

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,47}")
"""A matrix or axis-value name: a directory name, a cell id part and a job-name part."""
PARTITION = re.compile(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*")
"""One partition or a comma-separated list, as sbatch --partition takes them."""
CONSTRAINT = re.compile(r"[A-Za-z0-9_.-]+([&|][A-Za-z0-9_.-]+)*")
"""Node features joined by & (and) or | (or): sbatch --constraint without brackets or counts."""
TIME = re.compile(r"(\d+-)?\d+(:\d{2}){0,2}")
"""sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS."""

ANY_MACHINE = "any"
CURRENT_ENVIRONMENT = "current"
ALL_SHAPES = "all"


class MatrixError(Exception):
    """A matrix file that cannot be used, as one line naming the file and what to do."""


@attrs.frozen
class Machine:
    """One value of the machine axis: where the scheduler may place a cell."""

    name: str
    constraint: str | None = None
    partition: str | None = None


@attrs.frozen
class Environment:
    """One value of the environment axis: the python (with its perfdsl) that runs a cell."""

    name: str
    python: str | None = None
    """None: the python running `perfdsl matrix`."""


@attrs.frozen
class ShapeSubset:
    """One value of the shapes axis: the declared shapes a cell runs (None: all of them)."""

    name: str
    select: tuple[tuple[tuple[str, int], ...], ...] | None = None


@attrs.frozen
class SlurmOptions:
    """What every array task asks of Slurm (a machine's partition overrides `partition`)."""

    partition: str | None = None
    time: str | None = None
    throttle: int | None = None
    gpus_per_cell: int | None = None
    cpus_per_cell: int | None = None
    exclusive: bool = False


@attrs.frozen
class MatrixSpec:
    """A matrix file, read and validated."""

    path: Path
    text: str
    name: str
    study: Path
    quick: bool
    time_limit: float | None
    targets: tuple[str, ...]
    machines: tuple[Machine, ...]
    environments: tuple[Environment, ...]
    shapes: tuple[ShapeSubset, ...]
    slurm: SlurmOptions


_TOP = {"name", "study", "quick", "time_limit", "targets", "slurm", "machines", "environments", "shapes"}


def read_spec(path: Path) -> MatrixSpec:
    """Read and validate a matrix file (MatrixError, one line, for anything wrong)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MatrixError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise MatrixError(f"{path}: not UTF-8 text (byte {error.start}); TOML files are UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise MatrixError(f"{path}: not TOML: {error}") from None
    return _spec(path, text, data)


def _spec(path: Path, text: str, data: Mapping[str, Any]) -> MatrixSpec:
    where = str(path)
    _known(where, "the file", data, _TOP)
    name = _matched(where, "name", _required(where, data, "name", str), NAME)
    study = _required(where, data, "study", str)
    targets = tuple(_list_of(where, data, "targets", str) or ["auto"])
    for target in targets:
        if target not in TARGETS:
            raise MatrixError(f"{where}: targets: `{target}` is not one of {', '.join(TARGETS)}")
    quick = _optional(where, data, "quick", bool, False)
    time_limit = _optional(where, data, "time_limit", (int, float), None)
    if time_limit is not None and not time_limit > 0:
        raise MatrixError(f"{where}: time_limit: give a number of seconds above 0")
    machines = tuple(_machine(where, i, m) for i, m in enumerate(_tables(where, data, "machines")))
    environments = tuple(
        _environment(where, i, e) for i, e in enumerate(_tables(where, data, "environments"))
    )
    shapes = tuple(_shapes(where, i, s) for i, s in enumerate(_tables(where, data, "shapes")))
    for axis, values in (("machines", machines), ("environments", environments), ("shapes", shapes)):
        names = [v.name for v in values]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise MatrixError(f"{where}: {axis}: the name `{duplicate}` is given twice")
    return MatrixSpec(
        path=path,
        text=text,
        name=name,
        study=(path.parent / study).resolve(),
        quick=quick,
        time_limit=float(time_limit) if time_limit is not None else None,
        targets=targets,
        machines=machines or (Machine(ANY_MACHINE),),
        environments=environments or (Environment(CURRENT_ENVIRONMENT),),
        shapes=shapes or (ShapeSubset(ALL_SHAPES),),
        slurm=_slurm(where, data.get("slurm", {})),
    )


def _machine(where: str, i: int, table: Mapping[str, Any]) -> Machine:
    key = f"machines[{i}]"
    _known(where, key, table, {"name", "constraint", "partition"})
    constraint = _optional(where, table, "constraint", str, None, key)
    partition = _optional(where, table, "partition", str, None, key)
    return Machine(
        name=_matched(where, f"{key}.name", _required(where, table, "name", str, key), NAME),
        constraint=_matched(where, f"{key}.constraint", constraint, CONSTRAINT) if constraint else None,
        partition=_matched(where, f"{key}.partition", partition, PARTITION) if partition else None,
    )


def _environment(where: str, i: int, table: Mapping[str, Any]) -> Environment:
    key = f"environments[{i}]"
    _known(where, key, table, {"name", "python"})
    return Environment(
        name=_matched(where, f"{key}.name", _required(where, table, "name", str, key), NAME),
        python=_optional(where, table, "python", str, None, key),
    )


def _shapes(where: str, i: int, table: Mapping[str, Any]) -> ShapeSubset:
    key = f"shapes[{i}]"
    _known(where, key, table, {"name", "select"})
    select = _required(where, table, "select", list, key)
    chosen = []
    for shape in select:
        if not (
            isinstance(shape, dict)
            and shape
            and all(k.isidentifier() and isinstance(v, int) and v > 0 for k, v in shape.items())
        ):
            raise MatrixError(f"{where}: {key}.select: give each shape as an inline table such as {{M = 64}}")
        chosen.append(tuple(shape.items()))
    return ShapeSubset(
        name=_matched(where, f"{key}.name", _required(where, table, "name", str, key), NAME),
        select=tuple(chosen),
    )


def _slurm(where: str, table: Any) -> SlurmOptions:
    if not isinstance(table, dict):
        raise MatrixError(f"{where}: slurm: give a table ([slurm])")
    _known(
        where,
        "slurm",
        table,
        {"partition", "time", "throttle", "gpus_per_cell", "cpus_per_cell", "exclusive"},
    )
    partition = _optional(where, table, "partition", str, None, "slurm")
    time = _optional(where, table, "time", str, None, "slurm")
    counts = {
        k: _optional(where, table, k, int, None, "slurm")
        for k in ("throttle", "gpus_per_cell", "cpus_per_cell")
    }
    for key, value in counts.items():
        if value is not None and value < 1:
            raise MatrixError(f"{where}: slurm.{key}: give a whole number of at least 1")
    return SlurmOptions(
        partition=_matched(where, "slurm.partition", partition, PARTITION) if partition else None,
        time=_matched(where, "slurm.time", time, TIME) if time else None,
        throttle=counts["throttle"],
        gpus_per_cell=counts["gpus_per_cell"],
        cpus_per_cell=counts["cpus_per_cell"],
        exclusive=_optional(where, table, "exclusive", bool, False, "slurm"),
    )


def _matched(where: str, key: str, value: str, pattern: re.Pattern[str]) -> str:
    """`value` when the whole of it matches `pattern`; a refusal that quotes it safely otherwise."""
    if not pattern.fullmatch(value):
        raise MatrixError(f"{where}: {key}: {value!r} is refused: it must match {pattern.pattern}")
    return value


def _known(where: str, key: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise MatrixError(
            f"{where}: {key}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(allowed))}"
        )


def _required(where: str, table: Mapping[str, Any], key: str, kind: type, within: str = "") -> Any:
    if key not in table:
        raise MatrixError(f"{where}: {within + '.' if within else ''}{key} is missing")
    return _optional(where, table, key, kind, None, within)


def _optional(
    where: str,
    table: Mapping[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    default: Any,
    within: str = "",
) -> Any:
    value = table.get(key, default)
    wrong_bool = isinstance(value, bool) and kind in (int, (int, float))
    if value is not default and (wrong_bool or not isinstance(value, kind)):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(_KINDS.get(k, k.__name__) for k in kinds)
        raise MatrixError(f"{where}: {within + '.' if within else ''}{key}: give {wanted}")
    return value


_KINDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", list: "a list"}


def _list_of(where: str, table: Mapping[str, Any], key: str, kind: type) -> list[Any]:
    values = _optional(where, table, key, list, [])
    if not all(isinstance(v, kind) for v in values):
        raise MatrixError(f"{where}: {key}: give a list of {kind.__name__}")
    return values


def _tables(where: str, table: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    values = _optional(where, table, key, list, [])
    if not all(isinstance(v, dict) for v in values):
        raise MatrixError(f"{where}: {key}: give [[{key}]] tables")
    return values
