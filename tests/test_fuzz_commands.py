"""Fuzzing every command: whatever the bundle, study, flags or editor frames, no traceback.

Each case runs `perfdsl.cli.main` in this process (tests/command_fuzz.py) on a
mutated copy of a real input, in a directory of its own, and every case must:

* end with a status (no exception escapes `main`, no hang), one of 0, 1, 2;
* print no Python traceback on either stream;
* on "could not run" (2), say why on stderr naming the file it could not use
  (argparse's usage errors aside: they name the option);
* leave the input bundle as it was when `evaluate` or `build` fails, byte for
  byte, and a bundle that verified before still verifying after any command;
* write nothing outside its own directory (the seeds and the repository are
  checked at the end).

The inputs are real bundles: the session's quick runs (tests/conftest.py),
bundles written through the real writer with planted samples
(tests/evaluate_fixtures.py: full-length settings, an older results format,
a failed correctness case, a simulator run), their evaluated forms, and an
imported study's run. Studies are the bundled ones and the golden check
cases, mutated. `run` goes as far as the point where kernels would start
(`command_fuzz.kernels_never_run`), except for imported studies, which run
no code and run for real. `matrix` reads matrix files with planted faults
(wrong types, missing and unknown keys, bad paths, huge and negative
numbers, bytes that are not UTF-8, duplicate names) and matrix directories
whose state, cell and outcome files are corrupted, with its local options
(`--status`, `--cancel`, a local run whose cells' python is the stand-in
`tests/slurm/fake/fake_run.py`, `--gpus`, `--poll`, `--dir`); `--executor
slurm` on this machine, which has no Slurm, must refuse in one line.

`PERFDSL_FUZZ_EXAMPLES` sets the number of cases in all (the default keeps CI
near a minute; a one-off run uses 10,000). The counts per command are printed.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import random
import shutil
import subprocess
import traceback
from collections.abc import Callable
from pathlib import Path

import attrs
import bundled_studies
import command_fuzz as fuzz
import evaluate_fixtures
import matrix_support
import pytest
import run_support
from check_case_paths import TEXT_CASES
from matrix_support import FAKE, MATRIX_SPEC, fake_cells
from matrix_support import STUDY as MATRIX_STUDY

pytestmark = pytest.mark.slow

CASES = int(os.environ.get("PERFDSL_FUZZ_EXAMPLES", "150"))
REPO = run_support.REPO
STUDY_TEXTS = [p.read_text(encoding="utf-8") for p in bundled_studies.PATHS] + [
    p.read_text(encoding="utf-8") for p in TEXT_CASES[::9]
]
CODES_SEEN = ["PD001", "PD203", "PQ006", "pd203", "PD", "PD9999", "", "é", "--", "PD203 ", "P" * 300]
PDF_SHARE = 0.02
"""WeasyPrint takes seconds a report: a few builds in a hundred write a PDF, the rest Markdown or HTML."""


@attrs.frozen
class Case:
    """One command line to run, with the inputs it must leave intact."""

    command: str
    argv: tuple[str, ...]
    stdin: bytes = b""
    bundles: tuple[Path, ...] = ()
    """Bundles the command reads: unchanged when it fails, still verifying when they did."""
    names: tuple[str, ...] = ()
    """Files an error may name: one of them must appear in a status-2 message."""
    described: str = ""


@attrs.frozen
class Seeds:
    """The real inputs every case copies from; nothing writes here after the fixture."""

    root: Path
    bundles: dict[str, Path]
    """Bundles by kind: planted, evaluated, cudasim, failed, older, imported, quick, ..."""
    studies: dict[str, Path]
    """The study file each bundle kind ran, by the same kind."""
    history: list[Path]
    """Several bundles of the planted study (a history's runs)."""
    imported_study: Path
    """studies/batchnorm_imported.perf with its imported files, for `run`."""
    matrix: MatrixSeeds


@attrs.frozen
class MatrixSeeds:
    """A matrix file and the matrix directory it ran into (its cells the stand-in's), for `matrix`."""

    spec: Path
    base: Path
    """The `--dir` the matrix ran under: it holds one matrix directory, every cell COMPLETED."""


def _planted(root: Path, **kwargs: object) -> Path:
    return evaluate_fixtures.make_bundle(root, **evaluate_fixtures.CHECKED, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory, quick_runs: run_support.QuickRuns) -> Seeds:
    return make_seeds(tmp_path_factory.mktemp("fuzz-seeds"), quick_runs)


def make_seeds(root: Path, quick_runs: run_support.QuickRuns) -> Seeds:
    """Every kind of bundle the cases copy from, under `root`."""
    bundles = {
        "planted": _planted(root / "planted", seed=1),
        "cudasim": _planted(root / "cudasim", target="cudasim", valid=False),
        "failed": _planted(root / "failed", correct=False),
        "older": _planted(root / "older", seed=2),
    }
    # The oldest plan format (version 1 carried no `schema`), sealed as a run of that version was.
    older_plan = bundles["older"] / "plan.json"
    plan_data = run_support.read_json(older_plan)
    plan_data.pop("schema", None)
    older_plan.write_text(json.dumps(plan_data), encoding="utf-8")
    fuzz.reseal(bundles["older"])
    evaluated = fuzz.copy_bundle(bundles["planted"], root / "evaluated")
    assert fuzz.invoke(["evaluate", str(evaluated)], root).status == 0
    bundles["evaluated"] = evaluated
    history = [
        _planted(
            root / "history",
            seed=k,
            run_id=f"2026120{k}T000000Z-00000{k}",
            environment=evaluate_fixtures.planted_environment(f"0.6{k}.0", str(k)),
            kernel_ratio=0.8 + 0.01 * k,
        )
        for k in range(1, 4)
    ]
    imported_dir = root / "imported-study"
    shutil.copytree(REPO / "studies" / "imported", imported_dir / "imported")
    imported_study = Path(shutil.copy(REPO / "studies" / "batchnorm_imported.perf", imported_dir))
    text = imported_study.read_text(encoding="utf-8").replace(
        'artifacts "../artifacts/"', 'artifacts "artifacts/"'
    )
    imported_study.write_text(text, encoding="utf-8")
    ran = fuzz.invoke(["run", str(imported_study)], imported_dir)
    assert ran.status == 0, ran.stderr
    bundles["imported"] = Path(ran.stdout.strip().splitlines()[-1])
    studies = {}
    real = [("quick", "studies/rmsnorm_fusion.perf")]
    if CASES >= 1000:
        real += [("reduction", "studies/reduction_chains.perf"), ("broken", "tests/run_fixtures/broken.perf")]
    quick_runs.prefetch([(study, "cpu") for _, study in real])
    for kind, study in real:
        bundles[kind] = fuzz.copy_bundle(quick_runs(study).bundle, root / kind)
    for kind, bundle in bundles.items():
        study_dir = root / "studies" / kind
        study_dir.mkdir(parents=True)
        studies[kind] = Path(shutil.copy(bundle / "study.perf", study_dir / "study.perf"))
    studies["imported"] = imported_study
    return Seeds(root, bundles, studies, history, imported_study, make_matrix_seeds(root / "matrix"))


def make_matrix_seeds(root: Path) -> MatrixSeeds:
    """The seed matrix run to the end under `root`, every cell answered by the stand-in python; the
    stand-in's empty bundles replaced by planted ones, so that the report reads real runs."""
    spec, base = matrix_support.run_fake_matrix(root)
    (directory,) = base.iterdir()
    state = json.loads((directory / "state.json").read_text(encoding="utf-8"))
    for k, cell in enumerate(state["cells"]):
        bundle = directory / cell["bundle"]
        shutil.rmtree(bundle)
        planted = _planted(root / "planted" / str(k), seed=k, kernel_ratio=0.8 + 0.05 * k)
        shutil.copytree(planted, bundle, symlinks=True)
    return MatrixSeeds(spec, base)


# --- the cases, one generator per command --------------------------------------------------------


def _study_file(rng: random.Random, where: Path) -> tuple[Path, str]:
    """A study file in `where`: a bundled or golden study, mutated (or left whole, or not a study)."""
    path = where / rng.choice(["study.perf", "x.perf", "é ü.perf", "noext"])
    roll = rng.random()
    if roll < 0.05:
        return where / "missing.perf", "missing"
    if roll < 0.08:
        path.mkdir()
        return path, "directory"
    if roll < 0.11:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(40)))
        return path, "binary"
    text = rng.choice(STUDY_TEXTS)
    mutated = roll > 0.3
    path.write_text(fuzz.mutate_text(rng, text) if mutated else text, encoding="utf-8")
    return path, "mutated" if mutated else "whole"


def _bundle(
    rng: random.Random, seeds: Seeds, where: Path, kinds: list[str] | None = None, mutated: float = 0.8
) -> tuple[Path, str, str]:
    """A copy of a seed bundle in `where`, mutated with chance `mutated`; it, its kind, what was done."""
    kind = rng.choice(kinds or sorted(seeds.bundles))
    bundle = fuzz.copy_bundle(seeds.bundles[kind], where)
    done = "intact"
    if rng.random() < mutated:
        done = ", ".join(fuzz.mutate_bundle(rng, bundle))
    return bundle, kind, done


def _study_for(rng: random.Random, seeds: Seeds, kind: str, where: Path) -> Path:
    """The study a bundle ran (mostly), another study, or a mutation of it."""
    path = where / "study.perf"
    source = seeds.studies[kind] if rng.random() < 0.8 else seeds.studies[rng.choice(sorted(seeds.studies))]
    text = source.read_text(encoding="utf-8")
    if rng.random() < 0.15:
        text = fuzz.mutate_text(rng, text, edits=1)
    path.write_text(text, encoding="utf-8")
    if kind == "imported":
        shutil.copytree(seeds.imported_study.parent / "imported", where / "imported", dirs_exist_ok=True)
    return path


def case_check(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    paths = []
    for k in range(rng.randint(1, 3)):
        (where / f"s{k}").mkdir()
        paths.append(_study_file(rng, where / f"s{k}"))
    argv = ["check", *(str(p) for p, _ in paths)]
    if rng.random() < 0.2:
        argv.append(str(where))
    if rng.random() < 0.6:
        argv += ["--format", rng.choice(["full", "short", "json", "sarif", "github", "junit", "xml"])]
    return Case("check", tuple(argv), names=(*tuple(str(p) for p, _ in paths), str(where)))


def case_explain(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    from perfdsl import codes

    code = rng.choice([*rng.sample(sorted(codes.CODES), 3), *CODES_SEEN, None])
    if code is not None and rng.random() < 0.3:
        code = fuzz.mutate_text(rng, code, edits=1)
    return Case("explain", ("explain",) if code is None else ("explain", code))


def case_new(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    name = rng.choice(
        ["fused_scale", "a", "_", "x1", "1x", "a-b", "é", "a/b", "../up", "", "a" * 300, "study", "kernels"]
    )
    if rng.random() < 0.3:
        (where / f"{name}.perf").parent.mkdir(parents=True, exist_ok=True)
        taken = rng.choice([f"{name}.perf", f"{name}_kernels.py"])
        if "/" not in taken and len(taken) < 200 and name:
            (where / taken).write_text("mine\n", encoding="utf-8")
    options: tuple[str, ...] = ()
    if rng.random() < 0.3:
        # A directory to write into: made when missing, refused when a file holds its name.
        directory = rng.choice(["sub/dir", "with space", "a_file", "a_file/below", ""])
        if directory.startswith("a_file"):
            (where / "a_file").write_text("mine\n", encoding="utf-8")
        options = ("--directory", directory)
    names = (f"`{name}`", f"{name}.perf", f"{name}_kernels.py", *options[1:])
    return Case("new", ("new", name, *options), names=names)


def case_lsp(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    uri = (where / "open.perf").as_uri()

    def texts() -> str:
        return (
            fuzz.mutate_text(rng, rng.choice(STUDY_TEXTS)) if rng.random() < 0.8 else rng.choice(STUDY_TEXTS)
        )

    return Case("lsp", ("lsp",), stdin=fuzz.lsp_session(rng, uri, texts))


def case_run(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    if rng.random() < 0.3:
        # An imported study runs no code: run it for real, its imported files mutated.
        study = Path(shutil.copy(seeds.imported_study, where / "study.perf"))
        imported = Path(shutil.copytree(seeds.imported_study.parent / "imported", where / "imported"))
        for _ in range(rng.randint(0, 2)):
            fuzz.mutate_file(
                rng, rng.choice(sorted(p for p in imported.rglob("*") if p.is_file()) or [study])
            )
        if rng.random() < 0.3:
            study.write_text(fuzz.mutate_text(rng, study.read_text(encoding="utf-8")), encoding="utf-8")
        argv = ["run", str(study)]
        described = "imported"
    else:
        path, described = _study_file(rng, where)
        argv = ["run", str(path)]
        flags = {
            "--target": ["cpu", "cuda", "auto", "gpu", ""],
            "--shape": ["M=64,N=4096", "M=1", "N=0,M=3", "M=x", "", "M=64,N=4096,K=1", "Q=1"],
            "--time-limit": ["1", "0", "-1", "nan", "inf", "x", "1e999"],
            "--artifacts": [str(where / "out"), str(where / "study.perf"), str(where / "a" / "b")],
        }
        for flag, values in flags.items():
            if rng.random() < 0.4:
                argv += [flag, rng.choice(values)]
        for flag in ("--quick", "--quiet"):
            if rng.random() < 0.5:
                argv.append(flag)
        if rng.random() < 0.05:
            argv.append(rng.choice(["--bogus", "extra-positional"]))
        if rng.random() < 0.1:
            # The simulator only where the study cannot take it: choosing it sets process-wide state.
            argv += ["--target", "cudasim"] if "cuda" not in _text(path) else []
    return Case("run", tuple(argv), names=(argv[1],), described=described)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def case_verify(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    roll = rng.random()
    if roll < 0.05:
        target = where / rng.choice(["missing", ".tmp-20261201T000000Z-000000"])
        if rng.random() < 0.5:
            target.mkdir()
        return Case("verify", ("verify", str(target)), names=(str(target),))
    bundle, kind, done = _bundle(rng, seeds, where)
    return Case(
        "verify",
        ("verify", str(bundle)),
        bundles=(bundle,),
        names=(str(bundle),),
        described=f"{kind}: {done}",
    )


def case_evaluate(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    bundle, kind, done = _bundle(rng, seeds, where)
    argv = ["evaluate", str(bundle)]
    names = [str(bundle)]
    if rng.random() < 0.2:
        study = _study_for(rng, seeds, kind, where)
        argv += ["--study", str(study)]
        names.append(str(study))
    if rng.random() < 0.2:
        junit = rng.choice([where / "junit.xml", where / "no" / "dir" / "j.xml", where])
        argv += ["--junit", str(junit)]
        names.append(str(junit))
    if rng.random() < 0.2:
        argv += ["--summary", str(rng.choice([where / "summary.md", where]))]
        names.append(argv[-1])
    if rng.random() < 0.3:
        argv += [
            "--fail-on",
            rng.choice(["none", "refuted", "refuted,invalid,contradicted", "all", "", "refuted,,x"]),
        ]
    return Case("evaluate", tuple(argv), bundles=(bundle,), names=tuple(names), described=f"{kind}: {done}")


def case_build(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    bundle, kind, done = _bundle(rng, seeds, where)
    study = _study_for(rng, seeds, kind, where)
    roll = rng.random()
    kind_flag = "--pdf" if roll < PDF_SHARE else "--html" if roll < 0.2 else "--md"
    output = rng.choice([where / "report.out", where / "deep" / "er" / "report.out", where])
    argv = ["build", kind_flag, str(study), "--results", str(bundle), "-o", str(output)]
    if rng.random() < 0.05:
        argv = ["build", kind_flag, str(study), "-o", str(output)]  # the study's latest: none here
    if rng.random() < 0.05:
        argv += [rng.choice(["--quick", "--run", "--target=cpu"])]
    return Case(
        "build",
        tuple(argv),
        bundles=(bundle,),
        names=(str(bundle), str(study), str(output)),
        described=f"{kind}: {done}",
    )


def case_compare(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    # Each mutated one time in two, so that a fair share of pairs is compared at all.
    first, kind_a, done_a = _bundle(rng, seeds, where / "a", mutated=0.5)
    kinds = [kind_a] if rng.random() < 0.6 else None
    second, kind_b, done_b = _bundle(rng, seeds, where / "b", kinds, mutated=0.5)
    argv = ["compare", str(first), str(second)]
    if rng.random() < 0.3:
        argv.append("--fail-on-slower")
    return Case(
        "compare",
        tuple(argv),
        bundles=(first, second),
        names=(str(first), str(second)),
        described=f"{kind_a}: {done_a} | {kind_b}: {done_b}",
    )


def case_history(rng: random.Random, seeds: Seeds, where: Path) -> Case:
    artifacts = where / "artifacts"
    runs = [
        fuzz.copy_bundle(b, artifacts) for b in rng.sample(seeds.history, rng.randint(1, len(seeds.history)))
    ]
    done = []
    for bundle in runs:
        if rng.random() < 0.4:
            done.append(f"{bundle.name}: {', '.join(fuzz.mutate_bundle(rng, bundle))}")
    study = where / "study.perf"
    text = (seeds.history[0] / "study.perf").read_text(encoding="utf-8")
    if rng.random() < 0.15:
        text = fuzz.mutate_text(rng, text, edits=1)
    study.write_text(text, encoding="utf-8")
    output = rng.choice([where / "page.html", where / "out" / "page.html", where])
    argv = ["history", str(study), "-o", str(output)]
    if rng.random() < 0.9:
        argv += ["--artifacts", str(rng.choice([artifacts, artifacts, where / "none"]))]
    return Case(
        "history",
        tuple(argv),
        bundles=tuple(runs),
        names=(str(study), str(artifacts), str(output), str(where)),
        described="; ".join(done),
    )


# Planted faults of a matrix file: (a line of MATRIX_SPEC, what replaces it; None deletes it).
MATRIX_FAULTS: list[tuple[str, str | None]] = [
    ("quick = true", 'quick = "yes"'),
    ('targets = ["cpu"]', 'targets = "cpu"'),
    ('targets = ["cpu"]', "targets = [1]"),
    ('targets = ["cpu"]', 'targets = ["tpu"]'),
    ('targets = ["cpu"]', 'targets = ["cuda"]'),
    ('targets = ["cpu"]', "targets = []"),
    ("time_limit = 60", 'time_limit = "60"'),
    ("time_limit = 60", "time_limit = -1"),
    ("time_limit = 60", "time_limit = 0"),
    ("time_limit = 60", "time_limit = inf"),
    ("time_limit = 60", "time_limit = nan"),
    ("time_limit = 60", "time_limit = 1e308"),
    ("time_limit = 60", "time_limit = 5e-324"),
    ("throttle = 2", "throttle = true"),
    ("throttle = 2", "throttle = -1"),
    ("throttle = 2", "throttle = 99999999999999999999999"),
    ("throttle = 2", "gpus_per_cell = 9223372036854775807"),
    ("throttle = 2", 'partition = "gpu;rm -rf /"'),
    ("throttle = 2", 'time = "forever"'),
    ("throttle = 2", "colour = 1"),
    ("[slurm]", "slurm = 1"),
    ('name = "fuzz"', None),
    ('name = "fuzz"', "name = 5"),
    ('name = "fuzz"', 'name = "../up"'),
    ('name = "fuzz"', 'name = "é"'),
    ('name = "fuzz"', f'name = "{"a" * 60}"'),
    ('name = "fuzz"', 'name = "fuzz"\nname = "again"'),
    ('name = "fuzz"', 'name = "fuzz"\ncolour = "red"'),
    ('name = "fuzz"', 'name = "fuzz"\nmachines = [1]'),
    ('name = "fuzz"', 'name = "fuzz"\nshapes = 3'),
    (f'study = "{MATRIX_STUDY}"', None),
    (f'study = "{MATRIX_STUDY}"', "study = 3"),
    (f'study = "{MATRIX_STUDY}"', 'study = "missing.perf"'),
    (f'study = "{MATRIX_STUDY}"', 'study = "."'),
    (f'study = "{MATRIX_STUDY}"', 'study = ""'),
    (f'study = "{MATRIX_STUDY}"', 'study = "/dev/null"'),
    (f'study = "{MATRIX_STUDY}"', 'study = "../../../../../../etc/hostname"'),
    (f'study = "{MATRIX_STUDY}"', 'study = "é ü.perf"'),
    (f'study = "{MATRIX_STUDY}"', 'study = "study\u0000.perf"'),
    ('name = "fake"', None),
    ('name = "fake"', 'name = "fake"\nnmae = "x"'),
    ('name = "small"', 'name = "mid"'),
    (f'python = "{FAKE / "fake_run.py"}"', 'python = "/nonexistent/python"'),
    (f'python = "{FAKE / "fake_run.py"}"', 'python = ""'),
    (f'python = "{FAKE / "fake_run.py"}"', 'python = "."'),
    (f'python = "{FAKE / "fake_run.py"}"', "python = 3"),
    ("select = [{N = 4096}]", None),
    ("select = [{N = 4096}]", 'select = [{N = "4096"}]'),
    ("select = [{N = 4096}]", "select = {N = 4096}"),
    ("select = [{N = 4096}]", "select = [{N = 0}]"),
    ("select = [{N = 4096}]", "select = [{N = -5}]"),
    ("select = [{N = 4096}]", "select = [{N = 1000000000000000000000000000000}]"),
    ("select = [{N = 4096}]", "select = [{N = 4096.0}]"),
    ("select = [{N = 4096}]", "select = [{N = 123}]"),
    ("select = [{N = 4096}]", "select = [{Q = 4096}]"),
    ("select = [{N = 4096}]", "select = [{}]"),
    ("select = [{N = 4096}]", "select = []"),
    ("[[shapes]]", "[shapes]"),
]
MATRIX_STATES = [
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "NOT_SUBMITTED",
    "LOST",
    "",
    3,
    None,
]


def _matrix_file(rng: random.Random, where: Path) -> tuple[Path, str]:
    """The seed matrix file, with a planted fault, randomly edited, not UTF-8, or whole."""
    path = where / rng.choice(["fuzz.matrix.toml", "m.toml", "é ü.matrix.toml"])
    text, roll = MATRIX_SPEC, rng.random()
    if roll < 0.5:
        done = []
        for old, new in rng.sample(MATRIX_FAULTS, rng.randint(1, 2)):
            text = text.replace(old, new or "", 1)
            done.append(f"{old} -> {new}")
        described = "; ".join(done)
    elif roll < 0.7:
        text, described = fuzz.mutate_text(rng, text), "edited"
    elif roll < 0.75:
        data = text.encode("utf-8")
        cut = rng.randrange(len(data))
        path.write_bytes(data[:cut] + rng.choice([b"\xff\xfe", b"\x80", b"\xc3"]) + data[cut:])
        return path, "not UTF-8"
    elif roll < 0.78:
        path.mkdir()
        return path, "a directory"
    else:
        described = "whole"
    path.write_text(text, encoding="utf-8")
    return path, described


def _corrupt_matrix(rng: random.Random, directory: Path) -> list[str]:
    """Planted faults in a matrix directory's own files: state, cells, outcomes, the lock."""
    done = []
    files = sorted(p for p in directory.rglob("*") if p.is_file() and "runs" not in p.parts)
    state_file = directory / "state.json"
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.15 and state_file.is_file():
            # A cell still live whose outcome the task left broken: what refresh reads first.
            try:
                data = json.loads(state_file.read_text(encoding="utf-8"))
                cell = rng.choice(data["cells"])
                cell["state"] = rng.choice(["PENDING", "RUNNING"])
                state_file.write_text(json.dumps(data), encoding="utf-8")
                outcome = directory / "cells" / cell["id"] / "outcome.json"
                done.append(f"live {cell['id']}, outcome {fuzz.mutate_file(rng, outcome)}")
            except (ValueError, KeyError, TypeError, IndexError, OSError):
                done.append("state.json " + fuzz.mutate_file(rng, state_file))
        elif roll < 0.45 and state_file.is_file():
            try:
                data = json.loads(state_file.read_text(encoding="utf-8"))
                cell = rng.choice(data["cells"])
                key = rng.choice(["state", "state", "bundle", "attempts", "id", "index", "job", "extra"])
                cell[key] = rng.choice(
                    MATRIX_STATES
                    if key == "state"
                    else ["../../../outside", "/nonexistent", "", 5, None, -1, "x", [], {}]
                )
                if rng.random() < 0.2:
                    data[rng.choice(["executor", "matrix", "spec", "cells", "format", "version"])] = (
                        rng.choice(fuzz.ODD_VALUES)
                    )
                state_file.write_text(json.dumps(data), encoding="utf-8")
                done.append(f"state.json {cell.get('id')}.{key}")
            except (ValueError, KeyError, TypeError, IndexError, AttributeError):
                done.append("state.json " + fuzz.mutate_file(rng, state_file))
        elif roll < 0.6:
            bundles = sorted(p.parent for p in directory.glob("cells/*/runs/*/*/manifest.json"))
            if bundles:
                bundle = rng.choice(bundles)
                done.append(f"{bundle.relative_to(directory)}: {', '.join(fuzz.mutate_bundle(rng, bundle))}")
        elif files:
            target = rng.choice([*files, state_file, state_file])
            if target.is_file():  # an earlier fault may have made it a directory
                done.append(f"{target.relative_to(directory)} {fuzz.mutate_file(rng, target)}")
    return done


def case_matrix(rng: random.Random, seeds: Seeds | MatrixSeeds, where: Path) -> Case:
    matrix = seeds if isinstance(seeds, MatrixSeeds) else seeds.matrix
    base = Path(shutil.copytree(matrix.base, where / "matrices"))
    if rng.random() < 0.4:
        path, described = _matrix_file(rng, where)
    else:
        path = Path(shutil.copy(matrix.spec, where / matrix.spec.name))
        (directory,) = base.iterdir()
        described = "state: " + (
            ", ".join(_corrupt_matrix(rng, directory)) if rng.random() < 0.85 else "intact"
        )
    argv = ["matrix", str(path)]
    roll = rng.random()
    if roll < 0.45:
        argv.append("--status")
    elif roll < 0.6:
        argv.append("--cancel")
    if rng.random() < 0.08:
        argv += ["--executor", "slurm"]
        argv += [] if "--status" in argv or "--cancel" in argv or rng.random() < 0.5 else ["--no-wait"]
    directory_flag = rng.random()
    if directory_flag < 0.85:
        argv += ["--dir", str(base)]
    elif directory_flag < 0.92:
        argv += ["--dir", str(rng.choice([path, where / "deep" / "er", where / "matrices" / "lock"]))]
    for flag, values in (
        ("--gpus", ["0", "0,1", ",", "x", "", "0,0"]),
        ("--poll", ["0", "0.01", "-1", "nan", "inf", "1e300"]),
    ):
        if rng.random() < 0.1:
            argv += [flag, rng.choice(values)]
    if rng.random() < 0.01:
        argv.append("--pdf")
    return Case(
        "matrix",
        tuple(argv),
        # A study path the fault wrote resolves to a file of its own, which an error names.
        names=(str(path), str(base), str(MATRIX_STUDY), str(where), "/etc/hostname"),
        described=described,
    )


GENERATORS: dict[str, Callable[[random.Random, Seeds, Path], Case]] = {
    "check": case_check,
    "explain": case_explain,
    "new": case_new,
    "lsp": case_lsp,
    "run": case_run,
    "verify": case_verify,
    "evaluate": case_evaluate,
    "build": case_build,
    "compare": case_compare,
    "history": case_history,
    "matrix": case_matrix,
}
SCHEDULE = [
    "evaluate", "build", "check", "verify", "run", "lsp", "compare", "evaluate", "check", "history",
    "explain", "new", "build", "matrix", "run", "lsp", "verify", "evaluate", "check", "compare", "build",
]  # fmt: skip
"""The order commands take turns: every command within the first 14 cases, the costly ones not most."""


# --- judging one case --------------------------------------------------------------------------


def _verifies(bundle: Path) -> bool:
    """Whether the bundle matches its manifest; `verify_bundle` raising is a failure of its own."""
    from perfdsl.bundle.files import verify_bundle

    return bundle.is_dir() and not verify_bundle(bundle)


def _before(case: Case) -> tuple[dict[Path, tuple[str, bool]], list[str]]:
    try:
        return {b: (fuzz.tree_digest(b), _verifies(b)) for b in case.bundles if b.is_dir()}, []
    except Exception:
        return {}, [f"verify_bundle raised before the command ran:\n{traceback.format_exc()}"]


def _usage_error(outcome: fuzz.Outcome) -> bool:
    """An error about the command line itself (argparse's, or one naming an option or its value)."""
    argv = outcome.argv
    options = [a.split("=")[0] for a in argv if a.startswith("--")]
    options += [value for flag, value in itertools.pairwise(argv) if flag.startswith("--") and value]
    errors = [line for line in outcome.stderr.splitlines() if ": error: " in line]
    named = any(option in error for error in errors for option in options)
    return outcome.status == 2 and ("usage: perfdsl" in outcome.stderr or named)


def judge(case: Case, outcome: fuzz.Outcome, before: dict[Path, tuple[str, bool]]) -> list[str]:
    """Every rule the case broke, as one line each."""
    problems = []
    if outcome.escaped:
        problems.append(f"exception escaped main:\n{outcome.escaped}")
    if outcome.hung:
        problems.append(f"still running after {fuzz.CASE_LIMIT_S} s")
    for name, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        if fuzz.TRACEBACK in text:
            problems.append(f"traceback on {name}:\n{text[-4000:]}")
    if not (outcome.would_run or outcome.hung or outcome.escaped) and outcome.status not in (0, 1, 2):
        problems.append(f"exit status {outcome.status}")
    named = any(_named(name, outcome.stderr) for name in case.names)
    if outcome.status == 2 and not _usage_error(outcome) and case.names and not named:
        problems.append(f"status 2 without naming any of {case.names}: {outcome.stderr[-600:]!r}")
    for bundle, (digest, verified) in before.items():
        failed = outcome.status not in (0, 1) or (case.command == "build" and outcome.status == 1)
        if case.command in ("evaluate", "build") and failed and fuzz.tree_digest(bundle) != digest:
            problems.append(
                f"{case.command} failed (status {outcome.status}) and changed its bundle {bundle}"
            )
        if verified and not _verifies(bundle):
            problems.append(f"{bundle} verified before `{case.command}` and no longer does")
    return problems


def _named(name: str, text: str) -> bool:
    """Whether an error names this file: as given, by its resolved path, or by its last part."""
    path = Path(name)
    return any(
        form and form in text for form in (name, str(path.resolve()), path.name if len(path.name) > 3 else "")
    )


def fuzz_cases(
    seeds: Seeds | MatrixSeeds, root: Path, count: int, seed: int = 0, schedule: list[str] = SCHEDULE
) -> tuple[collections.Counter[str], list[str]]:
    """Run `count` cases; returns the cases per command (and per status) and every failure."""
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    with fuzz.kernels_never_run():
        for index in range(count):
            command = schedule[index % len(schedule)]
            rng = random.Random(f"{seed}-{index}")
            where = root / f"case-{index:05d}"
            where.mkdir()
            case = GENERATORS[command](rng, seeds, where)  # type: ignore[arg-type]
            before, problems = _before(case)
            outcome = fuzz.invoke(case.argv, where, case.stdin)
            try:
                problems += judge(case, outcome, before)
            except Exception:
                problems.append(f"judging raised:\n{traceback.format_exc()}")
            counts[command] += 1
            counts[f"{command} -> {'would run' if outcome.would_run else outcome.status}"] += 1
            for problem in problems:
                failures.append(f"case {index} ({case.described}) {' '.join(case.argv)}: {problem}")
            if not problems:
                shutil.rmtree(where, ignore_errors=True)
    return counts, failures


def test_no_command_raises_on_any_input(
    seeds: Seeds, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cells(monkeypatch, tmp_path.parent / f"{tmp_path.name}-runs.log")
    seeded = fuzz.tree_digest(seeds.root)
    repo_before = _repository_state()
    counts, failures = fuzz_cases(seeds, tmp_path, CASES, seed=int(os.environ.get("PERFDSL_FUZZ_SEED", "0")))
    print("cases per command:", dict(sorted(counts.items())))
    for failure in failures:
        print("failing:", failure.splitlines()[0][:400])
    assert not failures, f"{len(failures)} failing cases:\n\n" + "\n\n".join(failures[:20])
    assert sum(counts[c] for c in GENERATORS) == CASES
    assert fuzz.tree_digest(seeds.root) == seeded, "a case wrote into the seed bundles"
    assert _repository_state() == repo_before, "a case wrote into the repository"
    leftovers = [p.name for p in tmp_path.iterdir() if not p.name.startswith("case-")]
    assert not leftovers, f"written beside the cases' directories: {leftovers}"


MATRIX_CASES = int(os.environ.get("PERFDSL_FUZZ_MATRIX_EXAMPLES", "120"))


def test_no_matrix_file_or_directory_makes_matrix_raise(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`matrix` alone, on its own seeds (no quick runs needed): quick to run by itself."""
    matrix = make_matrix_seeds(tmp_path_factory.mktemp("matrix-seeds"))
    seeded = fuzz.tree_digest(matrix.base)
    repo_before = _repository_state()
    fake_cells(monkeypatch, tmp_path.parent / f"{tmp_path.name}-runs.log")
    seed = int(os.environ.get("PERFDSL_FUZZ_SEED", "0"))
    counts, failures = fuzz_cases(matrix, tmp_path, MATRIX_CASES, seed=seed, schedule=["matrix"])
    print("matrix cases:", dict(sorted(counts.items())))
    for failure in failures:
        print("failing:", failure.splitlines()[0][:400])
    assert not failures, f"{len(failures)} failing cases:\n\n" + "\n\n".join(failures[:20])
    assert counts["matrix"] == MATRIX_CASES
    assert fuzz.tree_digest(matrix.base) == seeded, "a case wrote into the seed matrix"
    assert _repository_state() == repo_before, "a case wrote into the repository"


def _repository_state() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
