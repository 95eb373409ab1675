"""The one retry policy for transient database errors (a dropped connection, a cancelled statement).

Retried here, in the code that reads, bounded by ``attempts`` with exponential backoff, and
counted so the findings say how often it happened. The workflow's ASL retries only what
Lambda itself throws (throttling, service errors); it does not retry a database error a
second time around this one. One exception: EndCensus (``warmup.end_census``) retries nothing
itself, and the ASL retries that whole step on ``TransientDatabaseError`` and
``DatabaseUnreachable``, twice at most (issue 32: a run whose end census is missing cannot be READY).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from cutover_prep.engines import TransientDatabaseError

T = TypeVar("T")


class Retries:
    """Calls ``fn`` until it returns or the attempts run out; ``count`` is the retries made so far."""

    def __init__(self, attempts: int, *, sleep: Callable[[float], None] | None = None) -> None:
        self.attempts, self.count = attempts, 0
        self._sleep = sleep

    def call(self, fn: Callable[[], T]) -> T:
        kwargs: dict = {"stop": stop_after_attempt(self.attempts), "reraise": True,
                        "wait": wait_exponential(multiplier=1, min=1, max=20),
                        "retry": retry_if_exception_type(TransientDatabaseError), "before_sleep": self._counted}
        if self._sleep is not None:
            kwargs["sleep"] = self._sleep
        return Retrying(**kwargs)(fn)

    def _counted(self, _state: object) -> None:
        self.count += 1
