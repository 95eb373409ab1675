"""Which blocks the probes and the sweep read, chosen from the warm-up plan (pure).

- ``block_readable``: ranges whose single blocks the engines can read on their own
  (PostgreSQL heap main forks; Oracle table segments read by rowid range).
- ``BlockPicker``: uniform random blocks over those ranges, weighted by size, from a
  seed, so the cold and the warm probe read the very same blocks.
- ``scan_target``: the biggest readable segment, for sequential (IO-size) points.
"""

from __future__ import annotations

import bisect
import random
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from cutover_prep.sweep.model import SweepTarget

HEAP_RELKINDS = ("r", "m", "t")


def block_readable(locator: dict[str, Any]) -> bool:
    if locator.get("read") == "rowid_range":  # Oracle table (partition) segment
        return True
    return locator.get("fork") == "main" and locator.get("relkind") in HEAP_RELKINDS


def seed_of(text: str) -> int:
    return zlib.crc32(text.encode())


class BlockPicker:
    """Random blocks over the readable extents of ``ranges`` (units.json ranges)."""

    def __init__(self, ranges: Iterable[dict[str, Any]], seed: int) -> None:
        self._pieces: list[tuple[dict[str, Any], int, int, str, int]] = []  # locator, file, first block, segment, bs
        self._ends: list[int] = []
        total = 0
        for rng in ranges:
            if not block_readable(rng["locator"]):
                continue
            for file_id, first, blocks in rng["extents"]:
                if blocks <= 0:
                    continue
                total += blocks
                self._pieces.append((rng["locator"], int(file_id), int(first), rng["segment"], int(rng["block_size"])))
                self._ends.append(total)
        self.total_blocks = total
        self._rng = random.Random(seed)

    def __bool__(self) -> bool:
        return self.total_blocks > 0

    def pick(self) -> dict[str, Any]:
        n = self._rng.randrange(self.total_blocks)
        i = bisect.bisect_right(self._ends, n)
        locator, file_id, first, segment, block_size = self._pieces[i]
        start = self._ends[i - 1] if i else 0
        return {"segment": segment, "locator": locator, "file_id": file_id, "block": first + (n - start),
                "block_size": block_size}

    def sample(self, count: int) -> list[dict[str, Any]]:
        """``count`` distinct blocks (fewer when the database has fewer)."""
        seen: set[tuple[str, int, int]] = set()
        out: list[dict[str, Any]] = []
        for _ in range(count * 4):
            if len(out) >= min(count, self.total_blocks):
                break
            b = self.pick()
            key = (b["segment"], b["file_id"], b["block"])
            if key not in seen:
                seen.add(key)
                out.append(b)
        return out

    def stream(self) -> Iterator[dict[str, Any]]:
        while True:
            yield self.pick()


def unit_ranges(units: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for unit in units:
        yield from unit["ranges"]


def scan_target(units: list[dict[str, Any]]) -> SweepTarget | None:
    """The readable segment with the most blocks, its extents merged in block order."""
    by_segment: dict[str, tuple[dict[str, Any], int, list[tuple[int, int, int]]]] = {}
    for rng in unit_ranges(units):
        if not block_readable(rng["locator"]):
            continue
        locator, block_size, extents = by_segment.setdefault(rng["segment"], (rng["locator"], rng["block_size"], []))
        extents.extend((int(f), int(b), int(n)) for f, b, n in rng["extents"])
    if not by_segment:
        return None
    key, (locator, block_size, extents) = max(by_segment.items(), key=lambda kv: sum(e[2] for e in kv[1][2]))
    return SweepTarget(key, locator, tuple(sorted(extents)), int(block_size))
