"""The static stage's compilation runs beside the correctness checks, and timing waits for it."""

from __future__ import annotations

import threading
import time

import pytest

from perfdsl.runtime.execute import _Compiled, _Compiling


def _compiled() -> _Compiled:
    return _Compiled(records=(), variants=(), foreign={}, cuda_archived=False)


def test_the_compilation_runs_on_its_own_thread_and_its_result_waits_for_it() -> None:
    started, release = threading.Event(), threading.Event()

    def work() -> _Compiled:
        started.set()
        release.wait(5)
        return _compiled()

    compiling = _Compiling(work)
    assert started.wait(5)  # begun while the caller goes on (the correctness checks)
    threading.Timer(0.2, release.set).start()
    before = time.monotonic()
    assert compiling.result() == _compiled()
    assert time.monotonic() - before >= 0.15  # the caller (the timing) waited for it
    assert compiling.result() == _compiled()  # asked again: the same, at once


def test_an_exception_of_the_compilation_is_raised_where_its_result_is_asked() -> None:
    def work() -> _Compiled:
        raise RuntimeError("the compiler broke")

    compiling = _Compiling(work)
    with pytest.raises(RuntimeError, match="the compiler broke"):
        compiling.result()
