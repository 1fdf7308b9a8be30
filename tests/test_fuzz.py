"""Fuzzing: whatever the text, `check` answers with diagnostics, never an exception, and every
study it accepts can be planned.

Two generators. Mutated studies copy what editing goes through: tokens and
lines deleted, duplicated and swapped, random characters (non-ASCII and control
characters included) inserted. Generated studies are valid-looking: a bundled
study with the numbers the run depends on drawn anew (shapes, weights, counts,
the load sweep, formulas, prediction bounds and comparators), including the
zeros, reversals and huge values people write by mistake. For both, every
diagnostic points inside its text, and every study `check` accepts goes through
`perfdsl.plan` on each target, quick or not, without raising: `check` is the
plan's validation.

`PERFDSL_FUZZ_EXAMPLES` sets how many examples each generator draws (CI keeps
the default; a one-off run uses 10,000 or more).
"""

from __future__ import annotations

import os

import bundled_studies
import command_fuzz
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from perfdsl.commands.check import diagnose
from perfdsl.diagnostics import count_errors
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.source import Source

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("PERFDSL_FUZZ_EXAMPLES", "150"))
STUDIES = [p.read_text(encoding="utf-8") for p in bundled_studies.PATHS]
RMSNORM = bundled_studies.PATHS[bundled_studies.NAMES.index("rmsnorm_fusion")].read_text(encoding="utf-8")
TARGETS = ("cpu", "cuda", "cudasim")

characters = st.one_of(
    st.sampled_from(
        [*'{}()[],;."#%<=>*+-/\n\t\r\\:', "study", "..", "1e999", "\x00", "é", "µs", "\u2028", "\ufeff"]
    ),
    st.characters(codec="utf-8"),
)


def _pieces(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else command_fuzz.TOKEN.findall(text)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(STUDIES))
    for _ in range(draw(st.integers(1, 4))):
        pieces = _pieces(text, by_line=draw(st.booleans()))
        if not pieces:
            break
        i = draw(st.integers(0, len(pieces) - 1))
        j = draw(st.integers(0, len(pieces) - 1))
        operation = draw(st.sampled_from(command_fuzz.EDITS))
        inserted = "".join(draw(st.lists(characters, min_size=1, max_size=4)))
        command_fuzz.edit(pieces, operation, i, j, inserted)
        text = "".join(pieces)
    return text


def mostly(valid: st.SearchStrategy[str], mistaken: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Nine draws in ten valid, one a mistake: so that a fair share of studies check and reach `plan`.

    The mistake is the last of the ten, not the first: Hypothesis leans towards
    the simplest value of a range (0 here), so a mistake at 0 would come far
    more often than one time in ten and few studies would check.
    """
    return st.integers(0, 9).flatmap(lambda i: mistaken if i == 9 else valid)


# Numbers as people write them, the mistakes included: 0, a reversal, a huge value.
size = mostly(
    st.integers(1, 4096).map(str), st.sampled_from(["0", "1", "31", "4097", "1000000", "1e999", "1e308"])
)
count = mostly(st.integers(2, 12).map(str), st.sampled_from(["0", "1", "1000000", "2.5", "1e40000"]))
ratio = mostly(
    st.floats(0.05, 0.95).map(lambda x: f"{x:.3g}"),
    st.sampled_from(["0", "1", "1.05", "10", "100", "-0.2", "1e999", "amdahl", "5 ms"]),
)
comparator = mostly(st.just("<="), st.sampled_from([">=", "<", ">", "=="]))
formula = mostly(
    st.sampled_from(["4*M*N", "4*(5*M*N + 2*M + N)", "8*M", "3", "2*M*N - N"]),
    st.sampled_from(["M*N/(N - 4096)", "M/N", "4 ms", "K*M", "[3]", "-1"]),
)
app_quantity = mostly(st.just("time"), st.sampled_from(["throughput", "goodput"]))
percent = mostly(st.integers(1, 60).map(str), st.sampled_from(["0", "100", "150", "-5"]))
dtype = mostly(st.just("float32"), st.sampled_from(["float16", "float64", "int8", "float8"]))


@st.composite
def shape_list(draw: st.DrawFn, min_size: int = 1) -> list[str]:
    return draw(
        st.lists(st.tuples(size, size).map(lambda mn: f"({mn[0]}, {mn[1]})"), min_size=min_size, max_size=4)
    )


@st.composite
def weights_for(draw: st.DrawFn, n: int) -> str:
    valid = st.just(", ".join([repr(1 / n)] * n))
    mistaken = st.sampled_from([", ".join(["0.5"] * (n + 1)), ", ".join(["-0.2", *["0.4"] * max(1, n - 1)])])
    return "[" + draw(mostly(valid, mistaken)) + "]"


@st.composite
def load_sweep(draw: st.DrawFn) -> str:
    start = draw(st.integers(1, 1000))
    stop = start + draw(st.integers(0, 2000))
    step = draw(st.integers(1, 500))
    valid = st.just(f"{start}..{stop} step {step} rps")
    mistaken = st.sampled_from(
        [
            f"{start}..{stop} step 0 rps",
            f"{stop + 1}..{start} step {step} rps",
            f"0..{stop} rps",
            "1..100000 step 1 rps",
            f"{start}..1e40000 step {step} rps",
        ]
    )
    return draw(mostly(valid, mistaken))


@st.composite
def generated(draw: st.DrawFn) -> str:
    """The RMSNorm study with every number the run reads drawn anew, each from mostly valid values."""
    shapes = draw(shape_list())
    replacements = {
        "(M, N) in [(64, 4096), (256, 8192), (4096, 8192)]": f"(M, N) in [{', '.join(shapes)}]",
        "[0.5, 0.3, 0.2]": draw(weights_for(len(shapes))),
        "(M, N) in [(1, 1), (1, 4097), (3, 31), (4096, 1)]": f"(M, N) in [{', '.join(draw(shape_list()))}]",
        "50..800 step 50 rps": draw(load_sweep()),
        "requests 2000": f"requests {draw(count)}",
        "seeds 5": f"seeds {draw(count)}",
        "warmup 10; repeats 100; rotate 4": f"warmup {draw(count)}; repeats {draw(count)}; "
        f"blocks {draw(count)}; rotate {draw(count)}",
        "4*(5*M*N + 2*M + N), change 4*(2*M*N + N)": f"{draw(formula)}, change {draw(formula)}",
        "launches  baseline 3, change 1": f"launches  baseline {draw(formula)}, change {draw(formula)}",
        "normalize.bytes  ratio <= 0.45": f"normalize.bytes  ratio {draw(comparator)} {draw(ratio)}",
        "normalize.time   ratio <= 0.55": f"normalize.time   ratio {draw(comparator)} {draw(ratio)}",
        "decode_step.time ratio <= amdahl": f"decode_step.{draw(app_quantity)} ratio {draw(comparator)} "
        f"{draw(mostly(st.just('amdahl'), ratio))}",
        "share 8%": f"share {draw(percent)}%",
        "dtype     float32": f"dtype     {draw(dtype)}",
    }
    text = RMSNORM
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def _checks_and_plans(text: str) -> None:
    source = Source("fuzz.perf", text)
    diagnostics = diagnose(source)
    for diagnostic in diagnostics:
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text), diagnostic
        assert diagnostic.message and diagnostic.code
    if count_errors(diagnostics):
        return
    study = parse(source).study
    assert study is not None
    for target in TARGETS:
        for quick in (False, True):
            plan(study, target, quick)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_studies_never_raise(text: str) -> None:
    _checks_and_plans(text)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(generated())
def test_every_generated_study_check_accepts_can_be_planned(text: str) -> None:
    _checks_and_plans(text)


def test_the_generator_reaches_both_verdicts() -> None:
    """A generator whose studies all fail, or all pass, would prove nothing about `plan`.

    Sixty draws through `@given`, not `.example()`: under Hypothesis's CI
    profile (derandomized) every `.example()` call returns the same study, so
    forty of them are one draw. Generation only, so no draw is shrunk.
    """
    verdicts: list[bool] = []

    @settings(
        max_examples=60,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(generated())
    def draw(text: str) -> None:
        verdicts.append(bool(count_errors(diagnose(Source("g.perf", text)))))

    draw()
    assert 0 < sum(verdicts) < len(verdicts), verdicts
