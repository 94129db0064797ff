"""Pausing Python's cyclic garbage collector around work that builds large acyclic trees.

LibCST's trees and CPython's ``ast`` trees hold no reference cycles: reference counting
frees them. The cyclic collector, triggered by the allocation count, still traced them
while they were alive (a fifth of a conversion's time, a fifth of indexing a tree's
files) and found nothing to free.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused(collect_after: int | None = None):
    """The collector is off inside the block, then as it was; ``collect_after``: the
    generation collected on leaving (what the block did leave in cycles is freed then,
    not at the end of a run: the trees freed meanwhile count against the allocation
    count, which then may not reach its threshold for a long time)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
            if collect_after is not None:
                gc.collect(collect_after)
