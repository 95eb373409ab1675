"""Database engines behind one interface (see ``base``)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    TransientDatabaseError,
)

ENGINES = ("postgres", "oracle")

# RDS engine names (DescribeDBInstances "Engine") mapped to ours.
RDS_ENGINE_FAMILY = {
    "postgres": "postgres",
    "aurora-postgresql": "postgres",
    "oracle-ee": "oracle",
    "oracle-se2": "oracle",
    "oracle-ee-cdb": "oracle",
    "oracle-se2-cdb": "oracle",
    "custom-oracle-ee": "oracle",
    "mysql": "mysql",
    "mariadb": "mysql",
}


@dataclass(frozen=True)
class ConnectionSpec:
    """Where and as whom to connect. The password never appears in repr or logs."""

    engine: str
    host: str
    port: int
    database: str
    user: str
    password: str = field(repr=False)


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    """Connect with the engine named in ``spec``; raise ``DatabaseUnreachable`` on failure.

    ``create_extension`` (PostgreSQL only, opt-in write) installs pg_prewarm."""
    if spec.engine == "postgres":
        from cutover_prep.engines.postgres import PostgresEngine

        return PostgresEngine.connect(spec, call_timeout_seconds=call_timeout_seconds,
                                      create_extension=create_extension)
    if spec.engine == "oracle":
        from cutover_prep.engines.oracle import OracleEngine

        return OracleEngine.connect(spec, call_timeout_seconds=call_timeout_seconds)
    raise EngineError(f"engine {spec.engine!r} is not supported yet; use one of {', '.join(ENGINES)}")


__all__ = [
    "ENGINES",
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
    "TransientDatabaseError",
    "open_engine",
]
