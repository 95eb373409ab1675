"""Which blocks the probes and the sweep read, chosen from the warm-up plan (pure).

- ``block_readable``: ranges whose single blocks an engine can read on its own; each engine
  says which of its locators qualify (``engines.<name>.block_readable``, via the registry).
- ``BlockPicker``: uniform random blocks over those ranges, weighted by size, from a
  seed (the same seed, the same blocks: a retried probe reads what its first attempt read).
  ``sample(count, exclude=...)`` leaves out blocks already used: the warm probe reads a
  fresh sample of the same distribution with the cold probe's blocks excluded, because
  the cold probe has hydrated its own blocks and re-reading them cannot show a warm-up
  that missed part of the database.
- ``scan_target``: the biggest readable segment, for sequential (IO-size) points.
"""

from __future__ import annotations

import bisect
import random
import zlib
from collections.abc import Iterable, Iterator
from typing import NamedTuple, TypedDict

from pydantic import JsonValue

from cutover_prep.engines.bench import SweepTarget
from cutover_prep.engines.locators import parse_locator
from cutover_prep.engines.registry import block_readable

__all__ = ["BlockPicker", "SampledBlock", "UnitRange", "block_key", "block_readable", "overlap", "scan_target",
           "seed_of", "unit_ranges"]

# Fill a sample by walking every block (in a seeded order) when random picks keep hitting
# excluded or chosen blocks; only for databases of at most this many readable blocks
# (bigger ones have room enough that random picks do not run out).
ENUMERATE_AT_MOST = 2_000_000
SNAPSHOT_BLOCK_BYTES = 512 * 1024  # the EBS snapshot block: the unit a restored volume loads lazily
# Each probe's sample is at most this share of the database's readable snapshot blocks: the cold sample's snapshot
# blocks and the warm one's then cover at most half of them, and a random pick of the warm sample lands outside the
# cold one's three times in four, so every warm read is a fresh first touch (issue 33 §4: 500 blocks in the 336 MiB
# demo put 280 warm reads in snapshot blocks the cold probe had read, and the check said less than it seemed)
PROBE_SHARE_OF_SNAPSHOT_BLOCKS = 4


class UnitRange(TypedDict):
    """A range of a work unit, as units.json holds it (``ReadRange.to_json``)."""

    segment: str
    locator: dict[str, JsonValue]  # the engine's own (``Locator.to_json``)
    extents: list[list[int]]  # [file_id, first_block, blocks]
    block_size: int


class Unit(TypedDict):
    """A work unit of units.json (the field the sample reads)."""

    ranges: list[UnitRange]


class SampledBlock(TypedDict):
    """One block a probe or a random point reads; probes/sample.json holds them as they are."""

    segment: str
    locator: dict[str, JsonValue]  # the engine's own (``Locator.to_json``)
    file_id: int
    block: int
    block_size: int


class _Piece(NamedTuple):
    """One readable extent of a range: where its blocks start."""

    range: UnitRange
    file_id: int
    first: int


def seed_of(text: str) -> int:
    return zlib.crc32(text.encode())


def block_key(block: SampledBlock) -> tuple[str, int, int]:
    """What makes a sampled block the same block: its segment, file and block number."""
    return str(block["segment"]), int(block["file_id"]), int(block["block"])


def chunk_key(block: SampledBlock) -> tuple[str, int, int]:
    """The snapshot block (``SNAPSHOT_BLOCK_BYTES``) a sampled block lies in: a restored volume loads
    it whole on the first read of any of its blocks, so a probe that read two blocks of one snapshot
    block would time one first touch and one warm read."""
    per_chunk = max(1, SNAPSHOT_BLOCK_BYTES // int(block["block_size"] or SNAPSHOT_BLOCK_BYTES))
    return str(block["segment"]), int(block["file_id"]), int(block["block"]) // per_chunk


def overlap(blocks: Iterable[SampledBlock], others: Iterable[SampledBlock]) -> int:
    """How many of ``blocks`` are also in ``others``."""
    theirs = {block_key(b) for b in others}
    return sum(1 for b in blocks if block_key(b) in theirs)


class BlockPicker:
    """Random blocks over the readable extents of ``ranges`` (units.json ranges)."""

    def __init__(self, ranges: Iterable[UnitRange], seed: int) -> None:
        self._pieces: list[_Piece] = []
        self._ends: list[int] = []
        total = 0
        for rng in ranges:
            if not block_readable(parse_locator(rng["locator"])):
                continue
            for file_id, first, blocks in rng["extents"]:
                if blocks <= 0:
                    continue
                total += blocks
                self._pieces.append(_Piece(rng, int(file_id), int(first)))
                self._ends.append(total)
        self.total_blocks = total
        # the snapshot blocks (chunk_key) the readable extents lie in, counted per extent (rounded up)
        self.snapshot_blocks = sum(-(-blocks * int(piece.range["block_size"]) // SNAPSHOT_BLOCK_BYTES)
                                   for piece, blocks in zip(self._pieces, _lengths(self._ends), strict=True))
        self._rng = random.Random(seed)

    def __bool__(self) -> bool:
        return self.total_blocks > 0

    def pick(self) -> SampledBlock:
        return self._at(self._rng.randrange(self.total_blocks))

    def _at(self, n: int) -> SampledBlock:
        i = bisect.bisect_right(self._ends, n)
        piece = self._pieces[i]
        start = self._ends[i - 1] if i else 0
        return SampledBlock(segment=piece.range["segment"], locator=piece.range["locator"], file_id=piece.file_id,
                            block=piece.first + (n - start), block_size=int(piece.range["block_size"]))

    def sample(self, count: int, exclude: Iterable[SampledBlock] = ()) -> list[SampledBlock]:
        """``count`` distinct blocks, none of them in ``exclude`` (fewer when the database has fewer).

        Random picks first, at most one per snapshot block (``chunk_key``) and none in a snapshot
        block ``exclude`` touched, so each read of a restored volume is a first touch; when
        they keep landing on blocks already taken, a small database is walked in a seeded
        order instead, so it gives every block it has left."""
        seen = {block_key(b) for b in exclude}
        chunks = {chunk_key(b) for b in exclude}
        want = min(count, self.total_blocks)
        out: list[SampledBlock] = []
        for _ in range(count * 4 + len(seen)):
            if len(out) >= want:
                return out
            b = self.pick()
            key, chunk = block_key(b), chunk_key(b)
            if key not in seen and chunk not in chunks:  # each read the first touch of its snapshot block
                seen.add(key)
                chunks.add(chunk)
                out.append(b)
        if len(out) < want and self.total_blocks <= ENUMERATE_AT_MOST:
            order = list(range(self.total_blocks))
            self._rng.shuffle(order)
            for n in order:
                if len(out) >= want:
                    break
                b = self._at(n)
                key = block_key(b)
                if key not in seen:
                    seen.add(key)
                    out.append(b)
        return out

    def probe_size(self, wanted: int) -> int:
        """The blocks a probe reads: ``wanted`` (``benchmark.probe_blocks``), at most a
        ``1/PROBE_SHARE_OF_SNAPSHOT_BLOCKS`` of the readable snapshot blocks (at least one)."""
        return max(0, min(wanted, max(1, self.snapshot_blocks // PROBE_SHARE_OF_SNAPSHOT_BLOCKS)))

    def stream(self) -> Iterator[SampledBlock]:
        while True:
            yield self.pick()


def _lengths(ends: list[int]) -> Iterator[int]:
    previous = 0
    for end in ends:
        yield end - previous
        previous = end


def unit_ranges(units: list[Unit]) -> Iterator[UnitRange]:
    for unit in units:
        yield from unit["ranges"]


def scan_target(units: list[Unit]) -> SweepTarget | None:
    """The readable segment with the most blocks, its extents merged in block order."""
    by_segment: dict[str, tuple[UnitRange, list[tuple[int, int, int]]]] = {}
    for rng in unit_ranges(units):
        if not block_readable(parse_locator(rng["locator"])):
            continue
        _, extents = by_segment.setdefault(rng["segment"], (rng, []))
        extents.extend((int(f), int(b), int(n)) for f, b, n in rng["extents"])
    if not by_segment:
        return None
    key, (first, extents) = max(by_segment.items(), key=lambda kv: sum(e[2] for e in kv[1][1]))
    return SweepTarget(key, parse_locator(first["locator"]), tuple(sorted(extents)), int(first["block_size"]))
