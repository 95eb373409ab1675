"""The one retry policy for transient database errors (a dropped connection, a cancelled statement).

Retried here, in the code that reads, bounded by ``attempts`` with exponential backoff, and
counted so the findings say how often it happened. The workflow's ASL retries only what
Lambda itself throws (throttling, service errors); it does not retry a database error a
second time around this one. Two exceptions: Discover, retried twice on ``TransientDatabaseError`` (issue 35
§4: a discovery cut off by its invocation's end resumes from the pages it kept, ``warmup.discovery.StoredPages``),
and EndCensus (``warmup.end_census``), which retries its census here and,
past these retries, records the error (``census: null``) instead of raising; what it still raises (discovery,
a connection) the ASL retries as a whole step on ``TransientDatabaseError`` and ``DatabaseUnreachable``,
twice at most (issue 32: a run whose end census is missing cannot be READY).

An outage (issue 32 §4): a restart, an RDS reboot, a Multi-AZ failover (60-120 s) or a Blue/Green
switchover drops every session and refuses new ones for a while. Given ``reconnect_seconds`` (the
warm-up's ``warmup.reconnect_minutes``), a lost session (``ConnectionLost``) and a database that does not
answer (``DatabaseUnreachable`` marked reconnectable) are retried for that long from the first failure,
not a number of times, each wait drawn with full jitter (uniform between 0 and the capped exponential:
AWS Architecture Blog, "Exponential Backoff And Jitter", 2015) so that many units do not reconnect in step;
then the call fails by name (``DatabaseUnreachable``, saying for how long). The engine opens a fresh
connection on the next call. When this invocation's own time (``time_left``) runs out first,
``OutageContinues`` carries the outage's clock to the next invocation, which goes on counting from the
first failure. Each outage ridden out is counted (``reconnects``) with its length.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential

from cutover_prep.engines import ConnectionLost, DatabaseUnreachable, TransientDatabaseError

T = TypeVar("T")


@dataclass
class Outage:
    """An outage under way: when its first call failed (``clock()``: wall-clock seconds, so that it carries
    across invocations), how many calls failed in it, and the last error."""

    started_at: float
    attempts: int = 0
    last_error: str = ""

    def to_json(self) -> dict[str, float | int | str]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, float | int | str] | None) -> Outage | None:
        """The outage ``to_json`` wrote; None when ``doc`` is not one."""
        if not isinstance(doc, dict) or not isinstance(doc.get("started_at"), int | float):
            return None
        return cls(float(doc["started_at"]), int(doc.get("attempts") or 0), str(doc.get("last_error") or ""))


class OutageContinues(Exception):
    """This invocation's time ran out while the database was still unreachable: the caller commits what it
    read and hands ``outage`` to the next invocation."""

    def __init__(self, outage: Outage) -> None:
        super().__init__(f"the database has been unreachable since {outage.started_at:.0f} "
                         f"({outage.attempts} attempts): {outage.last_error}")
        self.outage = outage


class Retries:
    """Calls ``fn`` until it returns or the attempts (an outage: ``reconnect_seconds``) run out; ``count`` is
    the retries made so far, ``reconnects`` the outages ridden out, ``longest_outage_seconds`` the longest.

    ``time_left``: seconds this invocation may still wait (the Lambda's remaining time less its margin).
    ``outage``: one handed on by the previous invocation (``OutageContinues``)."""

    RECONNECT_BASE_SECONDS = 1.0
    RECONNECT_CAP_SECONDS = 10.0  # a database back after a failover is found within seconds

    def __init__(self, attempts: int, *, sleep: Callable[[float], None] | None = None,
                 reconnect_seconds: float | None = None, time_left: Callable[[], float] | None = None,
                 outage: Outage | None = None, clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None) -> None:
        self.attempts, self.count = attempts, 0
        self.reconnect_seconds, self.time_left, self.outage = reconnect_seconds, time_left, outage
        self.reconnects, self.longest_outage_seconds = 0, 0.0
        self._sleep, self._clock, self._rng = sleep, clock, rng or random.Random()

    def call(self, fn: Callable[[], T]) -> T:
        failures = 0  # of this call, other than an outage's
        outage_waits: dict[int, float] = {}  # attempt -> its wait, drawn once (tenacity asks wait, then stop)

        def outage_wait(state: RetryCallState) -> float | None:
            exc = state.outcome.exception() if state.outcome else None
            if exc is None or not self._reconnecting(exc):
                return None
            if state.attempt_number not in outage_waits:  # raises when the bound or the invocation's time is spent
                outage_waits[state.attempt_number] = self._outage_wait(exc)
            return outage_waits[state.attempt_number]

        def stop(state: RetryCallState) -> bool:
            nonlocal failures
            if outage_wait(state) is not None:
                return False
            failures += 1
            return failures >= self.attempts

        backoff = wait_exponential(multiplier=1, min=1, max=20)

        def wait(state: RetryCallState) -> float:
            planned = outage_wait(state)
            return backoff(state) if planned is None else planned

        kwargs: dict = {"stop": stop, "reraise": True, "wait": wait,
                        "retry": retry_if_exception(self._retryable), "before_sleep": self._counted}
        if self._sleep is not None:
            kwargs["sleep"] = self._sleep
        result = Retrying(**kwargs)(fn)
        if self.outage is not None:  # it answered again: the outage is over
            self.reconnects += 1
            self.longest_outage_seconds = max(self.longest_outage_seconds, self._clock() - self.outage.started_at)
            self.outage = None
        return result

    def _reconnecting(self, exc: BaseException) -> bool:
        return self.reconnect_seconds is not None and (
            isinstance(exc, ConnectionLost) or (isinstance(exc, DatabaseUnreachable) and exc.reconnectable))

    def _retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, TransientDatabaseError) or self._reconnecting(exc)

    def _outage_wait(self, exc: BaseException) -> float:
        """The wait before the next attempt of an outage; raises when there is none."""
        now = self._clock()
        if self.outage is None:
            self.outage = Outage(started_at=now)
        self.outage.attempts += 1
        self.outage.last_error = f"{type(exc).__name__}: {exc}"
        bound = float(self.reconnect_seconds or 0)
        left = self.outage.started_at + bound - now
        if left <= 0:
            raise DatabaseUnreachable(
                f"the database stayed unreachable for {now - self.outage.started_at:.0f} s "
                f"(warmup.reconnect_minutes: {bound / 60:g}; {self.outage.attempts} attempts to reconnect); "
                f"last: {self.outage.last_error}") from exc
        envelope = min(self.RECONNECT_CAP_SECONDS, self.RECONNECT_BASE_SECONDS * 2 ** min(self.outage.attempts - 1, 30))
        wait = min(self._rng.uniform(0, envelope), left)
        if self.time_left is not None and self.time_left() - wait <= 0:
            raise OutageContinues(self.outage) from exc
        return wait

    def _counted(self, _state: object) -> None:
        self.count += 1
