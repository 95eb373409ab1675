"""The run input's ``warmup``: what to read, in which order (priority, hot set), how many units at once and
how big a chunk."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from cutover_prep.engines.registry import family
from cutover_prep.models.fields import (
    MAX_QUALIFIED_NAME_CHARS,
    WARMUP_GLOBS,
    LongText,
    Patterns,
    ShortText,
    _field_error,
    _names_problems,
    _Strict,
    _text,
)

MAX_HOT_SET_NAMES = 500  # the segments a hot set names
MAX_HOT_SET_CHARS = 48 * 1024  # their characters in all: the input crosses Step Functions (256 KiB)
# A segment name in a hot set: the one type of the profile file (hotset.Relation.segments) and of the run
# input (HotSet.names), so `cutover-prep hotset` never writes a name the run refuses (issue 32 §8).
# Exact, so not stripped: a quoted identifier may begin or end with a space (PostgreSQL "t ").
HotSetName = _text(MAX_QUALIFIED_NAME_CHARS, strip=False)


# What one range costs beyond its bytes (a call, a first touch of a snapshot block), as the bytes one
# cold reader reads in that time (estimate.RANGE_SECONDS is the same cost in seconds): a weight for
# balancing units, never added to the plan's or a unit's bytes; a unit of many tiny relations (a catalogue,
# thousands of partitions) is bound by round trips, not bytes; on the emulated demo 700 catalogue forks in
# two units read serially for 80 s.
RANGE_COST_BYTES = 2**20  # 1 MiB

class HotSet(_Strict):
    """``warmup.hot_set``: a hot-set profile's relations (``cutover-prep hotset``), read right after
    ``warmup.priority`` and before the rest. Filled from the file by ``local/start/profile put --hotset FILE``."""

    engine: ShortText = Field(description="The engine the profile was taken on (the names follow its discovery).")
    server: LongText = Field(description="The server the statistics were read on, for the findings.")
    taken_at: ShortText = Field(description="When the profile was taken (ISO 8601).")
    sources: list[LongText] = Field(min_length=1, max_length=2, description="The statistics it ranked by, "
                                    "in order (statistics: VIEWS; awr: VIEWS).")
    relations: Annotated[int, Field(ge=0, le=MAX_HOT_SET_NAMES)] = Field(
        description="How many relations of the profile the names come from.")
    names: list[HotSetName] = Field(
        min_length=1, max_length=MAX_HOT_SET_NAMES, description="Exact segment names, hottest first: "
        "[DATABASE/]SCHEMA.NAME as the run's discovery names segments (not globs).")

    @field_validator("names")
    @classmethod
    def _bounded(cls, v: list[str]) -> list[str]:
        if sum(len(n) for n in v) > MAX_HOT_SET_CHARS:
            raise ValueError(f"at most {MAX_HOT_SET_CHARS} characters in all: take the profile with a smaller --top")
        return v

    @model_validator(mode="after")
    def _names_of_its_engine(self) -> HotSet:
        """Each part of a name within the identifier limit of the engine the profile was taken on."""
        try:
            engine: str | None = family(self.engine).name
        except ValueError:  # an engine no family covers: the run refuses it against the target's
            engine = None
        for field, problem in _names_problems("names", self.names, engine, glob=False, dotted=True)[:1]:
            raise _field_error(field, problem)
        return self


class AfterHotSet(_Strict):
    """``warmup.after_hot_set``: once every unit of the hot set is read, no more than ``max_concurrency``
    units read at once (the volume given back to the application; decision 51)."""

    max_concurrency: Annotated[int, Field(ge=1, le=1000)] = Field(
        description="Units reading at once after the hot set is warm (those reading then finish their unit; "
        "no new one starts until fewer than this read).")


class Yielding(_Strict):
    """``warmup.yielding``: the warm-up gives way to the application (issue 36 §1). Once the hot set is warm
    (from the start without one), the units reading at once follow the application's reads on the database's
    own counters: all of max_concurrency while it reads little, additive increase / multiplicative decrease on
    its read latency while it reads."""

    enabled: bool = Field(
        default=True, description="Yield to the application once the hot set is warm (false: read the rest at "
        "full concurrency, or at after_hot_set's).")
    window_seconds: Annotated[float, Field(ge=0.5, le=600)] = Field(
        default=2.0, description="Seconds between two decisions (each reads the server's counters once).")
    latency_factor: Annotated[float, Field(ge=1, le=100)] = Field(
        default=1.5, description="The application's read latency above this many times its median "
        "latency in the recent windows at the lowest concurrency halves the warm-up's concurrency (decrease); "
        "within it, one more unit reads.")
    min_reads_per_second: Annotated[float, Field(ge=0, le=1_000_000)] = Field(
        default=10.0, description="Below this many blocks a second read by other sessions the application "
        "counts as idle: the warm-up reads at full concurrency.")
    decrease: Annotated[float, Field(gt=0, lt=1)] = Field(
        default=0.5, description="The factor a decrease multiplies the concurrency by (at least 1 unit reads).")


class Warmup(_Strict):
    enabled: bool = Field(
        default=True, description="false: measure the storage as restored, reading nothing before the probes and "
        "the sweep (a comparison of cold configurations). The verdict is then NOT_READY (WARMUP_OFF): a database "
        "nobody warmed is not ready for a cutover.")
    max_concurrency: Annotated[int, Field(ge=1, le=1000)] = 8
    databases: Patterns = Field(default_factory=list)
    include_schemas: Patterns = Field(default_factory=list)
    exclude_schemas: Patterns = Field(default_factory=list)
    include_system: bool = Field(
        default=False, description="Oracle, MySQL/MariaDB: also read the system schemas. PostgreSQL reads its "
        "catalogues (pg_catalog with pg_largeobject, information_schema) whatever this says: they are on the "
        "volume; exclude_schemas may leave them out, a waiver the findings name.")
    priority: Patterns = Field(default_factory=list)
    hot_set: HotSet | None = Field(
        default=None, description="A hot-set profile's relations (cutover-prep hotset): read after the priority "
        "patterns' units and before the rest; the findings' hot_set section says when they were all read.")
    hot_set_cache: bool = Field(
        default=True, description="Read the hot set, as far as it fits 0.9 of it, into the engine's buffer cache: "
        "PostgreSQL's shared_buffers (pg_prewarm 'buffer'; decision 91). MySQL/MariaDB and Oracle mark nothing "
        "(decision 94). false: the hot set is read as the rest.")
    after_hot_set: AfterHotSet | None = Field(
        default=None, description="Once every unit of hot_set is read, read the rest with at most this many "
        "units at once, so the application finds the volume's IOPS free (issue 23 §1). Without it (the default) "
        "the rest is read at the run's full concurrency, the whole warm-up as fast as it goes.")
    yielding: Yielding = Field(
        default_factory=Yielding, description="The warm-up as a background job: once the hot set is warm it "
        "gives way while the application reads (docs/yielding.md).")
    unit_mb: Annotated[int, Field(ge=1, le=100_000)] | None = None
    assumed_cold_mib_per_s: Annotated[float, Field(gt=0, le=10_000)] = 8.0
    production_size_gb: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        default=None, description="Size of the production database (GiB) when the run warms a smaller copy: the "
        "report then projects the time to warm it at the measured rate.")
    chunk_mb: Annotated[int, Field(ge=1, le=4096)] = 64
    create_extension: bool = False
    wait_seconds: Annotated[int, Field(ge=0, le=3600)] = 30
    reconnect_minutes: Annotated[float, Field(gt=0, le=120)] = Field(
        default=10, description="How long a unit waits out a database that dropped its session or does not "
        "answer (a restart, a reboot, a Multi-AZ failover, a Blue/Green switchover), reconnecting with jittered "
        "backoff, before it fails by name (DatabaseUnreachable); an outage longer than one invocation goes on in "
        "the next, from the unit's last committed chunk. The findings' reconnects say how often and how long.")
    adaptive: bool = Field(
        default=False, description="Start the warm-up at adaptive_start units at once and double that while the "
        "aggregate read rate grows by more than adaptive_margin_pct per window; hold where it stops growing "
        "(never above max_concurrency). false (the default until it is measured in AWS: every local "
        "measurement was slower than a fixed level): max_concurrency from the start.")
    adaptive_start: Annotated[int, Field(ge=1, le=1000)] = 2
    adaptive_margin_pct: Annotated[float, Field(ge=0, le=100)] = 10
    adaptive_window_seconds: Annotated[float, Field(ge=1, le=3600)] = Field(
        default=120, description="The longest a concurrency level is measured before the next decision.")
    adaptive_window_chunks: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=8, description="A window also ends once the units have committed this many chunks per slot "
        "(0: windows end by time only).")
    mode: Literal["segments", "datafiles", "both"] = Field(
        default="segments", description="segments: read each table, index and LOB segment; datafiles: read every "
        "datafile block by block range instead (engines that offer it: Oracle); both: segments that fit a unit, "
        "then the datafile pass (which also reads the segments too big for one unit).")

    @model_validator(mode="after")
    def _globs_can_match(self) -> Warmup:
        """No glob that needs a longer name than any engine holds (RunInput checks by the target's engine)."""
        for name, dotted in WARMUP_GLOBS:
            for field, problem in _names_problems(name, getattr(self, name), None, glob=True, dotted=dotted)[:1]:
                raise _field_error(field, problem)
        return self
