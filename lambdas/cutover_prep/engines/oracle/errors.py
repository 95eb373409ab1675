"""Oracle errors as the engines' named errors (shared by the engine, its reads and the benchmark)."""

from __future__ import annotations

import oracledb

from cutover_prep.engines.base import PermanentReadError, TransientDatabaseError

PERMANENT_CODES = {942, 1031, 8103, 1403, 904}  # no table, no privilege, object gone, no data, bad column
TRANSIENT_CODES = {54, 1555, 3113, 3114, 3135, 12170, 12541, 12514, 25408, 4068}


def map_error(exc: oracledb.Error, what: str) -> Exception:
    err = exc.args[0] if exc.args else None
    code = getattr(err, "code", 0)
    full_code = getattr(err, "full_code", "") or ""
    message = (getattr(err, "message", None) or str(exc)).strip().splitlines()[0]
    if code in TRANSIENT_CODES or full_code.startswith("DPY-4011") or full_code.startswith("DPY-4024") \
            or isinstance(exc, oracledb.OperationalError):
        return TransientDatabaseError(f"{what}: {message}")
    return PermanentReadError(f"{what}: {message}")
