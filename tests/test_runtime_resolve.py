"""Resolving `package.module:attr` references from a study's directory and project root."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from perfdsl.kernel import Reference, Variant
from perfdsl.runtime.resolve import ResolveError, perfdsl_checkout, project_root, resolve, search_path

MODULE = """\
from pathlib import Path
from perfdsl.kernel import Variant
Path({marker!r}).write_text({label!r})
fused = Variant("fused_" + {label!r}, cpu=lambda **kw: None)
not_a_variant = 42
"""


@pytest.fixture
def pkg():
    """A package name unique to the test, removed from sys.modules afterwards."""
    name = f"kern_{uuid.uuid4().hex[:8]}"
    yield name
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def write_package(root: Path, name: str, label: str, marker: Path, body: str = MODULE) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / name / "ops.py").write_text(body.format(marker=str(marker), label=label))


def make_project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    studies = root / "studies"
    studies.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return root, studies


def test_good_reference_from_project_root(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    marker = tmp_path / "marker"
    write_package(root, pkg, "root", marker)
    before = list(sys.path)
    variant = resolve(f"{pkg}.ops:fused", Variant, studies)
    assert variant.name == "fused_root"
    assert marker.read_text() == "root"
    assert sys.path == before, "search directories must not stay on sys.path"
    assert project_root(studies) == root.resolve()
    assert search_path(studies) == (studies.resolve(), root.resolve())


def test_study_directory_wins_over_project_root(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    study_marker, root_marker = tmp_path / "study_marker", tmp_path / "root_marker"
    write_package(root, pkg, "root", root_marker)
    write_package(studies, pkg, "study", study_marker)
    variant = resolve(f"{pkg}.ops:fused", Variant, studies)
    assert variant.name == "fused_study"
    assert study_marker.read_text() == "study"
    assert not root_marker.exists(), "the project root's module must not be imported"


def test_missing_module(tmp_path, pkg):
    _, studies = make_project(tmp_path)
    with pytest.raises(ResolveError) as caught:
        resolve(f"{pkg}.ops:fused", Variant, studies)
    assert caught.value.message == f"no module named `{pkg}`"
    assert "searched" in caught.value.help
    assert "\n" not in caught.value.message + caught.value.help


def test_missing_submodule(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m")
    with pytest.raises(ResolveError, match=f"no module named `{pkg}.nope`"):
        resolve(f"{pkg}.nope:fused", Variant, studies)


def test_missing_attribute(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m")
    with pytest.raises(ResolveError) as caught:
        resolve(f"{pkg}.ops:unfused", Variant, studies)
    assert caught.value.message == f"module `{pkg}.ops` has no attribute `unfused`"
    assert isinstance(caught.value.__cause__, AttributeError)


def test_module_raising_on_import(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m", body="raise ValueError('bad config')\n")
    with pytest.raises(ResolveError) as caught:
        resolve(f"{pkg}.ops:fused", Variant, studies)
    assert caught.value.message == f"importing `{pkg}.ops` raised ValueError: bad config"
    assert f"import {pkg}.ops" in caught.value.help
    assert isinstance(caught.value.__cause__, ValueError)
    assert f"{pkg}.ops" not in sys.modules


def test_module_importing_something_missing(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m", body="import no_such_dependency_xyz\n")
    with pytest.raises(ResolveError, match="raised ModuleNotFoundError"):
        resolve(f"{pkg}.ops:fused", Variant, studies)


def test_wrong_type(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m")
    with pytest.raises(ResolveError, match="is a `int`, expected a `Variant`"):
        resolve(f"{pkg}.ops:not_a_variant", Variant, studies)
    with pytest.raises(ResolveError, match="expected a `Reference`"):
        resolve(f"{pkg}.ops:fused", Reference, studies)


@pytest.mark.parametrize("bad", ["kernels.rmsnorm", "kernels.rmsnorm:", ":x", "a b:c", "a:b:c"])
def test_malformed_reference(bad):
    with pytest.raises(ResolveError, match="is not a Python reference"):
        resolve(bad, Variant)


def test_sys_path_fallback():
    assert resolve("perfdsl.kernel:Variant", type) is Variant


def test_package_already_imported_elsewhere_is_refused(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "root_marker")
    resolve(f"{pkg}.ops:fused", Variant, studies)
    other = tmp_path / "other"
    other.mkdir()
    write_package(other, pkg, "other", tmp_path / "other_marker")
    with pytest.raises(ResolveError, match="already imported from"):
        resolve(f"{pkg}.ops:fused", Variant, other)
    assert not (tmp_path / "other_marker").exists()


# ---------------------------------------------------------------- perfdsl's own examples


@pytest.fixture
def editable(monkeypatch: pytest.MonkeyPatch) -> Path:
    """perfdsl's checkout on sys.path, as an editable install's .pth puts it, and no PYTHONPATH."""
    checkout = perfdsl_checkout()
    if checkout is None:
        pytest.skip("perfdsl is not running from a source checkout")
    monkeypatch.syspath_prepend(str(checkout))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return checkout


def _lone_study(tmp_path: Path) -> Path:
    """A study directory with `studies/` and `kernels/` beside it but no project root marker."""
    studies = tmp_path / "mine" / "studies"
    studies.mkdir(parents=True)
    (tmp_path / "mine" / "kernels").mkdir()
    (tmp_path / "mine" / "kernels" / "__init__.py").write_text("")
    (tmp_path / "mine" / "kernels" / "rmsnorm.py").write_text("raise SystemExit('the user module ran')\n")
    return studies


def test_a_study_elsewhere_never_resolves_to_perfdsl_examples(tmp_path: Path, editable: Path) -> None:
    """`kernels.rmsnorm` exists in perfdsl's examples; a study outside the checkout must not get it."""
    studies = _lone_study(tmp_path)
    with pytest.raises(ResolveError) as raised:
        resolve("kernels.rmsnorm:fused", Variant, studies)
    assert f"perfdsl's own bundled example package at {editable / 'kernels'}" in raised.value.message
    assert f"searched {studies.resolve()}, then sys.path" in raised.value.help
    assert "no pyproject.toml or .git at or above" in raised.value.help


def test_perfdsl_examples_resolve_when_put_on_pythonpath(
    tmp_path: Path, editable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(editable))
    variant = resolve("kernels.rmsnorm:fused", Variant, _lone_study(tmp_path))
    assert variant.name


def test_a_missing_module_says_where_it_looked_and_what_it_found(tmp_path: Path, pkg: str) -> None:
    studies = tmp_path / "alone" / "studies"
    studies.mkdir(parents=True)
    write_package(studies, pkg, "here", tmp_path / "marker")
    with pytest.raises(ResolveError) as raised:
        resolve(f"{pkg}.softmax_online:fused", Variant, studies)
    where = (studies / pkg).resolve()
    assert (
        raised.value.message
        == f"no module named `{pkg}.softmax_online` (package `{pkg}` was found at {where}, which has none)"
    )
    assert raised.value.help.startswith(f"searched {studies.resolve()}, then sys.path (no pyproject.toml")


def test_a_misspelt_reference_gets_the_name_it_near_misses(tmp_path, pkg):
    root, studies = make_project(tmp_path)
    write_package(root, pkg, "root", tmp_path / "m")
    with pytest.raises(ResolveError) as attribute:
        resolve(f"{pkg}.ops:fusd", Variant, studies)
    assert attribute.value.help.startswith("did you mean `fused`? otherwise, define `fusd` in ")
    with pytest.raises(ResolveError) as submodule:
        resolve(f"{pkg}.opps:fused", Variant, studies)
    assert submodule.value.help.startswith(f"did you mean `{pkg}.ops`? searched ")
    with pytest.raises(ResolveError) as top:
        resolve(f"{pkg}x.ops:fused", Variant, studies)
    assert top.value.help.startswith(f"did you mean `{pkg}`")


def test_a_module_that_changes_directory_as_it_is_imported_leaves_the_harness_where_it_was(
    tmp_path, pkg, monkeypatch
):
    # A kernel module that ran `os.chdir("/")` at import sent the workers looking for it from /:
    # "no module named `demo_kernels`; searched /".
    root, studies = make_project(tmp_path)
    chdir_first = "import os\nos.chdir('/')\n" + MODULE
    write_package(root, pkg, "root", tmp_path / "marker", body=chdir_first)
    monkeypatch.chdir(studies)
    assert resolve(f"{pkg}.ops:fused", Variant, Path(".")).name == "fused_root"
    assert Path.cwd() == studies
