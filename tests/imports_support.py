"""Helpers for the importer tests: the fixtures, and broken copies of them. Not a test module."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from perfdsl.imports.evidence import ImportedEvidence, ImportFormatError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"


def load(name: str) -> Any:
    """A JSON fixture as plain data, to compare a parser's result with the file's own numbers."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def write_json(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def broken_json(tmp_path: Path, fixture: str, damage: Callable[[Any], None]) -> Path:
    """A copy of a JSON fixture with `damage` applied to its data."""
    data = load(fixture)
    damage(data)
    return write_json(tmp_path, f"broken-{fixture}", data)


def assert_format_error(
    parse: Callable[[Path], ImportedEvidence], path: Path, *parts: str, names: Path | None = None
) -> str:
    """Parsing `path` fails with a one-line ImportFormatError that starts with the file at fault
    (`names`, when that is not `path` itself) and matches every regex in `parts`."""
    with pytest.raises(ImportFormatError) as caught:
        parse(path)
    message = str(caught.value)
    assert message.startswith(str(names or path)), message
    for part in parts:
        assert re.search(part, message), (part, message)
    assert "\n" not in message
    return message
