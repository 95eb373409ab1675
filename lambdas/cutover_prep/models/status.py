"""The states a run, a work unit, a benchmark point and the verdict can be in (StrEnum: stored and
sent as their plain string values, so DynamoDB items, findings.json and the ASL's Choice states
read exactly as before)."""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"  # every planned unit was read
    INCOMPLETE = "INCOMPLETE"  # finished, but a unit failed or was not read
    FAILED = "FAILED"  # the run itself failed (a named error)


class UnitStatus(StrEnum):
    PENDING = "PENDING"  # planned, no progress recorded
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class WarmStep(StrEnum):
    """What one WarmUnit invocation tells the workflow (its Choice state reads it)."""

    CONTINUE = "CONTINUE"  # out of time: call again with the cursor
    DONE = "DONE"
    ALREADY_DONE = "ALREADY_DONE"


class PointStatus(StrEnum):
    DONE = "DONE"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


class PointKind(StrEnum):
    PROBE = "probe"
    SEQUENTIAL = "sequential"
    RANDOM = "random"
    WRITE_DIRECT = "write_direct"
    WRITE_RANDOM = "write_random"


READ_KINDS = (PointKind.SEQUENTIAL, PointKind.RANDOM)
WRITE_KINDS = (PointKind.WRITE_DIRECT, PointKind.WRITE_RANDOM)


class BenchmarkStatus(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"  # every planned point measured
    PARTIAL = "PARTIAL"  # some planned point was not measured: not complete
    FAILED = "FAILED"
    NOT_RUN = "NOT_RUN"
    DISABLED = "DISABLED"


class Verdict(StrEnum):
    READY = "READY"
    NOT_READY = "NOT_READY"


def is_cached(point: dict) -> bool:
    """A benchmark point whose rate includes re-reads a cache may have served (the OS page cache or the
    engine's buffers; ``cached`` is set by the engine's scan): not a storage figure, so never a headline
    nor evidence for the verdict."""
    return bool(point.get("cached"))
