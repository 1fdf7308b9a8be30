"""Which files `perfdsl check DIR` checks: every study below it, but not the bundles' copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.commands.check import study_paths


def test_a_directory_s_search_leaves_out_the_study_copies_its_bundles_hold(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    for study in ("a.perf", "nested/b.perf"):
        (tmp_path / study).write_text("study s {}\n", encoding="utf-8")
    bundle = tmp_path / "matrices" / "m" / "cells" / "cpu" / "runs" / "s" / "20261207T000000Z-000000"
    bundle.mkdir(parents=True)
    (bundle / "study.perf").write_text("study s {}\n", encoding="utf-8")
    (bundle / "manifest.json").write_text("{}", encoding="utf-8")
    found = study_paths([str(tmp_path)])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.perf", "nested/b.perf"]
    # Named itself, a bundle's directory is searched: the user asked for it.
    assert study_paths([str(bundle)]) == [bundle / "study.perf"]


def test_run_of_a_directory_says_to_name_a_study_in_it(tmp_path: Path) -> None:
    """It said "pass it to search it for *.perf", which only check does."""
    from perfdsl.commands import CommandError
    from perfdsl.commands.check import read_source

    with pytest.raises(CommandError, match=r"is a directory; name one study file in it \(`perfdsl check"):
        read_source(tmp_path)
