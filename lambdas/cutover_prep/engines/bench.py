"""The benchmark driver: the interface each engine's ``engines/<name>/bench.py`` implements, and what it is given.

A sweep is a list of *points*; each point runs alone, for ``seconds``, in its own recorded time window
(``measure/runner.py`` times it, ``benchmark/steps.py`` plans and records it). Engine-specific work lives
behind ``BenchDriver``:

- ``capabilities()``: which knobs and counters this server has (recorded in findings):
  ``{"server_version": str, "knobs": {name: bool}, "counters": "v$sysstat" | "pg_stat_io" | None,
  "latency_histogram": "v$event_histogram" | None, "notes": [str, ...]}``;
- ``io_size_points(options, target)``: the engine's IO-size sweep (Oracle:
  ``db_file_multiblock_read_count``; PostgreSQL 17+: ``io_combine_limit``), or ``[]``;
- ``counters()``: an instance-wide snapshot of the engine's cumulative IO counters; the
  runner takes deltas per point. Besides raw names (e.g. ``physical read total bytes``)
  it includes the normalised keys ``read_requests`` and ``read_bytes`` (and
  ``write_requests`` / ``write_bytes``, ``multiblock_read_requests`` when known) so the
  runner can compute IOPS and effective IO size; ``{}`` when the engine has no counters
  (then the client's count is used and the findings say so);
- ``latency_histogram()``: an instance-wide single-block read latency histogram snapshot
  (Oracle ``v$event_histogram``), or ``None`` when the engine has none;
- ``scan(spec, target, deadline)``: sequential reads of ``target`` with ``spec.knobs``
  applied to this session only, until ``deadline`` (``time.monotonic()``) or the end of
  the target; returns the bytes and read calls the client issued (``read_in_order`` reads a
  target in order, wrapped around until the deadline);
- ``random_reader()``: a new session (own connection) that reads single blocks;
- optional ``random_point_notes(point_id)``: once a random point's (or a probe's) reader sessions
  are closed, what the engine saw in them (Oracle: their V$SESSION_EVENT waits), for its notes;
- ``write_point(spec, deadline, scratch)``: the opt-in write test in the run's own scratch
  object (``engines/scratch.py``), capped at ``scratch.max_bytes``, dropped afterwards
  even on failure; ``drop_scratch(scratch)`` drops it only when it carries the run's marker.

Nothing here writes to the customer database; only ``write_point`` and ``drop_scratch``
do, and only when the run input asks for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, JsonValue

from cutover_prep.engines.base import Extent, ReadRange, ReadResult
from cutover_prep.engines.locators import BaseLocator, Locator, parse_locator
from cutover_prep.engines.scratch import Dropped, Scratch


class SweepOptions(BaseModel):
    """What the sweep's points are made of: the run input's ``benchmark`` section (``models/run_input.py``
    ``Benchmark``, which holds the defaults and the bounds) as the drivers read it
    (``benchmark.steps.sweep_options`` makes one from that section)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seconds_per_point: float
    mbrc_values: tuple[int, ...]  # Oracle: db_file_multiblock_read_count values of the IO-size sweep
    io_combine_kb_values: tuple[int, ...]  # PostgreSQL 17+: io_combine_limit values (kB) of the IO-size sweep
    sessions: tuple[int, ...]  # sessions of the random single-block read points
    write_test: bool


class BenchCapabilities(TypedDict, total=False):
    """What ``BenchDriver.capabilities`` says of the server (recorded in the benchmark's plan and the findings):
    its version, how the driver reads (``read_method``, ``block_size``), which IO-size knobs the sweep sets
    (``knobs``: name -> whether the server has it), the IO counters and latency histogram it reads (None: none),
    the notes; an engine's own settings besides (PostgreSQL ``version_num``, ``io_combine_limit`` in kB; Oracle
    ``db_file_multiblock_read_count``, ``filesystemio_options`` as V$PARAMETER says them)."""

    server_version: str | None
    version_num: int
    read_method: str
    block_size: int | None
    knobs: dict[str, bool]
    io_combine_limit: float | None
    db_file_multiblock_read_count: str | None
    filesystemio_options: str | None
    counters: str | None
    latency_histogram: str | None
    notes: list[str]


class TargetDoc(TypedDict):
    """A ``SweepTarget`` as the benchmark's plan stores it: ``extents`` as ``[file_id, first_block, blocks]``."""

    segment: str
    locator: dict[str, JsonValue]  # ``Locator.to_json``
    extents: list[list[int]]
    block_size: int


class PointDoc(TypedDict, total=False):
    """A ``PointSpec`` as the benchmark's plan stores it (its fields)."""

    point_id: str
    kind: str
    seconds: float
    sessions: int
    io_size_kb: float | None
    knobs: dict[str, int | str | list[int]]


@dataclass(frozen=True)
class SweepTarget:
    """What a point reads: one big segment for scans, many block ranges for random reads."""

    segment_key: str
    locator: Locator
    extents: tuple[tuple[int, int, int], ...]  # (file_id, first_block, blocks)
    block_size: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "locator", parse_locator(self.locator))

    @property
    def bytes(self) -> int:
        return sum(e[2] for e in self.extents) * self.block_size

    def to_json(self) -> TargetDoc:
        return {"segment": self.segment_key, "locator": self.locator.to_json(),
                "extents": [list(e) for e in self.extents], "block_size": self.block_size}

    @classmethod
    def from_json(cls, d: TargetDoc) -> SweepTarget:
        return cls(d["segment"], parse_locator(d["locator"]), tuple(tuple(int(x) for x in e) for e in d["extents"]),
                   int(d["block_size"]))


@dataclass(frozen=True)
class PointSpec:
    """One measurement. ``kind``: ``sequential`` (scan at an IO size), ``random`` (single
    blocks from ``sessions`` sessions), ``write_direct`` / ``write_random`` (opt-in)."""

    point_id: str
    kind: str
    seconds: float
    sessions: int = 1
    io_size_kb: float | None = None
    knobs: dict[str, int | str | list[int]] = field(default_factory=dict)  # the session settings; Oracle: "requested"

    def to_json(self) -> PointDoc:
        return {"point_id": self.point_id, "kind": self.kind, "seconds": self.seconds, "sessions": self.sessions,
                "io_size_kb": self.io_size_kb, "knobs": dict(self.knobs)}

    @classmethod
    def from_json(cls, d: PointDoc) -> PointSpec:
        return cls(**{k: d[k] for k in PointDoc.__annotations__ if k in d})


@dataclass
class ScanResult:
    """What the client did in a scan: bytes asked for and database calls made."""

    bytes: int
    calls: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    passes: int = 1  # how many times the scan read its target from the start
    cached: bool = False  # passes after the first may have come from a cache (the engine says)


class RandomReader(Protocol):
    def read_block(self, locator: BaseLocator, file_id: int, block: int) -> float | None:
        """Read one block; the seconds the database server measured for the read, when it can time it in the
        statement that reads (``measure.runner.run_probe`` then takes the server's latency), else None."""
        ...

    def close(self) -> None: ...


class BenchDriver(Protocol):
    engine: str

    def capabilities(self) -> BenchCapabilities: ...

    def io_size_points(self, options: SweepOptions, target: SweepTarget) -> list[PointSpec]: ...

    def counters(self) -> dict[str, float]: ...

    def counts_reads_of(self, spec: PointSpec) -> bool:
        """Whether the engine's counters see this point's reads; if not, a counter delta is other
        sessions' IO (autovacuum, the catalogue) and the point's rate comes from the client's count."""
        ...

    def latency_histogram(self) -> dict[str, int] | None: ...

    def scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult: ...

    def random_reader(self) -> RandomReader: ...

    # Optional, looked up with getattr (a driver without it is complete):
    #     def random_point_notes(self, point_id: str) -> list[str]: ...
    # called once a random point's (or a probe's) reader sessions are all closed; the driver says what
    # it saw in those sessions (Oracle: their V$SESSION_EVENT waits), recorded in the point's notes.

    def write_point(self, spec: PointSpec, deadline: float, scratch: Scratch) -> ScanResult: ...

    def drop_scratch(self, scratch: Scratch) -> Dropped: ...

    def close(self) -> None: ...


def read_in_order(read_range: Callable[[ReadRange], ReadResult], target: SweepTarget, deadline: float, *,
                  call_blocks: int, calls_of: Callable[[ReadResult], int] = lambda _: 1) -> tuple[int, int, int]:
    """A sequential (IO-size) point's reads, ``(bytes, calls, passes)``: ``target``'s extents read
    ``call_blocks`` at a time from the start, again and again, so a point lasts its time even on a small
    target; ``calls_of`` counts the IO calls one read made (an engine that reads block by block says so)."""
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
