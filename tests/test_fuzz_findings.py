"""What the command fuzzer found (tests/test_fuzz_commands.py), one test per defect.

Each bundle here is a planted one (tests/evaluate_fixtures.py), changed the way
the fuzzer changed it and sealed again where the fuzzer did, so that the
manifest check passes and the reader behind it is what is tested. Every
command runs through `perfdsl.cli.main` with its streams captured; each of
these ended in a traceback (or, for the last two of the bundle tests, changed
the bundle of a command that failed) before its fix. The matrix tests run
`perfdsl matrix` on a matrix that ran to the end locally, its cells answered
by the stand-in python (tests/slurm/fake/fake_run.py), its state file then
changed as the fuzzer changed it.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import command_fuzz as fuzz
import pytest
from evaluate_fixtures import CHECKED, make_bundle
from matrix_support import MATRIX_SPEC, STUDY, fake_cells, run_fake_matrix
from run_support import environment

from perfdsl.bundle.files import verify_bundle

REPO = Path(__file__).resolve().parent.parent


def _bundle(tmp_path: Path) -> Path:
    return make_bundle(tmp_path / "planted", **CHECKED)  # type: ignore[arg-type]


def _edit_json(path: Path, edit: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")


def _refused(outcome: fuzz.Outcome, *named: str) -> None:
    """Exit 2 with one error line naming each of `named`, and no traceback."""
    assert outcome.escaped is None, outcome.escaped
    assert fuzz.TRACEBACK not in outcome.stderr + outcome.stdout
    assert outcome.status == 2, outcome.stderr
    errors = [line for line in outcome.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1, outcome.stderr
    for name in named:
        assert name in errors[0], errors[0]


def test_verify_reports_a_manifest_whose_entries_are_not_objects(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _edit_json(bundle / "manifest.json", lambda m: m["files"].update({"study.perf": 5}))
    assert verify_bundle(bundle) == [
        "`manifest.json` is unreadable: `files` is not an object of {sha256, size} entries"
    ]
    outcome = fuzz.invoke(["verify", str(bundle)], tmp_path)
    assert outcome.escaped is None and outcome.status == 1, outcome.escaped


@pytest.mark.parametrize("command", ["verify", "evaluate", "compare"])
def test_a_study_file_or_a_directory_of_bundles_is_named_for_what_it_is(tmp_path: Path, command: str) -> None:
    # `evaluate studies/x.perf` said "no such bundle directory" of a file that exists, and
    # `verify artifacts/<study>` exited 1, "the bundle is not what was written", as if tampered.
    bundle = _bundle(tmp_path / "artifacts" / "planted")
    study = bundle / "study.perf"
    given = [str(study), str(study)] if command == "compare" else [str(study)]
    _refused(fuzz.invoke([command, *given], tmp_path), "is a file, not a bundle directory")
    runs = [str(bundle.parent)] * (2 if command == "compare" else 1)
    _refused(
        fuzz.invoke([command, *runs], tmp_path), f"not a bundle (it holds 1 bundle, the newest {bundle.name})"
    )


def test_verify_reports_a_manifest_that_is_a_directory(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    (bundle / "manifest.json").unlink()
    (bundle / "manifest.json").mkdir()
    assert verify_bundle(bundle) == ["`manifest.json` is unreadable: Is a directory"]


def test_a_probe_csv_without_a_column_is_named_with_its_line(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    probe = bundle / "load" / "baseline-000.csv"
    probe.write_text(probe.read_text().replace("completed_ns", "renamed"), encoding="utf-8")
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["compare", str(bundle), str(bundle)], tmp_path), f"{probe}:1", "`completed_ns`")


def test_a_sample_cell_that_is_not_a_number_is_named_with_its_line(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    samples = bundle / "samples" / "op" / "64x4096.csv"
    lines = samples.read_text().splitlines()
    lines[2] = ",".join([*lines[2].split(",")[:4], "1e999", lines[2].split(",")[5]])
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), f"{samples}:3", "`duration_ns` is '1e999'")


def test_a_sample_row_cut_short_is_named_with_its_line(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    samples = bundle / "samples" / "op" / "64x4096.csv"
    lines = samples.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0]
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), f"{samples}:4", "`valid` is missing")


def test_a_sample_csv_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    samples = bundle / "samples" / "op" / "64x4096.csv"
    samples.write_bytes(b"arm,bl\x86ck\n")
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), str(samples))


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda r: r.update(operations=5), "Results.operations: 5 is not a list"),
        (
            lambda r: r["operations"][0]["shapes"][1].update(weight=-1),
            "weight -1.0, not a finite number >= 0",
        ),
        (lambda r: [s.update(weight=0) for s in r["operations"][0]["shapes"]], "every shape has weight 0"),
        (lambda r: r["application"]["timing"].update(blocks=["x"]), "blocks[0]: 'x' is not a mapping"),
        (
            lambda r: r["operations"][0]["shapes"][1]["timing"]["set_bytes"].update(change=-math.inf),
            "set_bytes.change: -inf is not an integer",
        ),
    ],
    ids=["operations-not-a-list", "negative-weight", "weights-zero", "block-not-an-object", "infinite-bytes"],
)
def test_a_results_value_of_the_wrong_kind_names_results_json(
    tmp_path: Path, edit: object, said: str
) -> None:
    bundle = _bundle(tmp_path)
    _edit_json(bundle / "results.json", edit)
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), f"{bundle / 'results.json'}: unreadable", said)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            lambda p: p["operations"][0]["shapes"][0]["sizes"].update(M=math.inf),
            "sizes.M: inf is not an integer",
        ),
        (lambda p: p["timing"].update(confidence=1.45), "timing confidence 1.45 or threshold 0.02"),
        # A report sizing this probe's requests never stopped doubling: an OverflowError.
        (lambda p: p["load"].update(slo_percentile=1.0), "SLO percentile 1.0 is not one of p1 to p99"),
    ],
    ids=["infinite-size", "confidence-above-1", "percentile-of-1"],
)
def test_a_plan_value_out_of_range_names_plan_json(tmp_path: Path, edit: object, said: str) -> None:
    bundle = _bundle(tmp_path)
    _edit_json(bundle / "plan.json", edit)
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), f"{bundle / 'plan.json'}: unreadable", said)


def test_build_names_results_json_missing_behind_a_current_evaluation(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    study = Path(tmp_path / "study.perf")
    study.write_text((bundle / "study.perf").read_text(), encoding="utf-8")
    assert fuzz.invoke(["evaluate", str(bundle)], tmp_path).status == 0
    (bundle / "results.json").unlink()
    fuzz.reseal(bundle)
    argv = ["build", "--md", str(study), "--results", str(bundle), "-o", str(tmp_path / "r.md")]
    _refused(fuzz.invoke(argv, tmp_path), f"{bundle / 'results.json'}: unreadable")


def test_an_imported_record_of_the_wrong_kind_is_refused(tmp_path: Path) -> None:
    study = tmp_path / "batchnorm_imported.perf"
    text = (REPO / "studies" / "batchnorm_imported.perf").read_text(encoding="utf-8")
    study.write_text(text.replace('artifacts "../artifacts/"', 'artifacts "artifacts/"'), encoding="utf-8")
    subprocess.run(["cp", "-r", str(REPO / "studies" / "imported"), str(tmp_path)], check=True)
    ran = fuzz.invoke(["run", str(study)], tmp_path)
    assert ran.status == 0, ran.stderr
    bundle = Path(ran.stdout.strip().splitlines()[-1])
    ran_imported = (bundle / "imported.json").read_bytes()
    _edit_json(bundle / "imported.json", lambda i: i["operations"][0].update(sizes="x"))
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), str(bundle / "imported.json"), "malformed")
    (bundle / "imported.json").write_bytes(ran_imported)
    _edit_json(bundle / "imported.json", lambda i: i["operations"][0]["models"].update(bytes="x"))
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), str(bundle / "imported.json"), "malformed")
    (bundle / "imported.json").write_bytes(ran_imported)
    (bundle / "study.perf").write_bytes(b"\xa9 not UTF-8")
    fuzz.reseal(bundle)
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), f"{bundle / 'study.perf'}: unreadable")


def test_evaluate_that_cannot_write_its_junit_leaves_the_bundle_as_it_was(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    before = fuzz.tree_digest(bundle)
    junit = tmp_path / "no" / "such" / "dir" / "junit.xml"
    _refused(fuzz.invoke(["evaluate", str(bundle), "--junit", str(junit)], tmp_path), str(junit))
    assert fuzz.tree_digest(bundle) == before


def test_build_into_a_directory_leaves_the_bundle_as_it_was(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    study = tmp_path / "study.perf"
    study.write_text((bundle / "study.perf").read_text(), encoding="utf-8")
    before = fuzz.tree_digest(bundle)
    argv = ["build", "--md", str(study), "--results", str(bundle), "-o", str(tmp_path)]
    _refused(fuzz.invoke(argv, tmp_path), f"{tmp_path}: is a directory")
    assert fuzz.tree_digest(bundle) == before


@pytest.mark.slow
def test_the_language_server_answers_broken_frames_in_one_line_each(tmp_path: Path) -> None:
    """A malformed frame, a position out of range, a hover on a file that is not there: no traceback.

    The real command line in a child process: in this one, pytest's own log
    capture would take pygls's records before they reached stderr.
    """
    missing = (tmp_path / "gone.perf").as_uri()
    hover = {"textDocument": {"uri": missing}, "position": {"line": 0, "character": 0}}
    frames = b"".join(
        [
            fuzz.frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
            fuzz.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            fuzz.frame(b"{not json"),
            fuzz.frame(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "textDocument/hover",
                    "params": {**hover, "position": {"line": -1, "character": 0}},
                }
            ),
            fuzz.frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": hover}),
            fuzz.frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}),
            fuzz.frame({"jsonrpc": "2.0", "method": "exit"}),
        ]
    )
    done = subprocess.run(
        [sys.executable, "-m", "perfdsl", "lsp"],
        input=frames,
        capture_output=True,
        env=environment(),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode("utf-8", "replace")
    assert fuzz.TRACEBACK not in stderr, stderr
    assert done.returncode == 0, stderr
    assert all(line.startswith("perfdsl lsp: ") for line in stderr.splitlines()), stderr
    answers = {a.get("id"): a for a in (json.loads(body) for body in _bodies(done.stdout))}
    # The hover on a document that was never opened and whose file is gone: no answer, not an error.
    assert answers[3].get("result") is None and "error" not in answers[3], answers[3]


def _bodies(stream: bytes) -> list[bytes]:
    """The JSON bodies of an LSP byte stream, in order."""
    bodies = []
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        length = int(header.split(b"\r\n")[0].split(b":")[1])
        bodies.append(rest[:length])
        stream = rest[length:]
    return bodies


def test_only_an_error_raised_reading_a_record_is_the_files_fault() -> None:
    """A wrong-kind value in a lazily read record is the bundle's fault; the same error elsewhere is a bug."""
    from perfdsl.bundle.sampling import Warmup
    from perfdsl.bundle.versions import raised_reading_a_record

    with pytest.raises(ValueError) as in_record:
        Warmup.from_json("not an object")  # type: ignore[arg-type]
    assert raised_reading_a_record(in_record.value)
    with pytest.raises(KeyError) as elsewhere:
        _ = {}["key"]
    assert not raised_reading_a_record(elsewhere.value)


# --- perfdsl matrix: matrix files and matrix directories the fuzzer corrupted -----------------


@pytest.fixture(scope="module", name="matrix_ran_once")
def matrix_ran_once_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One matrix run to the end with the stand-in python (a second a run): each test edits a copy."""
    root = tmp_path_factory.mktemp("matrix") / "seed"
    run_fake_matrix(root)
    return root


@pytest.fixture(name="ran_matrix")
def ran_matrix_fixture(
    matrix_ran_once: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Path]:
    """A matrix run to the end with the stand-in python: its file, its --dir, its state.json."""
    root = tmp_path / "seed"
    shutil.copytree(matrix_ran_once, root)
    spec, base = root / "fuzz.matrix.toml", root / "matrices"
    fake_cells(monkeypatch, tmp_path / "runs.log")
    (directory,) = base.iterdir()
    return spec, base, directory / "state.json"


def test_a_matrix_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    spec = tmp_path / "m.matrix.toml"
    spec.write_bytes(MATRIX_SPEC.encode("utf-8").replace(b"fuzz", b"fu\xffzz", 1))
    _refused(fuzz.invoke(["matrix", str(spec), "--status"], tmp_path), str(spec), "not UTF-8 text (byte 10)")


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda s: s["cells"][0].update(extra=1), "cells[0]: unknown key 'extra'"),
        (lambda s: s["cells"].__setitem__(0, "x"), "cells: expected a list of cell records"),
        (lambda s: s["cells"][1].update(bundle=5), "cells[1]: bundle is 5, not a valid value"),
        (lambda s: s["cells"][0].update(state=None), "cells[0]: state is null"),
        (lambda s: s["cells"][0].update(attempts=-1), "cells[0]: attempts is -1, below 0"),
        (lambda s: s.pop("cells"), "the file: cells is missing"),
        (lambda s: s["cells"][1].update(id=s["cells"][0]["id"]), "`cpu.any.fake.small` is recorded twice"),
        (
            lambda s: s["cells"][0].update(id="../../../outside"),
            "records the cell `../../../outside`, which this matrix does not have",
        ),
        (lambda s: s["cells"].pop(), "lacks the cell `cpu.any.fake.mid`, which this matrix has"),
    ],
    ids=["unknown-key", "not-a-record", "bundle-a-number", "state-null", "attempts-negative",
         "no-cells", "a-cell-twice", "a-cell-of-another-matrix", "a-cell-missing"],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["--status", "--cancel", "--run"])
def test_a_matrix_state_file_of_the_wrong_shape_is_refused_naming_it(
    ran_matrix: tuple[Path, Path, Path], tmp_path: Path, edit: object, said: str, mode: str
) -> None:
    spec, base, state = ran_matrix
    _edit_json(state, edit)
    argv = ["matrix", str(spec), "--dir", str(base), *([mode] if mode != "--run" else [])]
    _refused(fuzz.invoke(argv, tmp_path), str(state), said)


def test_a_matrix_state_file_that_is_not_json_is_refused_naming_it(
    ran_matrix: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    spec, base, state = ran_matrix
    state.write_bytes(state.read_bytes()[:40])
    outcome = fuzz.invoke(["matrix", str(spec), "--dir", str(base), "--status"], tmp_path)
    _refused(outcome, f"{state}: not a matrix state file", "move it away to start the matrix over")


@pytest.mark.parametrize("poll", ["inf", "nan", "-1", "1e300"])
def test_a_poll_that_cannot_be_slept_is_a_usage_error(
    ran_matrix: tuple[Path, Path, Path], tmp_path: Path, poll: str
) -> None:
    spec = tmp_path / "other.matrix.toml"
    spec.write_text(MATRIX_SPEC.replace('name = "fuzz"', 'name = "other"'), encoding="utf-8")
    outcome = fuzz.invoke(["matrix", str(spec), "--dir", str(tmp_path / "m"), "--poll", poll], tmp_path)
    _refused(outcome, "--poll", f"{poll!r} is not a number of seconds from 0 to 86400")


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda o: o.update(extra=1), "unknown key 'extra'"),
        (lambda o: o.update(state=None), "state is null, not a valid value"),
        (lambda o: o.update(bundle=5), "bundle is 5, not a valid value"),
        (lambda o: o.update(attempt="1"), 'attempt is "1", not a valid value'),
        (lambda o: o.clear() or o.update(cell=[1]), "attempt is missing"),
    ],
    ids=["unknown-key", "state-null", "bundle-a-number", "attempt-text", "fields-missing"],
)
def test_a_live_cells_broken_outcome_fails_that_cell_alone(
    ran_matrix: tuple[Path, Path, Path], tmp_path: Path, edit: object, said: str
) -> None:
    spec, base, state = ran_matrix
    _edit_json(state, lambda s: s["cells"][0].update(state="RUNNING"))
    cell = json.loads(state.read_text(encoding="utf-8"))["cells"][0]["id"]
    outcome_file = state.parent / "cells" / cell / "outcome.json"
    _edit_json(outcome_file, edit)
    outcome = fuzz.invoke(["matrix", str(spec), "--dir", str(base), "--status"], tmp_path)
    assert outcome.escaped is None, outcome.escaped
    assert outcome.status == 1, outcome.stderr
    assert f"{cell}: FAILED (its outcome is unreadable: {outcome_file}: {said})" in outcome.stderr
    records = {c["id"]: c["state"] for c in json.loads(state.read_text(encoding="utf-8"))["cells"]}
    assert records == {cell: "FAILED", "cpu.any.fake.mid": "COMPLETED"}


def test_a_matrix_of_a_study_that_does_not_check_could_not_be_run(tmp_path: Path) -> None:
    # Exit 1 says a cell has no result (docs/matrix.md); a study with errors runs no cell at all.
    broken = tmp_path / "broken.perf"
    broken.write_text((REPO / "tests/check_cases/PD004_unknown_setting.perf").read_text(), encoding="utf-8")
    spec = tmp_path / "m.matrix.toml"
    spec.write_text(MATRIX_SPEC.replace(f'study = "{STUDY}"', f'study = "{broken}"'), encoding="utf-8")
    outcome = fuzz.invoke(["matrix", str(spec)], tmp_path)
    assert outcome.escaped is None and fuzz.TRACEBACK not in outcome.stderr
    assert outcome.status == 2 and "the study does not check" in outcome.stderr
    assert not (tmp_path / "matrices").exists()
