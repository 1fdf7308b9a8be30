"""The machine's own state as evidence: read from a planted sysfs tree, judged from the bundle.

The readers take the sysfs root as a parameter, so each test plants the files a
real kernel writes (a governor that says `powersave`, boost on, SMT siblings)
and the finding is shown on that state and absent on a clean one. A tree with
no cpufreq (a container) is unknown: no error, no finding.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evaluate_fixtures import make_bundle, planted_environment

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.machine import MachineState
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.evaluate.machine import check_frequency, check_shared_cores
from perfdsl.parse import parse
from perfdsl.ranges import format_ranges, parse_ranges
from perfdsl.report.markdown import render_markdown
from perfdsl.runtime.load_generator import run_open_loop
from perfdsl.runtime.machine_state import (
    choose_pinning,
    read_cpu_state,
    siblings_of,
)
from perfdsl.source import Source

PINNED = {
    "run": [0, 1],
    "measuring": [0],
    "generator": [1],
    "missing": None,
    "workers": {"op": [0], "application": [0]},
}
SPANNING = {
    "run": [0, 1],
    "measuring": [],
    "generator": [],
    "missing": "this OS gives no processor affinity (os.sched_setaffinity)",
    "workers": {"op": [0, 1], "application": [0, 1]},
}


def plant_cpu_tree(
    root: Path,
    governor: str | None = "performance",
    *,
    cores: int = 2,
    boost: str | None = "0",
    no_turbo: str | None = None,
    siblings: dict[int, str] | None = None,
    smt: str = "notsupported",
    frequency: tuple[int, int] = (800_000, 3_500_000),
) -> Path:
    """Write the files of /sys/devices/system/cpu that the reader looks at; None leaves one out."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "online").write_text(f"0-{cores - 1}\n")
    (root / "isolated").write_text("\n")
    (root / "smt").mkdir()
    (root / "smt" / "control").write_text(f"{smt}\n")
    (root / "smt" / "active").write_text("1\n" if smt == "on" else "0\n")
    for cpu in range(cores):
        topology = root / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        (topology / "thread_siblings_list").write_text(f"{(siblings or {}).get(cpu, cpu)}\n")
        if governor is not None:
            freq = root / f"cpu{cpu}" / "cpufreq"
            freq.mkdir()
            (freq / "scaling_governor").write_text(f"{governor}\n")
            (freq / "scaling_driver").write_text("acpi-cpufreq\n")
            (freq / "scaling_min_freq").write_text(f"{frequency[0]}\n")
            (freq / "scaling_max_freq").write_text(f"{frequency[1]}\n")
    if boost is not None:
        (root / "cpufreq").mkdir()
        (root / "cpufreq" / "boost").write_text(f"{boost}\n")
    if no_turbo is not None:
        (root / "intel_pstate").mkdir()
        (root / "intel_pstate" / "no_turbo").write_text(f"{no_turbo}\n")
    return root


def _environment(state: dict[str, Any], affinity: dict[str, Any]) -> dict[str, Any]:
    environment = planted_environment("0.61.0", "a")
    environment["cpu"] = {**environment["cpu"], "state": state, "affinity": affinity}
    return environment


def _evaluated(
    tmp: Path, state: dict[str, Any] | None, affinity: dict[str, Any] | None
) -> tuple[Path, Evaluation]:
    environment = planted_environment("0.61.0", "a") if state is None else _environment(state, affinity or {})
    bundle = make_bundle(tmp, environment=environment)
    evaluation = evaluate(open_evaluated(bundle))
    write_evaluation(open_evaluated(bundle), evaluation)
    return bundle, evaluation


def _page_one(bundle: Path) -> str:
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    return markdown.split("## Workload")[0]


def test_cpu_lists_read_and_write_as_the_kernel_writes_them() -> None:
    assert parse_ranges("0-3,8,10-11\n") == (0, 1, 2, 3, 8, 10, 11)
    assert parse_ranges("") == ()
    assert format_ranges([11, 0, 1, 2, 8, 10]) == "0-2,8,10-11"


def test_a_planted_powersave_tree_reads_as_it_was_written(tmp_path: Path) -> None:
    root = plant_cpu_tree(
        tmp_path / "cpu",
        "powersave",
        cores=4,
        boost="1",
        smt="on",
        siblings={0: "0,2", 2: "0,2", 1: "1,3", 3: "1,3"},
    )
    state = read_cpu_state(root)
    assert {c["governor"] for c in state["cores"].values()} == {"powersave"}
    assert state["cores"]["0"]["min_khz"] == 800_000 and state["cores"]["0"]["max_khz"] == 3_500_000
    assert state["boost"] is True and state["boost_source"] == "cpufreq/boost"
    assert state["smt_control"] == "on" and state["smt_active"] is True
    assert state["online"] == [0, 1, 2, 3] and state["isolated"] == []
    assert siblings_of(state)[2] == (0, 2)
    assert state["unavailable"] == {}


def test_intel_turbo_is_read_from_no_turbo(tmp_path: Path) -> None:
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", boost=None, no_turbo="0"))
    assert (state["boost"], state["boost_source"]) == (True, "intel_pstate/no_turbo")
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu2", boost=None, no_turbo="1"))
    assert state["boost"] is False


def test_a_container_without_cpufreq_is_unknown_not_an_error(tmp_path: Path) -> None:
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", None, boost=None))
    assert all(c["governor"] is None for c in state["cores"].values())
    assert state["boost"] is None
    assert "governor" in state["unavailable"] and "boost" in state["unavailable"]
    empty = read_cpu_state(tmp_path / "nothing-here")
    assert empty["cores"] == {} and empty["online"] is None and "online" in empty["unavailable"]


def test_the_generator_gets_a_core_apart_from_the_measuring_workers() -> None:
    assert choose_pinning([0, 1], {}) == choose_pinning([1, 0], {0: (0,), 1: (1,)})
    two = choose_pinning([0, 1], {})
    assert (two.measuring, two.generator, two.missing) == ((0,), (1,), None)
    one = choose_pinning([3], {})
    assert one.measuring == one.generator == () and "1 usable core" in (one.missing or "")
    smt = {0: (0, 2), 2: (0, 2), 1: (1, 3), 3: (1, 3)}
    four = choose_pinning([0, 1, 2, 3], smt)
    assert four.generator == (3,) and four.measuring == (0, 2)  # not 1, the generator's sibling
    isolated = choose_pinning([0, 1, 2, 3], {}, isolated=[2, 3])
    assert isolated.generator == (1,) and isolated.measuring == (2, 3)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable cores")
def test_the_load_generator_and_the_requests_run_where_they_were_pinned() -> None:
    server, *_, generator = sorted(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    dispatcher = threading.current_thread().native_id
    requests: set[frozenset[int]] = set()
    issuing: list[frozenset[int]] = []

    def request() -> None:
        requests.add(frozenset(os.sched_getaffinity(0)))
        # A thread id reads that thread's mask: the first request runs while the dispatcher still
        # has 29 arrivals to issue (about 0.3 s), and it is restored once it has issued the last.
        issuing.append(frozenset(os.sched_getaffinity(dispatcher)))

    run_open_loop(
        request, 100.0, count=30, duration_s=2.0, generator_cores={generator}, server_cores={server}
    )
    assert requests == {frozenset({server})}
    assert issuing[0] == frozenset({generator})
    assert os.sched_getaffinity(0) == before  # restored once the run ends


def test_a_powersave_governor_and_a_spanning_affinity_are_findings(tmp_path: Path) -> None:
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", "powersave", boost="1"))
    bundle, evaluation = _evaluated(tmp_path, state, SPANNING)
    found = {f.code: f.message for f in evaluation.quality if f.subject == "machine"}
    assert set(found) == {"PQ011", "PQ012"}
    assert "governor `powersave` on CPU 0-1, 0.80-3.50 GHz" in found["PQ011"]
    assert "boost/turbo on (cpufreq/boost)" in found["PQ011"]
    assert "CPU 0-1" in found["PQ012"]
    assert evaluation.machine.rests_on == ("the kernel verdicts", "the end-to-end verdict", "the goodputs")
    page = _page_one(bundle)
    assert "**The machine's state was not steady.**" in page
    assert "`powersave`" in page and "(PQ011)" in page and "(PQ012)" in page


def test_a_clean_planted_state_has_no_finding(tmp_path: Path) -> None:
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", "performance", boost="0"))
    bundle, evaluation = _evaluated(tmp_path, state, PINNED)
    assert [f for f in evaluation.quality if f.subject == "machine"] == []
    assert evaluation.machine.rests_on == () and evaluation.machine.missing is None
    assert "not steady" not in _page_one(bundle)


def test_a_fixed_range_or_an_unknown_state_is_not_a_finding(tmp_path: Path) -> None:
    fixed = read_cpu_state(plant_cpu_tree(tmp_path / "fixed", "schedutil", frequency=(2_000_000, 2_000_000)))
    assert check_frequency(_state(fixed, PINNED)) == ()
    container = read_cpu_state(plant_cpu_tree(tmp_path / "container", None, boost=None))
    _, evaluation = _evaluated(tmp_path, container, PINNED)
    assert evaluation.machine.findings == () and evaluation.machine.missing is None
    _, older = _evaluated(tmp_path / "older", None, None)
    assert older.machine.findings == () and "recorded no CPU state" in (older.machine.missing or "")


def test_smt_siblings_shared_by_generator_and_requests_are_a_finding(tmp_path: Path) -> None:
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", smt="on", siblings={0: "0-1", 1: "0-1"}))
    (found,) = check_shared_cores(_state(state, PINNED), has_load=True)
    assert found.code == "PQ012" and "SMT sibling" in found.message and "CPU 1 and 0" in found.message
    assert check_shared_cores(_state(state, PINNED), has_load=False) == ()


def _state(cpu: dict[str, Any], affinity: dict[str, Any]) -> MachineState:
    state = MachineState.from_environment({"cpu": {"state": cpu, "affinity": affinity}})
    assert state is not None
    return state


def test_two_runs_differ_by_their_governor_in_the_compared_facts(tmp_path: Path) -> None:
    from perfdsl.bundle.environment import EnvironmentRecord, differences

    quiet = _environment(read_cpu_state(plant_cpu_tree(tmp_path / "a", "performance")), PINNED)
    scaling = _environment(read_cpu_state(plant_cpu_tree(tmp_path / "b", "powersave", boost="1")), PINNED)
    changed = differences(EnvironmentRecord.from_json(quiet), EnvironmentRecord.from_json(scaling))
    assert changed == ["CPU governor: performance -> powersave", "CPU boost: off -> on"]


def test_cells_running_at_once_get_disjoint_shares_of_the_cpus() -> None:
    from perfdsl.matrix.local import core_share

    shares = [core_share(range(16), 4, k) for k in range(4)]
    assert shares == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)]
    assert core_share([0, 1, 2], 2, 1) == (0, 1, 2)  # under two cores a share: all of them
    assert core_share([0, 1], 1, 0) == (0, 1)


def test_the_load_search_hands_the_pinning_to_every_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfdsl.bundle.plan import LoadPlan
    from perfdsl.runtime import load_search
    from perfdsl.runtime.load_generator import LoadRun
    from perfdsl.runtime.machine_state import Pinning

    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()

    def probe(request: Any, rate: float, *, count: int, seed: int = 0, **cores: Any) -> LoadRun:
        seen.add((tuple(cores["generator_cores"]), tuple(cores["server_cores"])))
        times = np.arange(count, dtype=np.int64) * int(1e9 / rate)
        return LoadRun(
            rate, seed, 1, 0, False, times, times, times, times + 1_000_000, np.ones(count, bool), None
        )

    monkeypatch.setattr(load_search, "run_open_loop", probe)
    plan = LoadPlan("poisson", (400.0,), 50, 0.025, 0.99)
    load_search.search_load({"baseline": lambda: None}, plan, True, pinning=Pinning((0,), (1,), None))
    assert seen == {((1,), (0,))}


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable cores")
@pytest.mark.slow  # spawns a measuring worker
def test_a_worker_pins_itself_before_it_imports_the_measured_code() -> None:
    from perfdsl.plan import plan
    from perfdsl.runtime.isolation import Limits, Worker
    from perfdsl.runtime.machine_state import Pinning
    from perfdsl.runtime.worker import Job

    study = parse(Source.read(Path(__file__).parent / "isolation_fixtures" / "crashing.perf")).study
    assert study is not None
    measuring = min(os.sched_getaffinity(0))
    pinning = Pinning((measuring,), (max(os.sched_getaffinity(0)),), None)
    worker = Worker(Job(plan(study, "cpu", quick=True), "cpu", "scale", 60.0, pinning), Limits(60.0))
    try:
        assert worker.affinity == [measuring]
    finally:
        worker.close()
    assert len(os.sched_getaffinity(0)) >= 2  # the harness itself stays where it was


def test_the_kernel_timing_section_says_the_kernels_had_fewer_cores_than_the_run(tmp_path: Path) -> None:
    # A new user's `parallel=True` gather ran at half its unpinned speed: the measuring worker had
    # CPU 0 of two for the whole run, and only environment.json said so.
    state = read_cpu_state(plant_cpu_tree(tmp_path / "cpu", "performance"))
    bundle, _ = _evaluated(tmp_path / "pinned", state, PINNED)
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    timing = markdown.split("## Kernel timing")[1].split("## End-to-end")[0]
    assert "The kernels ran pinned to CPU 0, 1 of the 2 cores the run could use" in timing
    assert "(the load generator kept CPU 1)" in timing
    # Restricted to that core, not alone on it: other processes may share it.
    assert "parallel loops ran on that core only" in timing and "alone" not in timing
    unpinned = {
        **PINNED,
        "measuring": [0, 1],
        "generator": [],
        "workers": {"op": [0, 1], "application": [0, 1]},
    }
    bundle, _ = _evaluated(tmp_path / "unpinned", state, unpinned)
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    assert "The kernels ran pinned" not in markdown
