"""A sequential (IO-size) point's reads: the target read in order, wrapped around until the deadline."""

from __future__ import annotations

import time
from collections.abc import Callable

from cutover_prep.engines.base import Extent, ReadRange, ReadResult
from cutover_prep.measure.model import SweepTarget


def read_in_order(read_range: Callable[[ReadRange], ReadResult], target: SweepTarget, deadline: float, *,
                  call_blocks: int, calls_of: Callable[[ReadResult], int] = lambda _: 1) -> tuple[int, int, int]:
    """``(bytes, calls, passes)``: ``target``'s extents read ``call_blocks`` at a time from the start,
    again and again, so a point lasts its time even on a small target; ``calls_of`` counts the IO
    calls one read made (an engine that reads block by block says so)."""
    read_bytes = calls = passes = 0
    while time.monotonic() < deadline:
        passes += 1
        for file_id, first, blocks in target.extents:
            block = first
            while block < first + blocks and time.monotonic() < deadline:
                n = min(call_blocks, first + blocks - block)
                result = read_range(ReadRange(target.segment_key, target.locator, (Extent(file_id, block, n),),
                                              target.block_size))
                read_bytes += result.bytes
                calls += calls_of(result)
                block += n
    return read_bytes, calls, passes
