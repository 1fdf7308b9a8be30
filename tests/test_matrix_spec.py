"""The matrix file: axes expand to cells in a fixed order; every field bound for `#SBATCH` is checked.

Golden job scripts (tests/matrix_cases/*.sh) pin what reaches Slurm: only
validated names, counts and indices, and one command whose inputs are its
arguments. A value with shell or line syntax in any field that would reach a
`#SBATCH` line is refused with one line naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from perfdsl.matrix.cells import expand, matrix_id
from perfdsl.matrix.jobscript import array_spec, render
from perfdsl.matrix.spec import Machine, MatrixError, SlurmOptions, read_spec

CASES = Path(__file__).resolve().parent / "matrix_cases"
REPO = Path(__file__).resolve().parent.parent
PAYLOADS = (
    "$(touch /tmp/pwned)",
    "`touch /tmp/pwned`",
    "a;touch /tmp/pwned",
    "a\ntouch /tmp/pwned",
    "a'b\"c",
    "a b",
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.matrix.toml"
    path.write_text(text, encoding="utf-8")
    return path


FULL = f"""
name = "fleet"
study = "{REPO / "studies" / "reduction_launches.perf"}"
quick = true
targets = ["cpu", "cuda"]
[slurm]
partition = "gpu"
time = "00:30:00"
throttle = 2
gpus_per_cell = 1
[[machines]]
name = "a100"
constraint = "a100&driver550"
[[machines]]
name = "h100"
constraint = "h100|h200"
partition = "hopper"
[[environments]]
name = "numba-0.60"
python = "/shared/envs/numba 0.60/bin/python"
[[shapes]]
name = "small"
select = [{{N = 4096}}]
"""


def test_cells_are_the_product_of_the_axes_in_a_fixed_order(tmp_path: Path) -> None:
    spec = read_spec(write(tmp_path, FULL))
    cells = expand(spec, tmp_path / "out")
    assert [c.id for c in cells] == [
        "cpu.a100.numba-0.60.small",
        "cpu.h100.numba-0.60.small",
        "cuda.a100.numba-0.60.small",
        "cuda.h100.numba-0.60.small",
    ]
    assert [c.index for c in cells] == [0, 1, 2, 3]
    assert cells[0].run_command()[:4] == ["/shared/envs/numba 0.60/bin/python", "-m", "perfdsl", "run"]
    assert cells[0].run_command()[-2:] == ["--shape", "N=4096"]
    assert cells[2].needs_gpu and not cells[0].needs_gpu


def test_an_edited_matrix_or_study_is_a_new_matrix(tmp_path: Path) -> None:
    spec = read_spec(write(tmp_path, FULL))
    edited = read_spec(write(tmp_path, FULL + "\n# a comment\n"))
    assert matrix_id(spec, "study") == matrix_id(spec, "study")
    assert len({matrix_id(spec, "study"), matrix_id(edited, "study"), matrix_id(spec, "study 2")}) == 3


@pytest.mark.parametrize("name", ["a100", "h100"])
def test_golden_job_scripts(tmp_path: Path, name: str) -> None:
    spec = read_spec(write(tmp_path, FULL))
    machine = next(m for m in spec.machines if m.name == name)
    script = render("fleet-0123456789", machine, spec.slurm, [0, 2, 3])
    assert script == (CASES / f"job_{name}.sh").read_text(encoding="utf-8")


def test_golden_job_script_exclusive_with_cores(tmp_path: Path) -> None:
    options = SlurmOptions(cpus_per_cell=8, exclusive=True)
    script = render("cpu-fleet-abcdef0123", Machine("any"), options, [5])
    assert script == (CASES / "job_exclusive.sh").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("indices", "throttle", "spec"),
    [
        ([0, 1, 2, 3], 2, "0-3%2"),
        ([3, 0, 2], None, "0,2-3"),
        ([7], 1, "7%1"),
        ([1, 3, 5, 6, 7, 9], None, "1,3,5-7,9"),
    ],
)
def test_array_specs(indices: list[int], throttle: int | None, spec: str) -> None:
    assert array_spec(indices, throttle) == spec


FIELDS = {
    "name": lambda v: FULL.replace('name = "fleet"', f"name = {toml(v)}"),
    "partition": lambda v: FULL.replace('partition = "gpu"', f"partition = {toml(v)}"),
    "machine partition": lambda v: FULL.replace('partition = "hopper"', f"partition = {toml(v)}"),
    "constraint": lambda v: FULL.replace('constraint = "a100&driver550"', f"constraint = {toml(v)}"),
    "time": lambda v: FULL.replace('time = "00:30:00"', f"time = {toml(v)}"),
    "machine name": lambda v: FULL.replace('name = "a100"', f"name = {toml(v)}"),
    "environment name": lambda v: FULL.replace('name = "numba-0.60"', f"name = {toml(v)}"),
    "shapes name": lambda v: FULL.replace('name = "small"', f"name = {toml(v)}"),
}


def toml(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("payload", PAYLOADS)
def test_shell_and_line_syntax_is_refused_in_every_field_bound_for_sbatch(
    tmp_path: Path, field: str, payload: str
) -> None:
    path = write(tmp_path, FIELDS[field](payload))
    with pytest.raises(MatrixError) as refused:
        read_spec(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert "refused" in message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda t: t.replace('targets = ["cpu", "cuda"]', 'targets = ["gpu"]'),
            "targets: `gpu` is not one of",
        ),
        (
            lambda t: t.replace("throttle = 2", "throttle = 0"),
            "slurm.throttle: give a whole number of at least 1",
        ),
        (lambda t: t.replace("throttle = 2", "throttle = true"), "slurm.throttle: give a whole number"),
        (lambda t: t.replace("quick = true", "quick = true\nqiuck = 1"), "unknown key 'qiuck'"),
        (lambda t: t.replace('name = "h100"', 'name = "a100"'), "machines: the name `a100` is given twice"),
        (
            lambda t: t.replace("select = [{N = 4096}]", "select = [{N = -1}]"),
            "shapes[0].select: give each shape",
        ),
        (lambda t: t.replace('name = "fleet"\n', ""), "name is missing"),
        (lambda t: t + "\n[[", "not TOML"),
    ],
)
def test_other_mistakes_are_one_line_errors(tmp_path: Path, change: Callable[[str], str], says: str) -> None:
    path = write(tmp_path, change(FULL))
    with pytest.raises(MatrixError) as refused:
        read_spec(path)
    assert says in str(refused.value) and "\n" not in str(refused.value)
