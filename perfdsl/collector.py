"""Pausing CPython's cyclic garbage collector around work that allocates much and frees little.

The generational collector runs whenever allocations outnumber deallocations
by its threshold, and each run of the oldest generation rescans every
surviving container. Work that builds a large, growing set of live objects
(a parse tree, a report's layout, a block of timed calls) pays for that
rescanning again and again without freeing anything. Each caller says why
pausing is safe and what it measured.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; restore its previous state after.

    Reference counting still frees everything without cycles as usual; cycles
    made inside the block are collected at the next collection after it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
