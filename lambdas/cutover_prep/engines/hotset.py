"""The hot-set hook's contract: what ``cutover-prep hotset`` asks an engine (``EngineFamily.hotset``, in
``engines/<name>/hotset.py``) and what the engine answers, unranked.

The hook reads every user relation's access figures from the engine's own statistics, read-only, and
returns them as ``Taken``; the ranking and the profile file are the hot set's (``hotset/``), which knows no
engine. A relation is what the engine's statistics count as one; its ``segments`` are the exact names the
planner matches (``[database/]schema.name`` of each segment it discovers), made by the hook so nothing
outside the engine knows its naming.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCE_STATISTICS, SOURCE_AWR = "statistics", "awr"


class HotsetProblem(Exception):
    """The hot set cannot be taken or read as asked; the message is one line naming why."""

    code = 2


class NoStatistics(HotsetProblem):
    """The source's statistics count nothing to rank (off, or no access yet): the command fails (exit 1)."""

    code = 1


@dataclass
class RelationStats:
    """One relation as an engine's hook reports it (unranked)."""

    schema: str
    name: str
    kind: str  # table, index, LOB ... as the engine's statistics name it
    accesses: int  # the figure the relations are ranked by (``Source.figure`` says what it counts)
    figures: dict[str, int]  # each statistic column read, by its name in the view
    bytes: int | None
    segments: list[str]  # the exact names the planner matches
    database: str | None = None
    source: str = SOURCE_STATISTICS


@dataclass
class Source:
    source: str  # SOURCE_STATISTICS or SOURCE_AWR
    views: list[str]  # the engine's views read
    figure: str  # what ``accesses`` counts, for people
    since: str | None = None  # when the counters began (a reset, the instance start, the AWR window)


@dataclass
class Taken:
    """What a hook returns: the server, the sources it read and every relation with accesses."""

    engine: str
    server: str
    sources: list[Source]
    relations: list[RelationStats] = field(default_factory=list)


@dataclass(frozen=True)
class HotsetOptions:
    databases: tuple[str, ...] = ()  # globs: databases (PostgreSQL), schemas (MySQL, MariaDB), owners (Oracle)
    awr: bool = False  # Oracle: also DBA_HIST_SEG_STAT (the caller checked the Diagnostics Pack statement)
    awr_days: int = 7
    call_timeout_seconds: float = 60
    # MySQL / MariaDB without performance_schema or userstat (issue 33): rank by the pages each table holds in the
    # InnoDB buffer pool, from INFORMATION_SCHEMA.INNODB_BUFFER_PAGE, or from an ib_buffer_pool dump file
    buffer_pool: bool = False
    buffer_pool_file: str | None = None
    buffer_pool_dump_now: bool = False  # asked by the user: the server writes its dump file (a server action)
