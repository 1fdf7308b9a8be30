"""The registry of every code the tool prints: one record per rule, each explained.

Like mypy's errorcodes and Ruff's codes.rs, every code says what the rule
checks, why a report without it does not hold up, and what to write or do
instead; `perfdsl explain CODE` prints the entry. The checker's codes (PD) and
the measurement-quality codes (PQ) share the one record shape, so `explain`
answers for both. A released code never changes meaning: add a new code rather
than repurpose an old one.

Every diagnostic is made by `diagnostic()`, whatever stage finds it (syntax,
lowering or a rule of the checker): its severity comes from the rule here,
never from the place that reports it.

Groups:
    PD0xx  syntax and structure: the text is not a well-formed study
    PD1xx  a missing link of the chain of evidence (one code per link)
    PD2xx  an incomplete link: present, but without a part it needs
    PD3xx  names, types and units
    PD4xx  consistency between links
    PD5xx  warnings: weaker evidence that still checks
    PQ0xx  measurement quality, found when a bundle is evaluated
"""

from __future__ import annotations

import attrs

from perfdsl.diagnostics import ERROR, WARNING, Diagnostic
from perfdsl.source import Source, Span


@attrs.frozen
class Code:
    """One rule: its code, severity, one-line title, why it exists and how to satisfy it.

    `example` is a corrected study fragment for a PD code, and what to do for a
    PQ code (a measurement is fixed by rerunning it, not by editing the study).
    `what` says what is measured, for the PQ codes, whose title is a threshold.
    """

    code: str
    severity: str
    title: str
    why: str
    example: str
    what: str = ""


def _code(code: str, severity: str, title: str, why: str, example: str) -> Code:
    return Code(code, severity, title, why.strip(), example.strip("\n"))


def _quality(code: str, severity: str, title: str, what: str, why: str, action: str) -> Code:
    return Code(code, severity, title, why, action, what)


_ALL = [
    # ------------------------------------------------------------ syntax
    _code(
        "PD001",
        ERROR,
        "the text does not follow the .perf grammar",
        "A study is parsed before anything else is checked; the parser names what it "
        "expected at the first point where the text stops making sense.",
        "evidence timing { warmup 10; repeats 100 }",
    ),
    _code(
        "PD002",
        ERROR,
        "a string is not closed",
        "Strings are written in double quotes on one line.",
        'title "Fuse the reduction and scaling"',
    ),
    _code(
        "PD003",
        ERROR,
        "the study ends too early",
        "Every `{` needs its `}`; a study file that stops inside a block has lost its end.",
        'study s {\n  title "..."\n}',
    ),
    _code(
        "PD004",
        ERROR,
        "unknown section or setting",
        "Each section accepts a fixed set of settings; a misspelt name would otherwise be "
        "silently ignored and the link it meant to state would be missing.",
        "evidence timing { warmup 10; repeats 100 }   # not `warmpu`",
    ),
    _code(
        "PD005",
        ERROR,
        "a value of the wrong kind",
        "Settings take a specific kind of value (a count, a string, a Python reference, a "
        "list of numbers); the wrong kind means the setting cannot be read. A blank string "
        'is no value: `fallback "  "` states no fallback, so it is reported here too.',
        'seeds 5            # a whole number, not "five"',
    ),
    _code(
        "PD006",
        ERROR,
        "a file holds no study, or more than one",
        "One file is one study, so that a bundle and a report refer to exactly one argument.",
        "study rmsnorm_fusion { ... }",
    ),
    _code(
        "PD007",
        ERROR,
        "a number too large to hold",
        "Numbers are read as 64-bit floats, whose largest is about 1.8e308; a larger one "
        "(`1e40000`, usually a slip of the exponent) would be infinity, which no rate, size, "
        "bound or count can be.",
        "load poisson 500..4000 step 500 rps",
    ),
    _code(
        "PD008",
        ERROR,
        "a study file cannot be read",
        "A study is read as UTF-8 text. A file in another encoding, or one the user may not "
        "read, holds no study that can be checked; it is an error in every output format, so "
        "that a CI job's SARIF, JUnit or annotations cannot show green without it.",
        "iconv -f latin1 -t utf-8 old.perf > study.perf   # saved again as UTF-8",
    ),
    # ------------------------------------------------------------ missing links
    _code(
        "PD101",
        ERROR,
        "the study declares no decision",
        "The report leads with the decision; a study that does not say whether it proposes "
        "to adopt, reject or keep investigating cannot be checked against its evidence.",
        "decision adopt      # adopt | reject | investigate",
    ),
    _code(
        "PD102",
        ERROR,
        "the study declares no workload",
        "A speedup is only meaningful for a workload: its shapes and how traffic spreads over "
        "them, the data type, the targets, the objective and the correctness constraint.",
        'workload {\n  summary "Decoder step"\n  shapes (M, N) in [(64, 4096), (256, 8192)]\n'
        "  weights [0.7, 0.3]\n  dtype float32\n  targets cuda, cpu\n"
        "  objective p99 latency <= 25 ms at 400 rps\n  correct rel_l2 <= 1e-5 vs float64\n}",
    ),
    _code(
        "PD103",
        ERROR,
        "the study declares no baseline operating point",
        "Without the objective the baseline is measured against (latency at a load, or "
        "throughput), an improvement has no operating point to be read at.",
        "workload { objective p99 latency <= 25 ms at 400 rps }",
    ),
    _code(
        "PD104",
        ERROR,
        "the study names no limiting operation",
        "The argument rests on one named operation that holds critical time, with a baseline "
        "implementation, the change and a reference to check both against.",
        "operation normalize {\n  baseline  kernels.rmsnorm:unfused\n"
        "  change    kernels.rmsnorm:fused\n  reference kernels.rmsnorm:reference\n}",
    ),
    _code(
        "PD105",
        ERROR,
        "the study states no mechanism",
        "A faster number without a physical reason is not a conclusion: the mechanism says "
        "which work the change removes, so the evidence can check that it did.",
        'change {\n  mechanism bytes_removed\n  summary "Fusion keeps each row on chip"\n}',
    ),
    _code(
        "PD106",
        ERROR,
        "the study makes no prediction",
        "Predictions stated before the results are what the results can confirm or refute; "
        "a study needs one on the mechanism quantity and one on time, and at least one that "
        "states a number: `app.time ratio <= amdahl` alone bounds the effect without "
        "predicting it.",
        "predict {\n  normalize.bytes ratio <= 0.45\n  normalize.time ratio <= 0.55\n}",
    ),
    _code(
        "PD107",
        ERROR,
        "the study collects no correctness evidence",
        "A faster kernel that computes something else is not an improvement.",
        "evidence correctness { seeds 5; adversarial (M, N) in [(1, 1), (3, 31)]; poison nan }",
    ),
    _code(
        "PD108",
        ERROR,
        "the study collects no mechanism evidence",
        "The mechanism must be observed (counted or modelled), not only inferred from time.",
        "evidence mechanism { measure bytes, launches; roof kernels.copy:copy }",
    ),
    _code(
        "PD109",
        ERROR,
        "the study collects no kernel timing",
        "Kernel time needs warm-up, repeats, input rotation and a confidence level to "
        "separate an effect from noise.",
        "evidence timing { warmup 10; repeats 100; rotate 4; confidence 95% }",
    ),
    _code(
        "PD110",
        ERROR,
        "the study collects no end-to-end evidence",
        "The application is what users run: a kernel speedup matters only through the "
        "application that uses the kernel.",
        "application decode_step { entry kernels.apps:decoder_step; uses normalize }\n"
        "evidence end_to_end { requests 2000; load poisson 50..800 step 50 rps; slo p99 <= 25 ms }",
    ),
    _code(
        "PD111",
        ERROR,
        "the study states no value",
        "How often the operation runs and at what scale turns a measured effect into a value "
        "a reader can weigh against the change's cost.",
        "value { frequency 80 per token; scale 12000 gpu_hours per day }",
    ),
    _code(
        "PD112",
        ERROR,
        "the study states no limitations",
        "Every change has shapes where it regresses, types it does not support, hardware it "
        "was tuned on and a way back; a report that lists none has not looked.",
        'limit regression "Rows under 128 elements underfill a block" { shapes (M, N) in [(65536, 64)] }\n'
        'limit unsupported "float16 inputs"\nfallback "PERF_RMSNORM=unfused restores the old path"',
    ),
    _code(
        "PD113",
        ERROR,
        "the study records no rejected hypothesis",
        "The investigation record shows which other explanations were considered and why the "
        "evidence rules them out.",
        'rejected "Occupancy limits the unfused kernel" { because "both kernels run at the memory roof" }',
    ),
    _code(
        "PD114",
        ERROR,
        "the study names no artifact location",
        "The bundle of raw samples is the evidence; the study says where it is archived.",
        'artifacts "artifacts/"',
    ),
    # ------------------------------------------------------------ incomplete links
    _code(
        "PD201",
        ERROR,
        "the operation has no reference implementation",
        "Correctness is judged against a float64 reference; without one, baseline and change "
        "can only be compared with each other, and both may be wrong.",
        "operation normalize { reference kernels.rmsnorm:reference }",
    ),
    _code(
        "PD202",
        ERROR,
        "correctness has no tolerance",
        "A correctness check needs a bound on the error against the reference.",
        "workload { correct rel_l2 <= 1e-5 vs float64 }",
    ),
    _code(
        "PD203",
        ERROR,
        "correctness evidence has no adversarial shapes",
        "Shapes that are not multiples of the block size, single rows and single columns are "
        "where kernels break; the workload's own shapes rarely include them.",
        "evidence correctness { adversarial (M, N) in [(1, 1), (3, 4097)] }",
    ),
    _code(
        "PD204",
        ERROR,
        "correctness evidence uses fewer than two seeds",
        "One random input can pass by luck; several seeds draw fresh data each time.",
        "evidence correctness { seeds 5 }",
    ),
    _code(
        "PD205",
        ERROR,
        "kernel timing has no warm-up",
        "The first calls include JIT compilation, cold caches and ramping clocks; they are "
        "not the kernel's steady-state time.",
        "evidence timing { warmup 10 }",
    ),
    _code(
        "PD206",
        ERROR,
        "kernel timing has no repeats",
        "One sample cannot separate an effect from noise.",
        "evidence timing { repeats 100 }",
    ),
    _code(
        "PD207",
        ERROR,
        "the workload lacks a part it needs",
        "The workload names its summary, shapes, data type, targets and objective, so a reader "
        "knows exactly what was measured.",
        'workload { summary "..."; shapes N in [4096]; dtype float32; targets cpu }',
    ),
    _code(
        "PD208",
        ERROR,
        "the operation lacks its baseline or change",
        "The comparison is between a named baseline and a named change.",
        "operation normalize { baseline kernels.rmsnorm:unfused; change kernels.rmsnorm:fused }",
    ),
    _code(
        "PD209",
        ERROR,
        "end-to-end evidence has no load or SLO while latency is the objective",
        "Latency depends on load: an improvement at one request at a time says little about "
        "the tail at the operating point.",
        "evidence end_to_end { requests 2000; load poisson 50..800 step 50 rps; slo p99 <= 25 ms }",
    ),
    _code(
        "PD210",
        ERROR,
        "the application does not say which operation it uses",
        "The end-to-end effect is attributed to the operation only if the application uses it.",
        "application decode_step { entry kernels.apps:decoder_step; uses normalize }",
    ),
    _code(
        "PD211",
        ERROR,
        "the value lacks its frequency or scale",
        "Value is frequency times saved time times scale; without either it cannot be computed.",
        "value { frequency 80 per token; scale 12000 gpu_hours per day }",
    ),
    _code(
        "PD212",
        ERROR,
        "a rejected hypothesis does not say why",
        "An alternative is rejected by evidence or an argument; the record states which.",
        'rejected "Occupancy" { because "both kernels already run at the memory roof" }',
    ),
    _code(
        "PD213",
        ERROR,
        "the application has no entry point",
        "The application is run by Python reference, like the operation's implementations.",
        "application decode_step { entry kernels.apps:decoder_step }",
    ),
    _code(
        "PD214",
        ERROR,
        "the limitations give no fallback",
        "A change in production needs a way back: a flag, a config or the previous path.",
        'fallback "PERF_RMSNORM=unfused restores the two-pass path"',
    ),
    _code(
        "PD215",
        ERROR,
        "kernel timing does not rotate inputs",
        "Timing one input buffer again and again measures the cache, not device memory.",
        "evidence timing { rotate 4 }",
    ),
    _code(
        "PD216",
        ERROR,
        "kernel timing states no confidence level",
        "An effect is reported with its interval; the level says how sure the interval is.",
        "evidence timing { confidence 95% }",
    ),
    _code(
        "PD217",
        ERROR,
        "correctness evidence does not poison outputs",
        "Outputs filled with NaN before each call show any element the kernel failed to write.",
        "evidence correctness { poison nan }",
    ),
    _code(
        "PD218",
        ERROR,
        "the change has no summary",
        "The mechanism category names the quantity; the summary says which work the change "
        "removes and how, so a reader can judge whether the category is the right one.",
        "change {\n  mechanism bytes_removed\n"
        '  summary "The unfused path writes and rereads an M x N intermediate"\n}',
    ),
    _code(
        "PD219",
        ERROR,
        "an application's time is predicted without its share",
        "Amdahl's bound needs the share of the application's critical time the operation "
        "holds, stated before measuring; without it a prediction on the application's time "
        "(a number or `amdahl`) cannot be checked.",
        "application decode_step { entry kernels.apps:decoder_step; uses normalize; share 8% }\n"
        "predict { decode_step.time ratio <= amdahl }",
    ),
    _code(
        "PD220",
        ERROR,
        "an imported operation's correctness is neither checked nor stated",
        "A result file records times or counts, never outputs: when every implementation "
        "is an entry of another harness's file, perfdsl has nothing to compare with the "
        "float64 reference, so the correctness link cannot be met by a run. The study has "
        "to say where the outputs were checked, and the report prints that statement as "
        "its correctness evidence, so that a reader sees that perfdsl did not check them.",
        'evidence correctness { not_run "the harness\'s own tests compare both outputs with NumPy" }',
    ),
    # ------------------------------------------------------------ names, types, units
    _code(
        "PD301",
        ERROR,
        "a name is not defined",
        "Predictions, applications, values and the evidence a rejected hypothesis cites refer "
        "to operations and applications by name; a misspelt name would leave a link pointing nowhere.",
        "predict { normalize.time ratio <= 0.55 }   # `normalize` is an operation",
    ),
    _code(
        "PD302",
        ERROR,
        "units of different dimensions are compared or combined",
        "Comparing milliseconds with gigabytes, or adding them, has no meaning; usually the "
        "wrong quantity or the wrong unit was written.",
        "slo p99 <= 25 ms     # a time bound for a latency",
    ),
    _code(
        "PD303",
        ERROR,
        "a name or setting is defined twice",
        "Two definitions leave the reader, and the tool, guessing which one holds.",
        "operation normalize { ... }   # once",
    ),
    _code(
        "PD304",
        ERROR,
        "a shape does not have one size per symbol",
        "Shapes are tuples over the declared symbols; a missing or extra size cannot be bound.",
        "shapes (M, N) in [(64, 4096), (256, 8192)]",
    ),
    _code(
        "PD305",
        ERROR,
        "an unknown unit",
        "Units are normalised (ns us ms s; B KB MB GB KiB MiB GiB; GB/s TB/s; %; rps; "
        "per token/request/step; gpu_hours per day) so that quantities can be compared.",
        "warmup 200 ms",
    ),
    _code(
        "PD306",
        ERROR,
        "an unknown choice",
        "Some settings take one of a fixed set of words (decision, mechanism, dtype, targets, "
        "measure, poison, arrivals, limit kinds).",
        "decision adopt      # adopt | reject | investigate",
    ),
    _code(
        "PD307",
        ERROR,
        "a byte or launch formula uses an undefined symbol",
        "Formulas are evaluated per workload shape; every symbol must be one of the shapes' symbols.",
        "bytes baseline 4*(5*M*N + M), change 4*(2*M*N + N)   # with shapes (M, N)",
    ),
    _code(
        "PD308",
        ERROR,
        "a prediction names an unknown quantity",
        "Predictions are on time, on a modelled or measured mechanism quantity (bytes, "
        "launches, ...), or on throughput; anything else cannot be evaluated.",
        "predict { normalize.bytes ratio <= 0.45 }",
    ),
    _code(
        "PD309",
        ERROR,
        "a rejected hypothesis cites an unknown quantity",
        "A rejected alternative cites the measured quantities that rule it out, so the "
        "investigation record can print their numbers: an operation's time, its mechanism "
        "quantities (bytes, launches, ...), its achieved `bandwidth` against the copy roof or its "
        "`static` code counts; an application's time, throughput or goodput. Anything else has "
        "no number in the evaluation to print.",
        'rejected "Occupancy limits the unfused kernel" {\n'
        '  because  "both kernels already run at the device-memory roof"\n'
        "  evidence normalize.bandwidth\n}",
    ),
    _code(
        "PD310",
        ERROR,
        "a count, load sweep or formula the run cannot use",
        "A study that checks must run: a load sweep that starts at 0, runs backwards, steps by "
        "0 or has more than 1,000 rates, a count of 0 timing blocks or requests (or of more "
        "calls, blocks, requests or seeds than the 10^9 any run carries out), and a byte or "
        "launch formula that divides by zero, overflows or is negative at a workload shape, or "
        "at a shape a `limit regression` names (the run times those too), would each stop "
        "`perfdsl run` part-way or never let it end. "
        "They are reported here, before any kernel is compiled.",
        "evidence end_to_end { requests 2000; load poisson 50..800 step 50 rps }",
    ),
    _code(
        "PD311",
        ERROR,
        "a shape the run cannot hold",
        "Every size is at least 1, and one shape's buffers must fit in memory. The estimate is "
        "static (elements x bytes per element x buffers: each arm's rotated inputs and outputs, "
        "their host copies and the float64 reference), a buffer taken to hold the product of the "
        "shape's sizes, or, where the study's `bytes` model says a call moves less (a gather of N "
        "lookups into a table of T), the elements that model stands for; above 64 GiB the run "
        "would fail to allocate, so the shape is reported before it is tried. The run estimates "
        "again from the arrays the reference draws. A `limit regression`'s shapes are timed "
        "beside the workload's, so they are held to the same.",
        "shapes (M, N) in [(64, 4096), (4096, 8192)]",
    ),
    _code(
        "PD312",
        ERROR,
        "a negative number where only a positive one has meaning",
        "A tolerance, an objective or SLO bound, a frequency and a scale are sizes: below 0 a "
        "tolerance can never be met and a value turns into a cost. A minus sign there is a slip.",
        "workload { correct rel_l2 <= 1e-5 vs float64 }",
    ),
    _code(
        "PD313",
        ERROR,
        "a target qualifier names a target the study does not run on",
        "`predict cpu { }` and `target cpu { }` hold expectations for runs on one target only. "
        "A qualifier naming a target missing from the workload's `targets` judges no run: the "
        "expectations written under it are silently never checked, usually because of a typo.",
        "workload { targets cuda, cpu }\npredict cpu { normalize.time ratio <= 0.8 }",
    ),
    _code(
        "PD314",
        ERROR,
        "a target's application shape is not one shape of the workload's symbols",
        "The application runs at one operating point, and its kernels receive the workload's "
        "symbols (M, N, ...). A target's `application` shape replaces the workload's heaviest "
        "shape for runs on that target, so it must be one shape over the same symbols.",
        "target cpu { application (M, N) in [(16, 1024)] }",
    ),
    # ------------------------------------------------------------ consistency
    _code(
        "PD315",
        ERROR,
        "an imported result file cannot be used",
        "`check` reads every imported file with its format's parser (no tool is run or "
        "imported): a missing file, one that is not what its format promises, or an "
        "`entry` that names no entry (or several) would leave the run without its "
        "evidence. The message names the file, the field or line at fault, and the entry "
        "names the file holds. An operation's `baseline_counters` and `change_counters` are "
        "read from Nsight Compute's `--csv` files, raw or details page (`format ncu-raw`) only; their "
        "`entry` is a kernel name, or a regular expression that fully matches every kernel "
        "of that arm, and the two arms may not share a kernel.",
        'operation normalize {\n  baseline import "runs.json" format pyperf entry "batchnorm_numpy_passes"\n'
        '  change   import "runs.json" format pyperf entry "batchnorm_fused"\n}',
    ),
    _code(
        "PD316",
        ERROR,
        "an imported profile does not count what the mechanism changes",
        "Counted mechanism evidence has to count the quantity the study's mechanism claims "
        "to move: DRAM bytes read and written for `bytes_removed`, shared-memory bank "
        "conflicts for `bank_conflicts_reduced`, and so on (the same metrics perfdsl asks "
        "Nsight Compute for when it counts its own kernels). A profile collected without "
        "them, or that prints `n/a` for every selected launch, would leave the mechanism "
        "counted by nothing while the report labels it counted.",
        "ncu --csv --page raw --metrics dram__bytes_read.sum,dram__bytes_write.sum python head.py "
        "> imported/ncu_batchnorm.csv",
    ),
    _code(
        "PD401",
        ERROR,
        "the mechanism evidence cannot observe the stated mechanism",
        "Each mechanism is a claim about one physical quantity (bytes for bytes_removed, "
        "bank conflicts for bank_conflicts_reduced, ...); evidence that measures something "
        "else cannot confirm it.",
        "change { mechanism bank_conflicts_reduced }\nevidence mechanism { measure bank_conflicts, bytes }",
    ),
    _code(
        "PD402",
        ERROR,
        "an end-to-end prediction beats Amdahl's bound",
        "If the operation holds a share f of the application's critical time and runs s times "
        "faster, the application can run at most 1 / ((1 - f) + f / s) times faster.",
        "application app { share 9% }\npredict { app.time ratio <= amdahl }",
    ),
    _code(
        "PD403",
        ERROR,
        "the value is computed from the kernel speedup",
        "Multiplying a kernel speedup by the fleet size ignores the rest of the application: "
        "value comes from the measured end-to-end effect.",
        "value { frequency 80 per token; scale 12000 gpu_hours per day; from decode_step }",
    ),
    _code(
        "PD404",
        ERROR,
        "reduced precision without a tolerance for it",
        "float16 and bfloat16 change results by more than float32 rounding; the study must "
        "state the tolerance it accepts and compare the application's output too.",
        "workload { dtype bfloat16; correct rel_l2 <= 1e-2 vs float64 }",
    ),
    _code(
        "PD405",
        ERROR,
        "the workload weights do not match its shapes",
        "Weights say how production traffic spreads over the shapes: one weight per shape, "
        "none negative, summing to 1.",
        "shapes N in [1024, 4096]\nweights [0.8, 0.2]",
    ),
    _code(
        "PD406",
        ERROR,
        "a prediction bound has the wrong dimension",
        "A ratio prediction is bounded by a plain number (or `amdahl`); a bound with a unit "
        "must match the quantity's dimension.",
        "predict { normalize.time ratio <= 0.55 }",
    ),
    _code(
        "PD407",
        ERROR,
        "a prediction cannot be evaluated with the evidence collected",
        "A prediction on a quantity nobody measures or models stays unverified forever: a "
        "mechanism quantity must be measured or modelled, and an application's throughput or "
        "goodput needs a load sweep. `measure` counts with Nsight Compute, on cuda only: on "
        "the cpu and cudasim targets a quantity is evidence only as the operation models it.",
        "evidence mechanism { measure bytes }\npredict { normalize.bytes ratio <= 0.45 }",
    ),
    _code(
        "PD408",
        ERROR,
        "the end-to-end objective and the SLO disagree",
        "The SLO of the load test is the workload's objective; two different bounds make the "
        "goodput ambiguous.",
        "objective p99 latency <= 25 ms at 400 rps\nslo p99 <= 25 ms",
    ),
    _code(
        "PD409",
        ERROR,
        "a share, confidence level or threshold outside 0 to 100%",
        "These are fractions of a whole: a share above 100% makes Amdahl's bound negative, and "
        "a confidence level of 100% or more has no interval.",
        "application app { share 8% }\nevidence timing { confidence 95%; threshold 2% }",
    ),
    _code(
        "PD410",
        ERROR,
        "a rejected hypothesis cites evidence the study does not collect",
        "Evidence that no run will measure cannot rule an alternative out: a mechanism quantity "
        "must be measured or modelled, `bandwidth` needs modelled bytes and a roof, and an "
        "application's throughput or goodput needs a load sweep.",
        "evidence mechanism { measure bytes, launches; roof kernels.copy:copy }\n"
        'rejected "Occupancy" { because "both kernels run at the roof"; evidence normalize.bandwidth }',
    ),
    _code(
        "PD411",
        ERROR,
        "a prediction the results can never refute",
        "A prediction is worth stating only if some measurement could prove it wrong. `==` is "
        "rejected: a measured ratio comes with a confidence interval, so it never equals one "
        "number, and reading `==` with a tolerance would judge the study against a bound it did "
        "not state; write `<=` (no larger than) or `>=` (no smaller than). A ratio of positive "
        "quantities is always above 0, so `>= 0` is true whatever is measured and `<= 0` is "
        "never true; a bound of `<= 10` or more allows the change to be ten times worse.",
        "predict { normalize.time ratio <= 0.55 }   # not `== 0.55`, `>= 0` or `<= 100`",
    ),
    _code(
        "PD412",
        ERROR,
        "imported and run evidence the run cannot combine",
        "A run either executes every implementation or imports every one: an operation "
        "with one side imported and one side run, or a study that mixes imported and run "
        "operations, would compare numbers from two harnesses as if one had timed both. "
        "An imported file does not record its shape in a field perfdsl can rely on, so a "
        "wholly imported study measures one workload shape; and its application cannot be "
        "run, so its request times are imported too (both arms, no `entry`, and no load test: "
        "the files hold times taken one after another, not an open-loop sweep), or end-to-end "
        "evidence is stated as not run. Imported application times or imported counters "
        "beside kernels perfdsl runs are refused for the same reason: they come from another "
        "harness or another build than the samples they would be set against.",
        "workload { shapes (M, N) in [(4096, 1024)] }\n"
        'evidence end_to_end { not_run "the files time the operation only" }',
    ),
    _code(
        "PD413",
        ERROR,
        "stopping settings that contradict each other",
        "A comparison stops by one rule, stated before the run and registered with the "
        "predictions: `stop fixed` (the default) measures exactly `blocks` per arm; `stop "
        "sequential` measures block pairs from `min_blocks` until its anytime-valid interval "
        "lies wholly beyond the practical band (faster or slower), wholly inside it (no "
        "meaningful change), or `max_blocks` is reached (inconclusive); with `looks K` it looks "
        "only at K pair counts planned up to `max_blocks` (the group-sequential design), which "
        "must then be stated, with K from 1 to 20 and at most the cap. Settings of the other "
        "rule, or a first look after the cap, leave the reader unable to tell which rule ran. "
        "An imported study's samples were taken by another harness, which no rule here stopped.",
        "evidence timing { warmup 10; repeats 50; rotate 4; confidence 95%; threshold 2%\n"
        "                  stop sequential; min_blocks 6; max_blocks 400 }",
    ),
    _code(
        "PD414",
        ERROR,
        "a sequential cap too low to ever conclude no meaningful change",
        "The sequential interval is wider than a fixed-n interval (it holds at every look at "
        "once), and it must fit inside the practical band [1/(1+threshold), 1+threshold] to "
        "conclude no meaningful change. Even when one pair's log-ratio noise is as small as "
        "the threshold itself, that takes 14 pairs at 95 % confidence: a lower cap can only "
        "end inconclusive for a change that made no difference.",
        "evidence timing { stop sequential; min_blocks 6; max_blocks 400; threshold 2% }",
    ),
    # ------------------------------------------------------------ warnings
    _code(
        "PD501",
        WARNING,
        "the workload has a single shape",
        "One shape says nothing about how the change behaves across the traffic it will see.",
        "shapes (M, N) in [(64, 4096), (4096, 8192)]",
    ),
    _code(
        "PD502",
        WARNING,
        "no regressing shape is listed",
        "Almost every change is slower somewhere; naming where shows the limits were searched.",
        'limit regression "Short rows" { shapes (M, N) in [(65536, 64)] }',
    ),
    _code(
        "PD503",
        WARNING,
        "few timing repeats or blocks",
        "Fewer than 10 repeats per block leaves block medians noisy and the interval wide.",
        "evidence timing { repeats 100 }",
    ),
    _code(
        "PD504",
        WARNING,
        "few correctness seeds",
        "Two or three seeds pass; five or more make a lucky pass much less likely.",
        "evidence correctness { seeds 5 }",
    ),
    _code(
        "PD505",
        WARNING,
        "no prediction on time",
        "A mechanism prediction without a time prediction cannot say whether the mechanism "
        "explains the speedup.",
        "predict { normalize.time ratio <= 0.55 }",
    ),
    _code(
        "PD506",
        WARNING,
        "no prediction on the mechanism's quantity",
        "The mechanism is a claim about one quantity (bytes for bytes_removed, launches for "
        "launches_removed, ...); predicting it is what lets the evidence confirm the claim "
        "rather than only the speedup.",
        "change { mechanism bytes_removed }\npredict { normalize.bytes ratio <= 0.45 }",
    ),
    _code(
        "PD507",
        WARNING,
        "a target has no prediction of its own or for every target",
        "A run is judged only against its target's expectations: when every prediction is "
        "qualified for another target (`predict cuda { }` only), a run on this target confirms "
        'or refutes nothing, and its evaluation says "no expectations exist for target ...". '
        "Predictions one target's physics supports are rarely right for another's.",
        "predict cuda { normalize.time ratio <= 0.55 }\npredict cpu  { normalize.time ratio <= 0.8 }",
    ),
    _code(
        "PD509",
        WARNING,
        "a size unit multiplies shape symbols in a byte formula",
        "A byte formula counts the bytes one call moves, usually elements times the bytes of "
        "one element: `4*(5*M*N)` for float32. A size unit in the factor (`4 KiB*(5*M*N)`) "
        "makes every element 4096 bytes, a model 1024 times too large that nothing else "
        "catches: the mechanism's ratio is unchanged, and only a model that crosses the roof "
        "is noticed. Units belong to whole sizes (`16 KiB`), not to a count of elements.",
        "bytes baseline 4*(5*M*N + 2*M + N), change 4*(2*M*N + N)",
    ),
    _code(
        "PD510",
        WARNING,
        "a load probe too short to pass unless its requests are independent",
        "A probe's SLO test counts n / tau independent requests, tau being how long its slow "
        "requests come in runs (one slow request delays the next). A probe with no miss "
        "passes p99 after 644 independent requests under the sequential rule, 459 under "
        "the fixed one. A `requests` whose cap holds barely that many passes only while "
        "tau stays near 1: any run of slow requests leaves the probe open at its cap, "
        "however far inside the SLO it is, an open probe is not a pass, and the goodput "
        "falls below rates that passed. Size `requests` so the cap holds the clean count "
        "twice.",
        "evidence end_to_end { requests 1000; probe sequential; load poisson 50..400 step 50 rps; "
        "slo p99 <= 5 ms }",
    ),
    _code(
        "PD511",
        WARNING,
        "a prediction the study's own model already refutes",
        "A prediction on a modelled quantity (`bytes`, `launches`, ...) is judged, where no "
        "counter measures it, against the model's ratio of weighted totals over the workload's "
        "shapes: the formulas the study states, at the shapes and weights it states. When that "
        "ratio already breaks the bound, the run can only refute the prediction: either the "
        "bound is not what the change does or the model is not, and the check says so before "
        "any machine time is spent. Where a target counts the quantity (Nsight Compute on a "
        "GPU), the counted value is judged instead and may differ from the model.",
        "bytes     baseline 4*(4*M*N), change 4*(2*M*N)   # the model's ratio is 0.5\n"
        "predict { smooth.bytes ratio <= 0.55 }",
    ),
    _code(
        "PD512",
        WARNING,
        "a practical threshold below the 1% floor",
        "A verdict calls a change faster or slower only when its whole interval lies beyond the "
        "practical threshold, and no meaningful change only when it lies inside it. Below 1 % the "
        "band is narrower than the run-to-run timing noise typical of the machines benchmarks run "
        "on (criterion.rs draws its noise threshold there too), so the evaluation raises a "
        "smaller threshold to 1 %. The check says so before the run, rather than the report "
        "alone afterwards.",
        "evidence timing { warmup 10; repeats 50; rotate 4; confidence 95%; threshold 1% }",
    ),
    _code(
        "PD513",
        ERROR,
        "a correctness check against a reference other than float64",
        "Every kernel and application output is compared with the reference's float64 answer "
        "(`compute()` is handed float64 inputs and answers in float64), so that the check "
        "measures the kernel's error and not the reference's. A `correct` condition `vs float32` "
        "states a comparison that does not run: the report would print it beside a check made "
        "against float64.",
        "correct rel_l2 <= 1e-5 vs float64",
    ),
    _code(
        "PD508",
        WARNING,
        "imported timing is not evidence-grade",
        "A perfdsl run interleaves baseline and change in blocks and keeps every sample. "
        "An imported file may hold only statistics (no interval can be computed), or "
        "times taken one arm after the other (drift falls on one side), or not show "
        "which. The statistics still apply where the data allow (blocks of an arm "
        "are compared unpaired when not interleaved), but the verdict is marked "
        '"not evidence-grade" on page 1 of the report, with these reasons.',
        "Re-run the harness with baseline and change interleaved and every sample kept, or "
        "keep `decision investigate` until the change is timed by `perfdsl run`.",
    ),
    # ------------------------------------------------------------ measurement quality
    # Found by `perfdsl evaluate` in a bundle's samples, not by `check`. A finding's
    # severity can be lower than the rule's: PQ003 is an error below the timer's
    # resolution and a warning when the samples are only launch-bound.
    _quality(
        "PQ001",
        WARNING,
        "relative spread of the samples is 10% or more",
        "The standard deviation of the samples is at least 10% of their mean (pyperf's stability warning).",
        "A spread that large usually means the machine was not quiet (other load, "
        "frequency scaling, a cold cache) and small effects drown in it.",
        "Quiet the machine, warm up longer, rotate inputs beyond the last-level cache, "
        "and add blocks until the MDE is below the effect you care about.",
    ),
    _quality(
        "PQ002",
        WARNING,
        "samples far from the median",
        "Some samples have a modified z-score 0.6745 * |x - median| / MAD above 3.5 "
        "(Iglewicz and Hoaglin; hyperfine uses the same median/MAD idea).",
        "Outliers are kept, never dropped, but they point at interference: an "
        "interrupt, a page fault, a clock change, a JIT compile inside the timing.",
        "Look at the run sequence of the samples; if the outliers cluster at the "
        "start, warm up longer; if they are scattered, find the interference.",
    ),
    _quality(
        "PQ003",
        ERROR,
        "samples at the timer resolution or launch-bound",
        "Samples are shorter than the timer's resolution (error), or the typical "
        "sample is no longer than the launch overhead (warning: launch-bound).",
        "Below the resolution a sample is quantisation noise; at the launch "
        "overhead the timing measures the launch path, not the kernel.",
        "Time several back-to-back launches per sample (hot), queue a blocking "
        "kernel first (nvbench), or use a larger shape.",
    ),
    _quality(
        "PQ004",
        WARNING,
        "arms ran at different SM clocks",
        "The median SM clock of the two arms differs by more than 2%; the "
        "cycle-normalised ratio (time x clock) is reported beside the time ratio.",
        "A clock difference shifts time by the same factor; it can make or hide "
        "a speedup that is not in the code (nvbench confirms changes in cycles).",
        "Interleave the arms, warm up by time until the clock is stable, and read "
        "the cycle-normalised ratio; perfdsl never locks clocks on a lent GPU.",
    ),
    _quality(
        "PQ005",
        ERROR,
        "blocks ran while the GPU was throttled",
        "NVML reported a throttling clock-event reason during a block: software "
        "power cap, hardware slowdown, software or hardware thermal slowdown, or "
        "power brake. Clock settings (application clocks, sync boost, display "
        "clock) and idle are not throttling and are not reported.",
        "A throttled block is timed at a clock the other arm may not have had, so "
        "its pair compares clocks, not code: the result is invalid and left out of "
        "every conclusion.",
        "Cool the GPU or lower its duty cycle (longer pauses between blocks), lock "
        "the clocks below the power cap, and re-run.",
    ),
    _quality(
        "PQ006",
        ERROR,
        "achieved bandwidth above the measured roof",
        "The modelled bytes divided by the time exceed the device-memory roof "
        "measured by the copy kernel in the same run.",
        "No kernel moves data faster than the roof: either the byte model is "
        "wrong or a cache, not device memory, is being measured. The result is invalid.",
        "Check the byte model against counted bytes, and flush L2 / rotate inputs "
        "larger than the cache before each timed launch.",
    ),
    _quality(
        "PQ007",
        WARNING,
        "fewer than 10 blocks in an arm",
        "An arm has fewer block medians than the floor of 10 per arm.",
        "The bootstrap interval of a median from a handful of blocks is too "
        "narrow (anti-conservative) and the MDE is large.",
        "Run at least 10 blocks per arm, interleaved with the other arm.",
    ),
    _quality(
        "PQ008",
        WARNING,
        "warm-up never settled",
        "An arm's warm-up reached its cap (calls or time) before the medians of its "
        "last two windows of 5 calls agreed within 5%; the warm-up curve is in the bundle.",
        "Samples taken before the timing settles mix the JIT, page faults, the thread "
        "pool's start or a clock ramp into the kernel's time: blocks drift from first to last.",
        "Look at the warm-up curve in results.json; quiet the machine, or raise `warmup` "
        "(a full run's cap is 500 calls or 10 s, a quick run's 100 calls or 2 s).",
    ),
    _quality(
        "PQ009",
        WARNING,
        "blocks competed with other work",
        "During some blocks other processes used at least half a core on average, or the "
        "hypervisor stole at least 5% of the CPU time (/proc/stat read at each block's ends).",
        "A kernel that shares the machine is slowed by an amount that differs from block to "
        "block and arm to arm: a contended run measured a ratio of 0.63 where a quiet one measured 0.50.",
        "Run again on a quiet machine; the evaluation's `contended` summary says whether the "
        "verdicts rest on contended blocks.",
    ),
    _quality(
        "PQ010",
        ERROR,
        "modelled bytes below the bytes of the kernel's own buffers",
        "An arm's `bytes` model at a shape is less than the bytes of the inputs and outputs "
        "the run handed the kernel (each input read once, each output written once), less "
        "the inputs its variant declares it reads only in part (`sparse_inputs`).",
        "No kernel that reads its inputs and writes its outputs moves fewer bytes than they "
        "hold: the model counts elements instead of bytes, or mixes the two, or leaves a "
        "buffer out. Its bandwidth and its bytes ratio are then wrong, and a bytes prediction "
        "can be confirmed by a model that is not the kernel's. The result is invalid. A kernel "
        "that reads an input only in part (a gather's table, a masked read) does move fewer "
        "bytes than that input holds; the rule cannot see it from the buffers, so the variant says "
        "so.",
        "Count every buffer in bytes (the dtype's size times its elements, e.g. `4*M*N` for "
        "float32), at least once per input read and once per output written; name an input the "
        "kernel reads only in part in its `Variant(sparse_inputs=(...))`.",
    ),
    _quality(
        "PQ011",
        WARNING,
        "the CPU's clock was free to change",
        "The run recorded a frequency governor that moves the clock with the load "
        "(`powersave`, `ondemand`, `schedutil`, `conservative`: anything but `performance` "
        "or `userspace`, unless the allowed range is one frequency) on a core the measured "
        "code ran on, or boost/turbo on (cpufreq/boost 1, intel_pstate/no_turbo 0).",
        "A host-timed result (a cpu kernel, the application's requests, the load test) then "
        "also measures the clock: it ramps with the load, and under boost it follows the "
        "temperature and the number of busy cores, so blocks and arms can run at different "
        "frequencies. Interleaving cancels a slow drift, not a clock that answers the code.",
        "perfdsl never changes the machine; its owner can (`cpupower frequency-set -g "
        "performance`, `echo 0 > /sys/devices/system/cpu/cpufreq/boost` or `echo 1 > "
        ".../intel_pstate/no_turbo`), then run again. `cpu.state` in environment.json is what was read.",
    ),
    _quality(
        "PQ012",
        WARNING,
        "the load generator shared cores with the code it loaded",
        "During the load test the generator's thread ran on a core the server's requests also "
        "ran on (the run could not pin them apart, e.g. on one usable core), or on an SMT "
        "sibling of one (two hyperthreads of one physical core).",
        "An open-loop generator spins before each arrival; on a shared core or SMT unit that "
        "spinning takes time from the requests, and the requests delay the arrivals, so a "
        "goodput measures the generator as much as the arm.",
        "Give the run at least two cores that are not SMT siblings (`taskset -c 0,2 perfdsl "
        "run ...`, or SMT off); `cpu.affinity` in environment.json says where each part ran.",
    ),
]

CODES: dict[str, Code] = {entry.code: entry for entry in _ALL}


def diagnostic(
    code: str, message: str, source: Source, span: Span, label: str = "", help: str = ""
) -> Diagnostic:
    """The one way a diagnostic is made: its severity is the rule's (a KeyError for an unregistered code)."""
    return Diagnostic(code, CODES[code].severity, message, source, span, label, help)


def lookup(code: str) -> Code | None:
    """The entry for a code, case-insensitively; None if there is no such code."""
    return CODES.get(code.upper())


def _indented(text: str) -> str:
    # Imported here: only `explain` wraps text, and textwrap's patterns cost every
    # `perfdsl check` a few milliseconds to compile.
    import textwrap

    return textwrap.fill(text, width=78, initial_indent="    ", subsequent_indent="    ")


def explain(entry: Code) -> str:
    """The text `perfdsl explain CODE` prints."""
    if entry.what:
        return (
            f"{entry.code} ({entry.severity}): {entry.title}\n\n"
            f"What it measures\n{_indented(entry.what)}\n\n"
            f"Why it matters\n{_indented(entry.why)}\n\n"
            f"What to do\n{_indented(entry.example)}\n"
        )
    example = "\n".join("    " + line for line in entry.example.splitlines())
    return (
        f"{entry.code} ({entry.severity}): {entry.title}\n\n"
        f"Why it matters\n{_indented(entry.why)}\n\n"
        f"A study that satisfies it\n{example}\n"
    )
