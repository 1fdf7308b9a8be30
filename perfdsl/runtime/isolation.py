"""The harness's side of the worker processes: start, ask, watch, and say why one died.

Measured code never runs in the `perfdsl run` process. Each operation gets a
worker (perfdsl/runtime/worker.py) that holds *both* arms and the copy roof, so
the sampler interleaves them in one process exactly as before (A B | B A | ...);
a worker per arm could not interleave without timing across processes.

The worker's progress reports (plain lines, and each timing block's start and
end) come over the same pipe between answers; `Worker` hands them to the run's
`RunProgress`, so the live view follows a sampler that runs in another process.

When the code of one arm ends its worker (a segfault, an abort, an exit, no
progress within the time limit, the out-of-memory killer), `Worker.call`
raises `WorkerDied` with the cause and, where the shared marker tells it, the
arm whose code was running. The caller records the failure and starts a new
worker without that arm: for correctness, the arm's remaining cases are not
run; for timing, the shape is sampled again from its start with the remaining
arms (the dead worker's samples of that shape died with it), and later shapes
leave the arm out.

The time limit watches progress, not the whole request: a correctness case must
answer within it, and while a shape is sampled or calibrated, or a load probe
serves requests, the call count in the shared marker must advance within it. A
hung kernel (one that holds the GIL included) is stopped with SIGKILL, which no
code can ignore.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.results import WorkerFailure
from perfdsl.runtime.progress import Progress
from perfdsl.runtime.worker import Job, serve

DEFAULT_CALL_LIMIT_S = 120.0
"""The longest a worker may go without progress: generous, as a first call compiles
(`perfdsl run --time-limit`; the command keeps its own copy of this default)."""
POLL_S = 0.1
RELAYED = ("progress", "blocks", "block", "look", "finish")
"""The worker's progress messages (perfdsl/runtime/worker.py), passed to the run's display."""
CGROUP_EVENTS = Path("/sys/fs/cgroup")


@attrs.frozen
class Limits:
    """How long a worker may go without progress before it is stopped."""

    call_s: float = DEFAULT_CALL_LIMIT_S


MEMORY_LIMIT = "memory limit"
"""The cause of a worker that met its own address-space limit (the measured code raised MemoryError)."""


class WorkerDied(Exception):
    """The worker ended before answering: `cause` and `detail` as in WorkerFailure."""

    def __init__(self, cause: str, detail: str, arm: str | None) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail
        self.arm = arm

    def failure(self, phase: str) -> WorkerFailure:
        """The bundle's record of this death during `phase`."""
        return WorkerFailure(arm=self.arm, phase=phase, cause=self.cause, detail=self.detail)


class WorkerError(Exception):
    """The worker could not start or hit a bug of the harness itself (not of the measured code)."""


@contextlib.contextmanager
def _interrupts_left_to_the_parent() -> Iterator[None]:
    """Start a worker with SIGINT ignored, which it keeps across the exec that spawns it.

    A terminal's Ctrl-C reaches every process of the group: each worker, whatever it was
    doing (importing scipy, waiting on its pipe), printed a KeyboardInterrupt traceback
    above the run's own one line. The parent stops its workers itself (`close`).
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler; a worker started elsewhere keeps SIGINT
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class Worker:
    """One spawned worker process and the pipe and shared marker to talk to it."""

    def __init__(self, job: Job, limits: Limits, progress: Progress | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self._limits = limits
        self._progress = progress
        self._hooks: dict[str, Callable[[], dict[str, Any]]] = {}
        """The live view's `on_block` hook of each step the worker is sampling."""
        self._connection, child = context.Pipe()
        self._marker = context.RawArray("q", 2)
        self._marker[0] = -1
        self._oom_kills = oom_kills()
        self._process = context.Process(
            target=serve, args=(child, job, self._marker), name="perfdsl-worker", daemon=True
        )
        with _interrupts_left_to_the_parent():
            self._process.start()
        child.close()
        self.memory_limit: int | None
        self.affinity: list[int] | None
        """The cores the worker runs on, as it read them once pinned (None: no affinity on this OS)."""
        self.memory_limit, self.affinity = self._wait("starting", None)

    def call(self, kind: str, args: tuple[Any, ...], arms: Sequence[str | None] = ()) -> Any:
        """Send one request and wait for its answer, or raise WorkerDied.

        `arms` names, by marker index, the arms a `time` request samples, so a
        death can be put on the arm whose call was running; a lone entry names
        the arm of any other request.
        """
        self._marker[0] = -1
        self._connection.send((kind, args))
        return self._wait(kind, arms)

    def close(self) -> None:
        """Ask the worker to stop; kill it if it does not within a few seconds."""
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._connection.send(None)
            self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._connection.close()

    def _wait(self, kind: str, arms: Sequence[str | None] | None) -> Any:
        last_count, last_progress = self._marker[1], time.monotonic()
        while True:
            if self._connection.poll(POLL_S):
                try:
                    status, value = self._connection.recv()
                except (EOFError, OSError):
                    raise self._died(arms, killed=False) from None
                if status in RELAYED:
                    self._relay(status, value)
                    last_progress = time.monotonic()
                    continue
                if status in ("done", "ready"):
                    return value
                if status == "memory":
                    self._process.join(5)
                    raise WorkerDied(MEMORY_LIMIT, value, self._arm(arms))
                if kind == "starting":
                    raise WorkerError(f"a worker could not start: {value}")
                # The measured code raised where nothing of the harness catches it.
                self._process.join(5)
                raise WorkerDied("exception", value, self._arm(arms))
            if not self._process.is_alive():
                raise self._died(arms, killed=False)
            if self._marker[1] != last_count:
                last_count, last_progress = self._marker[1], time.monotonic()
            elif time.monotonic() - last_progress > self._limits.call_s:
                self._process.kill()
                raise self._died(arms, killed=True)

    def _relay(self, status: str, value: Any) -> None:
        """Hand a progress report of the worker to the run's progress display."""
        if self._progress is None:
            return
        if status == "progress":
            self._progress(value)
        elif status == "blocks":
            key, order = value
            self._hooks[key] = self._progress.blocks(key, order)
        elif status == "block":
            key, _ = value
            self._hooks[key]()
        elif status == "look":
            self._progress.look(*value)
        else:
            key, stop = value
            self._hooks.pop(key, None)
            self._progress.finish_step(key, stop)

    def _arm(self, arms: Sequence[str | None] | None) -> str | None:
        if not arms:
            return None
        if len(arms) == 1:
            return arms[0]
        index = self._marker[0]
        return arms[index] if 0 <= index < len(arms) else None

    def _died(self, arms: Sequence[str | None] | None, *, killed: bool) -> WorkerDied:
        self._process.join()
        arm = self._arm(arms)
        if killed:
            return WorkerDied("time limit", f"no progress within {self._limits.call_s:g} s; stopped", arm)
        cause, detail = classify_exit(self._process.exitcode, oom_kills() > self._oom_kills)
        return WorkerDied(cause, detail, arm)


def classify_exit(exitcode: int | None, oom_killed: bool) -> tuple[str, str]:
    """The cause and detail of a worker's death from its exit code (negative: a signal).

    A SIGKILL that perfdsl did not send is the out-of-memory killer's when the
    cgroup's oom_kill count rose meanwhile; otherwise its sender is unknown.
    """
    if exitcode is None:
        return "exit", "ended without an exit status"
    if exitcode < 0:
        number = -exitcode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if number == signal.SIGKILL:
            if oom_killed:
                return "out of memory", "SIGKILL from the kernel's out-of-memory killer"
            return "signal", "SIGKILL, not sent by perfdsl (the out-of-memory killer sends it)"
        return "signal", f"{name}: {signal.strsignal(number) or 'no description'}"
    return "exit", f"exit status {exitcode} before answering"


def oom_kills(root: Path = CGROUP_EVENTS, cgroup_file: Path = Path("/proc/self/cgroup")) -> int:
    """How many processes the out-of-memory killer has ended in this process's cgroup (v2), or 0."""
    try:
        relative = next(
            line.split("::", 1)[1].strip() for line in cgroup_file.read_text().splitlines() if "::" in line
        )
        events = (root / relative.lstrip("/") / "memory.events").read_text()
    except (OSError, StopIteration):
        return 0
    for line in events.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return 0


STICKY_CUDA = ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ASSERT", "illegal")
"""Errors after which a CUDA context is unusable: every later call in it fails too."""


class Session:
    """An operation's worker: started when first needed, and again after one dies."""

    def __init__(self, job: Job, limits: Limits, progress: Progress | None = None) -> None:
        self._job = job
        self._limits = limits
        self._progress = progress
        self._worker: Worker | None = None
        self.affinity: list[int] | None = None
        """The affinity the last worker started reported (None before one started)."""

    def call(self, kind: str, args: tuple[Any, ...], arms: Sequence[str | None] = ()) -> Any:
        """`Worker.call` on a live worker; after a death (raised) or a sticky CUDA error, a fresh one."""
        if self._worker is None:
            self._worker = Worker(self._job, self._limits, self._progress)
            self.affinity = self._worker.affinity
        try:
            answer = self._worker.call(kind, args, arms)
        except WorkerDied:
            self.close()
            raise
        if self._job.target == "cuda" and _sticky(answer):
            # The other arm must not inherit a broken context: it gets a new process.
            self.close()
        return answer

    def close(self) -> None:
        """Stop the worker, if one is running."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def _sticky(answer: Any) -> bool:
    """Whether an answer reports a CUDA error that leaves the worker's context unusable."""
    messages = [str(getattr(answer, "message", ""))]
    messages += [str(f.message) for f in getattr(answer, "failures", ())]
    return any(marker in text for text in messages for marker in STICKY_CUDA)
