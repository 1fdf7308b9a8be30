"""An arm's application request, prepared afresh between blocks, share rounds and load probes.

A preparation of a request can be persistently fast or slow, most likely by
where its arrays landed in memory, and stays so for as long as it lives. With
one preparation per arm, that draw is the arm's for the whole run, and no
interval over blocks or rounds shows it.
Measured in `perfdsl run` of the CPU demo (decode_step at 256 x 256 on one core
of a 2-core EPYC): with one preparation per arm, one run's change had a rest of
the request (its time outside the operation) 24 us slower than the baseline's
in every one of the 10 interleaved share rounds (428-432 us against 404-409),
which page 1 called a 5.9 % [5.4, 6.4] cost of the change outside the
operation; two more runs of the same code put the rest ratio at 0.991 and
1.001. Prepared afresh before each round, the rounds of *one* arm split into
fast and slow preparations, each the same for its whole round (about 100
requests at 400-415 us, or at 460-485 us), in both arms; the rest ratio came out
0.996 [0.966, 1.027], 1.013 and 0.994. So each block, share round and probe
runs on a fresh preparation: the draw becomes block-to-block noise, which every
interval over blocks or rounds then holds, instead of a bias none of them shows.
(In a fresh process, with no run's allocations before it, two preparations of
one arm timed within 1 % of each other: the draw seems to depend on the
process's history and the machine's state, which is why it is randomised
rather than modelled. A kernel arm's rotated buffer sets can carry such a draw
too, on some machine states (`benchmarks/allocation_aa.py`); they are not
renewed, because allocating them afresh per block cost `make report` half as
long again.)

A preparation that is expensive (a model's weights loaded, a large input drawn)
is not repeated before every block: `renew` prepares again only while the
time spent preparing stays within `RENEW_SHARE` of the time since the first
renewal, so a cheap preparation is renewed every time and a costly one at
intervals; the count of preparations is recorded, so the report can say how
many draws the intervals rest on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

RENEW_SHARE = 0.25
"""The most of the measuring time that preparing afresh may take."""
WARM_CALLS = 2
"""Untimed requests after a fresh preparation: its first touches page in its arrays."""


class PreparedRequest:
    """A no-argument request, as `Application.prepare` returns it, that `renew` prepares again."""

    def __init__(
        self, prepare: Callable[[], Callable[[], Any]], clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._prepare = prepare
        self._clock = clock
        started = clock()
        self._request: Callable[[], Any] | None = prepare()
        self._preparing_s = clock() - started
        self._first_renewal: float | None = None
        self.preparations = 1
        """How many times this arm's request was prepared, the first time included."""

    def __call__(self) -> Any:
        assert self._request is not None
        return self._request()

    def renew(self) -> None:
        """Prepare the request again, unless preparing has already taken `RENEW_SHARE` of the
        time since the first renewal; then warm the new preparation up, untimed."""
        now = self._clock()
        if self._first_renewal is None:
            self._first_renewal = now
        elif self._preparing_s > RENEW_SHARE * (now - self._first_renewal):
            return
        # The old arrays go first, so that two preparations never hold memory at once.
        self._request = None
        started = self._clock()
        self._request = self._prepare()
        self._preparing_s += self._clock() - started
        self.preparations += 1
        for _ in range(WARM_CALLS):
            self._request()


def renew(request: Callable[[], Any]) -> None:
    """A fresh preparation of `request` where it is a `PreparedRequest`; nothing for a plain call."""
    if isinstance(request, PreparedRequest):
        request.renew()
