"""Database engines behind one interface (see ``base``), one folder each, found through ``registry``."""

from __future__ import annotations

from dataclasses import dataclass, field

from cutover_prep.engines import registry
from cutover_prep.engines.base import (
    DatabaseUnreachable,
    DiscoveryOptions,
    Engine,
    EngineError,
    Extent,
    PermanentReadError,
    ReadRange,
    ReadResult,
    Segment,
    ShortRead,
    TransientDatabaseError,
)

# RDS engine names (DescribeDBInstances "Engine") mapped to ours, for the engines the run supports.
RDS_ENGINE_FAMILY = registry.rds_engine_family()


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


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    """Connect with the engine named in ``spec`` (see ``registry``); raise ``DatabaseUnreachable`` on
    failure, ``registry.UnknownEngine`` for an engine no family covers.

    ``create_extension`` (PostgreSQL only, opt-in write) installs pg_prewarm."""
    return registry.family(spec.engine).open_engine(spec, call_timeout_seconds=call_timeout_seconds,
                                                    create_extension=create_extension)

__all__ = [
    "RDS_ENGINE_FAMILY",
    "ConnectionSpec",
    "DatabaseUnreachable",
    "DiscoveryOptions",
    "Engine",
    "EngineError",
    "Extent",
    "PermanentReadError",
    "ReadRange",
    "ReadResult",
    "Segment",
    "ShortRead",
    "TransientDatabaseError",
    "open_engine",
]
