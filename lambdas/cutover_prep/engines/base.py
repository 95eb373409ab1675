"""The one interface every database engine implements.

An engine knows how to:
- ``discover``: list every segment (relation fork, table partition, index, LOB segment ...)
  that must be read, with its size and the block extents that make it up;
- ``read_range``: read one block range of one segment exactly once and say what it read
  (what the database confirmed, not what was asked for: less than planned is ``ShortRead``),
  and how many planned blocks no longer exist (``ReadResult.gone``: a table truncated or
  rebuilt since the plan; "a read takes what exists now");
- ``close``.

Planning (``cutover_prep.warmup.planning``) turns segments into work units made of
``ReadRange`` pieces; the warm-unit Lambda hands each piece back to the engine.
Engines never write to the customer database: their sessions are read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, Protocol, TypedDict

from pydantic import JsonValue

from cutover_prep.engines import keys
from cutover_prep.engines.locators import Locator, parse_locator


class EngineError(Exception):
    """Base class of the errors an engine raises. ``error_type`` names it in the workflow."""

    error_type = "EngineError"


class DatabaseUnreachable(EngineError):
    """The database could not be reached or refused the login.

    ``reconnectable``: it may answer again soon, as during a restart, a reboot or a failover (nothing
    answered, or it said it is starting or shutting down, or has too many connections); False when it
    answered and refused (the login, a database that does not exist, TLS), which waiting will not change.
    The warm-up retries only the reconnectable ones, for a bounded time (``retry.Retries``)."""

    error_type = "DatabaseUnreachable"

    def __init__(self, *args: object, reconnectable: bool = False) -> None:
        super().__init__(*args)
        self.reconnectable = reconnectable


class TransientDatabaseError(EngineError):
    """A read failed for a reason that may pass (lost connection, timeout, resource busy)."""

    error_type = "TransientDatabaseError"


class LockWaitTimeout(TransientDatabaseError):
    """A wait for a lock hit the session's bound (``engines.bounds``): retried like any transient error
    (``retry.Retries``); its message names the relation and who holds the lock, as the server says."""

    error_type = "LockWaitTimeout"


class ConnectionLost(TransientDatabaseError):
    """The session was dropped under a call (a restart, a failover, a cut connection): the engine opens a
    new connection on its next call, which may find the database unreachable for a while."""

    error_type = "ConnectionLost"


class PermanentReadError(EngineError):
    """A read failed for a reason retrying will not fix (object dropped, no privilege)."""

    error_type = "PermanentReadError"


class ShortRead(PermanentReadError):
    """Fewer blocks were read than exist of the planned range (a file ended early, a scan stopped
    short): the unit is not DONE, and the error says what was read of what. Planned blocks that no
    longer exist (the relation was truncated since the plan) are not a short read: ``ReadResult.gone``."""

    error_type = "ShortRead"


@dataclass(frozen=True, slots=True)
class Extent:
    """A contiguous run of blocks of a segment.

    ``file_id`` is the engine's file number (Oracle relative file number) or 0 where the
    engine addresses blocks relative to the segment (PostgreSQL).
    """

    file_id: int
    first_block: int
    blocks: int


@dataclass(frozen=True)
class Segment:
    """Something with storage that must be read.

    ``locator`` holds what the engine needs to read it again, typed per engine (``engines.locators``:
    PostgreSQL: database, oid, fork; Oracle: data_object_id, segment type, LOB column ...); one given as its
    JSON is parsed here.
    ``splittable`` says whether the engine can read any block sub-range of it on its own.
    ``quote_char`` is the engine's identifier quote (``engines.keys``: ``"``, MySQL's `````); ``key_names``
    the identifiers the key names after the schema when ``name`` is not one (MySQL: table, index).
    """

    schema: str
    name: str
    kind: str
    bytes: int
    block_size: int
    extents: tuple[Extent, ...]
    locator: Locator
    partition: str | None = None
    database: str | None = None
    splittable: bool = True
    quote_char: str = keys.ANSI
    key_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "locator", parse_locator(self.locator))

    @property
    def blocks(self) -> int:
        return sum(e.blocks for e in self.extents)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.schema, *(self.key_names or (self.name,)))

    @property
    def key(self) -> str:
        """A stable, human-readable id, one per object: ``db/schema.name[:partition]#kind``, each name
        quoted where it is not a plain word (``engines.keys``; the census builds the same)."""
        return keys.object_key(self.names, self.kind, database=self.database, partition=self.partition,
                               q=self.quote_char)

    @property
    def label(self) -> str:
        """``[db/]schema.name``, quoted as in the key: what a hot-set profile names."""
        return keys.label(self.names, self.database, self.quote_char)


class RangeDoc(TypedDict):
    """A ``ReadRange`` as a work unit stores it: ``extents`` as ``[file_id, first_block, blocks]``; no
    ``splittable`` reads as splittable."""

    segment: str
    locator: dict[str, JsonValue]  # ``Locator.to_json``
    extents: list[list[int]]
    block_size: int
    splittable: NotRequired[bool]


@dataclass(frozen=True, slots=True)
class ReadRange:
    """A piece of one segment assigned to a work unit: extents of blocks to read."""

    segment_key: str
    locator: Locator
    extents: tuple[Extent, ...]
    block_size: int
    splittable: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "locator", parse_locator(self.locator))

    @property
    def blocks(self) -> int:
        return sum(e.blocks for e in self.extents)

    @property
    def bytes(self) -> int:
        return self.blocks * self.block_size

    def to_json(self) -> RangeDoc:
        return {
            "segment": self.segment_key,
            "locator": self.locator.to_json(),
            "extents": [[e.file_id, e.first_block, e.blocks] for e in self.extents],
            "block_size": self.block_size,
            "splittable": self.splittable,
        }

    @classmethod
    def from_json(cls, data: RangeDoc) -> ReadRange:
        return cls(
            segment_key=data["segment"],
            locator=parse_locator(data["locator"]),
            extents=tuple(Extent(int(f), int(b), int(n)) for f, b, n in data["extents"]),
            block_size=int(data["block_size"]),
            splittable=bool(data.get("splittable", True)),
        )


# Why planned blocks were gone when read (``ReadResult.details["gone_reason"]``, the findings' ``truncated[]``):
# the relation was truncated (PostgreSQL VACUUM, an Oracle shrink) or its storage replaced by a new segment (Oracle
# TRUNCATE / MOVE: a new DATA_OBJECT_ID, which the end census's catch-up pass reads whole).
GONE_TRUNCATED, GONE_REBUILT = "truncated while the run ran", "rebuilt while the run ran"
# Oracle (issue 35 §2): planned blocks above the segment's high-water mark (DBMS_SPACE.UNUSED_SPACE) hold nothing
# any query reads; they are counted with ``gone`` under this reason, not read and not a short read.
GONE_FREE_ABOVE_HWM = "free, above the high-water mark: never read by any query"


@dataclass
class ReadResult:
    """What one ``read_range`` call read. ``gone``: planned blocks of the range that no longer exist
    (past the relation's current end: a VACUUM truncated it, a rebuild gave it new storage), counted
    neither as read nor as unread; ``blocks + gone`` is the range's planned blocks."""

    blocks: int
    bytes: int
    seconds: float
    method: str
    details: dict[str, Any] = field(default_factory=dict)
    gone: int = 0


@dataclass(frozen=True, slots=True)
class CensusObject:
    """One thing with storage on the volume, as the engine's own catalogue names it (issue 21).

    A census lists everything the engine can name, including what the run's user may not read,
    so coverage is judged against the whole volume rather than against the plan. ``key`` matches
    ``Segment.key`` when the object is also planned (so the two can be joined); ``readable`` is
    False with a ``reason`` (one of ``UNREAD_REASONS``) when the run cannot read it by SQL.
    ``bytes`` is the size the server reports (0 when the server will not say; then ``reason``
    says so). ``file`` is the object's file path relative to the data directory when the engine
    can tell (PostgreSQL ``pg_relation_filepath``, InnoDB tablespace file), so the emulated
    volume's hydration map can judge it in tests."""

    database: str | None
    schema: str
    name: str
    kind: str
    bytes: int
    key: str
    readable: bool = True
    reason: str | None = None
    file: str | None = None
    size_known: bool = True  # False: the server would not say its size (``bytes`` is then 0)
    # The engine's own identity of the object where the census knows it (PostgreSQL ``oid/file``, InnoDB
    # ``space N``): the same key with another identity at the end census is a new object (dropped, created
    # again or rewritten), whose blocks the warm-up did not read (issue 32).
    identity: str | None = None


# Why an object on the volume was not read: the words findings and report use (issue 21).
# "planned, not read": in the plan, but its units did not all finish (failed, cut off, never started);
# "grew after the census": read as planned, but larger at the end census; "not in the plan": readable and
# selected, yet planned by an older plan (findings.census); "engine-internal": a file of the engine itself that no
# SQL reads and no application query touches (InnoDB's system, undo and temporary tablespaces, free extents, the
# redo log), counted apart and judged by RDS's initialization of the whole volume (issue 33, verdict ENGINE_INTERNAL).
ENGINE_INTERNAL = "engine-internal"
UNREAD_REASONS = ("no privilege", "not readable by SQL", "excluded by input", "created after the census",
                  "planned, not read", "grew after the census", "not in the plan", ENGINE_INTERNAL)


@dataclass(frozen=True)
class ConnectionSpec:
    """Where and as whom to connect. The password never appears in repr or logs.

    ``tls`` is a mode of ``engines.transport`` (``require``, ``verify-ca``, ``unverified``,
    ``prefer``, ``disable``); ``None`` takes ``CUTOVER_PREP_TLS`` from the environment when
    connecting (default ``require``). ``tls_ca`` is the PEM file of CA certificates a verifying
    mode trusts (``None``: ``CUTOVER_PREP_TLS_CA``, else the RDS CA bundle shipped in the package).
    ``tls_port`` is Oracle's TCPS port when it differs from ``port`` (the RDS SSL option listens
    on 2484 by default, the instance endpoint on 1521)."""

    engine: str
    host: str
    port: int
    database: str
    user: str
    password: str = field(repr=False)
    tls: str | None = None
    tls_port: int | None = None
    tls_ca: str | None = None


@dataclass(frozen=True)
class DiscoveryOptions:
    """What to include. Patterns are shell-style globs matched case-sensitively."""

    include_schemas: tuple[str, ...] = ()
    exclude_schemas: tuple[str, ...] = ()
    databases: tuple[str, ...] = ()
    include_system: bool = False
    # The RDS additional storage volumes DescribeDBInstances lists (RDSDBDATA2..4, ``cutover_prep.engines.volumes``):
    # an engine that can tell which volume a file is on (``VolumeEngine``) maps the planned segments to them.
    additional_volumes: tuple[str, ...] = ()


class Engine(Protocol):
    """The interface of every engine (see module docstring)."""

    name: str

    def discover(self, options: DiscoveryOptions) -> list[Segment]: ...

    def read_range(self, rng: ReadRange) -> ReadResult: ...

    def close(self) -> None: ...


class CensusEngine(Engine, Protocol):
    """An engine that can take a census of everything on the volume (``CensusObject``), at the
    start and again at the end of the warm-up."""

    def census(self, options: DiscoveryOptions) -> list[CensusObject]: ...


class VolumeEngine(Engine, Protocol):
    """An engine that can say which RDS storage volume each planned segment's files are on (Oracle:
    ``engines.oracle.volumes``): it returns the segments with ``file_volumes`` in their locators."""

    def map_volumes(self, segments: list[Segment], volume_names: tuple[str, ...]) -> list[Segment]: ...


class DatafileEngine(Engine, Protocol):
    """An engine whose family offers the datafile pass (``registry.EngineFamily.warmup_modes``).

    ``discover_datafiles`` lists every datafile as one splittable ``Segment`` (kind ``DATAFILE``,
    one extent of all its blocks); ``read_range`` then reads any block range of it."""

    def discover_datafiles(self) -> list[Segment]: ...
