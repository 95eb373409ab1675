"""Database engines behind one interface (see ``base``), one folder each, found through ``registry``."""

from __future__ import annotations

from cutover_prep.engines import registry
from cutover_prep.engines.base import (
    ConnectionLost,
    ConnectionSpec,
    DatabaseUnreachable,
    DiscoveryOptions,
    Engine,
    EngineError,
    Extent,
    LockWaitTimeout,
    PermanentReadError,
    ReadRange,
    ReadResult,
    Segment,
    ShortRead,
    TransientDatabaseError,
)

# RDS engine names (DescribeDBInstances "Engine") mapped to ours, for the engines the run supports.
RDS_ENGINE_FAMILY = registry.rds_engine_family()


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    """Connect with the engine named in ``spec`` (see ``registry``); raise ``DatabaseUnreachable`` on
    failure, ``registry.UnknownEngine`` for an engine no family covers.

    ``create_extension`` (PostgreSQL only, opt-in write) installs pg_prewarm."""
    return registry.family(spec.engine).open_engine(spec, call_timeout_seconds=call_timeout_seconds,
                                                    create_extension=create_extension)

__all__ = [
    "RDS_ENGINE_FAMILY",
    "ConnectionLost",
    "ConnectionSpec",
    "DatabaseUnreachable",
    "DiscoveryOptions",
    "Engine",
    "EngineError",
    "Extent",
    "LockWaitTimeout",
    "PermanentReadError",
    "ReadRange",
    "ReadResult",
    "Segment",
    "ShortRead",
    "TransientDatabaseError",
    "open_engine",
]
