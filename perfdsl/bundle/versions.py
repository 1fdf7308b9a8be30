"""The format version of each bundle file, with the history of its changes.

A reader refuses a version it does not know instead of guessing at its keys:
`BundleFormatError` names the file and says what to do, and the commands turn
it into one line and exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_PACKAGE = Path(__file__).resolve().parent
RECORD_ERRORS = (ValueError, KeyError, TypeError, AttributeError, ArithmeticError)
"""What a record's `from_json` raises on a value of the wrong kind: a missing key, a string where an
object was, `int()` of an infinity (OverflowError)."""

RESULTS = "perfdsl.results/14"
"""results.json's version. History:

* `perfdsl.results/1`: the first layout.
* `perfdsl.results/2`: `timer_resolution_ns`, the resolution of the clock that
  timed the run, recorded when it ran; every `<field>` that can be missing is
  written with its `<field>_missing` sibling (null when present).
  Version 1 bundles still read: their resolution is the target's.
* `perfdsl.results/3`: each load probe records the generator's own issue lag
  (`generator`: p50, p99, backlog slope and growth, verdict) with
  `generator_missing`. Older bundles still read, with `generator` null and
  `generator_missing` saying why; the evaluation recomputes it from the CSVs.
* `perfdsl.results/4`: the read and write roofs are timed beside the copy roof
  (arms `read`, `write`); each shape's `timing` adds per arm `regime` (dram or
  cache), `buffer_bytes`, `read_share` and `read_share_source`; each warm-up
  entry keeps its curve (`durations_ns`) and whether it `settled`; each block's
  `start`/`end` readings add the machine's load (`busy_s`, `steal_s`, `total_s`,
  `self_s`, `wall_s`, `load1`). Versions 1 to 3 still read: without these fields
  the copy roof stands for every mix, and no regime, settling or load is judged.
* `perfdsl.results/5`: measured code runs in worker processes; each operation
  has `failures`, one entry per worker its code ended (a signal, an exit, a time
  or memory limit: `arm`, `phase`, `cause`, `detail`). Versions 1 to 4 still
  read, with no failures.
* `perfdsl.results/6`: the load record states its confirmation `rule` (a goodput
  passes twice; a failing repeat steps the search down) and each arm's search
  outcome (`searches`: `arm`, `goodput`, `failing`, `confirmed`, and the `reason`
  a goodput is unconfirmed). Versions 1 to 5 still read, with no rule and no
  searches; their probes say everything the evaluation uses.
* `perfdsl.results/7`: each arm's share pass records the round of every request
  (`application.share.<arm>.rounds`), the unit its statistics resample; each load
  probe records the arrival schedule's `seed` (a fresh schedule per repeat, the
  same for both arms at a repeat). Versions 1 to 6 still read: their rounds are
  rebuilt from the rule those runs followed (`bundle.application.legacy_rounds`)
  and their probes all used the one seed the load record states.
* `perfdsl.results/8`: each shape's `timing` records the sequential rule's `stop`
  (`rule`, `pairs`, `reason`, `verdict`, `ratio`, `low`, `high`, `sd_log`, and the
  anytime-valid `p_value` of ratio 1; null for the fixed design) and its `settings`
  the rule (`stopping`, `compared`); the application's `timing.stop` is the same
  record for its request blocks. Versions 1 to 7 still read, as fixed designs.
* `perfdsl.results/10`: the load record states the sequential rule its probes were
  decided by (`probe_rule`: `confidence`, `percentile`, `window`, `max_requests`,
  `method`; null for the fixed probe) and each probe what it decided (`decision`:
  pass, fail or open) and on how many requests (`decided_at`). Versions 1 to 9
  still read, as fixed probes.
* `perfdsl.results/11`: a sequential rule (`timing.settings.stopping`, and each
  `stop.rule`) may state `edges`, the registered predictions' numeric bounds on the
  comparison's time ratio: a decided comparison kept measuring while its interval
  straddled one, and a stop at the cap may carry a decided verdict. Written only
  when there are edges; versions 1 to 10 still read, with none. On a cpu target each
  CPU function's static summary states the argument types the measuring workers
  compiled it for (`measured`) and whether its archived signature is one of them
  (`as_measured`); older bundles read with neither known.
* `perfdsl.results/12`: the application's request is prepared afresh before each
  request block, share round and load probe (`runtime.preparation`), and the
  application record states each arm's count (`preparations`). Versions 1 to 11
  still read, with one preparation per arm.
* `perfdsl.results/13`: a rotation entry of an arm whose variant reads inputs only in
  part (`Variant.sparse_inputs`) states `compulsory_bytes`, its set's bytes less
  theirs, which its byte model is held to (PQ010). Written only for such arms;
  versions 1 to 12 still read, every input counted.
* `perfdsl.results/14`: the arms prepared together (baseline and change) take turns
  on each other's buffer allocations, block by block (`runtime.timing.Arm.allocation_of`),
  so that where one allocation landed in memory falls on both arms; their rotation
  entries state how many allocations they took turns on (`allocations`, written when
  more than one), and a sample's `buffer_set` numbers the sets of all of them,
  allocation by allocation (set s of allocation a is a * sets + s). Versions 1 to 13
  still read: each arm ran only on its own allocation, numbered from 0.
"""

READABLE_RESULTS = (
    "perfdsl.results/1",
    "perfdsl.results/2",
    "perfdsl.results/3",
    "perfdsl.results/4",
    "perfdsl.results/5",
    "perfdsl.results/6",
    "perfdsl.results/7",
    "perfdsl.results/8",
    "perfdsl.results/9",
    "perfdsl.results/10",
    "perfdsl.results/11",
    "perfdsl.results/12",
    "perfdsl.results/13",
    RESULTS,
)

PLAN = "perfdsl.plan/5"
"""plan.json's version. History:

* version 1 carried no `schema` key (it was `attrs.asdict` of the plan);
* `perfdsl.plan/2`: the same fields, with `schema`.
* `perfdsl.plan/3`: the timing states its stopping rule: `stop` (`fixed` or
  `sequential`) and the sequential window `min_blocks`, `max_blocks`. Versions 1
  and 2 still read, as the fixed design of `blocks`.
* `perfdsl.plan/4`: each operation's shape says whether it is a limit's (`limit`), and
  `limits` lists every shape the study's `limit regression`s declare, with the sizes
  the run measures it at (`sizes`, shrunk under `--quick`) or why it does not
  (`missing`). Versions 1 to 3 still read, with no limit shapes.
* `perfdsl.plan/5`: an operation and the application may state `stop_edges`, the
  numeric bounds of the run target's `<name>.time ratio` predictions, which keep a
  sequential comparison measuring while its interval straddles one (written only
  when there are some); the timing's `winsorized` (true for every sequential plan
  without planned looks) says each look clips the pair log-ratios to their median
  +- 5 scaled MADs (`stats.sequential.winsorize`). Versions 1 to 4 still read, with
  no edges and no winsorizing: their runs replay by the rule they ran.
"""

READABLE_PLAN = (None, "perfdsl.plan/2", "perfdsl.plan/3", "perfdsl.plan/4", PLAN)

EVALUATION_FILE = "evaluation.json"
"""The file `perfdsl evaluate` writes into the bundle; derived, so verified apart."""

EVALUATION = "perfdsl.evaluation/20"
"""evaluation.json's version; a file of an earlier version (`SUPERSEDED_EVALUATION`) is
not refused but evaluated again (it is derived from the other files), and one of a
version this code does not know (a newer perfdsl's) is refused. Kept here rather than beside the
evaluation: `perfdsl build` asks whether a bundle's evaluation.json is current
before anything else, and answering must not import the statistics (scipy
alone costs a second of a fresh build).

* `perfdsl.evaluation/1`: the first layout.
* `perfdsl.evaluation/2`: a goodput that is only a lower bound says so (`lower_bound`,
  `limited_by`) and the capacity ratio carries its bound (`capacity_bound`).
* `perfdsl.evaluation/3`: each load summary's `issue_lag_p99` became `generator`
  (p50, p99, backlog slope and growth, verdict: only a generator `behind` its
  schedule fails a rate, not jitter); each arm's goodput carries `failing`, the
  upper end of its bracket, and `confirmed` asks that both ends repeated;
  `expectations_target` and `expectations_missing` say whose predictions were judged.
* `perfdsl.evaluation/4`: comparisons are paired over adjacent blocks (`analysis`,
  `n_pairs`); a measured but unusable comparison says why (`invalid`); shapes combine
  by total time (`combined.shares`, `combined.excluded`); Amdahl is a consistency test
  with intervals (`amdahl.f`, `amdahl.op_ratio` as estimates, `s_fallback`,
  `share_check`, the reconciliation's `status` and band); predictions may be
  `invalid`; value is established or says why not, and names its share; `family` is
  Holm's adjustment over the valid time comparisons; the
  capacity ratio is an interval (`capacity_range`); mechanism outcomes are
  `stats.mechanism`'s; each failing correctness case names its `kinds`.
* `perfdsl.evaluation/5`: `contended` (whether the verdicts rest on blocks that
  competed with other work); each bandwidth is held to the roof for its arm's
  read/write mix and regime (`read_share`, `regime`, `roof`, `roof_missing`), and
  each shape's mechanism lists every measured roof (`roofs`).
* `perfdsl.evaluation/6`: the same fields, two meanings changed: a goodput is
  `confirmed` when its rate met the SLO in two passes and failed in none (the
  failing end is no longer repeated), and a probe whose generator's lateness alone
  decided the p99 check is the generator's (`lag_ok` false, `generator_limited`).
* `perfdsl.evaluation/7`: the whole request is measured: `amdahl.decomposition`
  (f, r, the rest of the request's ratio, the share pass's own request ratio, each a
  t interval over the share pass's paired rounds; f and r were request-level
  bootstraps) with `decomposition_missing`; the reconciliation's `rest` and `agrees`,
  and its statuses `cross_effect` and `accounting_broken` (`beyond_bound` now only
  with the rest unmeasured); the value's `explained` and `cross_effect` shares and
  every reason it is withheld, not the first; the decision's `unsupported` (missing
  evidence, apart from the `findings` that contradict it).
* `perfdsl.evaluation/8`: a shape timed under a sequential rule carries the rule's
  `stop` as the evaluation replays it from the samples, `stop_agrees`, whether
  that is the stop the run recorded, and `stop_pairs_needed`, for a stop at the cap,
  the pairs that would have decided it; its comparison's interval and verdict are
  the confidence sequence's at the stop, and its `p_value` (the one Holm's family
  adjusts) the sequence's anytime-valid one. `end_to_end` has `stop` and `stop_agrees`
  for the application's request blocks.
* `perfdsl.evaluation/9`: each operation's `limits`, the shapes timed only because a
  `limit regression` names them (evaluated like any shape, weight 0, in no
  combination, prediction or decision), and `limit_family`, Holm's adjustment over
  their comparisons alone.
* `perfdsl.evaluation/10`: `machine` judges the CPU state the run recorded
  (environment.json's `cpu.state` and `cpu.affinity`): its `findings` (PQ011, the
  clock free to change; PQ012, the load generator sharing the requests' cores), also
  among `quality`, and `rests_on`, the conclusions timed in that state.
* `perfdsl.evaluation/11`: each load probe's summary carries the sequential rule's
  `decision` and `decided_at` (null for a fixed probe).
* `perfdsl.evaluation/12`: each shape's `contention`, per arm the blocks that read the
  machine's load and how many of them competed with other work: the counts the
  report's steady-state table printed by judging results.json's block log itself.
* `perfdsl.evaluation/13`: under a sequential rule each operation's `combined` interval,
  verdict and p-value are the ones that hold whenever every shape's sequential interval
  does (`sequential`, written only then; the shares' mix of the shapes' intervals as they
  stopped), no longer the bootstrap's over pairs that stopped when they looked decided,
  and such a combination is not in `family` (its error is its shapes'); the fixed
  design's are unchanged.
* `perfdsl.evaluation/14`: each load probe's summary carries `stretches`, its requests'
  independent stretches (n over their latencies' own autocorrelation time), and `p99_ok`
  (with a sequential rule's `decision`) is a pass only where they number at least
  `bundle.stopping.MIN_STRETCHES_TO_PASS`: a probe that saw only a quiet stretch of a
  slowly drifting service time no longer passes as if it had seen the whole.
* `perfdsl.evaluation/15`: a static count record (`static.<arm>[]`) may carry `missing`, with
  no counts: the archived code of a CPU function is not what the measured calls compiled
  (results/11's `as_measured` false), so nothing rests on its counts.
* `perfdsl.evaluation/16`: a shape's `contention` per arm may carry `unresolved`, written only
  where it is not 0: the blocks too short, alone and together, for the clock tick to say
  whether other work competed (counted in `read`, never in `contended`).
* `perfdsl.evaluation/17`: a load probe's summary is judged at the SLO's own percentile
  (`slo p95`: the 95th; the fixed probe judged every SLO as a p99), and carries the latency
  there, `slo_quantile`, written only where it is not the `p99`: a p99 SLO's summary keeps
  its keys. Under a sequential rule an operation's `combined` ratio is the shares' mix of the
  shapes' stopped ratios, as its interval is of their ends (the bootstrap's ratio of totals
  over unwinsorized pairs could lie outside that interval). `contended` may carry
  `unresolved`, written only where it is not 0: the blocks too short for the clock tick
  to read, which its `blocks` counts and its `contended` never does. A sequentially stopped
  comparison's `mde` (and a sequential total's) is its confidence sequence's at the cap
  (`stats.sequential.power`), no longer a fixed t interval's, and Holm's adjustment takes a
  stop's own anytime-valid p-value. The share pass's per-request times are winsorized (log
  scale, median +- 5 scaled MADs) before f, r and the rest's ratio. An earlier file is evaluated
  again: its p95 probes were judged at the 99th, and its total's ratio by the bootstrap.
* `perfdsl.evaluation/18`: a failing correctness case's `kinds` is `error` where no output was
  compared (the arm raised, hung or timed out, or the reference failed: `message` says which);
  earlier files called such a case `tolerance`.
* `perfdsl.evaluation/19`: a paired comparison (or a total over shapes) with fewer than 10
  pairs in a shape takes the Student t interval and p-value on the delta-method standard error,
  not the bootstrap-t, whose interval at a family's shared level spanned past a factor of 10
  at 5 pairs (`stats.bootstrap.BOOTSTRAP_T_PAIRS`). An earlier file is evaluated again.
* `perfdsl.evaluation/20`: a sequentially stopped comparison, and a total over such shapes,
  states the level its interval holds (`level`: the study's confidence shared over its family,
  0.9875 of a 0.95 family of 4), where it stated the study's own 0.95; the export, `evaluate`'s
  summary, `compare` and `history` labelled its interval so, and the Amdahl range combined the
  understated level. An earlier file is evaluated again.
"""


SUPERSEDED_EVALUATION = (
    "perfdsl.evaluation/1",
    "perfdsl.evaluation/2",
    "perfdsl.evaluation/3",
    "perfdsl.evaluation/4",
    "perfdsl.evaluation/5",
    "perfdsl.evaluation/6",
    "perfdsl.evaluation/7",
    "perfdsl.evaluation/8",
    "perfdsl.evaluation/9",
    "perfdsl.evaluation/10",
    "perfdsl.evaluation/11",
    "perfdsl.evaluation/12",
    "perfdsl.evaluation/13",
    "perfdsl.evaluation/14",
    "perfdsl.evaluation/15",
    "perfdsl.evaluation/16",
    "perfdsl.evaluation/17",
    "perfdsl.evaluation/18",
    "perfdsl.evaluation/19",
)
"""Earlier evaluation.json versions: `perfdsl build` evaluates such a bundle again."""

IMPORTED = "perfdsl.imported/2"
"""imported.json's version (a wholly imported study's index of copied files).

* `perfdsl.imported/1`: the first layout.
* `perfdsl.imported/2`: an operation's imported Nsight Compute profile (`counters`) and
  applications timed by imported request times (`applications`); both optional, so a
  `/1` file still reads.
"""

READABLE_IMPORTED = ("perfdsl.imported/1", IMPORTED)
"""imported.json versions this code reads."""

IMPORTED_EVALUATION = "perfdsl.imported-evaluation/2"
"""evaluation.json's version in a wholly imported study's bundle; derived like EVALUATION
(`perfdsl build` evaluates such a bundle again every time, so no earlier one is read).

* `perfdsl.imported-evaluation/1`: the first layout.
* `perfdsl.imported-evaluation/2`: `counted` (mechanism evidence from imported profiles,
  labelled "counted, imported") and `applications` (imported request times, with
  Amdahl not established and the value they support).
"""


class BundleFormatError(Exception):
    """A bundle file this code cannot read (one line naming it): a format version it does not
    know, or content that is not its format (a CSV row without its columns, a cell not a number)."""


def check_version(data: Mapping[str, Any], path: Path, readable: tuple[str | None, ...]) -> str | None:
    """The file's version, or BundleFormatError naming the file when it is not readable."""
    version = data.get("schema")
    if version not in readable:
        raise BundleFormatError(
            f"{path}: format version {version!r} is not one this perfdsl reads "
            f"({', '.join(str(r) for r in readable if r)}): run the study again, "
            "or use the perfdsl that wrote it"
        )
    return version


def raised_reading_a_record(error: BaseException) -> bool:
    """Whether `error` was raised inside this package, by a record reading a bundle file's values.

    Some records keep a part of their JSON as written and read it when it is
    used (a shape's `timing`), so a value of the wrong type surfaces only then,
    deep in the evaluation or the report. Raised here it is the file's fault
    (a run never writes it); raised anywhere else it is a bug, and stays one.
    """
    last = error.__traceback__
    while last is not None and last.tb_next is not None:
        last = last.tb_next
    return last is not None and Path(last.tb_frame.f_code.co_filename).resolve().is_relative_to(_PACKAGE)


def unreadable_record(path: Path, error: BaseException) -> BundleFormatError:
    """The one line for an error `raised_reading_a_record` in the file at `path`: what was wrong."""
    return BundleFormatError(
        f"{path}: unreadable: {type(error).__name__}: {error}; "
        "the bundle is not what a run writes: run the study again"
    )


def read_record(bundle: Path, name: str, reader: Callable[[], T]) -> T:
    """`reader()`, one of the bundle's files read into its record, or BundleFormatError naming the file.

    A file that verifies can still hold what no run writes (a writer's bug, a
    hand edit sealed again): a value of the wrong type raises inside the
    record's `from_json` (`bundle.plain` names the key), and that is the file's
    fault, said as such in one line, not a traceback.
    """
    try:
        return reader()
    except BundleFormatError:
        raise
    except OSError as error:
        raise BundleFormatError(f"{Path(bundle) / name}: unreadable: {error.strerror or error}") from None
    except RECORD_ERRORS as error:
        what = f"{type(error).__name__}: {error}"
        raise BundleFormatError(f"{Path(bundle) / name}: unreadable: {what}") from None


def read_bundle_text(bundle: Path, name: str) -> str:
    """A text file of the bundle (the study it ran), or BundleFormatError: missing, or not UTF-8."""
    return read_record(bundle, name, lambda: (Path(bundle) / name).read_text(encoding="utf-8"))
