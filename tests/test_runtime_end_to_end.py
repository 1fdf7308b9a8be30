"""How the application's request timing and share pass are sized and ordered (no timing asserted)."""

from __future__ import annotations

import itertools
from pathlib import Path

import attrs
import numpy as np
import pytest

from perfdsl.kernel import Application, Variant
from perfdsl.runtime.end_to_end import SHARE_ROUNDS, OpTimer, build_requests, measure_share
from perfdsl.runtime.settings import SHARE_REQUESTS, request_repeats, share_requests
from perfdsl.runtime.targets import make_target


def test_a_block_of_short_requests_spans_ten_milliseconds() -> None:
    assert request_repeats(10, 0.00045) == 23  # ceil(10 ms / 0.45 ms)
    # Requests of several milliseconds keep a fifth of the kernels' repeats, at least 3.
    assert request_repeats(10, 0.005) == 3
    assert request_repeats(100, 0.005) == 20


def test_the_share_pass_lasts_half_a_second_per_arm_unless_quick() -> None:
    assert share_requests(0.0005, quick=False) == 1000
    assert share_requests(0.1, quick=False) == SHARE_REQUESTS
    assert share_requests(0.0005, quick=True) == 5


def test_the_share_pass_alternates_the_arms_on_the_timed_requests() -> None:
    order: list[str] = []

    def prepare(ctx):
        x = np.ones(4, np.float32)

        def request():
            ctx.op(x=x)
            return x

        return request

    variants = {
        arm: Variant(name=arm, cpu=lambda x, arm=arm: order.append(arm)) for arm in ("baseline", "change")
    }
    timers: dict[str, OpTimer] = {}
    requests = build_requests(
        Application("app", prepare), make_target("cpu"), variants, {"N": 4}, np.float32, timers
    )
    for request in requests.values():
        request()  # as the request time runs them: the timers are off
    assert [t.spent for t in timers.values()] == [[], []]
    shares = measure_share(requests, timers, 40)
    assert [len(s.op_ns) for s in shares.values()] == [40, 40]
    assert not any(t.on for t in timers.values()) and [len(t.spent) for t in timers.values()] == [40, 40]
    # SHARE_ROUNDS turns per arm after the two untimed requests, each turn after its arm's renewal
    # (whose warm-up calls, untimed, run in the arm's own turn).
    assert [arm for arm, _ in itertools.groupby(order[2:])] == ["baseline", "change"] * SHARE_ROUNDS


class _Quiet:
    def __call__(self, message: str) -> None:
        pass

    def blocks(self, key: str, order: object):
        return lambda: None

    def finish_step(self, key: str, stop: object = None) -> None:
        pass

    def look(self, key: str, current: object, needed: int) -> None:
        pass


@pytest.mark.slow  # compiles and times the study's application in process: about 10 s of CPU
def test_the_application_hands_back_its_request_samples_as_a_kernel_shape_does() -> None:
    # The samples come back as the bundle's records for the caller to write, as `sample` returns a
    # shape's, and so would the load probes' records (there is no load here, so there are none).
    # The load test is asked for apart, of the requests the application prepared.
    import attrs

    from perfdsl.bundle.sampling import SAMPLE_COLUMNS
    from perfdsl.parse import parse
    from perfdsl.plan import plan
    from perfdsl.runtime.end_to_end import run_application, run_load
    from perfdsl.runtime.resolve import resolve_operation, resolve_reference
    from perfdsl.source import Source

    study = parse(Source.read(Path(__file__).parents[1] / "studies" / "rmsnorm_cpu.perf")).study
    assert study is not None
    planned = attrs.evolve(plan(study, "cpu", quick=True), load=None)
    app = planned.application
    assert app is not None
    (operation,) = (op for op in planned.operations if op.name in app.uses)
    application = resolve_reference(app.entry, Application, planned, app.line)
    record, sampled, load_input = run_application(
        planned, application, resolve_operation(planned, operation), make_target("cpu"), _Quiet(), True
    )
    assert load_input is not None and set(load_input.requests) == {"baseline", "change"}
    outcome = run_load(planned, load_input, _Quiet())
    assert (outcome.load, outcome.missing, outcome.probes) == (None, "the study declares no load", ())
    assert outcome.preparations == record.preparations
    assert sampled is not None and record.samples == "samples/application.csv"
    assert sampled.rows()[0] == SAMPLE_COLUMNS and {s.arm for s in sampled.samples} == {"baseline", "change"}
    assert record.timing is not None and record.timing.blocks == sampled.timing.blocks


def test_a_load_test_that_cannot_run_names_the_arm_whose_request_is_over_the_slo() -> None:
    # "no rate can meet the SLO: one request alone takes 62.1 ms" was the baseline's; the change's
    # request took 4.13 ms, and the sentence read as if no arm could.
    from perfdsl.runtime.end_to_end import LoadInput, _unmeetable

    served = LoadInput({}, {"baseline": 0.0621, "change": 0.00413})
    said = _unmeetable(served, 0.020)
    assert said.startswith("no rate can meet the SLO of 20 ms for the baseline: one request alone takes ")
    assert "the baseline's 62.1 ms, the change's 4.13 ms" in said


def test_a_load_test_that_cannot_run_says_so_on_the_console() -> None:
    # A new user's impossible SLO (1 us) skipped the load test with no line on the console: the
    # reason was in the report alone.
    from perfdsl.parse import parse
    from perfdsl.plan import plan
    from perfdsl.runtime.end_to_end import LoadInput, run_load
    from perfdsl.source import Source

    study = parse(Source.read(Path(__file__).parents[1] / "studies" / "rmsnorm_cpu.perf")).study
    assert study is not None
    said: list[str] = []

    class _Heard(_Quiet):
        def __call__(self, message: str) -> None:
            said.append(message)

    outcome = run_load(
        plan(study, "cpu", quick=True), LoadInput({}, {"baseline": 0.03, "change": 0.03}), _Heard()
    )
    assert outcome.load is None and outcome.missing is not None
    assert said == [f"load: not run: {outcome.missing}"]


def test_no_load_test_is_run_for_an_application_that_never_called_the_operation(tmp_path: Path) -> None:
    # A new user's application bypassed ctx.op: both arms served the same code, and the run
    # still spent ten load probes comparing them.
    from evaluate_fixtures import make_bundle

    from perfdsl.bundle.results import Results
    from perfdsl.runtime.execute import _ask_application

    record = Results.read(make_bundle(tmp_path, share=0.0)).application
    assert record is not None and record.operation_never_called is not None
    record = attrs.evolve(record, load=None, load_missing=None)
    asked: list[str] = []
    said: list[str] = []

    class _Session:
        def call(self, name: str, args: tuple) -> object:
            asked.append(name)
            return record, None

    found, _ = _ask_application(_Session(), None, True, said.append)  # type: ignore[arg-type]
    assert asked == ["application"]
    assert found.load is None and found.load_missing.startswith("not run: `app` never called `op`")
    assert said == [f"load: {found.load_missing}"]
