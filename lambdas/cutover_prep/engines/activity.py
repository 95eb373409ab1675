"""What the database's other sessions read: the signal the warm-up yields on (issue 36 §1).

Each engine's hook (``EngineFamily.activity``, its SQL in ``engines/<name>/activity.py``) reads the server's
own cumulative counters on one of the warm-up's sessions, read-only. The warm-up's controller
(``warmup.concurrency.yield_observe``) takes their differences over a window.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Activity:
    """Cumulative counters since the server's statistics began."""

    reads: int  # blocks (pages) read from storage by the sessions counted
    read_ms: float | None  # the time they spent reading; None: the server does not time reads
    block_size: int
    own_included: bool  # the counters include the warm-up's own reads (the caller subtracts its bytes)
    source: str  # the view or status the counters come from, for the findings

    def to_json(self) -> dict[str, int | float | bool | str | None]:
        return asdict(self)
