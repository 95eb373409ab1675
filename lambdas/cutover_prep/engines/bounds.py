"""The bounds every database session sets on its own waits (issue 32, finding 3).

A lock held by another session (``LOCK TABLE ... ACCESS EXCLUSIVE``, ``LOCK TABLES ... WRITE``, a
running ``ALTER``) blocks the census, discovery and the reads of the relation it holds; without a
bound a step waits until the lock goes or the Lambda dies at its 15 minutes, and the command line
waits for ever. Each engine's ``connect`` sets, once per session, the engine's own bounds from
``session_bounds``:

- the statement bound: the caller's ``call_timeout_seconds`` (a Lambda's remaining time less its
  margin, ``deps``), else ``CUTOVER_PREP_STATEMENT_TIMEOUT_SECONDS`` (default 900 s, a Lambda's whole
  limit: the command line has no Lambda to fit in). PostgreSQL ``statement_timeout``, MariaDB
  ``max_statement_time``, MySQL ``max_execution_time`` (SELECT only), Oracle ``call_timeout``;
- the lock bound: ``CUTOVER_PREP_LOCK_TIMEOUT_SECONDS`` (default 30 s), at most half the statement
  bound, so a wait on a lock ends by it (a ``LockWaitTimeout`` that says what it waited on) rather
  than by the statement bound, and the retries (``retry.Retries``, 3 attempts by default) fit in the
  Lambda. PostgreSQL ``lock_timeout``, MySQL/MariaDB ``lock_wait_timeout`` (metadata locks) and
  ``innodb_lock_wait_timeout`` (row locks; whole seconds, at least 1). Every role may set them for its
  own session (PostgreSQL's ``SET``; MySQL's and MariaDB's session scope of these variables).

Oracle's SELECT never waits on a row or table lock (a consistent read), so its ``call_timeout`` is its
one bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cutover_prep.engines.base import EngineError
from cutover_prep.settings import environment

LOCK_ENV, STATEMENT_ENV = "CUTOVER_PREP_LOCK_TIMEOUT_SECONDS", "CUTOVER_PREP_STATEMENT_TIMEOUT_SECONDS"
DEFAULT_LOCK_SECONDS = 30.0
DEFAULT_STATEMENT_SECONDS = 900.0
DIAGNOSIS_SECONDS = 5  # the query that names a lock's holder: it reads no locked relation, and is bounded too


@dataclass(frozen=True)
class SessionBounds:
    statement_seconds: float
    lock_seconds: float

    @property
    def statement_ms(self) -> int:
        return max(1, int(self.statement_seconds * 1000))

    @property
    def lock_ms(self) -> int:
        return max(1, int(self.lock_seconds * 1000))

    @property
    def lock_whole_seconds(self) -> int:
        """MySQL's and MariaDB's lock waits are set in whole seconds (at least 1)."""
        return max(1, math.ceil(self.lock_seconds))


def _seconds(name: str, default: float) -> float:
    raw = environment(name).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise EngineError(f"{name}={raw!r}: give a number of seconds above 0")
    return value


def session_bounds(call_timeout_seconds: float | None = None) -> SessionBounds:
    """The statement and lock bounds of a session opened with ``call_timeout_seconds`` (None: no Lambda)."""
    statement = float(call_timeout_seconds) if call_timeout_seconds and call_timeout_seconds > 0 \
        else _seconds(STATEMENT_ENV, DEFAULT_STATEMENT_SECONDS)
    return SessionBounds(statement_seconds=statement,
                         lock_seconds=min(_seconds(LOCK_ENV, DEFAULT_LOCK_SECONDS), statement / 2))


def wait_words(seconds: float) -> str:
    return f"{seconds:g} s"
