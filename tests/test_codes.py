"""One registry for every code the tool prints, and diagnostics that read as English.

Every code the source can emit is registered (and every registered PD code is
emitted somewhere); `perfdsl explain` answers for each with exit status 0; every
message a golden case or a planted measurement produces is checked for doubled
articles and empty placeholders; every keyword and every section or setting
name, misspelt, is answered with "did you mean".
"""

from __future__ import annotations

import re
from pathlib import Path

import check_case_paths
import numpy as np
import pytest

from perfdsl import codes
from perfdsl.bundle.machine import MachineState
from perfdsl.bundle.sampling import Block, BlockReading, LoadReading, Warmup
from perfdsl.cli import main
from perfdsl.commands.check import diagnose, diagnose_file
from perfdsl.evaluate import machine, quality
from perfdsl.schema import SCHEMAS, STUDY_SECTIONS, STUDY_SETTINGS
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "perfdsl"
CASES = check_case_paths.CASES
STUDY = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
CODE = re.compile(r'"(P[DQ]\d{3})"')
DOUBLED_ARTICLE = re.compile(r"\b(a|an|the|no)\s+(a|an|the|no)\b", re.IGNORECASE)
EMPTY_PLACEHOLDER = re.compile(r"``|\(\s*\)|\[\s*\]|\bNone\b|\{\}|  | ,| \.$")
QUOTED = re.compile(r"`[^`]+`")
"""Study text quoted in a message may hold anything: `fallback "  "`."""


def _emitted_codes() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path.name != "codes.py":
            found.update(CODE.findall(path.read_text(encoding="utf-8")))
    return found | {code.value for code in quality.PQ}


def test_every_code_the_source_emits_is_registered() -> None:
    assert sorted(_emitted_codes() - set(codes.CODES)) == []


def test_every_registered_code_is_emitted_somewhere() -> None:
    assert sorted(set(codes.CODES) - _emitted_codes()) == []


@pytest.mark.parametrize("code", sorted(codes.CODES))
def test_explain_answers_for_every_code(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", code.lower()]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{code} ({codes.CODES[code].severity}): {codes.CODES[code].title}\n")


def test_explain_refuses_an_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "PQ999"]) == 2
    assert "no diagnostic code `PQ999`" in capsys.readouterr().err


def test_a_diagnostic_takes_its_severity_from_the_rule() -> None:
    source = Source("s.perf", "")
    assert codes.diagnostic("PD501", "m", source, source.end).severity == "warning"
    assert codes.diagnostic("PD001", "m", source, source.end).severity == "error"
    with pytest.raises(KeyError):
        codes.diagnostic("PD999", "m", source, source.end)


def _load(wall: float, busy: float, total: float, own: float) -> BlockReading:
    """A block edge that read the machine's load (load average 3) and no clocks."""
    load = LoadReading(wall_s=wall, busy_s=busy, steal_s=0, total_s=total, self_s=own, load1=3)
    return BlockReading(None, None, None, None, None, None, None, load)


def _machine_state(*, pinned: bool) -> MachineState:
    """Two SMT siblings under `powersave` with boost on; the workers pinned apart, or spanning both."""
    core = {"governor": "powersave", "min_khz": 800_000, "max_khz": 3_500_000, "siblings": [0, 1]}
    workers = {"op": [0], "application": [0]} if pinned else {"op": [0, 1], "application": [0, 1]}
    affinity = {
        "generator": [1] if pinned else [],
        "missing": None if pinned else "1 usable core",
        "workers": workers,
    }
    state = {"cores": {"0": core, "1": core}, "boost": True, "boost_source": "cpufreq/boost"}
    found = MachineState.from_environment({"cpu": {"state": state, "affinity": affinity}})
    assert found is not None
    return found


def _quality_messages() -> list[str]:
    """A message of every PQ code, from planted measurements."""
    times = np.full(10, 1e-3)
    findings = [
        *quality.check_spread(np.array([1.0, 1.3, 0.8, 1.1, 0.7]), "baseline"),
        *quality.check_outliers(np.r_[np.full(20, 1.0), 9.0], "baseline"),
        *quality.check_resolution(np.full(20, 1e-7), "arm", 5e-7, launch_overhead=5e-6),
        *quality.check_clocks(times, np.full(10, 1980.0), times, np.full(10, 1500.0), "shape (64, 4096)"),
        *quality.check_throttling([0, 0x4], "baseline"),
        *quality.check_bandwidth(4200.0, 3350.0, "fused"),
        *quality.check_block_count(3, "baseline"),
        *quality.check_warmup(
            [Warmup.from_json({"arm": "baseline", "calls": 500, "settled": False})], "shape (64, 4096)"
        ),
        *quality.check_contention(
            [Block(None, "baseline", None, _load(0, 0, 0, 0), _load(1, 2, 2, 1), None, False)],
            "shape (64, 4096)",
        ),
        *quality.check_compulsory_bytes(4096.0, 8 * 4096, "op 64x64 change"),
        *machine.check_frequency(_machine_state(pinned=False)),
        *machine.check_shared_cores(_machine_state(pinned=False), has_load=True),
        *machine.check_shared_cores(_machine_state(pinned=True), has_load=True),
    ]
    assert {f.code for f in findings} == {code.value for code in quality.PQ}
    return [f.message for f in findings]


def _messages() -> list[str]:
    texts: list[str] = []
    for case in CASES:
        for diagnostic in diagnose_file(case)[1]:
            texts += [diagnostic.message, diagnostic.label, diagnostic.help]
    texts += _quality_messages()
    for entry in codes.CODES.values():
        texts += [entry.title, entry.why]
    return [text for text in texts if text]


def test_every_message_reads_as_english() -> None:
    texts = _messages()
    assert len(texts) > 400
    assert [t for t in texts if DOUBLED_ARTICLE.search(t)] == []
    assert [t for t in texts if EMPTY_PLACEHOLDER.search(QUOTED.sub("`x`", t))] == []


KEYWORD_SLIPS = [
    ("study rmsnorm", "stduy rmsnorm", "study"),
    ("(M, N) in [(64", "(M, N) ni [(64", "in"),
    ("25 ms at 400", "25 ms ta 400", "at"),
    ("1e-5 vs float64", "1e-5 sv float64", "vs"),
    ("80 per token", "80 pre token", "per"),
    ("50..800 step 50", "50..800 stpe 50", "step"),
    ("bytes     baseline 4", "bytes     baselin 4", "baseline"),
    ("N), change 4*(2", "N), chnage 4*(2", "change"),
    ("load poisson", "laod poisson", "load"),
]


@pytest.mark.parametrize(("right", "slip", "keyword"), KEYWORD_SLIPS, ids=[k for *_, k in KEYWORD_SLIPS])
def test_a_misspelt_keyword_gets_did_you_mean(right: str, slip: str, keyword: str) -> None:
    assert right in STUDY
    diagnostics = diagnose(Source("s.perf", STUDY.replace(right, slip, 1)))
    assert f"did you mean `{keyword}`" in diagnostics[0].help


def _names() -> list[str]:
    settings = {name for schema in SCHEMAS.values() for name in schema}
    return sorted(set(STUDY_SECTIONS) | set(STUDY_SETTINGS) | settings | {"evidence"})


def _slip(word: str) -> str:
    """The word with its second and third letters swapped (`wrokload`)."""
    return word[0] + word[2] + word[1] + word[3:] if word[1] != word[2] else word[:-1]


@pytest.mark.parametrize("name", [n for n in _names() if re.search(rf"^\s*{n}\b", STUDY, re.M)])
def test_a_misspelt_section_or_setting_gets_did_you_mean(name: str) -> None:
    slipped = re.sub(rf"^(\s*){name}\b", rf"\g<1>{_slip(name)}", STUDY, count=1, flags=re.M)
    diagnostics = diagnose(Source("s.perf", slipped))
    assert any(f"`{name}`" in d.help and "did you mean" in d.help for d in diagnostics), diagnostics[:2]
    assert diagnostics[0].code in ("PD001", "PD004"), "the slip is reported before what it leaves missing"


def test_explain_without_a_code_lists_every_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == sorted(codes.CODES)
    assert lines[0] == f"PD001  error    {codes.CODES['PD001'].title}"
    assert lines[-1] == f"{len(codes.CODES)} codes; `perfdsl explain CODE` explains one"
