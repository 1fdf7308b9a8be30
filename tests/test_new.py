"""`perfdsl new NAME`: the scaffold checks, runs, and never overwrites a file.

Run as the real command line in a temporary directory outside the repository,
so the study must find its kernel module from its own directory, as a user's would.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from run_support import RUN_TIMEOUT_S, environment, perfdsl_command

from perfdsl.commands.check import diagnose
from perfdsl.source import Source


def _perfdsl(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        perfdsl_command(*args), cwd=cwd, env=environment(), capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_new_study_checks_and_runs(tmp_path: Path) -> None:
    made = _perfdsl(tmp_path, "new", "demo")
    assert made.returncode == 0, made.stderr
    assert made.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.perf", "demo_kernels.py"]

    checked = _perfdsl(tmp_path, "check", "demo.perf")
    assert checked.returncode == 0, checked.stdout
    assert checked.stderr == ""
    assert "no problems found" in checked.stdout

    ran = _perfdsl(tmp_path, "run", "--target", "cpu", "--quick", "demo.perf", timeout=RUN_TIMEOUT_S)
    assert ran.returncode == 0, ran.stderr
    bundles = [p for p in (tmp_path / "artifacts" / "demo").iterdir() if p.is_dir()]
    assert len(bundles) == 1
    assert (bundles[0] / "manifest.json").is_file()
    # The roof's inputs are its own problem, said on the console, not the operation's reference.
    assert "copy roof demo_kernels:copy: inputs from demo_kernels:copy_reference" in ran.stderr
    # --quick says what it replaced, before anything runs.
    assert "\n  quick: correctness seeds 5 -> 2\n" in ran.stderr


# The new user's failure: a copy roof handed arrays its kernel was not written for
# dies with SIGSEGV; planted here as a roof whose call dereferences address 0.
CRASHING_ROOF = 'copy = Variant(name="copy", cpu=lambda x, y: __import__("ctypes").string_at(0),'


@pytest.mark.slow  # a real run with a crashing roof
def test_a_roof_that_fails_is_named_with_its_cause(tmp_path: Path) -> None:
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    kernels = tmp_path / "demo_kernels.py"
    text = kernels.read_text(encoding="utf-8")
    working = 'copy = Variant(name="copy", cpu=copy_cpu,'
    assert working in text
    kernels.write_text(text.replace(working, CRASHING_ROOF), encoding="utf-8")
    ran = _perfdsl(tmp_path, "run", "--target", "cpu", "--quick", "demo.perf", timeout=RUN_TIMEOUT_S)
    assert ran.returncode == 0, ran.stderr
    said = [line.strip() for line in ran.stderr.splitlines() if "SIGSEGV" in line]
    # Said first as the calibration meets it, then where the timing leaves the roof out.
    assert said and said[0].startswith("warning: the measured code ended its worker during calibration")
    assert said[1].endswith("the copy roof is not timed at the shapes left"), ran.stderr
    (bundle,) = [p for p in (tmp_path / "artifacts" / "demo").iterdir() if p.is_dir()]
    evaluated = _perfdsl(tmp_path, "evaluate", str(bundle), "--study", "demo.perf", timeout=RUN_TIMEOUT_S)
    assert evaluated.returncode in (0, 1), evaluated.stderr
    evaluation = json.loads((bundle / "evaluation.json").read_text(encoding="utf-8"))
    missing = {s["mechanism"]["roof_missing"] for op in evaluation["operations"] for s in op["shapes"]}
    assert len(missing) == 1
    (why,) = missing
    assert why.startswith("the copy roof failed: `copy` ended its worker") and "SIGSEGV" in why


def test_the_worked_example_outside_the_bundled_studies_checks_clean() -> None:
    """docs/examples/softmax_online/ is what a user writes from `perfdsl new`; keep it current."""
    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "softmax_online"
    found = diagnose(Source.read(example / "softmax_online.perf"))
    assert [d.code for d in found] == []
    assert (example / "softmax_online_kernels.py").is_file()


def test_new_refuses_to_overwrite(tmp_path: Path) -> None:
    kernels = tmp_path / "demo_kernels.py"
    kernels.write_text("# someone's work\n", encoding="utf-8")
    refused = _perfdsl(tmp_path, "new", "demo")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "demo_kernels.py already exists" in refused.stderr
    assert kernels.read_text(encoding="utf-8") == "# someone's work\n"
    assert not (tmp_path / "demo.perf").exists()


@pytest.mark.parametrize("name", ["2fast", "my-study", "a.b"])
def test_new_refuses_a_name_that_is_not_an_identifier(tmp_path: Path, name: str) -> None:
    refused = _perfdsl(tmp_path, "new", name)
    assert refused.returncode == 2
    assert "is not a study name" in refused.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["import", "baseline"])
def test_new_refuses_a_name_its_study_could_not_carry(tmp_path: Path, name: str) -> None:
    """`perfdsl new import` wrote `operation import {`, which does not parse: a scaffold that
    does not check is no start."""
    refused = _perfdsl(tmp_path, "new", name)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"`{name}` cannot name the study" in refused.stderr and f"`{name}_study`" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_says_when_its_directory_is_a_file(tmp_path: Path) -> None:
    """It said "a_file already exists; choose another name" when -C named a file."""
    (tmp_path / "a_file").write_text("mine\n", encoding="utf-8")
    refused = _perfdsl(tmp_path, "new", "demo", "-C", "a_file")
    assert refused.returncode == 2
    assert "a_file: is not a directory" in refused.stderr
    assert (tmp_path / "a_file").read_text(encoding="utf-8") == "mine\n"


def test_a_name_the_file_system_refuses_is_one_line(tmp_path: Path) -> None:
    refused = _perfdsl(tmp_path, "new", "n" * 300)  # longer than a file name may be
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "cannot write" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_writes_into_the_directory_it_is_given(tmp_path: Path) -> None:
    made = _perfdsl(tmp_path, "new", "demo", "--directory", "studies/mine")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "studies" / "mine").iterdir()) == [
        "demo.perf",
        "demo_kernels.py",
    ]
    assert "next: cd studies/mine && perfdsl check demo.perf" in made.stdout
    (tmp_path / "a_file").write_text("mine\n", encoding="utf-8")
    refused = _perfdsl(tmp_path, "new", "demo", "-C", "a_file/below")
    assert refused.returncode == 2
    assert "a_file" in refused.stderr and "Traceback" not in refused.stderr
    assert (tmp_path / "a_file").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.slow  # starts `perfdsl run`, which must refuse before anything runs
def test_a_variant_without_code_for_the_target_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A GPU-only change in a study that lists `cpu` ran, and its report called the correct code's
    missing implementation a failed correctness check."""
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    kernels = tmp_path / "demo_kernels.py"
    kernels.write_text(
        kernels.read_text(encoding="utf-8")
        + '\ngpu_only = Variant(name="gpu_only", cuda=lambda stream, **a: None)\n',
        encoding="utf-8",
    )
    study = tmp_path / "demo.perf"
    study.write_text(
        study.read_text(encoding="utf-8").replace(
            "change    demo_kernels:fused", "change    demo_kernels:gpu_only"
        ),
        encoding="utf-8",
    )
    line = next(n for n, t in enumerate(study.read_text().splitlines(), 1) if "demo_kernels:gpu_only" in t)
    done = _perfdsl(tmp_path, "run", "demo.perf", "--target", "cpu", "--quick", timeout=120)
    assert done.returncode == 2, done.stderr
    assert (
        f"demo.perf:{line}: the change of `demo`, variant `gpu_only`, has no `cpu` implementation"
        in done.stderr
    )
    assert not (tmp_path / "artifacts").exists() or not any((tmp_path / "artifacts").rglob("manifest.json"))


@pytest.mark.slow  # starts `perfdsl run`, which must refuse before anything runs
def test_run_refuses_an_artifacts_path_that_is_a_file_before_anything_runs(tmp_path: Path) -> None:
    """It calibrated first, then failed: "cannot write the bundle: Not a directory"."""
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    done = _perfdsl(tmp_path, "run", "demo.perf", "--target", "cpu", "--quick", "--artifacts", "demo.perf")
    assert done.returncode == 2
    assert "demo.perf: is not a directory" in done.stderr and "calibrating" not in done.stderr


@pytest.mark.slow  # starts `perfdsl run`, which must refuse before anything runs
@pytest.mark.parametrize("limit", ["inf", "1e10", "0", "nan"])
def test_run_refuses_a_time_limit_it_cannot_keep_in_one_line(tmp_path: Path, limit: str) -> None:
    """`--time-limit inf` overflowed the worker's deadline, and the OverflowError was recorded as
    every correctness case of both arms failing, exit 0."""
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    done = _perfdsl(tmp_path, "run", "demo.perf", "--target", "cpu", "--quick", "--time-limit", limit)
    assert done.returncode == 2, done.stderr
    assert "time limit must be" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "artifacts").exists()


def _quick_run_with(tmp_path: Path, change: str) -> subprocess.CompletedProcess[str]:
    """`perfdsl new demo`, its kernel module ending with `change` (a new `fused`), run quick."""
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    kernels = tmp_path / "demo_kernels.py"
    kernels.write_text(kernels.read_text(encoding="utf-8") + change, encoding="utf-8")
    ran = _perfdsl(tmp_path, "run", "--target", "cpu", "--quick", "demo.perf", timeout=RUN_TIMEOUT_S)
    assert ran.returncode == 0, ran.stderr
    return ran


# A change that raises on its second call only: its worker's calibration makes that call.
RAISES_ONCE = """
_calls = [0]


def _fused_once(x, y):
    _calls[0] += 1
    if _calls[0] == 2:
        raise RuntimeError("stale state on the second call")
    fused_cpu(x, y)


fused = Variant(name="fused", cpu=_fused_once)
"""


@pytest.mark.slow  # a real quick run
def test_a_call_that_raises_during_calibration_fails_the_arm(tmp_path: Path) -> None:
    """It vanished: the correctness check's later calls passed, and page 1 said "passed"."""
    ran = _quick_run_with(tmp_path, RAISES_ONCE)
    assert "warning: the change raised in a calibration call" in ran.stderr
    assert "stale state on the second call" in ran.stderr
    results = json.loads((Path(ran.stdout.strip().splitlines()[-1]) / "results.json").read_text())
    correctness = results["operations"][0]["correctness"]
    assert correctness["passed"] is False
    (failed,) = [c for c in correctness["cases"] if not c["passed"]]
    assert failed["arm"] == "change" and failed["seed"] is None
    said = "raised in a calibration call, before its checked cases: RuntimeError"
    assert failed["message"].startswith(said)


def test_the_scaffold_declares_its_baseline_s_intermediate_as_scratch(tmp_path: Path) -> None:
    """Without it, every quick run of a new study had "achieved bandwidth above the measured roof"
    (PQ006) at both cache-sized shapes, and page 1 said every shape was invalid."""
    import importlib.util

    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    spec = importlib.util.spec_from_file_location("demo_kernels", tmp_path / "demo_kernels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.two_pass.scratch_bytes({"N": 1000}) == 4 * 1000  # t, float32
    assert module.fused.scratch_bytes is None


NOISY = """


def _fused_noisy(x, y):
    print("NOISE from the kernel")
    fused_cpu(x, y)


fused = Variant(name="fused", cpu=_fused_noisy)
"""


@pytest.mark.slow  # a real quick run
def test_what_measured_code_prints_stays_off_the_run_s_stdout(tmp_path: Path) -> None:
    """stdout is the bundle's path, which scripts read: a printing kernel put 147 MB before it."""
    ran = _quick_run_with(tmp_path, NOISY)
    (path,) = ran.stdout.splitlines()
    assert (Path(path) / "manifest.json").is_file()
    assert "NOISE from the kernel" in ran.stderr
